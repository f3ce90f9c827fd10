"""What a pod asks for and what a node has left, with the scheduler's arithmetic (kube-scheduler's
`resource.PodRequests` and `NodeInfo.Requested`; the kubelet device manager's capacity and
allocatable)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from devtools.corpus import ROOT
from diagnosis.objects import Object, name, namespace
from diagnosis.quantity import count
from diagnosis.triage.fit import amount, usage
from diagnosis.triage.resources import (
    Counted,
    Groups,
    NodePods,
    Offer,
    device_holders,
    effective_requests,
    group_pods,
    holders,
    is_extended,
    offer,
)
from diagnosis.workloads import Owner, OwnersSeen, preempts_below, top_owner

LAB = json.loads((ROOT / "bot/demo/gpu-lab.json").read_text())["items"]


def lab(kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in LAB if o["kind"] == kind and o["metadata"]["name"] == name))


def container(
    name: str,
    limits: dict[str, Any] | None = None,
    requests: dict[str, Any] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": name,
        "image": "nvcr.io/nvidia/cuda:12.6.2-base-ubuntu22.04",
        "imagePullPolicy": "IfNotPresent",
        "resources": {k: v for k, v in (("limits", limits), ("requests", requests)) if v is not None},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if restart_policy:
        found["restartPolicy"] = restart_policy
    return found


def pod_with(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    pod = lab("Pod", "case-taint")
    pod["spec"]["containers"] = containers
    if init is not None:
        pod["spec"]["initContainers"] = init
    return pod


GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("2", 2),
        ("8", 8),
        ("0", 0),
        ("1000m", 1),
        ("3000m", 3),
        ("1500m", 2),
        ("500m", 1),
        ("1k", 1000),
        ("1Ki", 1024),
        ("2Mi", 2 * 2**20),
        ("1e3", 1000),
        ("1E2", 100),
        ("+4", 4),
        ("0.5", 1),
        ("1e-3", 1),
        (".5", 1),
        (1, 1),
        (0, 0),
        (2.0, 2),
        ("1E", 10**18),
        ("9e99", 2**63 - 1),
    ],
)
def test_quantity(text: object, value: int) -> None:
    assert count(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "-1",
        "1 ",
        "1x",
        "1Kb",
        "e3",
        "NaN",
        "Infinity",
        True,
        None,
        [1],
        -1,
        float("nan"),
        float("inf"),
        "1e999999999999"[:-1] + "x",
    ],
)
def test_not_a_quantity(text: object) -> None:
    assert count(text) is None


def test_huge_exponent_is_cheap_and_capped() -> None:
    assert count("1e999999999") == 2**63 - 1
    assert count("0e999999999") == 0


@pytest.mark.parametrize(
    ("resource", "extended"),
    [
        ("nvidia.com/gpu", True),
        ("nvidia.com/gpu.shared", True),
        ("nvidia.com/mig-1g.5gb", True),
        ("amd.com/gpu", True),
        ("google.com/tpu", True),
        ("vpc.amazonaws.com/efa", True),
        ("cpu", False),
        ("memory", False),
        ("hugepages-2Mi", False),
        ("ephemeral-storage", False),
        ("foo.kubernetes.io/bar", False),
        ("kubernetes.io/batteries", False),
        ("requests.nvidia.com/gpu", False),
        ("Nvidia.com/gpu", False),
        ("nvidia.com/", False),
        ("nvidia.com/gpu/x", False),
        ("/gpu", False),
    ],
)
def test_extended_resource_names(resource: str, extended: bool) -> None:
    assert is_extended(resource) is extended


def test_limits_with_requests_defaulted() -> None:
    assert effective_requests(lab("Pod", "case-ok")) == {GPU: 1}


def test_milli_quantities_are_whole_devices() -> None:
    pod = pod_with([container("a", limits={GPU: "2000m"}), container("b", limits={GPU: 1})])
    assert effective_requests(pod) == {GPU: 3}


def test_limits_win_then_requests() -> None:
    assert effective_requests(pod_with([container("a", requests={GPU: "2"})])) == {GPU: 2}
    assert effective_requests(pod_with([container("a", limits={GPU: "1"}, requests={GPU: "3"})])) == {GPU: 1}


def test_zero_and_absent_are_no_request() -> None:
    assert effective_requests(pod_with([container("a", limits={GPU: "0", "cpu": "2"})])) == {}
    assert effective_requests(pod_with([container("a", limits={"cpu": "2", "memory": "1Gi"})])) == {}
    assert effective_requests(lab("Pod", "case-norequest")) == {}


def test_app_containers_add_up() -> None:
    pod = pod_with([container("a", limits={GPU: "1"}), container("b", limits={GPU: "1", "amd.com/gpu": "1"})])
    assert effective_requests(pod) == {"amd.com/gpu": 1, GPU: 2}


def test_init_containers_take_the_max() -> None:
    pod = pod_with(
        [container("app", limits={GPU: "1"})],
        init=[container("warm", limits={GPU: "2"}), container("check", limits={GPU: "1"})],
    )
    assert effective_requests(pod) == {GPU: 2}


def test_sidecars_run_beside_the_app_and_later_init_containers() -> None:
    side = container("agent", limits={GPU: "1"}, restart_policy="Always")
    warm = container("warm", limits={GPU: "3"})
    app = container("app", limits={GPU: "1"})
    assert effective_requests(pod_with([app], init=[side, warm])) == {GPU: 4}  # 3 + the sidecar before it
    assert effective_requests(pod_with([app], init=[warm, side])) == {GPU: 3}  # max(3, 1 + 1)
    assert effective_requests(
        pod_with(
            [container("app", limits={GPU: "2"})],
            init=[container("agent", limits={GPU: "2"}, restart_policy="Always")],
        )
    ) == {GPU: 4}


def test_only_restart_policy_always_makes_a_sidecar() -> None:
    odd = container("agent", limits={GPU: "2"}, restart_policy="OnFailure")
    assert effective_requests(pod_with([container("app", limits={GPU: "2"})], init=[odd])) == {GPU: 2}


def test_each_resource_is_computed_on_its_own() -> None:
    pod = pod_with(
        [container("app", limits={GPU: "1", "vpc.amazonaws.com/efa": "2"})],
        init=[container("warm", limits={GPU: "4"})],
    )
    assert effective_requests(pod) == {GPU: 4, "vpc.amazonaws.com/efa": 2}


def test_pod_level_resources_do_not_count_and_overhead_does() -> None:
    """Pod-level resources are cpu, memory and hugepages only; `resource.PodRequests` adds the
    overhead for every resource (`helpers_test.go` "req-and-overhead")."""
    pod = pod_with([container("app", limits={GPU: "1"})])
    pod["spec"]["resources"] = {"limits": {GPU: "4"}}
    pod["spec"]["overhead"] = {GPU: "1"}
    assert effective_requests(pod) == {GPU: 2}


# --- what a node offers -------------------------------------------------------------------------


def test_offers_of_the_lab_nodes() -> None:
    assert offer(lab("Node", "lab-node-0"), GPU) == Offer(capacity=2, allocatable=2)
    assert offer(lab("Node", "lab-node-1"), GPU) == Offer(capacity=None, allocatable=0)
    assert offer(lab("Node", "lab-node-2"), GPU) == Offer(capacity=4, allocatable=0)
    assert not offer(lab("Node", "lab-node-1"), GPU).reported


def test_capacity_zero_is_not_reported_and_missing_allocatable_is_zero() -> None:
    node = lab("Node", "lab-node-0")
    node["status"]["capacity"][GPU] = "0"
    assert not offer(node, GPU).reported
    node = lab("Node", "lab-node-0")
    del node["status"]["allocatable"][GPU]
    assert offer(node, GPU) == Offer(capacity=2, allocatable=0)


def test_offers_of_any_shape_are_read_alike() -> None:
    """Quantities are read once per distinct pair a cluster's nodes report; a value of another JSON
    type, which cannot be remembered that way, reads as no quantity all the same."""
    node = lab("Node", "lab-node-0")
    node["status"]["capacity"][GPU] = 2
    node["status"]["allocatable"][GPU] = 1.0
    assert offer(node, GPU) == Offer(capacity=2, allocatable=1)
    node["status"]["capacity"][GPU] = ["2"]
    node["status"]["allocatable"][GPU] = {"value": "2"}
    assert offer(node, GPU) == Offer(capacity=0, allocatable=0)


# --- who holds a node's devices -----------------------------------------------------------------


def bound(
    name: str, namespace: str, node: str, gpus: int, phase: str = "Running", deleting: bool = False
) -> dict[str, Any]:
    pod = lab("Pod", "case-ok")
    pod["metadata"].update(name=name, namespace=namespace, uid=f"uid-{namespace}-{name}")
    pod["spec"]["nodeName"] = node
    pod["spec"]["containers"][0]["resources"] = {"limits": {GPU: str(gpus)}, "requests": {GPU: str(gpus)}}
    pod["status"]["phase"] = phase
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-11-29T08:59:00Z"
    return pod


def test_holders_count_as_the_scheduler_counts() -> None:
    asking = lab("Pod", "case-exhaust")
    pods = [
        bound("a", "team-a", "n1", 1),
        bound("b", "team-b", "n1", 2, deleting=True),  # terminating: still counts
        bound("c", "team-a", "n1", 4, phase="Succeeded"),  # terminal: never counts
        bound("d", "team-a", "n1", 4, phase="Failed"),
        bound("e", "team-a", "n1", 1, phase="Pending"),  # bound, not started: counts
        bound("f", "team-a", "n1", 1, phase="Unknown"),
        bound("a", "team-a", "n1", 1),  # listed twice: counts once
        bound("g", "team-a", "n2", 8),  # another node, not asked about
        bound("no-gpu", "team-a", "n1", 0),
        copy.deepcopy(asking) | {"spec": {**asking["spec"], "nodeName": "n1"}},  # the pod itself never counts
    ]
    found = holders(asking, pods, ["n1"])
    assert {(h.namespace, h.name, h.requests[GPU], h.terminating) for h in found["n1"]} == {
        ("team-a", "a", 1, False),
        ("team-b", "b", 2, True),
        ("team-a", "e", 1, False),
        ("team-a", "f", 1, False),
    }
    assert set(found) == {"n1"}


def repelling(pod: dict[str, Any]) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": "kubernetes.io/hostname"}
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def nominated(name: str, node: str, priority: int) -> dict[str, Any]:
    pod = bound(name, "team-a", "", 1, phase="Pending")
    pod["spec"]["priority"] = priority
    pod["status"]["nominatedNodeName"] = node
    return pod


@pytest.mark.parametrize("asked_on", ["", "n2"])
def test_pods_grouped_by_node_count_as_the_same_pods_listed(asked_on: str) -> None:
    """`Counted` of bound pods whose first ones come in groups (`NodePods`, as the cache hands them
    over) is `Counted` of the same pods listed: the same pods per node, holders, pods that repel,
    positions, and the same after a fix ends some. A group holding the pod asked about (a reader
    that saw it bound) is counted pod by pod."""
    asking = lab("Pod", "case-exhaust")
    itself = copy.deepcopy(asking)
    itself["spec"]["nodeName"] = asked_on
    on_node = {
        "n1": [
            bound("a", "team-a", "n1", 1),
            bound("b", "team-b", "n1", 2, deleting=True),
            bound("c", "team-a", "n1", 4, phase="Succeeded"),
            bound("a", "team-a", "n1", 1),
            repelling(bound("r", "team-a", "n1", 0)),
        ],
        "n2": [bound("d", "team-a", "n2", 8), *([itself] if asked_on else []), bound("x", "team-c", "n2", 0)],
        "n3": [repelling(bound("e", "team-b", "n3", 2))],
    }
    grouped = {node: NodePods.of(pods) for node, pods in on_node.items()}
    rest = [bound("f", "team-a", "n1", 1), bound("d", "team-a", "n2", 8), bound("g", "team-a", "n4", 1)]
    pods = (*(p for group in grouped.values() for p in group.pods), *rest)
    nominees = [nominated("h", "n3", 100), nominated("low", "n3", -1), nominated("d", "n2", 100)]
    as_listed = Counted.of(asking, pods, nominees)
    whole = Groups.of(grouped)
    as_grouped = Counted.of(asking, pods, nominees, grouped=grouped, whole=whole)
    assert as_grouped == Counted.of(asking, pods, nominees, grouped=grouped)
    # The groups alone, worked out once for the mapping, are the count when nothing else is listed.
    alone = Counted.of(asking, pods[: whole.listed], (), grouped=grouped, whole=whole)
    assert (alone.on is whole.on) is not bool(asked_on)
    assert grouped["n1"].pods == (on_node["n1"][0], on_node["n1"][1], on_node["n1"][4])
    assert as_grouped.on == as_listed.on
    assert as_grouped.holding == as_listed.holding
    assert as_grouped.repelling == as_listed.repelling
    keys = {(namespace(p), name(p)) for p in (*pods, *nominees)}
    for key in keys:
        assert as_grouped.positions(key) == as_listed.positions(key), key
        assert as_grouped.node_of(key) == as_listed.node_of(key), key
    ended = frozenset({("team-a", "a"), ("team-a", "d"), ("team-b", "e")})
    after_grouped, after_listed = as_grouped.without(ended), as_listed.without(ended)
    assert after_grouped.on == after_listed.on
    assert after_grouped.holding == after_listed.holding
    assert after_grouped.repelling == after_listed.repelling
    # A group is taken as it is, unless it holds the pod asked about.
    assert (as_grouped.on["n2"] is grouped["n2"].pods) is not bool(asked_on)
    rank = preempts_below(asking)
    assert grouped["n1"].holders(asking, rank) == device_holders(asking, as_listed.holding["n1"][:2])
    assert grouped["n1"].holders(asking, rank) is grouped["n1"].holders(asking, rank)


def test_holders_ignore_malformed_entries() -> None:
    asking = lab("Pod", "case-exhaust")
    junk: list[Any] = [
        None,
        "pod",
        3,
        {"spec": "x"},
        {"spec": {"nodeName": 5}},
        {"metadata": [], "spec": {"nodeName": "n1"}},
    ]
    assert holders(asking, junk, ["n1"]) == {}


@pytest.mark.parametrize(
    ("resource", "value", "expected"),
    [
        ("cpu", "95500m", 95_500),
        ("cpu", 96, 96_000),
        ("cpu", 1.5, 1_500),
        ("memory", "1Gi", 2**30),
        ("pods", 110, 110),
        ("pods", "110", 110),
        ("memory", {"value": "1Gi"}, 0),  # not hashable, and no quantity
        ("memory", None, 0),
    ],
)
def test_a_quantity_reads_as_the_scheduler_counts_it_whatever_was_read_before(
    resource: str, value: object, expected: int
) -> None:
    for _ in range(2):  # the second time as worked out the first
        assert amount(resource, value) == expected


def test_a_bool_is_no_quantity_though_it_equals_a_number() -> None:
    """`True == 1`: whichever is read first, the other reads as itself."""
    assert [amount("pods", v) for v in (True, 1, True, 1)] == [0, 1, 0, 1]


def test_an_owner_read_once_is_the_owner_of_every_pod_sharing_what_it_was_read_from() -> None:
    """`top_owner` with what it read already (`seen`): the pods of one ReplicaSet that share its
    owner references and labels (as a cache keeps them) share the owner read; a pod with the same
    references and other labels, or with none, is read for itself."""
    refs = [{"kind": "ReplicaSet", "name": "vllm-6d9f4", "controller": True}]
    hashed = {"pod-template-hash": "6d9f4"}

    def pod(name: str, **meta: object) -> Object:
        return {"metadata": {"namespace": "ml", "name": name, **meta}}

    replicas = [pod(f"vllm-6d9f4-{i}", ownerReferences=refs, labels=hashed) for i in range(2)]
    unlabelled = pod("vllm-6d9f4-x", ownerReferences=refs)
    bare = [pod(f"debug-{i}", labels=hashed) for i in range(2)]
    seen: OwnersSeen = {}
    found = [top_owner(p, seen) for p in (*replicas, unlabelled, *bare)]
    assert found == [
        Owner("Deployment", "vllm"),
        Owner("Deployment", "vllm"),
        Owner("ReplicaSet", "vllm-6d9f4"),
        Owner("Pod", "debug-0"),
        Owner("Pod", "debug-1"),
    ]
    assert found == [top_owner(p) for p in (*replicas, unlabelled, *bare)]
    assert len(seen) == 2


def test_a_nodes_usage_from_the_template_keys_counted_is_that_of_its_pods_read_again() -> None:
    """`Counted.templates`: what the pods on a node ask is summed by the template keys the count read,
    but for a pod with a status (resized in place: the kubelet holds what its status says), read
    again; a node whose pods a fix changed, or a group's, is read pod by pod."""
    small: list[Object] = [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
    large: list[Object] = [{"name": "app", "resources": {"requests": {"cpu": "4", "memory": "8Gi"}}}]

    def pod(name: str, node: str, containers: list[Object], **status: object) -> Object:
        found: dict[str, Any] = {
            "metadata": {"namespace": "ml", "name": name, "uid": name},
            "spec": {"nodeName": node, "containers": containers},
        }
        if status:
            found["status"] = status
        return found

    resized = {
        "phase": "Running",
        "containerStatuses": [{"name": "app", "resources": {"requests": {"cpu": "6", "memory": "1Gi"}}}],
    }
    bound = (
        pod("a-0", "a", small),
        pod("a-1", "a", small),
        pod("a-2", "a", large),
        pod("a-3", "a", small, **resized),  # holds 6 cpu, not its template's 1
        pod("b-0", "b", large),
        pod("a-1", "b", large),  # listed again: counted where first listed
    )
    asked = pod("pending", "", small)
    counted = Counted.of(asked, bound)
    for node in ("a", "b"):
        pods = counted.on[node]
        keys = counted.keys_of(node, pods)
        assert keys is not None
        assert len(keys) == len(pods)
        assert usage(pods, {}, keys) == usage(pods)
    assert usage(counted.on["a"], {}, counted.keys_of("a", counted.on["a"])).requested["cpu"] == 12_000
    after = counted.without(frozenset({("ml", "a-0")}))
    assert after.keys_of("a", after.on["a"]) is None  # changed by the fix: read again
    assert after.keys_of("b", after.on["b"]) is not None
    assert counted.keys_of("a", counted.on["b"]) is None  # not the node's pods
    groups = group_pods({"a": counted.on["a"]})
    grouped = Counted.of(asked, (*groups["a"].pods, pod("a-4", "a", small)), grouped=groups)
    assert grouped.keys_of("a", grouped.on["a"]) is None  # the group's pods, and one beside them
