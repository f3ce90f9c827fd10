"""`/jobset why`'s reads: the JobSet, its Jobs, pods and events, its Kueue Workloads, the nodes its
pods are on, and what triaging its pending pods needs; and the sentinel's restart counts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import chain

from cluster.errors import NotFound
from cluster.live.missing import not_found
from cluster.live.podgroups import podgroups
from cluster.live.readers import Readers
from cluster.live.source import about, now, optional, unwrap
from cluster.transport import Target
from diagnosis.jobset.family import topology_key
from diagnosis.objects import name, namespace, status
from diagnosis.relations import JOBSET_NAME_LABEL, owned_by
from diagnosis.views import JobSetView

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
            optional("events", self._read.around.namespace_events(namespace), notes),
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
        events = about(unwrap(in_namespace), jobset, *unwrap(jobs), *found_pods)
        around, groups, capacity = await asyncio.gather(
            self._read.around.pods(found_pods, map(topology_key, unwrap(jobs))),
            podgroups(self._read.source, found_pods, notes),
            self._read.capacity.for_pods(found_pods, events, notes),
        )
        return JobSetView(
            jobset=jobset,
            jobs=tuple(unwrap(jobs)),
            pods=tuple(found_pods),
            events=events,
            nodes=around.nodes,
            bound_pods=around.bound_pods,
            workloads=tuple(w for w in unwrap(workloads) if owned_by(w, jobset)),
            now=now(unwrap(got)),
            podgroups=groups,
            peers=around.peers,
            storage=around.storage,
            nominated_pods=around.nominated_pods,
            dra=around.dra,
            notes=tuple(notes),
            capacity=capacity,
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
