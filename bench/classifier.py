"""The GPU classifier alone, on the views the live reader builds for a large cluster: its time, and
the memory it allocates (tracemalloc's peak during one call, the view itself excluded). A view reads
the nodes and bound pods as the reader holds them: decoded from a LIST page and kept as a direct read
keeps them (`cluster.compact.NODE`, `BOUND_POD`: objects of their own, as JSON decodes them, not the
generator's, whose pods of one template share their containers), or as the watch-backed cache serves
them, compacted and grouped by node. On a cluster whose GPUs are DRA devices
(`devtools.dra_cluster`), the view holds its DRA objects parsed, as the reader hands them over."""

from __future__ import annotations

import copy
import tracemalloc
from collections.abc import Iterable
from functools import partial
from itertools import chain

import msgspec

from bench.timing import Row, repeat
from cluster.compact import BOUND_POD, NODE, compact_node, compact_pod
from cluster.reader import TriageRead
from cluster.transport import Kept, kept_items
from devtools.cluster import NOW, Cluster
from diagnosis.dra_objects import NO_DRA, Dra
from diagnosis.objects import Object, labels, name, namespace, spec
from diagnosis.relations import holds_node, node_name
from diagnosis.triage.classify import classify, usage_candidates
from diagnosis.triage.findings import Findings
from diagnosis.triage.prepared import Prepared
from diagnosis.triage.resources import NodePods, effective_requests, group_pods, in_order
from diagnosis.views import TriageView

BENCHMARK = "b. classifier"
DIRECT = "read directly"


def view_of(
    cluster: Cluster,
    target: tuple[str, str],
    prefiltered: bool,
    devices_only: bool = False,
    dra: Dra = NO_DRA,
) -> TriageRead:
    """What `LiveReader.triage_view` reads for `target`: its candidate nodes (those matching its
    nodeSelector when `prefiltered`), the live pods bound to the nodes that reach the free-slot
    check, and the events about it, as a direct read keeps them (`as_read`). `devices_only`: the
    nodes and bound pods as the watch-backed cache serves them, compacted to what the diagnosis
    reads (`compact_node`, `compact_pod`) and grouped by node."""
    (pod,) = [p for p in cluster.pods if (p["metadata"]["namespace"], p["metadata"]["name"]) == target]
    selector = pod["spec"].get("nodeSelector", {}) if prefiltered else {}
    selected = [n for n in cluster.nodes if all(labels(n).get(k) == v for k, v in selector.items())]
    wanted = set(usage_candidates(pod, selected, dra))
    on_wanted = [p for p in cluster.pods if holds_node(p) and node_name(p) in wanted]
    events = tuple(e for e in cluster.events if e["involvedObject"].get("uid") == pod["metadata"]["uid"])
    if not devices_only:
        nodes, bound = as_read(selected, NODE), as_read(on_wanted, BOUND_POD)
        return TriageRead(TriageView(pod, nodes, bound, events, NOW, prefiltered, dra=dra))
    nodes = tuple(map(compact_node, selected))
    grouped = cache_groups(on_wanted)
    # The cache adds every pod elsewhere whose required anti-affinity may repel the pod: those whose
    # compacted form keeps an affinity (`ClusterCache.repelling_pods`).
    elsewhere = (compact_pod(p) for p in cluster.pods if holds_node(p) and node_name(p) not in wanted)
    repelling = (p for p in elsewhere if spec(p).get("affinity"))
    bound = (*chain.from_iterable(group.pods for group in grouped.values()), *repelling)
    view = TriageView(pod, nodes, bound, events, NOW, prefiltered, dra=dra)
    return TriageRead(view, Prepared(findings=Findings(), grouped=grouped))


