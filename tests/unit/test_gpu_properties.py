"""Hostile and malformed objects never make `classify` raise, and the same input gives the same answer:
arbitrary JSON shaped like pods and nodes, and the corpus's real objects with fields torn out or
replaced by values of the wrong type."""

from __future__ import annotations

import copy
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.model import Diagnosis, PodVerdict
from diagnosis.triage.classify import classify, usage_candidates
from diagnosis.views import TriageView
from tests.unit.hostile import SETTINGS, tear
from tests.unit.test_gpu_corpus import CASES, NOW, view_of

EXAMPLES = settings(SETTINGS, max_examples=150)

KEYS = [
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "uid",
    "labels",
    "deletionTimestamp",
    "containers",
    "initContainers",
    "resources",
    "limits",
    "requests",
    "restartPolicy",
    "nodeName",
    "nodeSelector",
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
    "matchExpressions",
    "matchFields",
    "key",
    "operator",
    "values",
    "value",
    "effect",
    "tolerations",
    "taints",
    "unschedulable",
    "capacity",
    "allocatable",
    "conditions",
    "type",
    "message",
    "reason",
    "phase",
    "schedulingGates",
    "involvedObject",
    "regarding",
    "nvidia.com/gpu",
    "amd.com/gpu",
    "kubernetes.io/hostname",
    "env",
    "containerStatuses",
    "state",
    "waiting",
    "nominatedNodeName",
    "schedulerName",
    "lastTransitionTime",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.sampled_from(
        [
            "1",
            "0",
            "2",
            "1000m",
            "-1",
            "1e999999999",
            "Exists",
            "Equal",
            "In",
            "NotIn",
            "Gt",
            "Lt",
            "NoSchedule",
            "NoExecute",
            "PodScheduled",
            "False",
            "Running",
            "Pending",
            "Failed",
            "lab-node-0",
            "nvidia.com/gpu",
            "Always",
            "FailedScheduling",
            "2026-11-29T08:00:00Z",
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=10,
)
objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
"""Objects with the keys `classify` reads, nested a few levels, holding anything at all."""


def same_twice(view: TriageView) -> Diagnosis:
    first = classify(view)
    assert classify(view) == first
    assert isinstance(first.verdict, PodVerdict)
    assert all(isinstance(e, str) for e in first.evidence)
    usage_candidates(view.pod, view.nodes)
    return first


@EXAMPLES
@given(
    pod=objects,
    nodes=st.lists(st.one_of(objects, json_values), max_size=4),
    bound=st.lists(st.one_of(objects, json_values), max_size=4),
    events=st.lists(st.one_of(objects, json_values), max_size=3),
    prefiltered=st.booleans(),
)
def test_arbitrary_objects_never_raise(
    pod: dict[str, Any], nodes: list[Any], bound: list[Any], events: list[Any], prefiltered: bool
) -> None:
    same_twice(TriageView(pod, tuple(nodes), tuple(bound), tuple(events), NOW, prefiltered))


@EXAMPLES
@given(
    index=st.integers(0, len(CASES) - 1), seed=st.integers(0, 2**32), odds=st.sampled_from([0.02, 0.1, 0.3])
)
def test_torn_corpus_objects_never_raise(index: int, seed: int, odds: float) -> None:
    case = CASES[index]
    view = view_of(case.snapshot, case.namespace, case.name)
    rng = random.Random(seed)
    torn = replace(
        view,
        pod=tear(view.pod, rng, odds),
        nodes=tuple(tear(n, rng, odds) for n in view.nodes),
        bound_pods=tuple(tear(p, rng, odds) for p in view.bound_pods),
        events=tuple(tear(e, rng, odds) for e in view.events),
    )
    same_twice(torn)


@pytest.mark.parametrize("name", ["x; rm -rf /", "$(reboot)", "a b", "Ünïcode", "-n", "a" * 300, ""])
def test_hostile_names_reach_no_command(name: str) -> None:
    case = next(c for c in CASES if c.verdict == "taint" and "gke-mixed" in c.id)
    view = view_of(case.snapshot, case.namespace, case.name)
    pod = copy.deepcopy(view.pod)
    pod["metadata"]["name"] = name
    nodes = tuple(copy.deepcopy(n) for n in view.nodes)
    for node in nodes:
        node["metadata"]["name"] = f"{name}{node['metadata']['name'][-4:]}"
    found = same_twice(replace(view, pod=pod, nodes=nodes))
    assert found.verdict == PodVerdict.TAINT
    assert not [c for c in found.next_commands if name and name in c.text]
