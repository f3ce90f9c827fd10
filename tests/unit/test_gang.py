"""PodGroups read wherever pods name one: which group a pod belongs to, and a JobSet's answer weighing
its gang (the TrainJob and LWS verdicts are checked by their corpus)."""

from __future__ import annotations

import asyncio

from cluster.snapshot import SnapshotReader
from devtools.corpus import ROOT
from diagnosis.gang import COSCHEDULING, VOLCANO, group_of
from diagnosis.jobset.explain import explain


def test_a_pod_names_its_podgroup_by_coschedulings_label_or_volcanos_annotation() -> None:
    coscheduled = {"metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "llm"}}}
    volcano = {"metadata": {"annotations": {"scheduling.k8s.io/group-name": "llm-0-abc"}}}
    assert group_of(coscheduled) == (COSCHEDULING, "llm")
    assert group_of(volcano) == (VOLCANO, "llm-0-abc")
    assert group_of({"metadata": {"labels": {"app": "llm"}}}) is None


def test_a_jobsets_answer_weighs_the_podgroup_its_pods_name() -> None:
    """The JobSet of a TrainJob whose Volcano gang asks 32 GPUs of a cluster of 16, asked as a JobSet."""
    reader = SnapshotReader.from_path(ROOT / "tests/corpus/trainjob/gang-min-resources.json")
    view = asyncio.run(reader.jobset_view("ml-train", "mixtral-pretrain"))
    assert [g["metadata"]["name"] for g in view.podgroups] == ["mixtral-pretrain"]
    evidence = explain(view).evidence
    assert (
        "PodGroup mixtral-pretrain (scheduling.volcano.sh): minMember 4, phase Pending; 4 of its pods exist "
        "now." in evidence
    )
    assert "minResources nvidia.com/gpu=32: the 2 nodes read allocate 16 in all." in evidence
