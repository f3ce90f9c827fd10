"""`/triage`'s reads: the pod and its events, then its candidate nodes (server-side filtered by the
pod's nodeSelector when it has one), then the pods bound to the few nodes that reach the free-slot
check — never every pod of a large cluster when the candidates are few — and what its volumes,
inter-pod rules, ResourceClaims and Kueue gate lead to."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from cluster.errors import NotFound
from cluster.live.missing import not_found
from cluster.live.readers import Readers
from cluster.live.source import about, now, optional
from cluster.reader import TriageRead
from cluster.transport import Response, Target
from diagnosis.dra_objects import Dra
from diagnosis.objects import Object, name
from diagnosis.relations import node_name, nominated_node
from diagnosis.triage.classify import node_reads, usage_candidates
from diagnosis.triage.prepared import Prepared
from diagnosis.triage.runner import reaches_funnel
from diagnosis.views import TriageView


class TriageReads:
    """A pod and what triaging it reads, through the readers of each kind of object."""

    def __init__(self, readers: Readers) -> None:
        self._read = readers

    async def view(self, namespace: str, pod: str) -> TriageRead:
        notes = list(self._read.source.notes())
        got, found_events = await asyncio.gather(
            self._pod(namespace, pod), optional("events", self._pod_events(namespace, pod), notes)
        )
        found = got.body
        if not reaches_funnel(found):
            return await self._decided(found, about(found_events, found), now(got), notes)
        return await self._funnel(found, about(found_events, found), now(got), notes)

    async def _decided(
        self, found: Object, events: tuple[Object, ...], at: datetime, notes: list[str]
    ) -> TriageRead:
        """The view of a pod decided from the pod alone: a placed (or nominated) pod's evidence still
        shows its node, a preempting pod's the victims there, a Kueue-gated pod's its Workload."""
        placed, bound, (workloads, queues, unread), claims, capacity = await asyncio.gather(
            optional("its node", self._read.nodes.named([node_name(found) or nominated_node(found)]), notes),
            self._read.nodes.bound_pods(usage_candidates(found, ()), None),
            self._read.queues.for_pod(found),
            optional("its ResourceClaims", self._read.dra.own_claims(found), notes),
            self._read.capacity.for_pods([found], events, notes),
        )
        view = TriageView(
            found,
            tuple(placed),
            bound,
            events,
            at,
            workloads=workloads,
            queues=queues,
            unread=unread,
            notes=tuple(notes),
            dra=Dra(claims=tuple(claims)),
            capacity=capacity,
        )
        return TriageRead(view)

    async def _funnel(
        self, found: Object, events: tuple[Object, ...], at: datetime, notes: list[str]
    ) -> TriageRead:
        """A pod that goes through the funnel: its candidate nodes, and what the steps from the
        free-slot check on read about the nodes that reach it."""
        (nodes, prefiltered), nominated, dra, capacity = await asyncio.gather(
            self._read.nodes.candidates(found),
            self._read.nodes.nominated_pods(),
            self._read.dra.for_pods([found]),
            self._read.capacity.for_pods([found], events, notes),
        )
        nodes = await self._pinned(found, tuple(nodes), dra, notes)
        if prefiltered:
            capacity = await self._read.capacity.with_groups(found, events, capacity, notes)
        cache = self._read.source.cached()
        findings = cache.findings if cache is not None else None
        # Off the event loop: on thousands of nodes it takes tens of milliseconds.
        usage, serving_none, memo = await asyncio.to_thread(node_reads, found, nodes, dra, findings)
        # The nodes that serve no device: their device plugin, operator and driver pods are the answer.
        # Every pod there, not only the bound ones the free slots count: read once, as they serve.
        counted = [n for n in usage if n not in serving_none]
        (bound, grouped), theirs, daemonsets, peers, storage, repelling = await asyncio.gather(
            self._read.nodes.bound_groups(counted, None if prefiltered else len(nodes)),
            self._read.nodes.pods_on(serving_none),
            optional("DaemonSets", self._read.nodes.daemonsets(serving_none), notes),
            self._read.peers.for_pod(found, nodes, prefiltered),
            self._read.storage.for_pod(found, usage),
            self._read.nodes.repelling(),
        )
        bound += theirs
        read = frozenset((*usage, *serving_none))
        if repelling is not None:
            bound, peers = await self._read.peers.with_repelling(bound, read, peers, nodes, repelling)
        peers = await self._read.peers.own_namespace(found, peers, bound, grouped)
        view = TriageView(
            found,
            nodes,
            bound,
            events,
            at,
            prefiltered,
            peers=peers,
            storage=storage,
            nominated_pods=nominated,
            pending_pods=self._read.nodes.pending_pods(),
            bound_nodes=read,
            dra=dra,
            notes=tuple(notes),
            capacity=capacity,
            daemonsets=tuple(daemonsets),
        )
        return TriageRead(view, Prepared(memo, findings, grouped))

    async def _pinned(
        self, pod: Object, nodes: tuple[Object, ...], dra: Dra, notes: list[str]
    ) -> tuple[Object, ...]:
        """The candidate nodes and the nodes the pod's allocated claims pin it to: read by the pod's
        nodeSelector, the candidates may leave those out, and the answer names them."""
        unread = [n for n in dra.pinning(pod) if n not in {name(node) for node in nodes}]
        if not unread:
            return nodes
        return (
            *nodes,
            *await optional("the nodes its claims are allocated on", self._read.nodes.named(unread), notes),
        )

    async def _pod(self, namespace: str, pod: str) -> Response:
        api = self._read.source.api
        try:
            return await api.get(Target("get", "pods", namespace, name=pod, kind="pod"))
        except NotFound as err:
            names = api.names(Target("list", "pods", namespace))
            raise await not_found(self._read.source, "pod", namespace, pod, names) from err

    async def _pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        return await self._read.source.api.items(
            Target("list", "events", namespace),
            fieldSelector=f"involvedObject.namespace={namespace},involvedObject.name={pod}",
        )
