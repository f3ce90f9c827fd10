"""The nodes a pod could go to and the pods bound to them: from the cache while it is synced, else
read with as few calls as the cluster's size allows."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import Any

from cluster.compact import BOUND_POD, NODE, compact_pod
from cluster.live.source import Source
from cluster.transport import Kept, Target
from diagnosis.names import is_dns1123_subdomain, is_label_key, is_label_value
from diagnosis.objects import Object, name
from diagnosis.relations import NOT_TERMINAL, node_name
from diagnosis.triage.peers import spec_terms
from diagnosis.triage.resources import NodePods, group_pods, in_order
from diagnosis.triage.scheduling import Placement, node_selector
from diagnosis.triage.steps.pod_affinity import ANTI_AFFINITY

PER_NODE_ALWAYS = 64
"""Up to this many candidate nodes, their bound pods are read with one LIST per node (`WORKERS` at
a time: a few rounds of small answers), whatever the cluster's size."""

PER_NODE_MAX = 2000
"""Nodes asked for by name are read with one GET each up to this many, else with one LIST of every
node (a node is ~1 KB: 5,000 nodes are one 5.5 MB answer)."""


class NodeReads:
    """Nodes, and the pods bound or nominated to them."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._last: tuple[dict[str, NodePods], tuple[Object, ...]] = ({}, ())
        """The last groups handed over from the cache, and their pods (`bound_groups`)."""

    def pending_pods(self) -> tuple[Object, ...]:
        """The other pods waiting for devices, which compete with the pod for the same nodes: from
        the cache, which keeps them (`CacheOptions.pending`). Never read directly: that would be a
        LIST of every unscheduled pod for each question."""
        cache = self._source.cached()
        return cache.pending_pods() if cache is not None and cache.pending_synced else ()

    async def nominated_pods(self) -> tuple[Object, ...]:
        """The pods the scheduler nominated a node for and has not bound yet, any namespace: those of
        the pod's priority or more count against their node. Few at any time; one LIST."""
        unbound = f"spec.nodeName=,status.nominatedNodeName!=,{NOT_TERMINAL}"
        return tuple(await self._source.api.items(Target("list", "pods"), fieldSelector=unbound))

    async def candidates(self, pod: Object) -> tuple[Sequence[Object], bool]:
        """The nodes the pod could go to: those matching its nodeSelector, selected by the API server
        or from the cache (`prefiltered`); all nodes when it has none — or when none matches, so that
        the evidence can show which labels the nodes do have."""
        selector = label_selector(node_selector(pod))
        if selector is not None:
            matching = await self._nodes_labelled(pod, selector)
            if matching:
                return matching, True
        return await self.every(), False

    async def _nodes_labelled(self, pod: Object, selector: str) -> Sequence[Object]:
        """The nodes matching the pod's nodeSelector (`selector`, its label selector form). From the
        cache: those with its rarest label, kept by the classifier's own rule applied to the
        nodeSelector alone, as the API server applies the label selector."""
        cache = self._source.cached()
        if cache is None:
            return await self._source.api.items(Target("list", "nodes"), NODE, labelSelector=selector)
        wanted = {k: v for k, v in node_selector(pod).items() if isinstance(v, str)}
        while True:
            nodes = cache.nodes()
            rarest = min([await cache.nodes_labelled(k, v) for k, v in wanted.items()], key=len)
            if cache.nodes() is nodes:
                break  # else a node changed while its labels were read: read them again

        def matching() -> tuple[Object, ...]:
            placement = Placement.of({"spec": {"nodeSelector": wanted}})
            return tuple(n for n in rarest if placement.mismatch(n) is None)

        # The same tuple for every question until a node changes (`ClusterCache.until_nodes_change`).
        return cache.until_nodes_change(("selected", selector), matching)

    async def labelled(self, key: str, value: str) -> Sequence[Object]:
        """The nodes with the label `key=value`; none for a key or value no label can have."""
        if not is_label_key(key) or not is_label_value(value):
            return ()
        cache = self._source.cached()
        if cache is not None:
            return await cache.nodes_labelled(key, value)
        return await self._source.api.items(Target("list", "nodes"), NODE, labelSelector=f"{key}={value}")

    async def every(self) -> Sequence[Object]:
        cache = self._source.cached()
        if cache is not None:
            return cache.nodes()
        return await self._source.api.items(Target("list", "nodes"), NODE)

    def names(self, nodes: Sequence[Object]) -> frozenset[str]:
        """The names of these nodes; of a tuple the cache handed over, once while it hands it over."""
        cache = self._source.cached()
        if cache is not None and isinstance(nodes, tuple):
            return cache.findings.of_nodes(nodes, "names", partial(_names, nodes))
        return _names(nodes)

    async def named(self, names: Iterable[str]) -> list[Object]:
        """Nodes by name (empty names ignored); a node that is gone is simply absent (see
        PER_NODE_MAX)."""
        wanted = sorted({n for n in names if is_dns1123_subdomain(n)})
        cache = self._source.cached()
        if cache is not None:
            return [n for n in map(cache.node, wanted) if n is not None]
        if len(wanted) > PER_NODE_MAX:
            keep = set(wanted)
            return [n for n in await self.every() if name(n) in keep]
        return await self._source.by_name(wanted, "nodes", "node")

    async def repelling(self) -> tuple[Object, ...] | None:
        """Every bound pod of the cluster with a required pod anti-affinity, where the reader holds
        them all: from the cache, or (`Source.all_pods`) picked from one LIST of every bound pod;
        else None (the answer then says whose anti-affinity it did not check)."""
        cache = self._source.cached()
        if cache is not None:
            return cache.repelling_pods()
        if not self._source.all_pods:
            return None

        def repels(pod: Object) -> dict[str, Any] | None:
            return compact_pod(pod) if spec_terms(pod, ANTI_AFFINITY) else None

        bound = f"spec.nodeName!=,{NOT_TERMINAL}"
        kept = Kept(repels, BOUND_POD.page)
        return tuple(await self._source.api.items(Target("list", "pods"), kept, fieldSelector=bound))

    async def pods_on(self, node_names: Iterable[str], kept: Kept | None = None) -> tuple[Object, ...]:
        """Every non-terminated pod bound to these few nodes (or what `kept` keeps of each), read
        live (the cache keeps only pods that hold devices, and the ones wanted here serve them)."""
        wanted = sorted({n for n in node_names if is_dns1123_subdomain(n)})
        if not wanted:
            return ()
        queries = [{"fieldSelector": f"spec.nodeName={node},{NOT_TERMINAL}"} for node in wanted]
        return tuple(chain.from_iterable(await self._source.api.lists(Target("list", "pods"), queries, kept)))

    async def daemonsets(self, node_names: Sequence[str]) -> list[dict[str, Any]]:
        """Every DaemonSet of the cluster, when some nodes serve no device (`node_names`): which one
        runs the device plugin that should serve them, and why it does not. One LIST: a cluster has
        a few dozen. None read when every node serves."""
        if not node_names:
            return []
        return await self._source.api.items(Target("list", "daemonsets", group="apps"))

    async def bound_pods(self, node_names: Iterable[str], cluster_nodes: int | None) -> tuple[Object, ...]:
        """The non-terminated pods bound to these nodes, any namespace (`bound_groups`)."""
        return (await self.bound_groups(node_names, cluster_nodes))[0]

    async def bound_groups(
        self, node_names: Iterable[str], cluster_nodes: int | None
    ) -> tuple[tuple[Object, ...], dict[str, NodePods] | None]:
        """The non-terminated pods bound to these nodes, any namespace: from the cache, node by node
        with its groups of them (`Prepared.grouped`); else read node by node, or all bound pods of
        the cluster when that is cheaper (see `per_node`), without groups. `cluster_nodes` is how
        many nodes the cluster has, when all were read."""
        cache = self._source.cached()
        if cache is not None:
            made, ungrouped = cache.groups(node_names)
            last, listed = self._last
            same = made.keys() == last.keys() and all(made[n] is group for n, group in last.items())
            if same and not ungrouped.pods:
                # The same groups as the last question's (a placement asked about again): the same
                # objects, which the classifier's memos know (and no new tuple of every pod).
                return listed, last
            # Off the event loop: the groups of thousands of nodes put in order and their pods listed
            # (tens of milliseconds on 65,000 nodes), and thousands of pods grouped after a sync.
            built, grouped, bound = await asyncio.to_thread(_assembled, made, ungrouped.pods)
            cache.keep(built, ungrouped)
            self._last = (grouped, bound)
            return bound, grouped
        wanted = sorted({n for n in node_names if is_dns1123_subdomain(n)})
        target = Target("list", "pods")
        if not wanted:
            return (), None
        # Held as the cache holds them (`compact_pod`): what the diagnosis reads of a bound pod.
        if per_node(len(wanted), cluster_nodes):
            return await self.pods_on(wanted, BOUND_POD), None
        keep = set(wanted)

        def on_wanted(pod: Object) -> dict[str, Any] | None:
            return compact_pod(pod) if node_name(pod) in keep else None

        every = await self._source.api.items(
            target, Kept(on_wanted, BOUND_POD.page), fieldSelector=f"spec.nodeName!=,{NOT_TERMINAL}"
        )
        return tuple(every), None


