# ruff: noqa: E501  (autoscaler messages are kept whole, as the facts sheet quotes them)
"""Will a node come? The parsers and state rules, with the exact strings the
autoscalers write (`diagnosis/autoscaling/events.py` names their sources)."""

from __future__ import annotations

from datetime import timedelta

from bot.render import as_json
from cluster.snapshot import SnapshotReader, load_objects
from devtools import autoscaling_corpus as corpus
from devtools.corpus import ROOT
from diagnosis.autoscaling import assess
from diagnosis.autoscaling.events import cluster_autoscaler, karpenter, on_status
from diagnosis.autoscaling.said import Said, counted, group_name, minutes
from diagnosis.autoscaling.status import parse
from diagnosis.jobset.explain import explain
from diagnosis.model import NodeComing, PodVerdict
from diagnosis.objects import Ref
from diagnosis.triage.classify import classify
from diagnosis.views import Capacity, TriageView
from handlers.reply import Reply

NOW = corpus.NOW
MIG = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroups/gke-c-gpu-pool-1234abcd-grp"


def _said(message: str, reason: str = "NotTriggerScaleUp", ago: float = 1) -> list[Said]:
    pod = corpus.pod("p", 8)
    return list(
        cluster_autoscaler([corpus.ca_event(pod, reason, message, ago)], ("gpu-pool", "a3-pool"), NOW)
    )


def test_reasons_are_counted_per_group_in_any_order() -> None:
    assert counted("2 Insufficient nvidia.com/gpu, 1 max node group size reached") == (
        ("Insufficient nvidia.com/gpu", 2),
        ("max node group size reached", 1),
    )


def test_a_reason_with_a_comma_stays_whole_in_both_limit_wordings() -> None:
    assert counted("2 max cluster cpu, memory limit reached") == (
        ("max cluster cpu, memory limit reached", 2),
    )
    assert counted('1 exceeded quota: "cluster-wide", resources: cpu') == (
        ('exceeded quota: "cluster-wide", resources: cpu', 1),
    )


def test_every_not_triggered_prefix_is_a_refusal() -> None:
    for message in (
        "pod didn't trigger scale-up: 2 Insufficient nvidia.com/gpu, 1 max node group size reached",
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient nvidia.com/gpu",
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added)",
        "Pod didn't trigger scale-up: 1 Insufficient nvidia.com/gpu",
        "pod didn't trigger scale-up: ",
    ):
        (said,) = _said(message)
        assert said.state is NodeComing.NOT_COMING, message


def test_backoff_in_the_reasons_is_a_failure() -> None:
    (said,) = _said(
        "pod didn't trigger scale-up: 1 in backoff after failed scale-up, 1 Insufficient nvidia.com/gpu"
    )
    assert said.state is NodeComing.FAILED


def test_triggered_names_the_pool_of_the_mig_and_times_out_after_15_minutes() -> None:
    message = f"pod triggered scale-up: [{{{MIG} 0->1 (max: 4)}}]"
    (fresh,) = _said(message, "TriggeredScaleUp", 3)
    assert fresh.state is NodeComing.COMING
    assert [(g.name, g.size, g.target, g.max) for g in fresh.groups] == [("gpu-pool", 0, 1, 4)]
    (old,) = _said(message, "TriggeredScaleUp", 16)
    assert old.state is NodeComing.FAILED


def test_group_names() -> None:
    assert group_name(MIG) == "gpu-pool"
    assert group_name("eks-p5-ng-3ac6f1e2", ("p5-ng",)) == "p5-ng"


def test_gke_failed_scale_up_says_the_zone_and_the_cause() -> None:
    message = "Node scale up in zones us-central1-a associated with this pod failed: GCE out of resources. Pod is at risk of not being scheduled."
    (said,) = _said(message, "FailedScaleUp", 12)
    assert said.state is NodeComing.FAILED
    assert said.headline == "Scale-up failed {ago}: us-central1-a is out of resources (GCE stockout)"
    assert minutes(NOW - timedelta(minutes=12), NOW) == "12 min ago"


def test_karpenter_limit_is_not_coming_and_other_components_are_ignored() -> None:
    pod = corpus.pod("p", 8)
    limit = corpus.event(
        pod,
        "FailedScheduling",
        "Failed to schedule pod, all available instance types exceed limits for nodepool",
        1,
        "karpenter",
        "Warning",
    )
    scheduler = corpus.event(
        pod, "FailedScheduling", "Failed to schedule pod, x", 1, "default-scheduler", "Warning"
    )
    assert [s.state for s in karpenter([limit, scheduler])] == [NodeComing.NOT_COMING]


def test_both_status_formats_give_sizes_targets_and_maxima() -> None:
    group = corpus.Group(MIG, 2, 3, 0, 4, "InProgress", since_minutes=3)
    for body in (corpus.yaml_status([group]), corpus.text_status([group])):
        status = parse(corpus.status_configmap(body, 0.1))
        assert status is not None
        assert [(g.id, g.registered, g.target, g.max, g.scale_up) for g in status.groups] == [
            (MIG, 2, 3, 4, "InProgress")
        ]
        assert status.updated is not None
        assert NOW - status.updated < timedelta(seconds=7)


