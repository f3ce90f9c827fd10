"""Read economy: `/triage` reads what the verdict needs. A pod pinned to a node costs a fixed handful
of calls on any cluster size, and no read lists every pod of the cluster."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence

import pytest

from cluster.compact import compact_pod
from cluster.errors import Forbidden
from cluster.live.nodes import PER_NODE_ALWAYS, per_node
from cluster.snapshot import SnapshotReader
from cluster.transport import PAGE_SIZE, WORKERS
from devtools.apisim import Request, Simulator, serve
from diagnosis.model import PodVerdict
from diagnosis.objects import Object, name, namespace
from diagnosis.triage.classify import classify
from tests.live.generated import NAMESPACE, PINNED, UNPINNED, Generated, cluster
from tests.live.support import GPU_CLUSTER, cached_reader, live_reader

NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
NOMINATED = f"spec.nodeName=,status.nominatedNodeName!=,{NOT_TERMINAL}"
"""The unbound pods nominated to a node: those of the pod's priority or more count there."""


@pytest.fixture(scope="module")
def generated() -> Generated:
    return cluster(nodes=400, pods_per_node=8)


@pytest.fixture(scope="module")
def sim(generated: Generated) -> Iterator[Simulator]:
    with serve(generated.objects) as running:
        yield running


def _lists_of_pods(requests: list[Request]) -> list[str]:
    return [r.query.get("fieldSelector", "") for r in requests if r.resource == "pods" and r.verb == "list"]


def _held_compact(bound: Sequence[Object], served: Sequence[Object]) -> bool:
    """Whether the bound pods read are held as the cache holds them: what the diagnosis reads of
    each served pod (`compact_pod`), not the whole decoded pod."""
    pods = {(namespace(p), name(p)): p for p in served if p.get("kind") == "Pod"}
    return bool(bound) and all(p == compact_pod(pods[namespace(p), name(p)]) for p in bound)


@pytest.mark.parametrize(
    ("candidates", "cluster_nodes", "one_by_one"),
    [
        (64, 65_000, True),  # few: always one LIST each
        (2_500, 5_000, True),  # half of the cluster (measured: 5.5 s node by node, 8.5 s all at once)
        (2_501, 5_000, False),
        (30_000, 65_000, True),
        (40_000, 65_000, False),
        (20_000, None, True),  # selected by label: a pool, part of the cluster
    ],
)
def test_bound_pods_are_read_node_by_node_up_to_half_of_the_cluster(
    candidates: int, cluster_nodes: int | None, one_by_one: bool
) -> None:
    assert per_node(candidates, cluster_nodes) is one_by_one


def _since(sim: Simulator, start: int) -> list[Request]:
    return sim.requests[start:]


def _the_pod_and_its_events() -> list[tuple[object, ...]]:
    """What every /triage of the pinned pod reads first."""
    return [
        ("get", f"/api/v1/namespaces/{NAMESPACE}/pods/{PINNED}"),
        (
            "list",
            f"/api/v1/namespaces/{NAMESPACE}/events",
            ("fieldSelector", f"involvedObject.namespace={NAMESPACE},involvedObject.name={PINNED}"),
            ("limit", str(PAGE_SIZE)),
        ),
    ]


async def test_a_pod_pinned_to_a_node_costs_eight_calls(sim: Simulator, generated: Generated) -> None:
    start = len(sim.requests)
    async with live_reader(sim) as reader:
        view, prepared = await reader.triage_view(NAMESPACE, PINNED)
        calls = reader.stats.calls
    node, page = generated.pinned_node, ("limit", str(PAGE_SIZE))
    made = sorted((r.verb, r.path, *sorted(r.query.items())) for r in _since(sim, start))
    assert made == sorted(
        [
            *_the_pod_and_its_events(),
            ("list", "/api/v1/nodes", ("labelSelector", f"kubernetes.io/hostname={node}"), page),
            ("list", "/api/v1/pods", ("fieldSelector", f"spec.nodeName={node},{NOT_TERMINAL}"), page),
            ("list", "/api/v1/pods", ("fieldSelector", NOMINATED), page),
            # Whether a node will come: cluster-autoscaler's status, Karpenter's NodePools and NodeClaims.
            ("get", "/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status"),
            ("list", "/apis/karpenter.sh/v1/nodeclaims", page),
            ("list", "/apis/karpenter.sh/v1/nodepools", page),
        ]
    )
    assert calls == 8
    assert view.prefiltered
    assert classify(view, prepared).verdict is PodVerdict.EXHAUSTED


