"""What the placement steps read from a live cluster: only what a step needs, by name or with a
server-side selector, and nothing for a pod with no volume, no pod affinity and no spread constraint
(`tests/live/test_economy.py` counts that pod's calls)."""

from __future__ import annotations

from pathlib import Path

from cluster.snapshot import SnapshotReader
from devtools.apisim import Request, serve
from devtools.corpus import ROOT
from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify
from tests.live.support import cached_reader, live_reader
from tests.unit.test_upstream_placement import EXISTING_ON_A_CPU_NODE, NOW

TRIAGE = ROOT / "tests" / "corpus" / "triage"
STORAGE = frozenset({"persistentvolumeclaims", "persistentvolumes", "storageclasses", "csinodes"})


async def _requests(snapshot: Path, namespace: str, pod: str) -> list[Request]:
    with serve(snapshot, now=SnapshotReader.from_path(snapshot).now) as sim:
        async with live_reader(sim) as reader:
            view, prepared = await reader.triage_view(namespace, pod)
        offline, _ = await SnapshotReader.from_path(snapshot).triage_view(namespace, pod)
        assert classify(view, prepared).verdict == classify(offline).verdict
        return list(sim.requests)


def _shape(request: Request) -> tuple[str, ...]:
    return (
        request.verb,
        request.resource,
        request.namespace,
        request.name,
        request.query.get("labelSelector", ""),
    )


async def test_a_bound_claim_reads_its_pvc_pv_and_class_by_name_and_the_candidates_csinodes() -> None:
    asked = await _requests(TRIAGE / "gke-pvc-bound-other-zone.json", "llm", "llama-eval-ckpt-120-mlkhl")
    storage = sorted(_shape(r) for r in asked if r.resource in STORAGE)
    volume = next(r.name for r in asked if r.resource == "persistentvolumes")
    assert [s[:4] for s in storage if s[1] != "csinodes"] == [
        ("get", "persistentvolumeclaims", "llm", "llama-ckpt"),
        ("get", "persistentvolumes", "", volume),
        ("get", "storageclasses", "", "premium-rwo"),
    ]
    # Its PV is a CSI volume: the CSINodes of the two H100 nodes (those reaching the free-slot step).
    csinodes = [s for s in storage if s[1] == "csinodes"]
    assert len(csinodes) == 2
    assert all(s[0] == "get" and "a3-pool" in s[3] for s in csinodes)


async def test_an_attach_limit_reads_every_claim_and_volume_once() -> None:
    asked = await _requests(TRIAGE / "eks-ebs-attach-limit.json", "features", "embed-refresh-88-shm64")
    lists = sorted(_shape(r)[:2] for r in asked if r.resource in STORAGE and r.verb == "list")
    assert lists == [("list", "persistentvolumeclaims"), ("list", "persistentvolumes")]


async def test_an_unbound_wait_for_first_consumer_claim_lists_the_volumes_it_may_bind() -> None:
    asked = await _requests(TRIAGE / "onprem-local-pv-wffc.json", "vision", "vit-eval-9-crcln")
    lists = sorted(_shape(r)[:2] for r in asked if r.resource in STORAGE and r.verb == "list")
    assert lists == [("list", "persistentvolumes")]


async def test_anti_affinity_lists_the_pods_its_term_selects_in_its_namespace() -> None:
    asked = await _requests(
        TRIAGE / "gke-anti-affinity-one-per-node.json", "inference", "sdxl-serve-4jxsr4v5t8-qrjmh"
    )
    selected = [_shape(r) for r in asked if r.resource == "pods" and "labelSelector" in r.query]
    assert selected == [("list", "pods", "inference", "", "app in (sdxl-serve)")]
    assert not [r for r in asked if r.resource in STORAGE | {"namespaces"}]


async def test_a_namespace_selector_lists_the_namespaces_it_picks_then_their_pods() -> None:
    asked = await _requests(TRIAGE / "gke-pod-affinity-cache-zone.json", "recsys", "ranker-jztgn48jw7-g595p")
    namespaces = [_shape(r) for r in asked if r.resource == "namespaces"]
    # The namespaces the term's selector picks; then the pod's own, whose labels the cache pods'
    # anti-affinity (a namespaceSelector too) is matched against.
    assert namespaces == [
        ("list", "namespaces", "", "", "serves in (recsys)"),
        ("get", "namespaces", "", "recsys", ""),
    ]
    selected = [_shape(r) for r in asked if r.resource == "pods" and "labelSelector" in r.query]
    assert selected == [("list", "pods", "platform-cache", "", "app in (feature-cache)")]


async def test_the_anti_affinity_of_pods_on_nodes_short_of_the_free_slots_is_read_with_every_pod() -> None:
    """An existing pod on a CPU node repels the GPU pod from the GPU node of its region. A direct read
    lists the pods of the GPU node only, and says it did not check the others' anti-affinity; with
    `--all-pods`, or from the cache, every pod is read and the node is refused, as from the snapshot."""
    row = EXISTING_ON_A_CPU_NODE[0]
    objects = [*row.nodes, *row.pods, row.pod]
    with serve(objects, now=NOW) as sim:
        async with (
            live_reader(sim) as some,
            live_reader(sim, all_pods=True) as every,
            cached_reader(sim) as cached,
        ):
            partly = classify(*await some.triage_view("default", "p"))
            answers = [classify(*await r.triage_view("default", "p")) for r in (every, cached)]
    assert partly.verdict is PodVerdict.SCHEDULABLE
    assert any("--all-pods" in line for line in partly.evidence)
    offline = classify((await SnapshotReader(objects, NOW).triage_view("default", "p")).view)
    assert [a.verdict for a in answers] == [PodVerdict.POD_AFFINITY] * 2
    assert answers == [offline, offline]