def as_read(objects: Iterable[Object], kept: Kept) -> tuple[Object, ...]:
    """The objects as a direct read keeps them: a LIST page of them decoded as `kept` decodes it, and
    what `kept` keeps of each item."""
    page = kept.page.decode(msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return tuple(kept_items(page, kept.item))


def cache_groups(pods: Iterable[Object]) -> dict[str, NodePods]:
    """The pods compacted and grouped by node, as the cache keeps them (`ClusterCache.grouped`)."""
    by_node: dict[str, list[Object]] = {}
    for pod in pods:
        by_node.setdefault(node_name(pod), []).append(compact_pod(pod))
    return in_order(group_pods(by_node))


def new_steps_view(cluster: Cluster, compacted: bool) -> TriageRead:
    """The worst case for the steps after the free devices: every accelerator pod of the cluster gone
    (a fleet just drained), so every GPU node has its GPUs free and reaches `node-resources` with
    all its other pods, and the unpinned pod asks 500 cpu, which no node has. The nodes and bound
    pods as a direct read keeps them (`as_read`), or, `compacted`, the bound pods as the watch-backed
    cache keeps them."""
    (pod,) = [p for p in cluster.pods if (namespace(p), name(p)) == cluster.unpinned]
    asking = copy.deepcopy(pod)
    asking["spec"]["containers"][0]["resources"].setdefault("requests", {})["cpu"] = "500"
    wanted = set(usage_candidates(asking, cluster.nodes))
    bound = [
        p for p in cluster.pods if holds_node(p) and node_name(p) in wanted and not effective_requests(p)
    ]
    if not compacted:
        nodes, pods = as_read(cluster.nodes, NODE), as_read(bound, BOUND_POD)
        return TriageRead(TriageView(asking, nodes, pods, (), NOW))
    grouped = cache_groups(bound)
    pods = tuple(chain.from_iterable(group.pods for group in grouped.values()))
    view = TriageView(asking, tuple(cluster.nodes), pods, (), NOW)
    return TriageRead(view, Prepared(findings=Findings(), grouped=grouped))


def peak_mib(view: TriageView, prepared: Prepared) -> float:
    """The most memory one classification holds at once, in MiB."""
    tracemalloc.start()
    try:
        classify(view, prepared)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(cluster: Cluster, label: str, runs: int, budget_s: float, dra: Dra | None = None) -> list[Row]:
    """Each pod on the views the reader builds; on a cluster without DRA, also the drained fleet
    (`new_steps_view`). Targets: a view read directly (no group made) and the drained fleet under
    100 ms, the others under 50 ms."""
    found = []
    parsed = dra or NO_DRA
    unpinned, pinned = cluster.unpinned, cluster.pinned
    views = {
        f"unpinned pod, all nodes, {DIRECT}": partial(view_of, cluster, unpinned, False, dra=parsed),
        f"pinned pod, nodes prefiltered, {DIRECT}": partial(view_of, cluster, pinned, True, dra=parsed),
        "unpinned pod, as the cache serves it": partial(view_of, cluster, unpinned, False, True, parsed),
        "pinned pod, as the cache serves it": partial(view_of, cluster, pinned, True, True, parsed),
    }
    drained = "unpinned pod to node-resources"
    new_steps = {
        f"{drained} (GPUs free), all nodes, {DIRECT}": partial(new_steps_view, cluster, False),
        f"{drained}, as the cache serves it": partial(new_steps_view, cluster, True),
    }
    if dra is not None:
        new_steps = {}
    for case, build in (*views.items(), *new_steps.items()):
        view, prepared = build()
        limit = 0.1 if case in new_steps or case.endswith(DIRECT) else 0.05
        sample, diagnosis = repeat(partial(classify, view, prepared), runs, budget_s)
        size = f"{len(view.nodes):,} nodes, {len(view.bound_pods):,} bound pods"
        peak = peak_mib(view, prepared)
        result = f"{diagnosis.verdict}; {size}; peak {peak:.1f} MiB"
        met = sample.p95 < limit and peak < 200
        target = f"< {limit * 1000:.0f} ms, < 200 MB"
        found.append(Row.timed(BENCHMARK, label, case, sample, result, target, met))
    return found
