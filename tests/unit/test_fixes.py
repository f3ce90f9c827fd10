"""Fixes are computed, never guessed: each pod patch, applied to the snapshot's pod, moves the verdict
past the step it fixes and opens exactly the nodes it says; each cluster-side fix names objects the
snapshot holds; the merge patch is RFC 7386's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from diagnosis.model import Diagnosis, Fix, PodVerdict
from diagnosis.objects import kind, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify, passing
from diagnosis.views import TriageView
from tests.corpus import ROOT, Case
from tests.unit.test_gpu_corpus import CASES, items, view_of

LADDER = list(PodVerdict)
"""The verdicts in the order `classify` checks them: a fix must move a pod further down."""


def _answers() -> list[tuple[Case, Diagnosis]]:
    return [(c, classify(view_of(c.snapshot, c.namespace, c.name))) for c in CASES]


ANSWERS = _answers()
POD_FIXES = [(c, d, f) for c, d in ANSWERS for f in d.fixes if f.pod_patch is not None]
CLUSTER_FIXES = [(c, d, f) for c, d in ANSWERS for f in d.fixes if f.pod_patch is None]


def _id(case: Case, fix: Fix) -> str:
    return f"{case.id}:{fix.summary[:40]}"


@pytest.mark.parametrize(("case", "before", "fix"), POD_FIXES, ids=[_id(c, f) for c, _, f in POD_FIXES])
def test_a_pod_patch_moves_the_verdict_past_its_step_and_opens_what_it_says(
    case: Case, before: Diagnosis, fix: Fix
) -> None:
    view = view_of(case.snapshot, case.namespace, case.name)
    patched: TriageView = replace(view, pod=merge_patch(view.pod, fix.pod_patch))
    after = classify(patched)
    assert LADDER.index(PodVerdict(after.verdict)) > LADDER.index(PodVerdict(before.verdict))
    assert passing(patched) == fix.opens
    assert fix.opens


def test_the_corpus_has_pod_patches_for_every_pod_side_fix_kind() -> None:
    fixed = {PodVerdict(d.verdict) for _, d, _ in POD_FIXES}
    assert {
        PodVerdict.TAINT,
        PodVerdict.LABEL_MISMATCH,
        PodVerdict.EXHAUSTED,
        PodVerdict.TOPOLOGY_SPREAD,
        PodVerdict.POD_AFFINITY,
    } <= fixed


@pytest.mark.parametrize(
    ("case", "before", "fix"), CLUSTER_FIXES, ids=[_id(c, f) for c, _, f in CLUSTER_FIXES]
)
def test_a_cluster_side_fix_names_objects_that_exist(case: Case, before: Diagnosis, fix: Fix) -> None:
    existing = {f"node/{name(o)}" for o in items(case.snapshot) if kind(o) == "Node"}
    existing |= {f"resourceslice/{name(o)}" for o in items(case.snapshot) if kind(o) == "ResourceSlice"}
    existing |= {
        f"{kind(o).lower()}/{namespace(o)}/{name(o)}"
        for o in items(case.snapshot)
        if kind(o) in ("Pod", "ResourceClaim", "ResourceClaimTemplate")
    }
    assert fix.objects
    assert set(fix.objects) <= existing
    # A fix opens nodes, or says that what it opens cannot be shown from the objects.
    assert fix.opens or "cannot be shown" in fix.summary


def test_the_corpus_has_cluster_side_fixes_on_each_dra_object_kind() -> None:
    touched = {o.split("/")[0] for _, _, f in CLUSTER_FIXES for o in f.objects}
    assert {"resourceclaim", "resourceclaimtemplate", "resourceslice"} <= touched


def _first(snapshot: str, ns: str, pod: str) -> Fix:
    fixes = classify(view_of(ROOT / snapshot, ns, pod)).fixes
    assert fixes, f"{ns}/{pod} has no fix"
    return fixes[0]


def test_exhausted_first_asks_what_the_node_has_free_then_frees_the_holder() -> None:
    fixes = classify(view_of(ROOT / "examples/gpu-lab.json", "gpu-triage", "case-exhaust")).fixes
    assert [f.summary.split(" in ")[0] for f in fixes][:1] == ["ask 1 nvidia.com/gpu instead of 2"]
    assert fixes[0].pod_patch is not None
    container = fixes[0].pod_patch["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    freeing = fixes[1]
    assert (freeing.pod_patch, freeing.objects, freeing.opens) == (
        None,
        ("pod/gpu-triage/case-ok",),
        ("lab-node-0",),
    )
    assert [c.text for c in freeing.commands] == ["kubectl delete pod case-ok -n gpu-triage"]


def test_terminating_holders_are_waited_for_before_anything_else() -> None:
    fix = _first("tests/corpus/triage/gke-mixed-pools.json", "research", "sft-llama-vtnfs")
    assert fix.summary.startswith("wait: research/sft-llama-old-jwpxb")
    assert fix.commands == ()


def test_a_toleration_patch_keeps_the_pods_own_tolerations() -> None:
    view = view_of(ROOT / "examples/gpu-lab.json", "gpu-triage", "case-taint")
    fix = classify(view).fixes[0]
    assert fix.pod_patch is not None
    assert fix.pod_patch["spec"]["tolerations"][: len(view.pod["spec"]["tolerations"])] == list(
        view.pod["spec"]["tolerations"]
    )
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in (
        fix.pod_patch["spec"]["tolerations"]
    )


def test_a_label_fix_selects_a_value_that_exists_and_names_the_pool() -> None:
    fix = _first("examples/gpu-lab.json", "gpu-triage", "case-label")
    assert fix.pod_patch == {"spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}}}
    assert fix.opens == ("lab-node-0",)


def test_repairing_the_device_plugin_opens_the_nodes_with_allocatable_zero() -> None:
    fix = _first("tests/corpus/triage/gke-a3-allocatable-zero.json", "llm", "h100-pretrain-0-bdpvx")
    assert fix.pod_patch is None
    assert fix.summary.startswith("repair the device plugin or driver on ")
    assert "pool a3-pool" in fix.summary
    assert len(fix.opens) == 4


def test_a_cordon_is_lifted_not_tolerated() -> None:
    fix = _first("tests/corpus/triage/cordoned-one-node.json", "research", "eval-nightly-n5dc2")
    assert fix.pod_patch is None
    assert [c.text for c in fix.commands] == ["kubectl uncordon gpu-node-a"]


def test_no_fix_is_offered_where_none_opens_a_node() -> None:
    """Two 1-GPU asks on a 1-GPU node: nothing short of a bigger node helps, so nothing is offered."""
    assert (
        classify(
            view_of(ROOT / "tests/corpus/triage/workstation-one-node.json", "ml", "eval-pair-xvb55")
        ).fixes
        == ()
    )


# RFC 7386 Appendix A: target, patch, result.
RFC_7386_EXAMPLES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC_7386_EXAMPLES)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, result: Any) -> None:
    before = repr(target)
    assert merge_patch(target, patch) == result
    assert repr(target) == before  # the target is never changed
