"""The cache of nodes and bound pods, kept by LIST and WATCH against the API simulator with the real
`kubernetes` client: changes pushed by the watches change the verdict, a 410 Gone lists again, a cut
watch resumes from where it was, the object cap and a refused watch stop it with a clear state, and
while it cannot be trusted the reader reads the cluster directly."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import sys
import threading
import weakref
from typing import Any

import msgspec
import pytest

from cluster.cache import BOUND_PODS, CacheOptions
from cluster.compact import BOUND_POD, NODE, compact_node, compact_pod
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader, load_objects
from cluster.transport import Retry, kept_items
from devtools import autoscaling_corpus
from devtools.apisim import Request, Simulator, serve
from devtools.corpus import ROOT, cases
from devtools.random_clusters import scenario
from diagnosis.dra_objects import Dra
from diagnosis.model import PodVerdict
from diagnosis.objects import kind, labels, meta, name, namespace, sequence, spec, status
from diagnosis.relations import holds_node
from diagnosis.triage.classify import classify
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.fit import owner, pod_requests
from diagnosis.triage.ports import host_ports
from diagnosis.triage.resources import effective_requests, group_pods
from diagnosis.triage.scheduling import Placement, taints
from diagnosis.workloads import priority
from handlers.reply import Scope
from handlers.triage import triage
from tests.live.support import GPU_CLUSTER, cached_reader, live_reader, settled, start_cache
from tests.unit.test_gpu_corpus import view_of

DRA_LAB = ROOT / "bot" / "demo" / "gpu-dra.json"
NO_DRA_OBJECTS = {"deviceclasses": 0, "resourceclaims": 0, "resourceslices": 0}
"""The lab cluster's API serves resource.k8s.io, with no object in it."""
NO_AUTOSCALER_OBJECTS = {"nodepools": 0, "nodeclaims": 0, "cluster-autoscaler-status": 0}
"""Nor any Karpenter object or cluster-autoscaler status."""

PINNED = ("ml-train", "llama-ft-0-x7k2p")
"""Asks 2 GPUs of the A100 pool, whose two nodes hold 2 and 1 of their 2: exhausted."""
ANYWHERE = ("ml-train", "notebook-carol")
"""Asks 1 GPU anywhere: the A100 node with one free GPU takes it (schedulable)."""
FULL, HALF = "gke-ml-prod-a100-pool-3f9c2a1b-7xkq", "gke-ml-prod-a100-pool-3f9c2a1b-m2pd"
HOLDER = "nightly-eval-29411520-5h8kq"
"""The pod holding one of HALF's two GPUs."""

QUICK = CacheOptions(backoff=Retry(attempts=3, base=0.05, cap=0.1))
"""Reconnections within a tenth of a second, for tests."""


def lab(kind: str, obj_name: str) -> dict[str, Any]:
    items = json.loads(GPU_CLUSTER.read_text())["items"]
    return copy.deepcopy(next(o for o in items if o["kind"] == kind and o["metadata"]["name"] == obj_name))


TAKER = "nightly-eval-29411580-x2v7c"


def taker() -> dict[str, Any]:
    """The next nightly eval, as HOLDER: it takes HALF's free GPU."""
    pod = lab("Pod", HOLDER)
    pod["metadata"] |= {"name": TAKER, "uid": "4a0e6c1e-3b9f-4d8e-9c1a-7f2b5d3e8a60"}
    return pod


async def verdict(reader: LiveReader, target: tuple[str, str]) -> PodVerdict:
    found = classify(*await reader.triage_view(*target)).verdict
    assert isinstance(found, PodVerdict)
    return found


DIRECT = "Nodes and bound pods read directly from the API server: kubewhy's cache of this cluster is "


async def read_directly(reader: LiveReader, target: tuple[str, str]) -> str | None:
    """The condition the answer's evidence gives for reading the cluster directly, or None when it
    says nothing of the kind (the cache answered)."""
    evidence = (await triage(reader, *target, Scope("lab"))).diagnosis.evidence
    said = [line.removeprefix(DIRECT) for line in evidence if line.startswith(DIRECT)]
    assert len(said) <= 1, said
    return said[0].split(" ", 1)[0] if said else None


async def watches_open(sim: Simulator) -> None:
    """Wait until the cache's eight watches are served (a synced cache may still be opening them): nodes,
    bound pods, the DRA DeviceClasses, ResourceClaims and ResourceSlices, Karpenter's NodePools and
    NodeClaims, and cluster-autoscaler's status ConfigMap."""
    await settled(lambda: sim.open_watches() == 8)


def held_on(reader: LiveReader, node: str) -> set[str]:
    assert reader.cache is not None
    return {name(p) for p in reader.cache.bound_pods([node])}


def reads_of_nodes_or_bound_pods(requests: list[Request]) -> list[str]:
    """The reader's own reads that the cache stands for (the cache's LIST and WATCH set aside; the
    unbound pods nominated to a node are always read live)."""
    return [
        r.path
        for r in requests
        if r.verb != "watch"
        and (r.resource == "nodes" or _by_node(r.query.get("fieldSelector", "")))
    ]


def _by_node(selector: str) -> bool:
    return "spec.nodeName=" in selector and "nominatedNodeName" not in selector


# — watch events change the answer —


