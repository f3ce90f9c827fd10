"""What a pod's volumes read: its PersistentVolumeClaims, their PersistentVolumes, StorageClasses
and CSIDrivers, and the CSINodes, capacities and other claims the scheduler's volume plugins count."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace

from cluster.live.source import Source
from cluster.transport import Target
from diagnosis.missing import similar_names
from diagnosis.objects import Object, name, namespace, spec, text
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage.steps.volume import claims as volumes
from diagnosis.views import Storage

_STORAGE = "storage.k8s.io"


class StorageReads:
    """The storage objects a pod's claims lead to (`TriageView.storage`)."""

    def __init__(self, source: Source) -> None:
        self._source = source

    async def for_pod(self, pod: Object, usage: Iterable[str]) -> Storage:
        """The pod's PVCs (by name), their PVs and StorageClasses; every PV when an unbound claim
        may bind to an existing one; the CSINodes of the nodes reaching the free-slot step when the
        pod has a CSI volume, and then, when one of them limits its driver, every PVC and PV to
        count the volumes attached there."""
        named = volumes.claim_names(pod)
        claims = await self._source.by_name(
            named, "persistentvolumeclaims", "persistentvolumeclaim", namespace(pod)
        )
        missing = set(named) - {name(c) for c in claims}
        if missing:
            claims = [*claims, *await self._named_alike(namespace(pod), missing)]
        if not claims:
            return Storage()
        storage = await self._bound(pod, claims)
        every_volume = volumes.needs_every_volume(pod, storage)
        storage = await self._provisioned(pod, storage, every_volume)
        return await self._attach_limits(pod, storage, usage, every_volume)

    async def _named_alike(self, ns: str, missing: Iterable[str]) -> list[Object]:
        """The claims of the namespace whose names are nearest a missing one's: the fix that names one
        of them instead is checked with it, its PV and its StorageClass (one LIST of the namespace's
        claims, only when a claim is missing)."""
        found = await self._source.api.items(Target("list", "persistentvolumeclaims", ns))
        by_name = {name(c): c for c in found}
        near = {n for wanted in missing for n in similar_names(wanted, by_name, limit=1)}
        return [by_name[n] for n in sorted(near)]

    async def _bound(self, pod: Object, claims: Sequence[Object]) -> Storage:
        """The claims with their PVs and StorageClasses, and the pods of the namespace that use the
        ReadWriteOncePod ones."""
        by_name, ns = self._source.by_name, namespace(pod)
        one_pod = [name(c) for c in claims if volumes.one_pod(c)]
        pvs, classes, in_namespace = await asyncio.gather(
            by_name(
                {text(spec(c).get("volumeName")) for c in claims}, "persistentvolumes", "persistentvolume"
            ),
            by_name({volumes.class_of(c) for c in claims}, "storageclasses", "storageclass", group=_STORAGE),
            self._namespace_pods(ns) if one_pod else asyncio.sleep(0, ()),
        )
        users = {(ns, name(p)): p for c in one_pod for p in volumes.claim_users(pod, c, in_namespace)}
        return Storage(tuple(claims), tuple(pvs), tuple(classes), users=tuple(users.values()))

    async def _provisioned(self, pod: Object, storage: Storage, every_volume: bool) -> Storage:
        """Every PV when an unbound claim may bind to an existing one (`every_volume`); the CSIDrivers
        of the claims still to be provisioned, and every CSIStorageCapacity when one of them
        publishes its capacity."""
        every, csi_drivers = await asyncio.gather(
            self._every_volume() if every_volume else asyncio.sleep(0, list(storage.volumes)),
            self._source.by_name(
                volumes.provisioners(pod, storage), "csidrivers", "csidriver", group=_STORAGE
            ),
        )
        storage = replace(storage, volumes=tuple(every), drivers=tuple(csi_drivers))
        if not any(map(volumes.publishes_capacity, csi_drivers)):
            return storage
        # The scheduler reads every CSIStorageCapacity of the cluster: one LIST of all namespaces.
        listed = Target("list", "csistoragecapacities", group=_STORAGE)
        return replace(storage, capacities=tuple(await self._source.api.items(listed)))

    async def _attach_limits(
        self, pod: Object, storage: Storage, usage: Iterable[str], every_volume: bool
    ) -> Storage:
        """The CSINodes of the nodes reaching the free-slot step when the pod has a CSI volume, and
        then, when one of them limits its driver, every PVC and PV to count the volumes attached
        there."""
        drivers = volumes.csi_drivers(pod, storage)
        if not drivers:
            return storage
        csinodes = await self._source.by_name(usage, "csinodes", "csinode", group=_STORAGE)
        storage = replace(storage, csinodes=tuple(csinodes))
        if not volumes.limited(drivers, csinodes):
            return storage
        all_claims, all_volumes = await asyncio.gather(
            self._source.api.items(Target("list", "persistentvolumeclaims")),
            # Every PV was read above when an unbound claim may bind to one: not again.
            asyncio.sleep(0, list(storage.volumes)) if every_volume else self._every_volume(),
        )
        return replace(storage, claims=tuple(all_claims), volumes=tuple(all_volumes))

    async def _namespace_pods(self, ns: str) -> Sequence[Object]:
        """The bound pods of a namespace, for the users of a ReadWriteOncePod claim (VolumeRestrictions
        counts them on every node): from the cache, else one LIST."""
        cache = self._source.cached()
        if cache is not None:
            return cache.pods_in(ns)
        bound = f"spec.nodeName!=,{NOT_TERMINAL}"
        return await self._source.api.items(Target("list", "pods", ns), fieldSelector=bound)

    async def _every_volume(self) -> Sequence[Object]:
        return await self._source.api.items(Target("list", "persistentvolumes"))
