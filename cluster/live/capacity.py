"""What says whether a node will come for a pending pod: cluster-autoscaler's status ConfigMap,
Karpenter's NodePools and NodeClaims (from the watch cache when it keeps them), the events those
autoscalers wrote on their own objects when the pod's events point to them, the ProvisioningRequest
the pod consumes, and the nodes of the node groups its nodeSelector leaves out. Each read is optional:
one that is refused becomes a note, one whose object or API is absent (404) reads as nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial
from itertools import chain
from typing import Any

from cluster.compact import NODE
from cluster.errors import NotFound
from cluster.live.source import Source, optional
from cluster.transport import Target
from diagnosis.autoscaling import EventsRead, events_to_read, heard
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

    async def for_pods(self, pods: Sequence[Object], about: Sequence[Object], notes: list[str]) -> Capacity:
        """For the pods that wait for a node (ask a device, not placed), whose events are among
        `about`; nothing when none does."""
        waiting = [p for p in pods if not node_name(p) and (effective_requests(p) or asks_claims(p))]
        if not waiting:
            return Capacity()
        wanted = sorted({(namespace(p), consumed(p)) for p in waiting if consumed(p)})
        told = events_to_read(about)
        ns, status_name = STATUS_CONFIGMAP
        status, pools, claims, *found = await asyncio.gather(
            optional(f"ConfigMap {ns}/{status_name}", self._status(), notes),
            optional("Karpenter NodePools", self._karpenter("nodepools"), notes),
            optional("Karpenter NodeClaims", self._karpenter("nodeclaims"), notes),
            *(optional(f"ProvisioningRequest {n}/{r}", self._request(n, r), notes) for n, r in wanted),
            *(optional(f"the {e.kind} events in {e.namespace}", self._events(e), notes) for e in told),
        )
        return Capacity(
            next(iter(status), None),
            tuple(pools),
            tuple(claims),
            tuple(chain.from_iterable(found[: len(wanted)])),
            events=tuple(chain.from_iterable(found[len(wanted) :])),
        )

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
        cache = self._source.cached()
        if cache is not None:  # the same tuple for every question until a node changes
            others = cache.until_nodes_change(
                ("other groups", *pinned), partial(_other_groups, cache.nodes(), pinned)
            )
        else:
            read = await optional("the nodes of the other node groups", self._others(pinned), notes)
            others = tuple({name(n): n for n in read}.values())
        return replace(capacity, groups=others)

    async def _others(self, pinned: list[tuple[str, str]]) -> list[Object]:
        """The nodes that carry one of the pinned pool labels with another value."""
        queries = [{"labelSelector": f"{key},{key}!={value}"} for key, value in pinned]
        return list(chain.from_iterable(await self._source.api.lists(Target("list", "nodes"), queries, NODE)))

    async def _status(self) -> list[Object]:
        kept = self._kept("configmaps")
        if kept is not None:
            return list(kept)
        ns, status_name = STATUS_CONFIGMAP
        return list(await self._get(Target("get", "configmaps", ns, name=status_name, kind="configmap")))

    async def _karpenter(self, plural: str) -> list[Object]:
        kept = self._kept(plural)
        if kept is not None:
            return list(kept)
        try:
            group, version = _KARPENTER
            return list(await self._source.api.items(Target("list", plural, None, group, version=version)))
        except NotFound:
            return []

    def _kept(self, plural: str) -> tuple[Object, ...] | None:
        """What the watch cache keeps of the autoscalers' objects, when it can tell."""
        cache = self._source.cached()
        return None if cache is None else cache.autoscaler_objects(plural)

    async def _events(self, read: EventsRead) -> list[dict[str, Any]]:
        return await self._source.api.items(
            Target("list", "events", read.namespace), fieldSelector=read.field_selector
        )

    async def _get(self, target: Target) -> list[dict[str, Any]]:
        found = await self._source.get_or_none(target)
        return [] if found is None else [found]

    async def _request(self, in_namespace: str, wanted: str) -> list[dict[str, Any]]:
        if not is_dns1123_subdomain(wanted):
            return []
        group, version = _PROVISIONING
        target = Target(
            "get", "provisioningrequests", in_namespace, group, wanted, "provisioningrequest", version
        )
        return await self._get(target)


def _other_groups(nodes: Iterable[Object], pinned: list[tuple[str, str]]) -> tuple[Object, ...]:
    """The nodes that carry one of the pinned pool labels with another value."""
    return tuple(n for n in nodes if any(labels(n).get(k) not in (None, v) for k, v in pinned))
