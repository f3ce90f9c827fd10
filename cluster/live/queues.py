"""What a pod waits for in a queue: Kueue's Workloads and LocalQueues."""

from __future__ import annotations

import asyncio
from typing import Any

from cluster.errors import NotFound
from cluster.live.source import Source, optional
from cluster.transport import Target
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, labels, namespace, spec, text
from diagnosis.relations import node_name
from diagnosis.triage.kueue import ADMISSION_GATE, QUEUE_LABEL
from diagnosis.triage.scheduling import gate_names

_WORKLOAD = "kueue.x-k8s.io", "v1beta1"


class QueueReads:
    """Kueue's objects about a pod or a JobSet; none where Kueue is not installed."""

    def __init__(self, source: Source) -> None:
        self._source = source

    async def for_pod(self, pod: Object) -> tuple[tuple[Object, ...], tuple[Object, ...], tuple[str, ...]]:
        """For a pod gated by Kueue's admission: the Workloads of its namespace (Kueue's says why it is
        not admitted), the LocalQueue its label names and the ClusterQueue that one names (its quota,
        what is reserved of it). Optional: a read that fails is a line of evidence, not a failed
        answer."""
        if node_name(pod) or ADMISSION_GATE not in gate_names(pod):
            return (), (), ()
        ns, queue = namespace(pod), labels(pod).get(QUEUE_LABEL, "")
        unread: list[str] = []
        workloads, queues = await asyncio.gather(
            optional(f"Kueue Workloads of {ns}", self.workloads(ns), unread),
            optional(f"Kueue LocalQueue {queue} of {ns}", self._local_queue(ns, queue), unread),
        )
        named = text(spec(queues[0]).get("clusterQueue")) if queues else ""
        if named:
            queues += await optional(f"Kueue ClusterQueue {named}", self._cluster_queue(named), unread)
        return tuple(workloads), tuple(queues), tuple(unread)

    async def workloads(self, namespace: str) -> list[dict[str, Any]]:
        """Kueue Workloads in the namespace; none when Kueue is not installed (its API group 404s)."""
        try:
            return await self._source.api.items(
                Target("list", "workloads", namespace, _WORKLOAD[0], version=_WORKLOAD[1])
            )
        except NotFound:
            return []

    async def _local_queue(self, namespace: str, queue: str) -> list[dict[str, Any]]:
        """The LocalQueue by name."""
        group, version = _WORKLOAD
        return await self._named(Target("get", "localqueues", namespace, group, queue, "localqueue", version))

    async def _cluster_queue(self, queue: str) -> list[dict[str, Any]]:
        """The ClusterQueue by name."""
        group, version = _WORKLOAD
        return await self._named(Target("get", "clusterqueues", None, group, queue, "clusterqueue", version))

    async def _named(self, target: Target) -> list[dict[str, Any]]:
        """One of Kueue's objects by name; none when it (or Kueue) is not there, or the name is not one."""
        if not is_dns1123_subdomain(target.name):
            return []
        try:
            got = await self._source.api.get(target)
        except NotFound:
            return []
        return [got.body]
