"""The generated clusters are valid Kubernetes objects and look like a busy GKE cluster: what the
benchmarks measure is only as good as the objects they read."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

import kubernetes_validate
import pytest

from devtools.cluster import MAX_PODS, NOW, TOPOLOGY_KEY, Cluster, allocatable, generate
from devtools.cluster.catalog import ACCELERATOR_POOL_NODES, POOLS
from devtools.cluster.pools import pool_sizes
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return generate(40, 12, slices=3, hosts_per_slice=4)


def quantity(value: str) -> int:
    """cpu in millicores, memory in MiB, counts as they are: enough for the generator's quantities."""
    if value.endswith("m"):
        return int(value[:-1])
    for suffix, mib in (("Ki", 1 / 1024), ("Mi", 1), ("Gi", 1024)):
        if value.endswith(suffix):
            return int(int(value[: -len(suffix)]) * mib)
    return int(value)


def requests(pod: Obj) -> Counter[str]:
    total: Counter[str] = Counter()
    for container in pod["spec"]["containers"]:
        for resource, value in container["resources"].get("requests", {}).items():
            total[resource] += quantity(value) * (
                1000 if resource == "cpu" and not value.endswith("m") else 1
            )
    return total


def by_uid(objects: list[Obj]) -> dict[str, Obj]:
    return {o["metadata"]["uid"]: o for o in objects}


def test_same_seed_same_cluster_other_seed_other_cluster() -> None:
    def dump(c: Cluster) -> str:
        return json.dumps(c.objects(), sort_keys=True)

    first = generate(24, 10, slices=2, hosts_per_slice=2)
    assert dump(first) == dump(generate(24, 10, slices=2, hosts_per_slice=2))
    assert dump(first) != dump(generate(24, 10, slices=2, hosts_per_slice=2, seed=8))


def test_every_builtin_object_passes_the_kubernetes_schema_strictly(cluster: Cluster) -> None:
    """Strict: an unknown or misspelt field fails. One object per controller and kind keeps it quick."""
    seen: set[tuple[str, str]] = set()
    for obj in cluster.objects():
        if obj["kind"] == "JobSet":
            continue
        owner = (obj["metadata"].get("ownerReferences") or [{}])[0].get("name", obj["metadata"]["name"])
        if (obj["kind"], owner) in seen and obj["kind"] == "Pod":
            continue
        seen.add((obj["kind"], owner))
        kubernetes_validate.validate(obj, "1.33.0", strict=True)


def test_names_labels_and_uids_are_valid_and_unique(cluster: Cluster) -> None:
    keys = Counter(
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in cluster.objects()
    )
    assert max(keys.values()) == 1
    uids = Counter(o["metadata"]["uid"] for o in cluster.objects())
    assert max(uids.values()) == 1
    for obj in cluster.objects():
        meta = obj["metadata"]
        assert is_dns1123_subdomain(meta["name"]), meta["name"]
        assert all(is_label_key(k) and is_label_value(v) for k, v in meta.get("labels", {}).items()), meta[
            "name"
        ]
    assert all(is_dns1123_label(n["metadata"]["name"]) for n in cluster.nodes)