def _assembled(
    made: dict[str, NodePods], ungrouped: Mapping[str, tuple[Object, ...]]
) -> tuple[dict[str, NodePods], dict[str, NodePods], tuple[Object, ...]]:
    """The groups of the `ungrouped` pods (node → its pods), and with those already `made`, every
    group in the order of its node's name and their pods one group after the other."""
    built = group_pods(ungrouped) if ungrouped else {}
    grouped = in_order(made | built)
    return built, grouped, tuple(chain.from_iterable(group.pods for group in grouped.values()))


def label_selector(selector: Mapping[str, object]) -> str | None:
    """The nodeSelector as a label selector, or None when it is empty or holds a key or value the
    API would refuse (the funnel then explains the mismatch from all the nodes)."""
    pairs = [(k, v) for k, v in selector.items() if isinstance(v, str)]
    if (
        not pairs
        or len(pairs) != len(selector)
        or not all(is_label_key(k) and is_label_value(v) for k, v in pairs)
    ):
        return None
    return ",".join(f"{k}={v}" for k, v in sorted(pairs))


def per_node(candidates: int, cluster_nodes: int | None) -> bool:
    """Whether to read the pods bound to `candidates` nodes one node at a time rather than with one
    LIST of every bound pod of the cluster. Each per-node LIST is an index lookup in the API
    server's watch cache (`spec.nodeName`, the kubelet's own query) carrying only that node's pods;
    the cluster-wide one carries every pod, and what costs is the client decoding them. Measured on
    a real kube-apiserver v1.34 with 5,000 nodes and 50,000 pods, for the 2,500 nodes of the GPU
    half (`kubewhy triage`, a pod asking one GPU): 2,500 per-node LISTs 5.5 s, the cluster-wide LIST
    (93 MB) 8.5 s. So per node while the candidates are at most half of the cluster's nodes
    (`cluster_nodes`, when every node was read), and always when they were selected by label (a
    pool: part of the cluster)."""
    return candidates <= PER_NODE_ALWAYS or cluster_nodes is None or 2 * candidates <= cluster_nodes


def _names(nodes: Iterable[Object]) -> frozenset[str]:
    return frozenset(name(n) for n in nodes)
