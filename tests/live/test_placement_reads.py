"""What the placement steps read from a live cluster: only what a step needs, by name or with a
server-side selector, and nothing for a pod with no volume, no pod affinity and no spread constraint
(`tests/live/test_economy.py` counts that pod's calls)."""

from __future__ import annotations

import copy
from pathlib import Path

from cluster.snapshot import SnapshotReader, load_objects
from devtools.apisim import Request, serve
from devtools.corpus import ROOT
from diagnosis.model import PodVerdict
from diagnosis.objects import Object, name
from diagnosis.triage.classify import classify
from tests.live.support import cached_reader, live_reader, settled
from tests.unit.test_upstream_placement import EXISTING_ON_A_CPU_NODE, NOW

TRIAGE = ROOT / "tests" / "corpus" / "triage"
RANKER = ("recsys", "ranker-jztgn48jw7-g595p")
"""A GPU pod whose affinity picks namespaces by label, near pods whose anti-affinity does too."""
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
    asked = await _requests(TRIAGE / "gke-pod-affinity-cache-zone.json", *RANKER)
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


async def test_from_the_cache_a_grouped_pods_namespace_selector_reads_the_pods_own_namespace() -> None:
    """The cache hands over the pods of the nodes that reach the free slots in groups: a pod on a GPU
    node that the pod's affinity does not select, whose anti-affinity picks namespaces by label (the
    only one: the feature cache's is taken out), is found in its group (`Groups.repelling`, kept for
    the same groups between questions); the pod's own Namespace is read for it at every question,
    and the answer is the snapshot's."""
    path = TRIAGE / "gke-pod-affinity-cache-zone.json"
    objects = load_objects(path)
    caches = [o for o in objects if o["kind"] == "Pod" and name(o).startswith("feature-cache-")]
    guard = copy.deepcopy(caches[0])
    for pod in caches:  # the guard's anti-affinity is then the only one
        del pod["spec"]["affinity"]
    guard["metadata"] |= {
        "name": "batch-guard-0",
        "uid": "5d0c7c1e-7a43-4f4e-9d0e-2b1f7c9a6e21",
        "labels": {"app": "batch-guard"},
        "ownerReferences": [],
    }
    guard["spec"]["nodeName"] = "gke-ml-prod-l4-pool-f24348fc-hr4j"
    objects.append(guard)
    now = SnapshotReader.from_path(path).now
    offline = classify((await SnapshotReader(objects, now).triage_view(*RANKER)).view)
    with serve(objects, now=now) as sim:
        async with cached_reader(sim) as reader:
            for _ in range(2):
                view, prepared = await reader.triage_view(*RANKER)
                assert prepared.grouped is not None
                grouped = [name(p) for group in prepared.grouped.values() for p in group.repelling]
                assert grouped == ["batch-guard-0"]
                assert "batch-guard-0" not in {name(p) for p in view.peers.pods}
                assert "recsys" in {name(n) for n in view.peers.namespaces}
                assert classify(view, prepared) == offline


async def test_from_the_cache_the_pods_with_those_that_repel_are_one_tuple_until_one_changes() -> None:
    """The pods on a CPU node whose anti-affinity repels the pod are added to the bound pods the cache
    hands over: asked again, the very same tuple (the classifier's memos know it, and no copy of
    every pod is made); once such a pod changes (it is being deleted), or a pod on the node read,
    a new tuple that holds it, and the same answer."""
    row = EXISTING_ON_A_CPU_NODE[0]
    objects = [*row.nodes, *row.pods, row.pod]
    repelling = name(next(p for p in row.pods if p["spec"].get("affinity")))
    with serve(objects, now=NOW) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None

            def held() -> Object:
                return next(p for p in cache.repelling_pods() if name(p) == repelling)

            first, prepared = await reader.triage_view("default", "p")
            again, _ = await reader.triage_view("default", "p")
            assert again.bound_pods is first.bound_pods
            before = held()
            assert any(p is before for p in first.bound_pods)
            changed = copy.deepcopy(next(p for p in row.pods if name(p) == repelling))
            # Being deleted: what the cache keeps of it changes (a terminating pod still repels).
            changed["metadata"] |= {
                "deletionTimestamp": "2026-11-29T08:59:30Z",
                "deletionGracePeriodSeconds": 30,
            }
            sim.store.put(changed)
            await settled(lambda: held() is not before)
            after, after_prepared = await reader.triage_view("default", "p")
            assert any(p is held() for p in after.bound_pods)
            # A pod bound to the node read: new bound pods, the same that repel.
            plain = copy.deepcopy(next(p for p in row.pods if name(p) == repelling))
            plain["metadata"] |= {"name": "plain", "uid": "0b7c2d9e-4f1a-4c3b-8e5d-6a9f1b2c3d4e"}
            plain["spec"] = {k: v for k, v in plain["spec"].items() if k != "affinity"} | {
                "nodeName": "nodeB"
            }
            sim.store.put(plain)
            await settled(lambda: "plain" in {name(p) for p in cache.bound_pods(["nodeB"])})
            last, _ = await reader.triage_view("default", "p")
            assert {"plain", repelling} <= {name(p) for p in last.bound_pods}
    assert after.bound_pods is not first.bound_pods
    assert classify(after, after_prepared) == classify(first, prepared)
    assert classify(after, after_prepared).verdict is PodVerdict.POD_AFFINITY