def test_the_yaml_backoff_carries_its_error_code() -> None:
    group = corpus.Group(
        MIG,
        1,
        1,
        0,
        4,
        "Backoff",
        "QUOTA_EXCEEDED",
        "Instance 'sample-node-group-40ce0341-t28s' creation failed: Quota 'CPUS' exceeded. Limit: 57.0 in region us-central1.",
    )
    status = parse(corpus.status_configmap(corpus.yaml_status([group]), 0.1))
    assert status is not None
    assert (status.groups[0].error_code, status.groups[0].error_message) == (
        group.error_code,
        group.error_message,
    )


NO_CAPACITY = Capacity()


def _view(*objects: dict[str, object], capacity: Capacity = NO_CAPACITY) -> TriageView:
    pod = next(o for o in objects if o["kind"] == "Pod")
    events = tuple(o for o in objects if o["kind"] == "Event")
    return TriageView(pod, (), (), events, NOW, capacity=capacity)


def test_no_autoscaler_is_none_and_a_silent_one_is_unknown() -> None:
    pod = corpus.pod("p", 8)
    assert assess(_view(pod)).state is NodeComing.NONE
    status = corpus.status_configmap(corpus.yaml_status([]), 0.1)
    assert assess(_view(pod, capacity=Capacity(status=status))).state is NodeComing.UNKNOWN


def test_the_newer_signal_outranks_the_older() -> None:
    pod = corpus.pod("p", 8)
    up = corpus.ca_event(pod, "TriggeredScaleUp", f"pod triggered scale-up: [{{{MIG} 0->1 (max: 4)}}]", 8)
    refused = corpus.ca_event(
        pod, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max node group size reached", 1
    )
    assert assess(_view(pod, up, refused)).state is NodeComing.NOT_COMING
    assert assess(_view(pod, replace_time(refused, 9), up)).state is NodeComing.COMING


def replace_time(event: dict[str, object], minutes_ago: float) -> dict[str, object]:
    return {**event, "lastTimestamp": corpus.ts(minutes_ago)}


def test_a_stale_status_means_the_autoscaler_is_down() -> None:
    pod = corpus.pod("p", 8)
    status = corpus.status_configmap(corpus.yaml_status([], 30), 30)
    found = assess(_view(pod, capacity=Capacity(status=status)))
    assert found.state is NodeComing.UNKNOWN
    assert found.since is not None
    assert NOW - found.since > timedelta(minutes=29)
    assert found.headline.endswith("it is not running")


async def test_a_jobset_answer_carries_whether_a_node_comes_for_its_blocking_pod() -> None:
    """`/jobset why`'s answer (and its JSON) carries the `autoscaling` of the pod it triaged, the
    same as `/triage` of that pod gives: here cluster-autoscaler adds a node for each pending pod."""
    objects = load_objects(ROOT / "tests/corpus/jobset/pods-pending-exhausted.json")
    pending = [o for o in objects if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    status = corpus.status_configmap(corpus.yaml_status(corpus.SCALING), 0.1)
    mig = corpus.MIG.format(pool="a3-pool")
    told = [corpus.ca_event(p, "TriggeredScaleUp", f"pod triggered scale-up: [{{{mig} 1->2 (max: 4)}}]", 2) for p in pending]
    reader = SnapshotReader([*objects, status, *told])
    found = explain(await reader.jobset_view("ml-train", "sdxl-finetune"))
    assert found.pod_verdict is PodVerdict.EXHAUSTED
    assert found.autoscaling is not None
    assert found.autoscaling.state is NodeComing.COMING
    blocking = next(p for p in pending if f"Triage of {p['metadata']['name']} " in "\n".join(found.evidence))
    alone = await reader.triage_view("ml-train", blocking["metadata"]["name"])
    assert classify(alone.view, alone.prepared).autoscaling == found.autoscaling
    shown = as_json(Reply(Ref("jobset", "ml-train", "sdxl-finetune"), found))["autoscaling"]
    assert (shown["state"], shown["by"]) == ("coming", "cluster-autoscaler")
    assert "a3-pool" in {g["name"] for g in shown["groups"]}


def test_the_status_configmaps_failures_count_only_for_the_pods_groups() -> None:
    """`FailedToScaleUpGroup` (a resize refused at once: the pod hears nothing more) of the group the
    pod's scale-up went to is a failure; the same of another group is not the pod's."""
    pod = corpus.pod("p", 8)
    (triggered,) = _said(f"pod triggered scale-up: [{{{MIG} 1->2 (max: 4)}}]", "TriggeredScaleUp", 3)
    status = corpus.status_configmap(corpus.yaml_status(corpus.GROUPS), 0.1)
    refused = "Scale-up failed for group {}: googleapi: Error 403: Required 'compute.instanceGroupManagers.update' permission, forbidden"
    mine = corpus.ca_event(status, "FailedToScaleUpGroup", refused.format(MIG), 1, "Warning")
    other = corpus.ca_event(status, "FailedToScaleUpGroup", refused.format(MIG.replace("gpu-pool", "cpu-pool")), 1, "Warning")
    on_pod = corpus.ca_event(pod, "FailedToScaleUpGroup", refused.format(MIG), 1, "Warning")
    (said,) = on_status([mine, other, on_pod], (triggered,), ("gpu-pool",))
    assert said.state is NodeComing.FAILED
    assert said.headline.startswith("Scale-up failed {ago}: cluster-autoscaler could not resize gpu-pool: googleapi")
    assert said.quote == refused.format(MIG)
