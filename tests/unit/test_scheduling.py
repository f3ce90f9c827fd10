"""Taints, tolerations, cordon, nodeSelector and required node affinity, rule by rule (k8s.io/api
`Toleration.ToleratesTaint`, kube-scheduler's TaintToleration, NodeUnschedulable and NodeAffinity plugins).

Nodes and pods are the GPU lab's own objects with one field changed, so every case is an object the
API could serve.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from devtools.corpus import ROOT
from diagnosis.objects import labels
from diagnosis.triage.scheduling import (
    CORDON,
    Taint,
    constrained,
    selector_keys,
    selector_mismatch,
    tolerates,
    untolerated,
)

LAB = json.loads((ROOT / "bot/demo/gpu-lab.json").read_text())["items"]


def lab(kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in LAB if o["kind"] == kind and o["metadata"]["name"] == name))


def a_node(
    *,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    node = lab("Node", "lab-node-0")
    node["spec"]["taints"] = taints or []
    if unschedulable:
        node["spec"]["unschedulable"] = True
    if labels is not None:
        node["metadata"]["labels"] = labels
    return node


def a_pod(
    *,
    tolerations: list[dict[str, Any]] | None = None,
    node_selector: dict[str, Any] | None = None,
    affinity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    pod = lab("Pod", "case-taint")
    pod["spec"]["tolerations"] = tolerations or []
    pod["spec"].pop("nodeSelector", None)
    if node_selector is not None:
        pod["spec"]["nodeSelector"] = node_selector
    if affinity is not None:
        pod["spec"]["affinity"] = affinity
    return pod


GPU = Taint("nvidia.com/gpu", "present", "NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "matches"),
    [
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, True),
        ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),  # empty effect: every effect
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, True),
        ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}, True),  # Equal is the default
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}, False),
        ({"key": "nvidia.com/gpu", "operator": "Equal", "effect": "NoSchedule"}, False),  # "" ≠ "present"
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "PreferNoSchedule"}, False),
        ({"operator": "Exists"}, True),  # empty key + Exists: every taint
        ({"operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "amd.com/gpu", "operator": "Exists"}, False),
        ({"key": "nvidia.com/gpu", "operator": "Gt", "value": "1"}, False),  # unknown/disabled operator
        ({"key": "nvidia.com/gpu", "operator": "exists"}, False),  # operators are case-sensitive
    ],
)
def test_toleration_matches_taint(toleration: dict[str, Any], matches: bool) -> None:
    assert tolerates(toleration, GPU) is matches


def test_empty_key_with_equal_matches_only_empty_values() -> None:
    """As `ToleratesTaint` is written: the key check passes, then values must be equal."""
    assert tolerates({"operator": "Equal"}, Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"))
    assert not tolerates({"operator": "Equal"}, GPU)


def test_prefer_no_schedule_never_blocks() -> None:
    node = a_node(taints=[{"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"}])
    assert untolerated(a_pod(), node) == ()


def test_no_schedule_and_no_execute_block_in_node_order() -> None:
    node = a_node(
        taints=[
            {"key": "b", "value": "2", "effect": "NoExecute"},
            {"key": "a", "effect": "NoSchedule"},
            {"key": "c", "effect": "Unknown"},
        ]
    )
    assert untolerated(a_pod(), node) == (Taint("b", "2", "NoExecute"), Taint("a", "", "NoSchedule"))
    assert [str(t) for t in untolerated(a_pod(), node)] == ["b=2:NoExecute", "a:NoSchedule"]


def test_default_no_execute_tolerations_do_not_cover_no_schedule() -> None:
    """Every pod tolerates not-ready/unreachable NoExecute for 300s; the NoSchedule twin still blocks."""
    pod = lab("Pod", "case-taint")
    node = a_node(
        taints=[
            {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
        ]
    )
    assert untolerated(pod, node) == (Taint("node.kubernetes.io/unreachable", "", "NoSchedule"),)


@pytest.mark.parametrize(
    "node",
    [
        a_node(unschedulable=True),
        a_node(taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        a_node(
            unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        ),
    ],
    ids=["spec-only", "taint-only", "both"],
)
def test_cordon_counts_once_unless_tolerated(node: dict[str, Any]) -> None:
    assert untolerated(a_pod(), node) == (CORDON,)
    daemon = a_pod(
        tolerations=[
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
        ]
    )
    assert untolerated(daemon, node) == ()
    assert untolerated(a_pod(tolerations=[{"operator": "Exists"}]), node) == ()


def test_unschedulable_must_be_true_itself() -> None:
    node = a_node()
    node["spec"]["unschedulable"] = "true"
    assert untolerated(a_pod(), node) == ()


# --- nodeSelector and required node affinity ----------------------------------------------------


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def expr(key: str, operator: str, *values: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        found["values"] = list(values)
    return found


GFD = {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "2", "nvidia.com/gpu.memory": "23034"}


@pytest.mark.parametrize(
    ("requirement", "matches"),
    [
        (expr("nvidia.com/gpu.product", "In", "NVIDIA-L4", "NVIDIA-A100"), True),
        (expr("nvidia.com/gpu.product", "In", "NVIDIA-A100"), False),
        (expr("nvidia.com/gpu.product", "NotIn", "NVIDIA-A100"), True),
        (expr("nvidia.com/gpu.product", "NotIn", "NVIDIA-L4"), False),
        (expr("nvidia.com/mig.strategy", "NotIn", "mixed"), True),  # absent label: NotIn matches
        (expr("nvidia.com/gpu.count", "Exists"), True),
        (expr("nvidia.com/mig.strategy", "Exists"), False),
        (expr("nvidia.com/mig.strategy", "DoesNotExist"), True),
        (expr("nvidia.com/gpu.count", "DoesNotExist"), False),
        (expr("nvidia.com/gpu.count", "Gt", "1"), True),
        (expr("nvidia.com/gpu.count", "Gt", "2"), False),  # strictly greater
        (expr("nvidia.com/gpu.count", "Lt", "3"), True),
        (expr("nvidia.com/gpu.memory", "Lt", "16000"), False),
        (expr("nvidia.com/gpu.count", "Gt", "+1"), False),  # ParseInt takes it, but it is no label value
        (expr("nvidia.com/gpu.count", "Gt", "-1"), False),
        (expr("nvidia.com/gpu.count", "Gt", "01"), True),
        (expr("nvidia.com/gpu.product", "Gt", "1"), False),  # the node's value is not an integer
        (expr("nvidia.com/mig.strategy", "Lt", "9"), False),  # absent label never compares
        (expr("nvidia.com/gpu.count", "Gt", "1.5"), False),  # not an integer: the term cannot parse
        (expr("nvidia.com/gpu.count", "Gt", "1", "2"), False),  # Gt takes exactly one value
        (expr("nvidia.com/gpu.count", "Gt", " 1"), False),
        (expr("nvidia.com/gpu.count", "Exists", "2"), False),  # Exists takes no values
        (expr("nvidia.com/gpu.product", "In"), False),  # In needs values
        (expr("nvidia.com/gpu.product", "Matches", "NVIDIA-L4"), False),  # unknown operator
        (expr("nvidia.com/gpu.product", "in", "NVIDIA-L4"), False),
        (expr("not a key!", "Exists"), False),  # invalid key: the term cannot parse
        (expr("nvidia.com/gpu.product", "In", 4), False),  # a non-string value
    ],
)
def test_match_expressions(requirement: dict[str, Any], matches: bool) -> None:
    pod = a_pod(affinity=required({"matchExpressions": [requirement]}))
    assert (selector_mismatch(pod, a_node(labels=GFD)) is None) is matches


def test_expressions_in_a_term_are_anded_terms_are_ored() -> None:
    node = a_node(labels=GFD)
    l4 = expr("nvidia.com/gpu.product", "In", "NVIDIA-L4")
    big = expr("nvidia.com/gpu.count", "Gt", "4")
    assert selector_mismatch(a_pod(affinity=required({"matchExpressions": [l4, big]})), node) is not None
    assert (
        selector_mismatch(
            a_pod(affinity=required({"matchExpressions": [big]}, {"matchExpressions": [l4]})), node
        )
        is None
    )


def test_empty_terms_match_nothing() -> None:
    node = a_node(labels=GFD)
    why = selector_mismatch(a_pod(affinity=required({})), node)
    assert why == "required affinity has no non-empty term: it matches no node"
    assert selector_mismatch(a_pod(affinity=required({"matchExpressions": []})), node) is not None
    assert selector_mismatch(a_pod(affinity=required()), node) is not None
    # an empty term beside a matching one is simply skipped
    match = {"matchExpressions": [expr("nvidia.com/gpu.product", "Exists")]}
    assert selector_mismatch(a_pod(affinity=required({}, match)), node) is None


@pytest.mark.parametrize(
    ("field", "matches"),
    [
        (expr("metadata.name", "In", "lab-node-0"), True),
        (expr("metadata.name", "In", "lab-node-1"), False),
        (expr("metadata.name", "NotIn", "lab-node-1"), True),
        (expr("metadata.name", "NotIn", "lab-node-0"), False),
        (expr("metadata.name", "In", "lab-node-0", "lab-node-1"), False),  # exactly one value
        (expr("metadata.name", "Exists"), False),  # only In/NotIn
        (expr("metadata.namespace", "In", "lab-node-0"), False),  # a node has no such field
    ],
)
def test_match_fields(field: dict[str, Any], matches: bool) -> None:
    pod = a_pod(affinity=required({"matchFields": [field]}))
    assert (selector_mismatch(pod, a_node(labels=GFD)) is None) is matches


def test_match_fields_and_expressions_are_anded() -> None:
    term = {
        "matchExpressions": [expr("nvidia.com/gpu.product", "In", "NVIDIA-A100")],
        "matchFields": [expr("metadata.name", "In", "lab-node-0")],
    }
    assert selector_mismatch(a_pod(affinity=required(term)), a_node(labels=GFD)) is not None


def test_node_selector_and_affinity_must_both_match() -> None:
    node = a_node(labels=GFD)
    affinity = required({"matchExpressions": [expr("nvidia.com/gpu.count", "Exists")]})
    both = a_pod(node_selector={"nvidia.com/gpu.product": "NVIDIA-L4"}, affinity=affinity)
    assert selector_mismatch(both, node) is None
    wrong = a_pod(node_selector={"nvidia.com/gpu.product": "NVIDIA-A100"}, affinity=affinity)
    assert selector_mismatch(wrong, node) == "has nvidia.com/gpu.product=NVIDIA-L4, not NVIDIA-A100"
    missing = a_pod(
        node_selector={"nvidia.com/gpu.product": "NVIDIA-L4"},
        affinity=required({"matchExpressions": [expr("nvidia.com/mig.strategy", "Exists")]}),
    )
    assert (
        selector_mismatch(missing, node)
        == "affinity nvidia.com/mig.strategy Exists: no label nvidia.com/mig.strategy"
    )


def test_a_node_without_labels() -> None:
    node = a_node()
    del node["metadata"]["labels"]
    assert selector_mismatch(a_pod(node_selector={"kubernetes.io/hostname": "lab-node-0"}), node) == (
        "no label kubernetes.io/hostname"
    )
    not_in = a_pod(affinity=required({"matchExpressions": [expr("nvidia.com/gpu.product", "NotIn", "x")]}))
    assert selector_mismatch(not_in, node) is None
    assert selector_mismatch(a_pod(), node) is None


def test_selector_value_must_be_a_string() -> None:
    assert selector_mismatch(a_pod(node_selector={"nvidia.com/gpu.count": 2}), a_node(labels=GFD)) is not None


def test_constrained_and_selector_keys() -> None:
    assert not constrained(a_pod())
    assert constrained(a_pod(node_selector={"a": "b"}))
    assert constrained(a_pod(affinity=required()))  # present but empty: matches nothing, so it constrains
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [expr("x", "Exists")]}}
            ]
        }
    }
    assert not constrained(a_pod(affinity=preferred))  # preferred affinity never filters
    pod = a_pod(
        node_selector={"z.io/k": "v"},
        affinity=required({"matchExpressions": [expr("a.io/k", "Exists"), expr("bad key!", "Exists")]}),
    )
    assert selector_keys(pod) == ("a.io/k", "z.io/k")


def test_a_label_value_that_is_not_a_string_is_no_label() -> None:
    """`labels()` hands over the node's own labels when every value is a string, and leaves the
    others out otherwise: a selector never matches a value the API would not serve."""
    served = {"metadata": {"labels": {"pool": "h100"}}}
    assert labels(served) is served["metadata"]["labels"]
    hostile = {"metadata": {"labels": {"pool": 100, "zone": "a"}}}
    assert labels(hostile) == {"zone": "a"}
    assert selector_mismatch({"spec": {"nodeSelector": {"pool": 100}}}, hostile) is not None
    assert selector_mismatch({"spec": {"nodeSelector": {"zone": "a"}}}, hostile) is None
