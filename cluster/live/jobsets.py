"""`/jobset why`'s reads: the JobSet, its Jobs, pods and events, its Kueue Workloads, the nodes its
pods are on, and what triaging its pending pods needs; and the sentinel's restart counts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from cluster.errors import NotFound
from cluster.live.missing import not_found
from cluster.live.readers import Readers
from cluster.live.source import about, now, optional, unwrap
from cluster.transport import Target
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, status
from diagnosis.relations import JOBSET_NAME_LABEL, node_name, owned_by
from diagnosis.triage.classify import usage_candidates
from diagnosis.triage.runner import reaches_funnel
from diagnosis.triage.steps.volume import claims as volumes
from diagnosis.views import JobSetView, Peers, Storage

_JOBSET = "jobset.x-k8s.io", "v1alpha2"


class JobSetReads:
    """A JobSet and what explaining it reads, through the readers of each kind of object."""

    def __init__(self, readers: Readers) -> None:
        self._read = readers

    async def view(self, namespace: str, name: str) -> JobSetView:
        api = self._read.source.api
        notes = list(self._read.source.notes())
        by_label = f"{JOBSET_NAME_LABEL}={name}"
        got, in_namespace, jobs, pods, workloads = await asyncio.gather(
            api.get(Target("get", "jobsets", namespace, _JOBSET[0], name, "jobset", _JOBSET[1])),
            optional("events", self._namespace_events(namespace), notes),
            api.items(Target("list", "jobs", namespace, "batch"), labelSelector=by_label),
            api.items(Target("list", "pods", namespace), labelSelector=by_label),
            optional("Kueue workloads", self._read.queues.workloads(namespace), notes),
            return_exceptions=True,
        )
        if isinstance(got, NotFound):
            names = api.names(Target("list", "jobsets", namespace, _JOBSET[0], version=_JOBSET[1]))
            warnings = unwrap(in_namespace)
            raise await not_found(self._read.source, "jobset", namespace, name, names, warnings) from got
        jobset, found_pods = unwrap(got).body, unwrap(pods)
        (nodes, bound, nominated), dra = await asyncio.gather(
            self._nodes_for(found_pods),
            self._read.dra.for_pods(_triaged(found_pods)),
        )
        peers, storage = await self._around(found_pods, nodes, bound)
        return JobSetView(
            jobset=jobset,
            jobs=tuple(unwrap(jobs)),
            pods=tuple(found_pods),
            events=about(unwrap(in_namespace), jobset, *unwrap(jobs), *found_pods),
            nodes=nodes,
            bound_pods=bound,
            workloads=tuple(w for w in unwrap(workloads) if owned_by(w, jobset)),
            now=now(unwrap(got)),
            peers=peers,
            storage=storage,
            nominated_pods=nominated,
            dra=dra,
            notes=tuple(notes),
        )

    async def restarts(self, namespaces: Sequence[str] | None) -> dict[tuple[str, str], int]:
        """`status.restarts` of every JobSet in these namespaces (None: all), by (namespace, name);
        empty where JobSet is not installed."""
        group, version = _JOBSET
        scopes: Sequence[str | None] = [None] if namespaces is None else namespaces
        try:
            found = await asyncio.gather(
                *(
                    self._read.source.api.items(Target("list", "jobsets", ns, group, version=version))
                    for ns in scopes
                )
            )
        except NotFound:
            return {}
        return {
            (namespace(j), name(j)): int(status(j).get("restarts") or 0) for j in chain.from_iterable(found)
        }

    async def _namespace_events(self, namespace: str) -> list[dict[str, Any]]:
        """All events of the namespace in one paged LIST, picked client-side: a JobSet's events are
        about itself, up to hundreds of Jobs and pods, where one call per object would be hundreds;
        a namespace holds only the last hour of events (the API's event TTL)."""
        return await self._read.source.api.items(Target("list", "events", namespace))

    async def _nodes_for(
        self, pods: Sequence[Object]
    ) -> tuple[tuple[Object, ...], tuple[Object, ...], tuple[Object, ...]]:
        """The nodes the JobSet's pods are bound to, plus the candidate nodes of its pending pods,
        and the bound and nominated pods that triaging those pending pods needs (as `triage_view`
        reads them)."""
        pending = _placements(pods)
        candidates, nominated = await asyncio.gather(
            asyncio.gather(*(self._read.nodes.candidates(p) for p in pending)),
            self._read.nodes.nominated_pods() if pending else asyncio.sleep(0, ()),
        )
        known = {name(n): n for nodes, _ in candidates for n in nodes}
        # A pod waiting for its preemption's victims: its nominated node and the pods there.
        waiting = {n for p in pods if _pending(p) for n in usage_candidates(p, ()) if n}
        placed = ({node_name(p) for p in pods if node_name(p)} | waiting) - known.keys()
        known.update((name(n), n) for n in await self._read.nodes.named(placed))
        usage = waiting | {
            n
            for pod, (nodes, _) in zip(pending, candidates, strict=True)
            for n in usage_candidates(pod, nodes)
        }
        everywhere = [len(nodes) for nodes, prefiltered in candidates if not prefiltered]
        bound = await self._read.nodes.bound_pods(usage, max(everywhere, default=None))
        return tuple(known[n] for n in sorted(known)), bound, nominated

    async def _around(
        self, pods: Sequence[Object], nodes: Sequence[Object], bound: Sequence[Object]
    ) -> tuple[Peers, Storage]:
        """What triaging the JobSet's pending pods reads besides nodes and bound pods: the peers of
        each distinct placement, the storage of each distinct set of claims, merged."""
        pending = _triaged(pods)
        placements = _placements(pods)
        claims = list({volumes.claim_names(p): p for p in pending if volumes.claim_names(p)}.values())
        usage = {n for p in placements for n in usage_candidates(p, nodes)}
        found_peers, found_storage = await asyncio.gather(
            asyncio.gather(*(self._read.peers.for_pod(p, nodes, True) for p in placements)),
            asyncio.gather(*(self._read.storage.for_pod(p, usage) for p in claims)),
        )
        merged = await asyncio.gather(
            *(
                self._read.peers.own_namespace(p, peers, bound)
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