@pytest.mark.parametrize("how", ["deleted", "succeeded"])
async def test_the_pod_holding_the_last_gpu_leaving_makes_the_pending_pod_schedulable(how: str) -> None:
    """Deleted, or finished: a pod that turns Succeeded leaves the watch's field selection and
    arrives as DELETED."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            assert await verdict(reader, PINNED) is PodVerdict.EXHAUSTED
            if how == "deleted":
                sim.store.delete("Pod", "ml-train", HOLDER)
            else:
                sim.store.put(lab("Pod", HOLDER) | {"status": {"phase": "Succeeded"}})
            await settled(lambda: HOLDER not in held_on(reader, HALF))
            start = len(sim.requests)
            assert await verdict(reader, PINNED) is PodVerdict.SCHEDULABLE
    assert reads_of_nodes_or_bound_pods(sim.requests[start:]) == []


async def test_a_tainted_pool_gives_taint() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            for node_name in (FULL, HALF):
                node = lab("Node", node_name)
                node["spec"]["taints"].append({"key": "maintenance", "value": "true", "effect": "NoSchedule"})
                sim.store.put(node)

            def tainted_twice(node: str) -> bool:
                return len(sequence(spec(cache.node(node)).get("taints"))) == 2

            await settled(lambda: tainted_twice(FULL) and tainted_twice(HALF))
            assert await verdict(reader, PINNED) is PodVerdict.TAINT


async def test_a_pod_bound_to_the_free_gpu_gives_exhausted() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            assert await verdict(reader, ANYWHERE) is PodVerdict.SCHEDULABLE
            sim.store.put(taker())
            await settled(lambda: TAKER in held_on(reader, HALF))
            assert await verdict(reader, ANYWHERE) is PodVerdict.EXHAUSTED


async def test_a_nodes_pods_are_grouped_once_and_again_when_one_of_them_changes() -> None:
    """Every question reads a node's group of pods (`NodePods`) as it was made, until a pod of that
    node changes: the other nodes keep theirs."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            before = cache.grouped([HALF, FULL, "no-such-node"])
            assert list(before) == sorted([FULL, HALF])
            assert cache.grouped([FULL, HALF]) == before  # the same groups, made once
            sim.store.put(taker())
            await settled(lambda: TAKER in held_on(reader, HALF))
            after = cache.grouped([FULL, HALF])
            assert after[FULL] is before[FULL]
            assert after[HALF] is not before[HALF]
            assert {name(p) for p in after[HALF].holding} == {HOLDER, TAKER}
            assert cache.bound_pods([FULL, HALF]) == (*after[FULL].pods, *after[HALF].pods)


async def test_a_group_made_while_its_nodes_pods_changed_is_not_kept() -> None:
    """The reader groups a node's pods off the event loop (`groups`, then `keep`): if a watch event
    changed them meanwhile, the group it made answers its own question but is not kept for the next."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            made, ungrouped = cache.groups([HALF])
            assert (made, list(ungrouped.pods)) == ({}, [HALF])
            sim.store.put(taker())
            await settled(lambda: TAKER in held_on(reader, HALF))
            cache.keep(group_pods(ungrouped.pods), ungrouped)
            made, again = cache.groups([HALF])
            assert made == {}
            assert TAKER in {name(p) for p in again.pods[HALF]}
            cache.keep(group_pods(again.pods), again)
            assert list(cache.groups([HALF])[0]) == [HALF]


async def test_what_a_question_found_on_a_node_goes_when_the_node_changes_or_goes() -> None:
    """The findings kept for the next question (`Prepared.findings`) name only the nodes as they
    are: a node that changes, or leaves the cluster, leaves them. /metrics counts them in the cache's
    memory."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            objects_alone = cache.estimated_bytes()
            assert await verdict(reader, ANYWHERE) is PodVerdict.SCHEDULABLE
            assert cache.estimated_bytes() > objects_alone
            assert FULL in cache.findings
            assert HALF in cache.findings
            node = lab("Node", FULL)
            node["metadata"]["labels"]["team"] = "research"
            sim.store.put(node)
            sim.store.delete("Node", "", HALF)
            await settled(lambda: FULL not in cache.findings and HALF not in cache.findings)
            assert labels(cache.node(FULL))["team"] == "research"
            assert cache.node(HALF) is None


