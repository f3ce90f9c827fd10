"""What a pod's volumes read: its PersistentVolumeClaims, their PersistentVolumes, StorageClasses
and CSIDrivers, and the CSINodes, capacities and other claims the scheduler's volume plugins count."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from cluster.live.source import Source
from cluster.transport import Target
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, name, namespace, spec, text
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage import volumes
from diagnosis.views import Storage


class StorageReads:
    """The storage objects a pod's claims lead to (`TriageView.storage`)."""

    def __init__(self, source: Source) -> None:
        self._source = source

    async def for_pod(self, pod: Object, usage: Iterable[str]) -> Storage:
        """The pod's PVCs (by name), their PVs and StorageClasses; every PV when an unbound claim
        may bind to an existing one; the CSINodes of the nodes reaching the free-slot step when the
        pod has a CSI volume, and then, when one of them limits its driver, every PVC and PV to
        count the volumes attached there."""
        source = self._source
        ns = namespace(pod)
        claims = await source.named(
            [c for c in volumes.claim_names(pod) if is_dns1123_subdomain(c)],
            lambda c: source.get_or_none(
                Target("get", "persistentvolumeclaims", ns, name=c, kind="persistentvolumeclaim")
            ),
        )
        if not claims:
            return Storage()
        volume_names = {text(spec(c).get("volumeName")) for c in claims}
        class_names = {volumes.class_of(c) for c in claims}
        one_pod = [name(c) for c in claims if volumes.one_pod(c)]
        pvs, classes, in_namespace = await asyncio.gather(
            source.named(
                [v for v in volume_names if is_dns1123_subdomain(v)],
                lambda v: source.get_or_none(
                    Target("get", "persistentvolumes", name=v, kind="persistentvolume")
                ),
            ),
            source.named(
                [c for c in class_names if is_dns1123_subdomain(c)],
                lambda c: source.get_or_none(
                    Target("get", "storageclasses", group="storage.k8s.io", name=c, kind="storageclass")
                ),
            ),
            self._namespace_pods(ns) if one_pod else asyncio.sleep(0, ()),
        )
        users = {(ns, name(p)): p for c in one_pod for p in volumes.claim_users(pod, c, in_namespace)}
        storage = Storage(tuple(claims), tuple(pvs), tuple(classes), users=tuple(users.values()))
        every_volume = volumes.needs_every_volume(pod, storage)
        # The CSIDriver of a claim still to be provisioned says whether its capacity is published.
        every, csi_drivers = await asyncio.gather(
            self._every_volume() if every_volume else asyncio.sleep(0, list(storage.volumes)),
            source.named(
                [p for p in volumes.provisioners(pod, storage) if is_dns1123_subdomain(p)],
                lambda d: source.get_or_none(
                    Target("get", "csidrivers", group="storage.k8s.io", name=d, kind="csidriver")
                ),
            ),
        )
        storage = replace(storage, volumes=tuple(every), drivers=tuple(csi_drivers))
        if any(map(volumes.publishes_capacity, csi_drivers)):
            # The scheduler reads every CSIStorageCapacity of the cluster: one LIST of all namespaces.
            listed = Target("list", "csistoragecapacities", group="storage.k8s.io")
            storage = replace(storage, capacities=tuple(await source.api.items(listed)))
        drivers = volumes.csi_drivers(pod, storage)
        if not drivers:
            return storage
        csinodes = await source.named(
            [n for n in usage if is_dns1123_subdomain(n)],
            lambda n: source.get_or_none(
                Target("get", "csinodes", group="storage.k8s.io", name=n, kind="csinode")
            ),
        )
        storage = replace(storage, csinodes=tuple(csinodes))
        if not volumes.limited(drivers, csinodes):
            return storage
        all_claims, all_volumes = await asyncio.gather(
            source.api.items(Target("list", "persistentvolumeclaims")),
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

    async def _every_volume(self) -> list[dict[str, Any]]:
        return await self._source.api.items(Target("list", "persistentvolumes"))