async def test_from_the_cache_a_pinned_pod_reads_no_autoscaler_object(
    sim: Simulator, generated: Generated
) -> None:
    """The cache keeps the nodes, the bound pods and what says whether a node will come (the status
    ConfigMap, Karpenter's NodePools and NodeClaims): the pod, its events and the nominated pods are
    read, nothing more."""
    async with cached_reader(sim) as reader:
        start = len(sim.requests)
        view, prepared = await reader.triage_view(NAMESPACE, PINNED)
    page = ("limit", str(PAGE_SIZE))
    made = sorted((r.verb, r.path, *sorted(r.query.items())) for r in _since(sim, start) if r.verb != "watch")
    assert made == sorted(
        [
            *_the_pod_and_its_events(),
            ("list", "/api/v1/pods", ("fieldSelector", NOMINATED), page),
        ]
    )
    assert classify(view, prepared).verdict is PodVerdict.EXHAUSTED


async def test_a_pod_with_few_candidates_lists_pods_node_by_node(generated: Generated) -> None:
    """Required node affinity naming 3 nodes: the API cannot select nodes on affinity, so all nodes
    are listed, then the bound pods of the 3 candidates only, one LIST each."""
    wanted = generated.gpu_nodes[:3]
    objects = [o for o in generated.objects if o["metadata"]["name"] != PINNED]
    pod = next(o for o in generated.objects if o["metadata"]["name"] == PINNED)
    pod = {
        **pod,
        "spec": {
            **pod["spec"],
            "nodeSelector": {},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": list(wanted),
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        },
    }
    with serve([*objects, pod]) as pool:
        async with live_reader(pool) as reader:
            view, prepared = await reader.triage_view(NAMESPACE, PINNED)
    assert sorted(_lists_of_pods(pool.requests)) == sorted(
        [NOMINATED, *(f"spec.nodeName={n},{NOT_TERMINAL}" for n in wanted)]
    )
    assert classify(view, prepared).verdict is PodVerdict.EXHAUSTED


async def test_a_pod_that_fits_a_pool_reads_that_pools_pods_node_by_node(
    sim: Simulator, generated: Generated
) -> None:
    """100 of the 400 nodes are candidates: more than PER_NODE_ALWAYS, a minority of the cluster."""
    assert PER_NODE_ALWAYS < len(generated.gpu_nodes) <= 400 // 2
    start = len(sim.requests)
    async with live_reader(sim) as reader:
        view, prepared = await reader.triage_view(NAMESPACE, UNPINNED)
    assert sorted(_lists_of_pods(_since(sim, start))) == sorted(
        [NOMINATED, *(f"spec.nodeName={n},{NOT_TERMINAL}" for n in generated.gpu_nodes)]
    )
    assert len(view.bound_pods) == 8 * len(generated.gpu_nodes)
    assert _held_compact(view.bound_pods, generated.objects)
    assert classify(view, prepared).verdict is PodVerdict.EXHAUSTED


async def test_a_refused_per_node_list_stops_the_others_and_is_named(generated: Generated) -> None:
    """The 100 per-node LISTs are shared out among the workers; the first refusal stops them all
    after the LIST each has in flight, and is the error raised."""
    with serve(generated.objects) as refusing:
        refusing.faults.fail(403, times=None, resource="pods", verb="list")
        async with live_reader(refusing) as reader:
            with pytest.raises(Forbidden) as refused:
                await reader.triage_view(NAMESPACE, UNPINNED)
    assert (refused.value.verb, refused.value.resource, refused.value.namespace) == ("list", "pods", None)
    assert 1 <= len(_lists_of_pods(refusing.requests)) <= WORKERS < len(generated.gpu_nodes)