async def test_a_change_of_nothing_the_diagnosis_reads_leaves_the_nodes_as_they_were() -> None:
    """A node's heartbeat (a new lastHeartbeatTime) changes nothing the diagnosis reads: the cache
    keeps the node object and hands over the same tuple of nodes, so what questions worked out of them
    still serves (`Findings`); a label change makes a new node object and a new tuple."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            assert await verdict(reader, ANYWHERE) is PodVerdict.SCHEDULABLE
            nodes, kept = cache.nodes(), cache.node(FULL)
            node = lab("Node", FULL)
            for condition in node["status"]["conditions"]:
                condition["lastHeartbeatTime"] = "2026-12-03T18:00:00Z"
            revision = cache.revisions["nodes"]
            sim.store.put(node)
            await settled(lambda: cache.revisions["nodes"] != revision)
            assert cache.nodes() is nodes
            assert cache.node(FULL) is kept
            assert FULL in cache.findings
            node["metadata"]["labels"]["team"] = "research"
            sim.store.put(node)
            await settled(lambda: labels(cache.node(FULL)).get("team") == "research")
            assert cache.nodes() is not nodes
            assert FULL not in cache.findings


async def test_the_nodes_of_a_label_follow_the_labels_as_they_change() -> None:
    """The nodes with a label are worked out of the nodes for each label key asked (off the event
    loop), again once a node changes: a label put on a node finds it, and taken off, no longer."""
    pool = "cloud.google.com/gke-nodepool"
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            a100 = labels(cache.node(FULL))[pool]
            assert {name(n) for n in await cache.nodes_labelled(pool, a100)} == {FULL, HALF}
            assert await cache.nodes_labelled("team", "research") == ()
            node = lab("Node", FULL)
            node["metadata"]["labels"]["team"] = "research"
            sim.store.put(node)
            await settled(lambda: labels(cache.node(FULL)).get("team") == "research")
            assert [name(n) for n in await cache.nodes_labelled("team", "research")] == [FULL]
            assert await cache.nodes_labelled("team", "search") == ()
            del node["metadata"]["labels"]["team"]
            sim.store.put(node)
            await settled(lambda: "team" not in labels(cache.node(FULL)))
            assert await cache.nodes_labelled("team", "research") == ()


async def test_a_node_that_changes_while_the_labels_are_read_is_read_again() -> None:
    """The nodes of a pod's nodeSelector come from the nodes by label, worked out off the event loop:
    a node that changes meanwhile (here FULL leaves the pinned pod's pool) is read again, not taken as
    it was before."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            read = cache.nodes_labelled
            moved = lab("Node", FULL)
            moved["metadata"]["labels"]["cloud.google.com/gke-nodepool"] = "a100-spare"

            async def while_a_node_changes(key: str, value: str) -> tuple[Any, ...]:
                found = await read(key, value)
                if labels(cache.node(FULL)).get(key) == value:
                    sim.store.put(moved)
                    await settled(lambda: labels(cache.node(FULL))[key] == "a100-spare")
                return found

            cache.nodes_labelled = while_a_node_changes  # type: ignore[method-assign]
            view = (await reader.triage_view(*PINNED)).view
    assert [name(n) for n in view.nodes] == [HALF]


async def test_nodes_that_change_at_every_read_of_their_labels_are_read_until_they_hold_still() -> None:
    """A cluster whose nodes change faster than their labels are read (each change a new tuple of
    nodes, as the cache hands it over) has them read again as often as it takes, past Python's
    recursion limit, and the answer is that of the nodes that held still."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            expected = [name(n) for n in (await reader.triage_view(*PINNED)).view.nodes]
            every, changes = cache.nodes, 4 * sys.getrecursionlimit()  # a few reads a try

            def changing() -> tuple[Any, ...]:
                nonlocal changes
                changes -= 1
                return tuple([*every()]) if changes > 0 else every()  # a new tuple: a change

            cache.nodes = changing  # type: ignore[method-assign]
            view = (await reader.triage_view(*PINNED)).view
    assert changes <= 0
    assert [name(n) for n in view.nodes] == expected


async def test_a_pod_deleted_and_made_again_under_its_name_is_kept_once() -> None:
    """The cache keeps bound pods by their uid: a pod deleted and made again under the same name (a
    StatefulSet's replica) is the new pod alone, on its node, as the API server serves it."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            old = lab("Pod", HOLDER)
            sim.store.delete("Pod", old["metadata"]["namespace"], HOLDER)
            await settled(lambda: HOLDER not in held_on(reader, HALF))
            again = copy.deepcopy(old)
            again["metadata"]["uid"] = "0b6f4a52-8c1e-4d0a-9e57-2f3c6d1a9b84"
            sim.store.put(again)
            await settled(lambda: HOLDER in held_on(reader, HALF))
            kept = [p for p in cache.pods_in(old["metadata"]["namespace"]) if name(p) == HOLDER]
            assert [meta(p)["uid"] for p in kept] == ["0b6f4a52-8c1e-4d0a-9e57-2f3c6d1a9b84"]
            assert [name(p) for p in cache.bound_pods([HALF])].count(HOLDER) == 1


async def test_a_question_about_the_same_nodes_gets_the_same_pods_until_one_changes() -> None:
    """Asked again about the same nodes, the cache hands over the very groups and list of pods it did
    (no new copy of every pod); once a pod of one of those nodes changes, new ones that hold it."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            first, _ = await reader.triage_view(*ANYWHERE)
            again, prepared = await reader.triage_view(*ANYWHERE)
            assert again.bound_pods is first.bound_pods
            assert prepared.grouped is not None
            assert HALF in prepared.grouped
            sim.store.put(taker())
            await settled(lambda: TAKER in held_on(reader, HALF))
            changed, _ = await reader.triage_view(*ANYWHERE)
    assert changed.bound_pods is not first.bound_pods
    assert TAKER in {name(p) for p in changed.bound_pods}
    assert TAKER not in {name(p) for p in first.bound_pods}


async def test_every_bound_pod_is_kept_and_counts_against_its_node() -> None:
    """A CPU-only pod holds cpu, memory and a pod slot on its node: the cache keeps it as it arrives,
    listed or watched, as it keeps a GPU pod, and both count against `max_objects`."""
    cpu_only = lab("Pod", "router-6b8f9c7d4d-2lmwz")
    cpu_only["metadata"] |= {"name": "router-6b8f9c7d4d-9xq2w", "uid": "0c6f3d8e-5a1b-4e7c-8d2f-3b9a6e1c4f70"}
    cpu_only["spec"]["nodeName"] = HALF
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, CacheOptions(max_objects=14)) as reader:
            cache = reader.cache
            assert cache is not None
            plugin = "nvidia-gpu-device-plugin-small-cos-2x49s"
            assert held_on(reader, HALF) == {HOLDER, plugin}
            sim.store.put(cpu_only)
            sim.store.put(taker())  # the watch delivers events in order: the CPU pod came first
            await settled(lambda: TAKER in held_on(reader, HALF))
            added = {"router-6b8f9c7d4d-9xq2w", TAKER}
            assert held_on(reader, HALF) == {HOLDER, plugin, *added}
            assert cache.state == "synced: 5 nodes, 9 bound pods"
            assert await verdict(reader, ANYWHERE) is PodVerdict.EXHAUSTED


def corpus_pods() -> list[dict[str, Any]]:
    """Every pod of the triage and JobSet corpora and of the GPU cluster."""
    snapshots = sorted({c.snapshot for k in ("triage", "jobset") for c in cases(k)} | {GPU_CLUSTER})
    pods = [o for snapshot in snapshots for o in load_objects(snapshot) if kind(o) == "Pod"]
    assert len(pods) > 100
    return pods


def test_a_compact_pod_holds_what_the_pod_holds() -> None:
    """Over every pod of the corpus: the same device request, the same requests of every other
    resource, the same host ports, owner and priority, the same hold on its node, the same identity
    and terminating state (all the diagnosis reads of a bound pod)."""
    for pod in corpus_pods():
        compact = compact_pod(pod)
        assert effective_requests(compact) == effective_requests(pod), name(pod)
        assert pod_requests(compact) == pod_requests(pod), name(pod)
        assert host_ports(compact) == host_ports(pod), name(pod)
        assert (owner(compact), priority(compact)) == (owner(pod), priority(pod)), name(pod)
        assert holds_node(compact) == holds_node(pod), name(pod)
        for field in ("name", "namespace", "uid", "deletionTimestamp"):
            assert meta(compact).get(field) == meta(pod).get(field), (name(pod), field)


def test_owner_references_no_api_server_writes_are_kept_as_read() -> None:
    """Owner references that are not all mappings of plain values (a name that is a list, an entry
    that is a string) are kept field by field, as read, and name the same owner: never an error,
    whether the pod was decoded whole or read from a LIST page (`BOUND_POD`)."""
    pod = copy.deepcopy(lab("Pod", HOLDER))
    job = {"kind": "Job", "name": ["odd"], "uid": "u-1", "controller": True}
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", **job}, "odd"]
    (listed,) = BOUND_POD.page.decode(json.dumps({"kind": "PodList", "items": [pod]}))["items"]
    for compact in (compact_pod(pod), compact_pod(listed)):
        assert meta(compact)["ownerReferences"] == [job, {}]
        assert owner(compact) == owner(pod)


def test_a_pod_decoded_into_what_compact_pod_reads_is_kept_as_the_whole_pod() -> None:
    """Over every pod of the corpus and of 200 random clusters (pods resized in place among them),
    and pods on the host's network, with pod-level resources or an ephemeral volume, served as one
    PodList: each pod decoded into only the fields `compact_pod` reads (`BOUND_POD.page`, how bound
    pods are read) is kept as the whole pod is, asking and holding what the whole pod does, and most
    of each pod is left out."""
    drawn = [o for seed in range(200) for o in scenario(seed)["items"] if kind(o) == "Pod"]
    base = lab("Pod", HOLDER)
    on_host = copy.deepcopy(base)
    on_host["spec"]["hostNetwork"] = True
    on_host["spec"]["containers"][0]["ports"] = [{"containerPort": 9400, "protocol": "TCP"}]
    pod_level = copy.deepcopy(base)
    pod_level["spec"]["resources"] = {"requests": {"cpu": "12", "memory": "96Gi"}}
    scratch = copy.deepcopy(base)
    claim = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Ti"}}}}
    scratch["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": claim}}]
    # A resize the kubelet found infeasible, said by the field older kubelets write; a sidecar resized.
    infeasible = copy.deepcopy(base)
    held = {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}
    infeasible["status"] |= {
        "resize": "Infeasible",
        "containerStatuses": [{"name": "main", "resources": {"requests": held}, "allocatedResources": held}],
    }
    sidecar = copy.deepcopy(base)
    agent = {"name": "log-agent", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}}
    sidecar["spec"]["initContainers"] = [agent]
    resized = {"cpu": "3", "memory": "64Mi"}
    sidecar["status"]["initContainerStatuses"] = [
        {"name": "log-agent", "resources": {"requests": resized}, "allocatedResources": resized}
    ]
    pods = [*corpus_pods(), *drawn, on_host, pod_level, scratch, infeasible, sidecar]
    listed = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": pods}
    page = json.dumps(listed).encode()
    read = BOUND_POD.page.decode(page)
    assert read["metadata"] == listed["metadata"]
    kept = [compact_pod(p) for p in read["items"]]
    assert kept == [compact_pod(p) for p in pods]
    for worked_out in (pod_requests, effective_requests, host_ports):
        assert [worked_out(p) for p in kept] == [worked_out(p) for p in pods], worked_out
    assert len(msgspec.json.encode(read)) < len(page) / 2


async def test_nodes_are_read_directly_with_what_the_cache_keeps_of_them() -> None:
    """The direct reader lists the nodes decoded into the fields `compact_node` keeps (`NODE`), no
    more: the diagnosis reads what the cache keeps either way."""
    with serve(GPU_CLUSTER) as sim:
        async with live_reader(sim) as direct, cached_reader(sim) as cached:
            assert cached.cache is not None
            kept = {name(n): n for n in cached.cache.nodes()}
            for target in (ANYWHERE, ("ml-train", "h100-probe")):
                view, _ = await direct.triage_view(*target)
                assert view.nodes
                assert all(compact_node(node) == kept[name(node)] for node in view.nodes), target
                assert not any("images" in status(node) or "annotations" in meta(node) for node in view.nodes)


async def test_a_page_shaped_as_no_api_server_serves_it_is_read_whole() -> None:
    """A bound pod whose containers are not a list does not fit the schema bound pods are decoded by:
    its page is decoded whole, by the direct reader and by the cache's LIST, which both count it."""
    odd = lab("Pod", "router-6b8f9c7d4d-2lmwz")
    odd["metadata"] |= {"name": "router-odd", "uid": "5d1f7e2a-8c3b-4f6d-9e0a-2b4c6d8e0f13"}
    odd["spec"] |= {"nodeName": HALF, "containers": {"not": "a list"}}
    with serve([*json.loads(GPU_CLUSTER.read_text())["items"], odd]) as sim:
        async with live_reader(sim) as direct, cached_reader(sim) as cached:
            view, prepared = await direct.triage_view(*ANYWHERE)
            assert "router-odd" in {name(p) for p in view.bound_pods}
            assert "router-odd" in held_on(cached, HALF)
            assert classify(*await cached.triage_view(*ANYWHERE)).verdict is classify(view, prepared).verdict


def test_compact_nodes_keep_their_taints_and_share_equal_ones() -> None:
    """Over every node of the corpus: the same taints, so every pod tolerates the same of them; nodes
    with equal taints share one list, which a pod's placement reads once."""
    snapshots = sorted({c.snapshot for k in ("triage", "jobset") for c in cases(k)} | {GPU_CLUSTER})
    objects = [o for snapshot in snapshots for o in load_objects(snapshot)]
    nodes = [o for o in objects if kind(o) == "Node"]
    compact = [compact_node(n) for n in nodes]
    assert len(nodes) > 100
    for node, kept in zip(nodes, compact, strict=True):
        assert taints(kept) == taints(node), name(node)
    placements = [Placement.of(p) for p in objects if kind(p) == "Pod"][:50]
    for placement in placements:
        assert [placement.untolerated(n) for n in compact] == [placement.untolerated(n) for n in nodes]
    by_taints: dict[str, list[Any]] = {}
    for kept in compact:
        listed = spec(kept).get("taints")
        if listed:
            first = by_taints.setdefault(json.dumps(listed, sort_keys=True), listed)
            assert first is listed
    assert len(by_taints) < sum(1 for kept in compact if spec(kept).get("taints"))
    # A pool's nodes share one spec and one list of conditions; each node's name is the one string of
    # its hostname label.
    for part, field in (("spec", None), ("status", "conditions")):
        by_text: dict[str, object] = {}
        for node, kept in zip(nodes, compact, strict=True):
            found = kept[part] if field is None else kept[part].get(field)
            if found is not None:
                assert by_text.setdefault(json.dumps(found, sort_keys=True), found) is found, name(node)
        assert len(by_text) < len(nodes) / 4, part
    for node, kept in zip(nodes, compact, strict=True):
        assert [c for c in status(kept).get("conditions", []) if "lastHeartbeatTime" in c] == []
        assert len(status(kept).get("conditions", [])) == len(status(node).get("conditions", []))
        hostname = meta(kept).get("labels", {}).get("kubernetes.io/hostname")
        assert hostname != name(kept) or hostname is name(kept)


def test_a_loop_that_ends_with_the_cache_watching_ends_at_once() -> None:
    """`asyncio.run` cancels what is left of its loop (a question that failed, and a reader never
    closed): each watch is cancelled while a thread of the cache waits on its next line. Closing it
    then waited for that line, with the loop blocked: the next bookmark, a minute on (here never).
    The watch is shut down first, which wakes the thread. Run in a thread of its own, so that the
    test sees a loop that never ends as one."""
    with serve(json.loads(GPU_CLUSTER.read_text())["items"]) as sim:
        sim.bookmark_seconds = 3600
        readers: list[LiveReader] = []

        async def left_watching() -> None:
            reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, 5.0, cache=CacheOptions())
            readers.append(reader)
            await start_cache(reader, sim)

        loop = threading.Thread(target=asyncio.run, args=(left_watching(),), daemon=True)
        loop.start()
        loop.join(30)
        assert not loop.is_alive(), "the loop is still closing a watch"
        (reader,) = readers
        assert reader.cache is not None
        reader.cache.threads.shutdown()


def test_nodes_read_directly_share_what_a_pool_carries_alike() -> None:
    """A LIST page of nodes decoded as a direct read keeps them (`NODE`): what the diagnosis reads, as
    the whole node has it, with equal taints, capacities and allocatables one object each (the funnel
    reads a pool's taints once); and the cache, which compacts the page's nodes as decoded, keeps
    them as it keeps the whole nodes."""
    snapshots = sorted({c.snapshot for k in ("triage", "jobset") for c in cases(k)} | {GPU_CLUSTER})
    nodes = [o for snapshot in snapshots for o in load_objects(snapshot) if kind(o) == "Node"]
    page = msgspec.json.encode({"apiVersion": "v1", "kind": "NodeList", "items": nodes})
    read = kept_items(NODE.page.decode(page), NODE.item)
    assert len(read) == len(nodes) > 100
    by_text: dict[str, object] = {}
    for node, kept in zip(nodes, read, strict=True):
        assert labels(kept) == labels(node), name(node)
        assert taints(kept) == taints(node), name(node)
        for field in ("capacity", "allocatable"):
            assert status(kept).get(field) == status(node).get(field), name(node)
            found = status(kept).get(field)
            assert by_text.setdefault(json.dumps(found, sort_keys=True), found) is found
        assert compact_node(kept) == compact_node(node), name(node)
    assert len(by_text) < len(nodes) / 4


async def test_compact_copies_keep_what_makes_an_init_container_a_sidecar() -> None:
    """A sidecar init container's GPU is held beside the app's (2 in all); a plain init container's
    is not (1): the cache keeps each init container's restartPolicy."""
    holder = lab("Pod", HOLDER)
    (app,) = holder["spec"]["containers"]
    holder["spec"]["initContainers"] = [
        {**copy.deepcopy(app), "name": "gpu-monitor", "restartPolicy": "Always"}
    ]
    objects = [o for o in json.loads(GPU_CLUSTER.read_text())["items"] if o["metadata"]["name"] != HOLDER]
    with serve([*objects, holder]) as sim:
        async with live_reader(sim) as direct, cached_reader(sim) as cached:
            expected = classify(*await direct.triage_view(*ANYWHERE))
            got = classify(*await cached.triage_view(*ANYWHERE))
    assert got == expected
    assert got.verdict is PodVerdict.EXHAUSTED


# — keeping up: resume, 410, reconnect —


async def test_a_cut_watch_resumes_from_the_last_revision_without_listing_again() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, QUICK) as reader:
            sweep = "sweep-lr-3e4-2-bk9vd"
            revision = sim.store.delete("Pod", "ml-train", sweep)["metadata"]["resourceVersion"]
            await settled(lambda: sweep not in held_on(reader, FULL))
            start = len(sim.requests)
            assert sim.drop_watches("pods") == 1
            await settled(lambda: any(r.verb == "watch" for r in sim.requests[start:]))
            sim.store.delete("Pod", "ml-train", HOLDER)
            await settled(lambda: HOLDER not in held_on(reader, HALF))
            assert reader.cache is not None
            assert reader.cache.synced
    pods = [(r.verb, r.query.get("resourceVersion")) for r in sim.requests[start:] if r.resource == "pods"]
    assert pods[0] == ("watch", revision)
    assert "list" not in {verb for verb, _ in pods}


