"""What says whether a node will come for a pending pod: cluster-autoscaler's status ConfigMap,
Karpenter's NodePools and NodeClaims, the ProvisioningRequest the pod consumes. Each read is optional:
one that is refused becomes a note, one whose object or API is absent (404) reads as nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from cluster.errors import NotFound
from cluster.live.source import Source, optional
from cluster.transport import Target
from diagnosis.autoscaling.requests import consumed
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, namespace
from diagnosis.relations import node_name
from diagnosis.triage.dra import asks_claims
from diagnosis.triage.resources import effective_requests
from diagnosis.views import STATUS_CONFIGMAP, Capacity

_KARPENTER = "karpenter.sh", "v1"
_PROVISIONING = "autoscaling.x-k8s.io", "v1"


class CapacityReads:
    """The autoscalers' objects about a pod that waits for a node; none where they are not installed."""

    def __init__(self, source: Source) -> None:
        self._source = source

    async def for_pod(self, pod: Object, notes: list[str]) -> Capacity:
        """For a pod that waits for a node (asks a device, not placed); nothing for another."""
        if node_name(pod) or not (effective_requests(pod) or asks_claims(pod)):
            return Capacity()
        wanted = consumed(pod)
        ns, status_name = STATUS_CONFIGMAP
        status, pools, claims, requests = await asyncio.gather(
            optional(
                f"ConfigMap {ns}/{status_name}",
                self._get(Target("get", "configmaps", ns, name=status_name, kind="configmap")),
                notes,
            ),
            optional("Karpenter NodePools", self._list("nodepools", *_KARPENTER), notes),
            optional("Karpenter NodeClaims", self._list("nodeclaims", *_KARPENTER), notes),
            optional(f"ProvisioningRequest {namespace(pod)}/{wanted}", self._request(pod, wanted), notes),
        )
        return Capacity(next(iter(status), None), tuple(pools), tuple(claims), tuple(requests))

    async def _get(self, target: Target) -> list[dict[str, Any]]:
        found = await self._source.get_or_none(target)
        return [] if found is None else [found]

    async def _list(self, resource: str, group: str, version: str) -> list[dict[str, Any]]:
        try:
            return await self._source.api.items(Target("list", resource, None, group, version=version))
        except NotFound:
            return []

    async def _request(self, pod: Object, wanted: str) -> list[dict[str, Any]]:
        if not is_dns1123_subdomain(wanted):
            return []
        group, version = _PROVISIONING
        target = Target(
            "get", "provisioningrequests", namespace(pod), group, wanted, "provisioningrequest", version
        )
        return await self._get(target)
