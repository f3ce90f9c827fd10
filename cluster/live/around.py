"""What explaining a workload (a JobSet, a LeaderWorkerSet) reads around its pods to triage the
pending ones as `/triage` would: the nodes its pods are on, the candidate nodes of its pending pods, the
pods bound and nominated there, and their peers, storage and DRA objects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cluster.live.dra import DraReads
from cluster.live.nodes import NodeReads
from cluster.live.peers import PeerReads
from cluster.live.source import Source
from cluster.live.storage import StorageReads
from cluster.transport import Target
from diagnosis.dra_objects import Dra
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status
from diagnosis.relations import node_name
from diagnosis.triage.classify import usage_candidates
from diagnosis.triage.fixes import node_pool
from diagnosis.triage.resources import effective_requests, offer
from diagnosis.triage.runner import reaches_funnel
from diagnosis.triage.steps.volume import claims as volumes
from diagnosis.views import Peers, Storage


@dataclass(frozen=True)
class Around:
    """What the view of a workload holds to triage its pending pods (`diagnosis.views.WorkloadView`)."""

    nodes: tuple[Object, ...]
    bound_pods: tuple[Object, ...]
    nominated_pods: tuple[Object, ...]
    peers: Peers
    storage: Storage
    dra: Dra


class AroundReads:
    """Reads what triaging a workload's pending pods needs, through the readers of each kind."""

    def __init__(
        self, source: Source, nodes: NodeReads, peers: PeerReads, storage: StorageReads, dra: DraReads
    ) -> None:
        self._source = source
        self._nodes = nodes
        self._peers = peers
        self._storage = storage
        self._dra = dra

    async def pods(self, pods: Sequence[Object], topology: Iterable[str] = ()) -> Around:
        """`topology`: the node labels that place the workload's groups exclusively."""
        (nodes, bound, nominated), dra = await asyncio.gather(
            self._nodes_for(pods, topology), self._dra.for_pods(_triaged(pods))
        )
        peers, storage = await self._around(pods, nodes, bound)
        return Around(nodes, bound, nominated, peers, storage, dra)

    async def namespace_events(self, namespace: str) -> list[dict[str, Any]]:
        """All events of the namespace in one paged LIST, picked client-side: a workload's events are
        about itself, up to hundreds of Jobs, StatefulSets and pods, where one call per object would be
        hundreds; a namespace holds only the last hour of events (the API's event TTL)."""
        return await self._source.api.items(Target("list", "events", namespace))

    async def _nodes_for(
        self, pods: Sequence[Object], topology: Iterable[str]
    ) -> tuple[tuple[Object, ...], tuple[Object, ...], tuple[Object, ...]]:
        """The nodes the pods are bound to, plus the candidate nodes of its pending pods, and the bound
        and nominated pods that triaging those pending pods needs (as `triage_view` reads them). Beside
        them, and with their bound pods, the nodes a workload's fix weighs: those of the node groups
        its pods are on (where a missing topology label takes its value from) and every node of its
        exclusive-topology labels (the domains its groups could move to); the pods of those only on
        the nodes that offer a device the workload's pods ask for."""
        pending = _placements(pods)
        candidates, nominated = await asyncio.gather(
            asyncio.gather(*(self._nodes.candidates(p) for p in pending)),
            self._nodes.nominated_pods() if pending else asyncio.sleep(0, ()),
        )
        known = {name(n): n for nodes, _ in candidates for n in nodes}
        # A pod waiting for its preemption's victims: its nominated node and the pods there.
        waiting = {n for p in pods if _pending(p) for n in usage_candidates(p, ()) if n}
        placed = ({node_name(p) for p in pods if node_name(p)} | waiting) - known.keys()
        known.update((name(n), n) for n in await self._nodes.named(placed))
        near = await self._near(pods, known, topology)
        known.update((name(n), n) for n in near)
        # A fix weighs the pods of the nodes near only where they hold the devices the workload's
        # pods ask: a node that offers none takes none of them, whatever runs there (a workload that
        # asks none, or only by claims: every node near).
        asked = {r for p in pods for r in effective_requests(p)}
        usage = (
            waiting
            | {name(n) for n in near if not asked or any(offer(n, r).allocatable > 0 for r in asked)}
            | {
                n
                for pod, (nodes, _) in zip(pending, candidates, strict=True)
                for n in usage_candidates(pod, nodes)
            }
        )
        everywhere = [len(nodes) for nodes, prefiltered in candidates if not prefiltered]
        bound = await self._nodes.bound_pods(usage, max(everywhere, default=None))
        return tuple(known[n] for n in sorted(known)), bound, nominated

    async def _near(
        self, pods: Sequence[Object], known: Mapping[str, Object], topology: Iterable[str]
    ) -> list[Object]:
        """The nodes of the node groups the pods are bound in, and of the domains of the `topology`
        labels they are bound in. (The other domains a pending group could move to are among its
        candidate nodes, read already: a node its nodeSelector leaves out takes none of it.)"""
        keys = set(topology) - {""}
        domains = set()
        for pod in pods:
            if (node := known.get(node_name(pod))) is None:
                continue
            if pool := node_pool(node):
                domains.add(pool)
            domains.update((k, v) for k, v in labels(node).items() if k in keys)
        found = await asyncio.gather(*(self._nodes.labelled(key, value) for key, value in sorted(domains)))
        return [node for nodes in found for node in nodes]

    async def _around(
        self, pods: Sequence[Object], nodes: Sequence[Object], bound: Sequence[Object]
    ) -> tuple[Peers, Storage]:
        """What triaging the pending pods reads besides nodes and bound pods: the peers of
        each distinct placement, the storage of each distinct set of claims, merged."""
        pending = _triaged(pods)
        placements = _placements(pods)
        claims = list({volumes.claim_names(p): p for p in pending if volumes.claim_names(p)}.values())
        usage = {n for p in placements for n in usage_candidates(p, nodes)}
        found_peers, found_storage = await asyncio.gather(
            asyncio.gather(*(self._peers.for_pod(p, nodes, True) for p in placements)),
            asyncio.gather(*(self._storage.for_pod(p, usage) for p in claims)),
        )
        merged = await asyncio.gather(
            *(
                self._peers.own_namespace(p, peers, bound)
                for p, peers in zip(placements, found_peers, strict=True)
            )
        )
        return _merged_peers(merged), _merged_storage(found_storage)