def test_pools_carry_gke_labels_and_accelerator_taints(cluster: Cluster) -> None:
    pools: dict[str, list[Obj]] = defaultdict(list)
    for node in cluster.nodes:
        pools[node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]].append(node)
    assert {
        "cpu-n2-pool",
        "cpu-highmem-pool",
        "a100-pool",
        "h100-pool",
        "l4-spot-pool",
        "tpu-v5p-slice-0",
    } <= set(pools)
    for node in pools["h100-pool"]:
        labels = node["metadata"]["labels"]
        assert labels["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in node["spec"]["taints"]
        assert node["status"]["capacity"]["nvidia.com/gpu"] == "8"
    for node in pools["l4-spot-pool"]:
        assert node["metadata"]["labels"]["cloud.google.com/gke-spot"] == "true"
    for node in pools["tpu-v5p-slice-0"]:
        assert node["metadata"]["labels"]["cloud.google.com/gke-tpu-accelerator"] == "tpu-v5p-slice"
        assert node["status"]["allocatable"]["google.com/tpu"] == "4"
        assert {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"} in node["spec"]["taints"]
    for node in pools["cpu-n2-pool"]:
        assert not any(k.startswith("nvidia.com/") for k in node["status"]["capacity"])


def test_some_nodes_are_cordoned_not_ready_or_with_unhealthy_gpus(cluster: Cluster) -> None:
    cordoned = [n for n in cluster.nodes if n["spec"].get("unschedulable")]
    not_ready = [
        n
        for n in cluster.nodes
        if any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n["status"]["conditions"])
    ]
    unhealthy = [n for n in cluster.nodes if n["status"]["allocatable"].get("nvidia.com/gpu") == "0"]
    assert cordoned
    assert not_ready
    assert unhealthy
    assert all(
        any(t["key"] == "node.kubernetes.io/unschedulable" for t in n["spec"]["taints"]) for n in cordoned
    )
    assert all(
        any(
            t["key"] == "node.kubernetes.io/unreachable" and t["effect"] == "NoExecute"
            for t in n["spec"]["taints"]
        )
        for n in not_ready
    )
    assert all(n["status"]["capacity"]["nvidia.com/gpu"] != "0" for n in unhealthy)


def test_bound_pods_fit_their_nodes_and_take_every_healthy_accelerator(cluster: Cluster) -> None:
    nodes = {n["metadata"]["name"]: n for n in cluster.nodes}
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for pod in cluster.pods:
        node = pod["spec"].get("nodeName")
        if node is None:
            continue
        assert node in nodes
        assert pod["status"]["hostIP"] == nodes[node]["status"]["addresses"][0]["address"]
        if pod["status"]["phase"] not in ("Succeeded", "Failed"):
            used[node] += requests(pod)
            used[node]["pods"] += 1
    for name, node in nodes.items():
        for resource in ("cpu", "memory", "nvidia.com/gpu", "google.com/tpu"):
            assert used[name][resource] <= allocatable(node, resource), (name, resource)
        assert used[name]["pods"] <= MAX_PODS
        for resource in ("nvidia.com/gpu", "google.com/tpu"):
            assert used[name][resource] == allocatable(node, resource), (name, resource)


def test_pods_are_owned_by_their_controllers(cluster: Cluster) -> None:
    jobs = by_uid(cluster.jobs)
    kinds: Counter[str] = Counter()
    for pod in cluster.pods:
        (owner,) = pod["metadata"]["ownerReferences"]
        kinds[owner["kind"]] += 1
        assert owner["controller"] is True
        if owner["kind"] == "Job":
            job = jobs[owner["uid"]]
            assert job["metadata"]["name"] == owner["name"]
            assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == owner["uid"]
        if owner["kind"] == "ReplicaSet":
            assert pod["metadata"]["name"].startswith(owner["name"] + "-")
    assert set(kinds) == {"DaemonSet", "ReplicaSet", "Job"}
    assert any(p["status"]["phase"] == "Succeeded" for p in cluster.pods)


def test_every_pending_pod_has_the_schedulers_condition_and_event(cluster: Cluster) -> None:
    events = {e["involvedObject"]["uid"]: e for e in cluster.events if e["reason"] == "FailedScheduling"}
    pending = [p for p in cluster.pods if "nodeName" not in p["spec"]]
    assert len(pending) >= 6
    n = len(cluster.nodes)
    for pod in pending:
        (condition,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        event = events[pod["metadata"]["uid"]]
        assert event["message"] == condition["message"]
        assert event["involvedObject"]["name"] == pod["metadata"]["name"]
        head, preemption = condition["message"].split(". preemption: ")
        assert head.startswith(f"0/{n} nodes are available: ")
        counted = sum(
            int(part.split(" ", 1)[0]) for part in preemption.split(": ", 1)[1].rstrip(".").split(", ")
        )
        assert counted == n
        assert NOW.isoformat()[:10] in event["eventTime"]


def test_targets_are_pending_gpu_pods_pinned_and_unpinned(cluster: Cluster) -> None:
    pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in cluster.pods}
    pinned, unpinned = pods[cluster.pinned], pods[cluster.unpinned]
    for pod in (pinned, unpinned):
        assert "nodeName" not in pod["spec"]
        assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] in ("1", "8")
    assert pinned["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
    assert "nodeSelector" not in unpinned["spec"]
    assert "Insufficient nvidia.com/gpu" in pinned["status"]["conditions"][0]["message"]


def test_the_jobset_runs_all_slices_but_the_last_whose_leader_is_pending(cluster: Cluster) -> None:
    (jobset,) = cluster.jobsets
    assert (jobset["metadata"]["namespace"], jobset["metadata"]["name"]) == cluster.jobset
    name = jobset["metadata"]["name"]
    children = [
        j for j in cluster.jobs if j["metadata"]["labels"].get("jobset.sigs.k8s.io/jobset-name") == name
    ]
    assert len(children) == 3
    assert all(j["metadata"]["ownerReferences"][0]["uid"] == jobset["metadata"]["uid"] for j in children)
    nodes = {n["metadata"]["name"]: n for n in cluster.nodes}
    pods = [p for p in cluster.pods if p["metadata"]["labels"].get("jobset.sigs.k8s.io/jobset-name") == name]
    by_job = defaultdict(list)
    for pod in pods:
        by_job[pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]].append(pod)
        assert pod["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == TOPOLOGY_KEY
    for index in ("0", "1"):
        assert len(by_job[index]) == 4
        pools = {nodes[p["spec"]["nodeName"]]["metadata"]["labels"][TOPOLOGY_KEY] for p in by_job[index]}
        assert pools == {f"tpu-v5p-slice-{index}"}
        for pod in by_job[index]:
            leader = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
            assert ("affinity" in pod["spec"]) == leader
            assert leader or pod["spec"]["nodeSelector"][TOPOLOGY_KEY] == f"tpu-v5p-slice-{index}"
    (leader,) = by_job["2"]
    assert leader["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert "nodeName" not in leader["spec"]
    rejected = [e for e in cluster.events if e["reason"] == "FailedCreate"]
    assert [e["involvedObject"]["name"] for e in rejected] == [f"{name}-slice-2"]
    assert "follower pod node selector for topology domain not found" in rejected[0]["message"]
    assert jobset["status"]["replicatedJobsStatus"][0]["ready"] == 2


def test_sizes_and_arguments() -> None:
    small = generate(60, 20, slices=2, hosts_per_slice=4)
    assert len(small.nodes) == 60
    bound = [p for p in small.pods if "nodeName" in p["spec"]]
    non_tpu = [n for n in small.nodes if "google.com/tpu" not in n["status"]["capacity"]]
    assert len(bound) >= 20 * len(non_tpu)
    with pytest.raises(ValueError, match="hosts_per_slice"):
        generate(60, 10, hosts_per_slice=3)
    with pytest.raises(ValueError, match="cannot hold"):
        generate(100, 10)


def test_a_large_accelerator_pool_is_split_into_pools_of_at_most_a_thousand_nodes() -> None:
    """At GKE's largest size the cluster runs many accelerator pools beside two large CPU pools."""
    sizes = pool_sizes(64_808)
    names = [pool.name for pool, _ in sizes]
    assert sum(size for _, size in sizes) == 64_808
    assert len(set(names)) == len(names)
    assert [(p.name, s) for p, s in sizes if p.accelerator is None] == [
        ("cpu-n2-pool", 25_921),
        ("cpu-highmem-pool", 9_722),
    ]
    gpu = [(p, s) for p, s in sizes if p.accelerator is not None]
    assert len(gpu) == 30
    assert all(970 <= s <= ACCELERATOR_POOL_NODES for _, s in gpu)
    assert {"h100-pool", "h100-pool-2", "h100-pool-10", "l4-spot-pool"} <= set(names)
    # Small clusters keep one pool of each kind, named as before.
    assert [p.name for p, _ in pool_sizes(4_808)] == [p.name for p in POOLS]


def test_the_pending_pods_may_be_counted() -> None:
    def waiting(pending: int | None) -> int:
        cluster = generate(60, 10, slices=2, hosts_per_slice=4, pending=pending)
        return sum(1 for p in cluster.pods if "nodeName" not in p["spec"])

    assert waiting(80) - waiting(40) == 40
    # By default a share of the pods, but at least one of each of the five kinds of pending pod.
    assert waiting(None) == waiting(5)