async def test_a_watch_too_old_to_resume_lists_again() -> None:
    """The API server compacted its history while the watch was down: the resumed watch gets an
    ERROR event with 410 Expired, and the cache lists the pods again."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, QUICK) as reader:
            cache = reader.cache
            assert cache is not None
            sim.faults.fail(503, times=None, resource="pods", verb="watch")
            start = len(sim.requests)
            sim.drop_watches("pods")
            await settled(lambda: any(r.verb == "watch" for r in sim.requests[start:]))
            sim.store.delete("Pod", "ml-train", HOLDER)
            sim.store.compact()
            sim.faults.clear()
            await settled(lambda: HOLDER not in held_on(reader, HALF) and cache.synced)
            assert await verdict(reader, PINNED) is PodVerdict.SCHEDULABLE
    pods = [r.verb for r in sim.requests[start:] if r.resource == "pods" and r.verb in ("list", "watch")]
    assert "list" in pods
    assert pods.index("list") > pods.index("watch")


async def test_an_http_410_on_reconnect_lists_again() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, QUICK) as reader:
            sim.faults.fail(410, times=1, resource="pods", verb="watch")
            start = len(sim.requests)
            sim.drop_watches("pods")

            def pods() -> list[str]:
                return [r.verb for r in sim.requests[start:] if r.resource == "pods"]

            await settled(lambda: len(pods()) == 3)
            assert pods() == ["watch", "list", "watch"]
            assert reader.cache is not None
            assert await reader.cache.wait_synced(10)


async def test_an_api_server_down_at_start_is_retried_until_it_answers() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(503, times=None, resource="pods")
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, cache=QUICK)
        cache = reader.cache
        assert cache is not None
        try:
            cache.start()
            await settled(lambda: "pods retrying in" in cache.state)
            assert not cache.synced
            assert cache.condition == "syncing"
            assert "HTTP 503" in cache.state
            sim.faults.clear()
            assert await cache.wait_synced(10)
            assert cache.condition == "ready"
            assert cache.state == "synced: 5 nodes, 7 bound pods"
        finally:
            await reader.aclose()


async def test_while_the_cache_syncs_the_reader_reads_directly_and_says_so() -> None:
    with serve(GPU_CLUSTER) as sim:
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, cache=QUICK)
        cache = reader.cache
        assert cache is not None
        try:
            assert (cache.condition, cache.age()) == ("syncing", None)
            start = len(sim.requests)
            assert await read_directly(reader, PINNED) == "syncing"
            assert reads_of_nodes_or_bound_pods(sim.requests[start:])
            cache.start()
            assert await cache.wait_synced(10)
            start = len(sim.requests)
            assert await read_directly(reader, PINNED) is None
            assert not reads_of_nodes_or_bound_pods(sim.requests[start:])
            # What /metrics reports of it: the objects held, their memory, how long since it last heard.
            assert cache.held == {"nodes": 5, "pods": 7, **NO_DRA_OBJECTS, **NO_AUTOSCALER_OBJECTS}
            # What the question kept counts too: a few results worked out of the five nodes, ~10 KB each.
            assert 5 * 200 < cache.estimated_bytes() < 5 * 40_000
            age = cache.age()
            assert age is not None
            assert age >= 0
        finally:
            await reader.aclose()


async def test_a_watch_lost_for_longer_than_stale_seconds_sends_the_reader_to_the_api() -> None:
    options = CacheOptions(stale_seconds=0.2, backoff=Retry(attempts=3, base=0.05, cap=0.1))
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, options) as reader:
            cache = reader.cache
            assert cache is not None
            sim.faults.fail(503, times=None, resource="nodes", verb="watch")
            sim.drop_watches("nodes")
            await settled(lambda: not cache.synced)
            assert not cache.stopped
            assert cache.condition == "resyncing"
            start = len(sim.requests)
            assert await verdict(reader, PINNED) is PodVerdict.EXHAUSTED
            assert reads_of_nodes_or_bound_pods(sim.requests[start:])
            assert await read_directly(reader, PINNED) == "resyncing"
            sim.faults.clear()
            assert await cache.wait_synced(10)
            assert await read_directly(reader, PINNED) is None


# — stopping for good —


async def test_more_objects_than_the_cap_stop_the_cache_and_the_reader_reads_directly() -> None:
    """The lab has 5 nodes and 7 bound pods, 3 of them holding a GPU."""
    with serve(GPU_CLUSTER) as sim:
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, cache=CacheOptions(max_objects=6))
        assert reader.cache is not None
        try:
            reader.cache.start()
            assert not await reader.cache.wait_synced(10)
            assert reader.cache.stopped
            assert reader.cache.state.startswith(
                "stopped: the cluster has more nodes and bound pods than cache.max_objects ("
            )
            assert reader.cache.state.endswith(" > 6); reading the cluster directly")
            assert reader.cache.nodes() == ()
            assert reader.cache.held == {"nodes": 0, "pods": 0, **NO_DRA_OBJECTS, **NO_AUTOSCALER_OBJECTS}
            start = len(sim.requests)
            assert await verdict(reader, PINNED) is PodVerdict.EXHAUSTED
            assert reads_of_nodes_or_bound_pods(sim.requests[start:])
            assert await read_directly(reader, PINNED) == "stopped"
        finally:
            await reader.aclose()
    assert sim.open_watches() == 0


async def test_a_pod_added_past_the_cap_stops_the_cache() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, CacheOptions(max_objects=12)) as reader:
            cache = reader.cache
            assert cache is not None
            sim.store.put(taker())
            await settled(lambda: cache.stopped)
            assert "(13 > 12)" in cache.state
            assert cache.bound_pods([HALF]) == ()
            assert await verdict(reader, ANYWHERE) is PodVerdict.EXHAUSTED
            await settled(lambda: sim.open_watches() == 0)


async def test_a_refused_watch_stops_the_cache_with_the_rule_to_grant() -> None:
    """The LISTs are allowed: the cache syncs, then stops when it may not watch."""
    with serve(GPU_CLUSTER) as sim:
        sim.faults.forbid("pods", verb="watch")
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, cache=QUICK)
        cache = reader.cache
        assert cache is not None
        try:
            cache.start()
            await settled(lambda: cache.stopped)
            assert not cache.synced
            assert cache.state == (
                "stopped: forbidden: cannot watch pods at cluster scope — grant the rule"
                ' {apiGroups: [""], resources: ["pods"], verbs: ["watch"]} to kubewhy\'s ServiceAccount'
                " (deploy/base/rbac.yaml); reading the cluster directly"
            )
            assert await verdict(reader, PINNED) is PodVerdict.EXHAUSTED
        finally:
            await reader.aclose()


async def test_a_refusal_after_the_watch_was_allowed_is_retried() -> None:
    """A restarting API server refuses every request until its RBAC authorizer has read the roles
    (seen on kube-apiserver 1.34, `tests/real/test_cache.py`): a watch allowed before and refused now
    is retried, and the cache follows the changes made after."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, QUICK) as reader:
            cache = reader.cache
            assert cache is not None
            sim.faults.forbid("pods", verb="watch")
            start = len(sim.requests)
            sim.drop_watches("pods")
            await settled(lambda: any(r.verb == "watch" for r in sim.requests[start:]))
            sim.faults.clear()
            sim.store.delete("Pod", "ml-train", HOLDER)
            await settled(lambda: HOLDER not in held_on(reader, HALF))
            assert not cache.stopped
            assert await verdict(reader, PINNED) is PodVerdict.SCHEDULABLE