def _merged_peers(groups: Sequence[Peers]) -> Peers:
    return Peers(
        _distinct(p for group in groups for p in group.pods),
        _distinct(n for group in groups for n in group.nodes),
        _distinct(n for group in groups for n in group.namespaces),
    )


def _merged_storage(groups: Sequence[Storage]) -> Storage:
    return Storage(
        *(
            _distinct(o for group in groups for o in getattr(group, field))
            for field in ("claims", "volumes", "classes", "csinodes", "users", "drivers", "capacities")
        )
    )


def _distinct(objects: Iterable[Object]) -> tuple[Object, ...]:
    """One object of each namespace and name."""
    return tuple({(namespace(o), name(o)): o for o in objects}.values())


def _pending(pod: Object) -> bool:
    return status(pod).get("phase") == "Pending" and not node_name(pod)


def _triaged(pods: Iterable[Object]) -> list[Object]:
    """The pods explaining the JobSet triages through the funnel: pending ones that reach it."""
    return [p for p in pods if _pending(p) and reaches_funnel(p)]


def _placements(pods: Iterable[Object]) -> list[Object]:
    """One triaged pod of each distinct placement (`_scheduling_key`)."""
    return list({_scheduling_key(p): p for p in _triaged(pods)}.values())


def _scheduling_key(pod: Object) -> str:
    """What places a pod, to read each distinct pending pod's candidates once: a JobSet's pods share
    their Job's template and differ in names, hostnames, env and token volumes, which place nothing."""
    pod_spec = spec(pod)
    asks = [
        (mapping(c).get("resources"), mapping(c).get("restartPolicy"))
        for field in ("initContainers", "containers")
        for c in sequence(pod_spec.get(field))
    ]
    placement = [
        pod_spec.get(k)
        for k in ("nodeSelector", "affinity", "tolerations", "schedulingGates", "topologySpreadConstraints")
    ]
    return json.dumps([placement, asks], sort_keys=True, default=str)