async def test_a_pod_that_fits_most_nodes_reads_bound_pods_in_pages() -> None:
    """150 of 200 nodes are candidates: one cluster-wide LIST of bound pods, in pages."""
    most = cluster(nodes=200, pods_per_node=8, gpu_share=0.75)
    with serve(most.objects) as crowded:
        async with live_reader(crowded) as reader:
            view, prepared = await reader.triage_view(NAMESPACE, UNPINNED)
    pages = -(-200 * 8 // PAGE_SIZE)
    assert _lists_of_pods(crowded.requests) == [NOMINATED] + [f"spec.nodeName!=,{NOT_TERMINAL}"] * pages
    assert len(view.bound_pods) == 8 * len(most.gpu_nodes)
    assert _held_compact(view.bound_pods, most.objects)
    assert (
        classify(view, prepared).verdict
        is classify(*await SnapshotReader(most.objects).triage_view(NAMESPACE, UNPINNED)).verdict
        is PodVerdict.EXHAUSTED
    )


@pytest.mark.parametrize(
    ("name", "reads"),
    [
        ("vllm-llama3-8b-7d9f8b6c5-k2xjp", ["pods/get", "events/list", "nodes/get"]),
        ("router-6b8f9c7d4d-2lmwz", ["pods/get", "events/list", "nodes/get"]),
        (
            "batch-infer-0-4tq8m",
            # A gated pod may still wait for a node (Kueue's checks, an autoscaler): those three reads.
            [
                "pods/get",
                "events/list",
                "workloads/list",
                "localqueues/get",
                "clusterqueues/get",
                "configmaps/get",
                "nodepools/list",
                "nodeclaims/list",
            ],
        ),
    ],
    ids=["placed", "no-request", "gated"],
)
async def test_a_pod_decided_by_itself_reads_no_node_list_and_no_pods(name: str, reads: list[str]) -> None:
    """Placed, asking nothing, gated: the verdict needs the pod (and the node it is on, for the
    evidence; for a pod gated by Kueue, its namespace's Workloads, its LocalQueue and that queue's
    ClusterQueue, and whether a node will come), never the candidates or their pods."""
    namespace = "ml-serve" if name.startswith(("vllm", "router")) else "ml-train"
    with serve(GPU_CLUSTER) as small:
        async with live_reader(small) as reader:
            await reader.triage_view(namespace, name)
    assert sorted(f"{r.resource}/{r.verb}" for r in small.requests) == sorted(reads)


async def test_the_cache_holds_what_repeats_once_and_keeps_the_collector_off_what_it_listed(
    sim: Simulator, generated: Generated
) -> None:
    """A workload's pods share one list of owner references and one dict of owner labels, a pool's
    nodes one capacity; what a LIST brought is frozen out of the cyclic collector's passes."""
    frozen = gc.get_freeze_count()
    async with cached_reader(sim) as reader:
        cache = reader.cache
        assert cache is not None
        nodes = cache.nodes()
        pods = cache.bound_pods(name(n) for n in nodes)
        assert gc.get_freeze_count() > frozen
    by_owner: dict[str, list[Object]] = {}
    for pod in pods:
        owners = pod["metadata"].get("ownerReferences", [])
        if owners and owners[0]["kind"] == "ReplicaSet":
            by_owner.setdefault(owners[0]["name"], []).append(pod)
    replicated = next(group for group in by_owner.values() if len(group) > 1)
    first, second = replicated[:2]
    assert first["metadata"]["ownerReferences"] is second["metadata"]["ownerReferences"]
    assert first["metadata"]["labels"] is second["metadata"]["labels"]
    capacities = {id(n["status"]["capacity"]) for n in nodes}
    assert len(capacities) < len(nodes) / 10


def test_an_owner_reference_that_cannot_be_shared_is_kept_as_it_is() -> None:
    """A value the API never writes there (a list) is kept, not shared, and not an error."""
    pod = {
        "metadata": {
            "name": "odd",
            "namespace": "ml",
            "ownerReferences": [{"kind": "ReplicaSet", "name": ["not", "a", "name"], "uid": "u"}],
            "labels": {"pod-template-hash": "abc"},
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
    }
    kept = compact_pod(pod)
    odd = {"kind": "ReplicaSet", "name": ["not", "a", "name"], "uid": "u"}
    assert kept["metadata"]["ownerReferences"] == [odd]
    assert kept["metadata"]["labels"] == {"pod-template-hash": "abc"}