# — off the event loop —


@pytest.mark.timeout(15)
async def test_idle_watches_do_not_block_the_event_loop() -> None:
    """The watches stay open with nothing to send (no change, no bookmark) for an hour. Were their
    responses read on the event loop, it would hang in the first read until this test times out.
    Read in the cache's threads, a triage and a change both get through, from the cache."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, CacheOptions(watch_seconds=3600)) as reader:
            cache = reader.cache
            assert cache is not None
            start = len(sim.requests)
            assert await verdict(reader, PINNED) is PodVerdict.EXHAUSTED
            sim.store.delete("Pod", "ml-train", HOLDER)
            await settled(lambda: HOLDER not in held_on(reader, HALF))
            assert await verdict(reader, PINNED) is PodVerdict.SCHEDULABLE
            assert cache.synced
            assert reads_of_nodes_or_bound_pods(sim.requests[start:]) == []


async def test_a_cluster_without_dra_syncs_without_it() -> None:
    """Where `resource.k8s.io` is not served (DRA off), its three reflectors end at the 404 and the
    cache is synced with nodes and pods alone; a DRA pod is then read directly."""
    with serve(GPU_CLUSTER, without=("resource.k8s.io",)) as sim:
        async with cached_reader(sim) as reader:
            assert reader.cache is not None
            assert reader.cache.synced
            assert not reader.cache.dra_synced
            await settled(lambda: sim.open_watches() == 5)  # nodes, pods, the autoscalers' three


async def test_the_autoscalers_objects_come_from_the_cache_and_follow_changes() -> None:
    """The status ConfigMap is watched by its name before it exists: once cluster-autoscaler writes
    it, a cached /triage sees it without reading it; other ConfigMaps never reach the cache."""
    status = autoscaling_corpus.status_configmap(autoscaling_corpus.yaml_status(autoscaling_corpus.GROUPS), 0)
    other = {**status, "metadata": {**status["metadata"], "name": "kube-dns", "uid": "other"}}
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            assert cache.autoscaler_objects("configmaps") == ()
            sim.store.put(other)
            sim.store.put(status)
            await settled(lambda: len(cache.autoscaler_objects("configmaps") or ()) == 1)
            start = len(sim.requests)
            view = (await reader.triage_view(*PINNED)).view
            assert view.capacity.status is not None
            assert name(view.capacity.status) == "cluster-autoscaler-status"
            reads = [r.path for r in sim.requests[start:] if r.verb != "watch"]
            assert not [p for p in reads if "configmaps" in p or "karpenter.sh" in p]


async def test_a_cluster_without_karpenter_or_with_them_refused_keeps_the_cache() -> None:
    """Where `karpenter.sh` is not served, its reflectors end at the 404 and the cache knows there
    are none; where RBAC refuses the status ConfigMap, its reflector ends alone (the cache stays up)
    and the reader reads it directly, which says it was refused."""
    with serve(GPU_CLUSTER, without=("karpenter.sh",)) as sim:
        sim.faults.fail(403, times=None, resource="configmaps")
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            await settled(lambda: sim.open_watches() == 5)  # nodes, pods, the DRA objects
            assert cache.synced
            assert cache.autoscaler_objects("nodepools") == ()
            assert cache.autoscaler_objects("configmaps") is None
            view = (await reader.triage_view(*PINNED)).view
            assert any("cluster-autoscaler-status" in note and "forbidden" in note for note in view.notes)


async def test_dra_objects_come_from_the_cache_and_follow_changes() -> None:
    """On the DRA lab: the verdict through the cache is the direct one; a claim freed by the watch
    turns exhausted into schedulable without a LIST of claims or slices. A write that changes
    nothing the diagnosis reads of a claim (a label) leaves the claim as the cache parsed it."""
    with serve(DRA_LAB) as sim:
        async with cached_reader(sim) as reader:
            cache = reader.cache
            assert cache is not None
            await watches_open(sim)
            assert await verdict(reader, ("dra-lab", "case-dra-exhaust")) is PodVerdict.EXHAUSTED
            # One Dra while the claims stay as they are: their holders are worked out once.
            held = cache.dra()
            assert cache.dra() is held
            kept = ("dra-lab", "pretrain-8x")
            claim = next(o for o in load_objects(DRA_LAB) if (kind(o), name(o)) == ("ResourceClaim", kept[1]))
            labelled = sim.store.put({**claim, "metadata": {**meta(claim), "labels": {"team": "ml"}}})
            sim.store.delete("ResourceClaim", "dra-lab", "llm-finetune-gpus", "resource.k8s.io/v1")
            # The watch sends the label's write first: once the deletion is applied, so is it.
            await settled(lambda: ("dra-lab", "llm-finetune-gpus") not in cache.dra().claim_index)
            assert cache.dra() is not held
            assert labelled["metadata"]["labels"] == {"team": "ml"}
            assert cache.dra().claim_index[kept] is held.claim_index[kept]
            start = len(sim.requests)
            assert await verdict(reader, ("dra-lab", "case-dra-exhaust")) is PodVerdict.SCHEDULABLE
    read = [r.path for r in sim.requests[start:]]
    assert [p for p in read if "resourceclaims" in p or "resourceslices" in p] == []


async def test_the_cache_watches_what_it_listed() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim):
            pass  # it returns once the cache has listed and both watches are served
    cache_reads = {(r.verb, r.path, r.query.get("fieldSelector", "")) for r in sim.requests}
    assert cache_reads == {
        ("list", "/api/v1/nodes", ""),
        ("watch", "/api/v1/nodes", ""),
        ("list", "/api/v1/pods", BOUND_PODS),
        ("watch", "/api/v1/pods", BOUND_PODS),
        *(
            (verb, f"/apis/resource.k8s.io/v1/{plural}", "")
            for verb in ("list", "watch")
            for plural in ("deviceclasses", "resourceclaims", "resourceslices")
        ),
        *(
            (verb, f"/apis/karpenter.sh/v1/{plural}", "")
            for verb in ("list", "watch")
            for plural in ("nodepools", "nodeclaims")
        ),
        *(
            (verb, "/api/v1/namespaces/kube-system/configmaps", "metadata.name=cluster-autoscaler-status")
            for verb in ("list", "watch")
        ),
    }
    watches = [r.query for r in sim.requests if r.verb == "watch"]
    assert all(q["allowWatchBookmarks"] == "true" and q["timeoutSeconds"] == "300" for q in watches)


async def test_a_dra_pod_on_a_cluster_without_dra_is_told_so() -> None:
    with serve(DRA_LAB, without=("resource.k8s.io",)) as sim:
        async with live_reader(sim) as reader:
            found = classify(*await reader.triage_view("dra-lab", "case-dra-exhaust"))
    assert found.verdict is PodVerdict.CLAIM
    assert "serves no resource.k8s.io/v1 API" in found.summary


@pytest.mark.parametrize("how", ["direct", "cached"])
async def test_a_placed_dra_pods_answer_names_its_claim_devices_and_node(how: str) -> None:
    """A placed pod is answered from the pod alone, but its evidence still shows its claims: the
    devices allocated and the node they are on, read directly (its namespace's claims) or from the
    cache."""
    with serve(DRA_LAB) as sim:
        reading = live_reader(sim) if how == "direct" else cached_reader(sim)
        async with reading as reader:
            if how == "cached":
                await watches_open(sim)
            start = len(sim.requests)
            found = classify(*await reader.triage_view("dra-lab", "case-dra-ok"))
    assert found.verdict is PodVerdict.OK
    assert (
        "claim dra-lab/case-dra-ok-gpu-x7k2p (pod claim gpu): allocated gpu.nvidia.com/dra-h100-0/gpu-1, "
        "on node dra-h100-0; reserved for case-dra-ok"
    ) in found.evidence
    claims_read = [r for r in sim.requests[start:] if "resourceclaims" in r.path]
    assert [(r.verb, r.path) for r in claims_read] == (
        [("list", "/apis/resource.k8s.io/v1/namespaces/dra-lab/resourceclaims")] if how == "direct" else []
    )


# — what only the cache gives —


async def test_the_pods_that_compete_for_the_nodes_come_from_the_cache_as_in_the_snapshot() -> None:
    """The unscheduled pods that ask for devices are kept by the cache (one watch, no read per
    question): the pods competing for the exhausted pod's A100 nodes are those the snapshot names.
    Read directly, the answer names none rather than LIST every unscheduled pod."""
    from_snapshot = classify(*await SnapshotReader.from_path(GPU_CLUSTER).triage_view(*PINNED))
    assert len(from_snapshot.competing) == 2, from_snapshot.competing
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, CacheOptions(pending=True)) as reader:
            assert reader.cache is not None
            assert reader.cache.pending_synced
            cached = classify(*await reader.triage_view(*PINNED))
        async with live_reader(sim) as reader:
            direct = classify(*await reader.triage_view(*PINNED))
    assert cached.competing == from_snapshot.competing
    assert direct.verdict == cached.verdict == PodVerdict.EXHAUSTED
    assert direct.competing == ()


async def test_the_pending_pods_are_the_same_tuple_until_one_changes() -> None:
    """The cache hands over its pending pods as the same tuple while none changes, so what a question
    works out of them (which compete, `Findings.of_nodes`) serves the next one; a new pending pod makes
    a new tuple, and the next answer names it."""
    with serve(GPU_CLUSTER) as sim:
        async with cached_reader(sim, CacheOptions(pending=True)) as reader:
            cache = reader.cache
            assert cache is not None
            first = classify(*await reader.triage_view(*PINNED))
            pending = cache.pending_pods()
            assert cache.pending_pods() is pending
            assert classify(*await reader.triage_view(*PINNED)) == first
            named = first.competing[0].split(" ")[0]
            served = (o for o in load_objects(GPU_CLUSTER) if kind(o) == "Pod")
            rival = copy.deepcopy(next(p for p in served if f"{meta(p)['namespace']}/{name(p)}" == named))
            rival["metadata"] |= {"name": "llama-ft-rival-0", "uid": "5f0c2a9e-6d3b-4c1e-9a7f-2b8d4e6c1a30"}
            sim.store.put(rival)
            await settled(lambda: cache.pending_pods() is not pending)
            assert len(cache.pending_pods()) == len(pending) + 1
            again = classify(*await reader.triage_view(*PINNED))
    assert any("/llama-ft-rival-0 " in line for line in again.competing), again.competing
    assert set(first.competing) < set(again.competing)


@pytest.mark.parametrize("how", ["direct", "cached"])
async def test_a_dra_pods_fixes_are_checked_on_the_pods_of_the_nodes_they_free(how: str) -> None:
    """No node has the devices free, so no node's pods are needed for the verdict; the reader still
    reads the pods of the nodes the fixes would free, and the answer offers the fixes the snapshot's
    gives, each checked on them."""
    offline = classify(view_of(DRA_LAB, "dra-lab", "case-dra-exhaust"))
    with serve(DRA_LAB) as sim:
        reading = live_reader(sim) if how == "direct" else cached_reader(sim)
        async with reading as reader:
            found = classify(*await reader.triage_view("dra-lab", "case-dra-exhaust"))
    assert found.verdict is offline.verdict is PodVerdict.EXHAUSTED
    assert [(f.summary, f.opens) for f in found.fixes] == [(f.summary, f.opens) for f in offline.fixes]
    assert [f.summary.split(" (")[0] for f in found.fixes][:1] == ["free dra-a100-0"]  # least harm first


@pytest.mark.parametrize("how", ["direct", "cached"])
async def test_a_dra_question_leaves_no_cycle_of_the_dra_objects_for_the_collector(how: str) -> None:
    """The DRA objects a question reads or a fix changes (`Dra.with_claims`), and what the pod's
    claims found on them (`Devices`), are freed when nothing holds them: the objects never keep their
    own Devices, which hold them (a cycle held what was found on every node until the cyclic collector
    ran: on 65,000 nodes, hundreds of MiB after forty questions). Read directly, a question's objects
    go with it; the cache's go once a claim changes and a question reads the new ones."""
    with serve(DRA_LAB) as sim:
        reading = live_reader(sim) if how == "direct" else cached_reader(sim)
        async with reading as reader:
            await reader.triage_view("dra-lab", "case-dra-exhaust")  # what a first question keeps
            gc.collect()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                found = classify(*await reader.triage_view("dra-lab", "case-dra-exhaust"))
                assert found.fixes  # checked on DRA objects the fixes change
                if reader.cache is not None:
                    before = weakref.ref(reader.cache.dra())
                    claim = next(o for o in load_objects(DRA_LAB) if kind(o) == "ResourceClaim")
                    sim.store.delete("ResourceClaim", namespace(claim), name(claim), claim["apiVersion"])
                    await settled(lambda: reader.cache is not None and reader.cache.dra() is not before())
                    classify(*await reader.triage_view("dra-lab", "case-dra-exhaust"))
                    assert before() is None
                del found
                gc.collect()
                cycled = [type(o).__name__ for o in gc.garbage if isinstance(o, Dra | Devices)]
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
    assert cycled == []


async def test_waiting_for_a_complete_cache_waits_for_every_resource_it_keeps() -> None:
    """`wait_synced(complete=True)` returns once the pending pods, the DRA objects and the
    autoscalers' are listed too (or not served), not only the nodes and bound pods."""
    with serve(GPU_CLUSTER) as sim:
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, cache=CacheOptions(pending=True))
        try:
            cache = reader.cache
            assert cache is not None
            assert not cache.complete
            cache.start()
            assert await cache.wait_synced(10, complete=True), cache.state
            assert cache.complete
            assert cache.pending_synced
        finally:
            await reader.aclose()
