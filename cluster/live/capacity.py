"""What says whether a node will come for a pending pod: cluster-autoscaler's status ConfigMap,
Karpenter's NodePools and NodeClaims, the ProvisioningRequest the pod consumes, and the nodes of the
node groups its nodeSelector leaves out. Each read is optional: one that is refused becomes a note,
one whose object or API is absent (404) reads as nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

from cluster.errors import NotFound
from cluster.live.source import Source, optional
from cluster.transport import Target
from diagnosis.autoscaling import heard
from diagnosis.autoscaling.groups import POOL_LABELS
from diagnosis.autoscaling.requests import consumed
from diagnosis.names import is_dns1123_subdomain, is_label_value
from diagnosis.objects import Object, labels, name, namespace
from diagnosis.relations import node_name
from diagnosis.triage.dra.claims import asks_claims
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.scheduling import node_selector
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

    async def with_groups(
        self, pod: Object, about: Sequence[Object], capacity: Capacity, notes: list[str]
    ) -> Capacity:
        """For a pod whose nodes were read by its nodeSelector, which pins its node group by a pool
        label, where an autoscaler is seen: `capacity` with the nodes of the other groups (a node of
        each is the template of a group it could move to); `capacity` itself otherwise."""
        selector = node_selector(pod)
        pinned = [
            (key, value)
            for key in POOL_LABELS
            if isinstance(value := selector.get(key), str) and is_label_value(value)
        ]
        if not pinned or not heard(pod, about, (), capacity):
            return capacity
        others = await optional("the nodes of the other node groups", self._others(pinned), notes)
        return replace(capacity, groups=tuple({name(n): n for n in others}.values()))

    async def _others(self, pinned: list[tuple[str, str]]) -> list[Object]:
        """The nodes that carry one of the pinned pool labels with another value."""
        cache = self._source.cached()
        if cache is not None:
            return [n for n in cache.nodes() if any(labels(n).get(k) not in (None, v) for k, v in pinned)]
        queries = [{"labelSelector": f"{key},{key}!={value}"} for key, value in pinned]
        return list(chain.from_iterable(await self._source.api.lists(Target("list", "nodes"), queries)))

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
