"""The GPU classifier alone, on the views the live reader builds for a large cluster: its time, and
the memory it allocates (tracemalloc's peak during one call, the view itself excluded)."""

from __future__ import annotations

import tracemalloc
from functools import partial

from bench.timing import Row, repeat
from cluster.cache import compact_node, compact_pod, kept
from devtools.cluster import NOW, Cluster
from diagnosis.relations import holds_node, node_name
from diagnosis.triage.classify import classify, usage_candidates
from diagnosis.views import TriageView

BENCHMARK = "b. classifier"


def view_of(
    cluster: Cluster, target: tuple[str, str], prefiltered: bool, devices_only: bool = False
) -> TriageView:
    """What `LiveReader.triage_view` reads for `target`: its candidate nodes (those matching its
    nodeSelector when `prefiltered`), the live pods bound to the nodes that reach the free-slot
    check, and the events about it. `devices_only`: the nodes and bound pods as the watch-backed
    cache serves them: compacted to what the diagnosis reads, and only the pods holding an extended
    resource, repelling with a required anti-affinity or using a PVC."""
    (pod,) = [p for p in cluster.pods if (p["metadata"]["namespace"], p["metadata"]["name"]) == target]
    selector = pod["spec"].get("nodeSelector", {}) if prefiltered else {}
    nodes = tuple(
        (compact_node(n) if devices_only else n)
        for n in cluster.nodes
        if all(n["metadata"]["labels"].get(k) == v for k, v in selector.items())
    )
    wanted = set(usage_candidates(pod, nodes))
    on_wanted = (p for p in cluster.pods if holds_node(p) and node_name(p) in wanted)
    bound = tuple(filter(kept, map(compact_pod, on_wanted)) if devices_only else on_wanted)
    events = tuple(e for e in cluster.events if e["involvedObject"].get("uid") == pod["metadata"]["uid"])
    return TriageView(pod, nodes, bound, events, NOW, prefiltered)


def peak_mib(view: TriageView) -> float:
    """The most memory one classification holds at once, in MiB."""
    tracemalloc.start()
    try:
        classify(view)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(cluster: Cluster, label: str, runs: int, budget_s: float) -> list[Row]:
    found = []
    for case, target, prefiltered, devices_only in (
        ("unpinned pod, all nodes", cluster.unpinned, False, False),
        ("pinned pod, nodes prefiltered", cluster.pinned, True, False),
        ("unpinned pod, as the cache serves it", cluster.unpinned, False, True),
        ("pinned pod, as the cache serves it", cluster.pinned, True, True),
    ):
        view = view_of(cluster, target, prefiltered, devices_only)
        sample, diagnosis = repeat(partial(classify, view), runs, budget_s)
        size = f"{len(view.nodes):,} nodes, {len(view.bound_pods):,} bound pods"
        peak = peak_mib(view)
        result = f"{diagnosis.verdict}; {size}; peak {peak:.1f} MiB"
        met = sample.p95 < 0.05 and peak < 200
        found.append(Row.timed(BENCHMARK, label, case, sample, result, "< 50 ms, < 200 MB", met))
    return found
