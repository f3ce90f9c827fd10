"""What a pod's ResourceClaims read (Dynamic Resource Allocation): the claims, their templates, the
DeviceClasses and the ResourceSlices, from the cache when it watches them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from cluster.errors import NotFound
from cluster.live.source import Source
from cluster.transport import Target
from diagnosis.dra_objects import (
    GROUP,
    Claim,
    Dra,
    Inventory,
    claim,
    device_class,
    pod_claims,
    resource_slice,
)
from diagnosis.objects import Object, name, namespace


class DraReads:
    """The DRA objects a pod's claims lead to (`TriageView.dra`)."""

    def __init__(self, source: Source) -> None:
        self._source = source

    async def for_pods(self, pods: Sequence[Object]) -> Dra:
        """The DRA objects the pods' claims need, when some pod names one: every ResourceClaim (the
        allocated ones hold devices), the DeviceClasses, the ResourceSlices, and the claim templates
        of the pods' namespaces. A cluster that serves no `resource.k8s.io/v1` has none."""
        if not any(pod_claims(p) for p in pods):
            return Dra()
        # Templates matter only while a claim is still to be made from one (`claim` says why not).
        namespaces = sorted(
            {namespace(p) for p in pods if any(c.template and c.generated is None for c in pod_claims(p))}
        )
        cache = self._source.cached()
        if cache is not None and cache.dra_synced:
            templates = await asyncio.gather(*map(self._templates, namespaces))
            # The cache's own Dra while the claims stay as they are: what is worked out about them
            # (who holds each device, the claims by name) is worked out once.
            kept = cache.dra()
            found = tuple(t for group in templates for t in group)
            return replace(kept.holding(), templates=found) if found else kept
        try:
            claims, classes, slices, *templates = await asyncio.gather(
                self._cluster_list("resourceclaims"),
                self._cluster_list("deviceclasses"),
                self._cluster_list("resourceslices"),
                *map(self._templates, namespaces),
            )
        except NotFound:
            return Dra(served=False)
        return Dra(
            claims=tuple(map(claim, claims)),
            templates=tuple(t for group in templates for t in group),
            devices=Inventory(tuple(map(device_class, classes)), tuple(map(resource_slice, slices))),
        )

    async def own_claims(self, pod: Object) -> list[Claim]:
        """The ResourceClaims a pod decided from alone names (a placed pod's evidence shows them): from
        the cache when it watches them, else its namespace's listed."""
        wanted = {c.resolved for c in pod_claims(pod) if c.resolved}
        if not wanted:
            return []
        cache = self._source.cached()
        if cache is not None and cache.dra_synced:
            listed: Iterable[Claim] = cache.dra().claims
        else:
            found = await self._source.api.items(Target("list", "resourceclaims", namespace(pod), GROUP))
            listed = map(claim, found)
        return [c for c in listed if c.namespace == namespace(pod) and c.name in wanted]

    async def _templates(self, ns: str) -> list[tuple[str, str]]:
        """The (namespace, name) of the namespace's ResourceClaimTemplates."""
        found = await self._source.api.items(Target("list", "resourceclaimtemplates", ns, GROUP))
        return [(namespace(t), name(t)) for t in found]

    async def _cluster_list(self, plural: str) -> list[dict[str, Any]]:
        return await self._source.api.items(Target("list", plural, group=GROUP))
