"""Fixes are computed, never guessed: each pod patch, applied to the snapshot's pod, moves the verdict
past the step it fixes and opens exactly the nodes it says; each cluster-side fix names objects the
snapshot holds; the merge patch is RFC 7386's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from itertools import chain
from typing import Any

import pytest

from devtools.corpus import ROOT, Case
from diagnosis.autoscaling import groups
from diagnosis.dra_objects import Dra
from diagnosis.model import Diagnosis, Fix, PodVerdict
from diagnosis.objects import kind, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify, passing
from diagnosis.triage.fit import Shortage
from diagnosis.triage.fixes import UNCHECKED, Remaining
from diagnosis.triage.funnel import Ask
from diagnosis.triage.resources import Counted, Members, group_pods
from diagnosis.triage.steps.node_resources import _smaller_request
from diagnosis.views import TriageView
from diagnosis.workloads import Owner
from tests.unit.test_gpu_corpus import CASES, items, view_of

GI = 2**30

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
    if not fix.opens:
        # A move to a node group whose new node would take the pod: proven by the template check.
        assert UNCHECKED in fix.summary
        assert any(
            g.fits and f"node group {g.name}:" in fix.summary
            for g in groups.checked(patched, groups.pools(patched.nodes))
        )
        return
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
        PodVerdict.NODE_RESOURCES,
        PodVerdict.HOST_PORT,
        PodVerdict.VOLUME,
        PodVerdict.TOPOLOGY_SPREAD,
        PodVerdict.POD_AFFINITY,
    } <= fixed


@pytest.mark.parametrize(
    ("case", "before", "fix"), CLUSTER_FIXES, ids=[_id(c, f) for c, _, f in CLUSTER_FIXES]
)
def test_a_cluster_side_fix_names_objects_that_exist(case: Case, before: Diagnosis, fix: Fix) -> None:
    existing = {
        f"{kind(o).lower()}/{namespace(o)}/{name(o)}" if namespace(o) else f"{kind(o).lower()}/{name(o)}"
        for o in items(case.snapshot)
    }
    assert fix.objects
    assert set(fix.objects) <= existing
    # A fix opens nodes, or says to re-check once it is done (the objects cannot show what it opens); a
    # placed pod's (`ok`) is past the funnel: its fix is the node's or the image's, with the commands to run.
    assert fix.opens or UNCHECKED in fix.summary or (before.verdict == "ok" and fix.commands)


def test_the_corpus_has_cluster_side_fixes_on_each_dra_object_kind() -> None:
    touched = {o.split("/")[0] for _, _, f in CLUSTER_FIXES for o in f.objects}
    assert {"resourceclaim", "resourceclaimtemplate", "resourceslice"} <= touched


def _first(snapshot: str, ns: str, pod: str) -> Fix:
    fixes = classify(view_of(ROOT / snapshot, ns, pod)).fixes
    assert fixes, f"{ns}/{pod} has no fix"
    return fixes[0]


def test_exhausted_first_frees_the_holder_then_asks_what_the_node_has_free() -> None:
    """Ending another pod comes before shrinking the pod's own ask (`diagnosis.model.Harm`)."""
    fixes = classify(view_of(ROOT / "bot/demo/gpu-lab.json", "gpu-triage", "case-exhaust")).fixes
    assert [f.summary.split(" in ")[0] for f in fixes][1:] == ["ask 1 nvidia.com/gpu instead of 2"]
    assert fixes[1].pod_patch is not None
    container = fixes[1].pod_patch["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    freeing = fixes[0]
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
    view = view_of(ROOT / "bot/demo/gpu-lab.json", "gpu-triage", "case-taint")
    fix = classify(view).fixes[0]
    assert fix.pod_patch is not None
    assert fix.pod_patch["spec"]["tolerations"][: len(view.pod["spec"]["tolerations"])] == list(
        view.pod["spec"]["tolerations"]
    )
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in (
        fix.pod_patch["spec"]["tolerations"]
    )


def test_a_label_fix_selects_a_value_that_exists_and_names_the_pool() -> None:
    fix = _first("bot/demo/gpu-lab.json", "gpu-triage", "case-label")
    assert fix.pod_patch == {"spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}}}
    assert fix.opens == ("lab-node-0",)


PLUGIN = "tests/corpus/triage/onprem-gpu-operator-plugin.json"
"""A GPU Operator cluster whose device plugin DaemonSet leaves out two GPU nodes."""


def test_the_label_value_closest_to_the_one_asked_is_offered_first() -> None:
    fixes = classify(view_of(ROOT / PLUGIN, "ml", "l40s-infer-5ctbn")).fixes
    assert [f.pod_patch for f in fixes] == [
        {"spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}},
        {"spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}}},
    ]
    assert [f.opens for f in fixes] == [("gpu-l40s-01",), ("gpu-l4-01",)]


def test_a_label_no_node_carries_is_given_to_the_nodes_that_would_fit() -> None:
    view = view_of(ROOT / PLUGIN, "ml", "vision-eval-h7gkp")
    fixes = classify(view).fixes
    assert [c.text for f in fixes for c in f.commands] == [
        "kubectl label node gpu-l4-01 team=vision",
        "kubectl label node gpu-l40s-01 team=vision",
    ]
    assert all(f.pod_patch is None for f in fixes)
    labelled = tuple(merge_patch(n, {"metadata": {"labels": {"team": "vision"}}}) for n in view.nodes)
    assert passing(replace(view, nodes=labelled)) == ("gpu-l4-01", "gpu-l40s-01")


def test_a_label_the_platform_writes_is_never_given_by_hand() -> None:
    """A node pool's name, like a GPU product, describes the node and its platform writes it: giving
    it by hand would lie (and be overwritten), so no fix is offered."""
    view = view_of(ROOT / PLUGIN, "ml", "vision-eval-h7gkp")
    pool = {"spec": {"nodeSelector": {"team": None, "cloud.google.com/gke-nodepool": "vision"}}}
    assert classify(replace(view, pod=merge_patch(view.pod, pool))).fixes == ()


def test_a_node_the_device_plugin_daemonset_does_not_select_is_labelled_as_it_selects() -> None:
    answer = classify(view_of(ROOT / PLUGIN, "ml", "h100-pretrain-9xq2m"))
    assert (
        "gpu-h100-01: DaemonSet gpu-operator/nvidia-device-plugin-daemonset (NVIDIA device plugin) runs "
        "no pod here: its template's node selection does not match (has "
        "nvidia.com/gpu.deploy.device-plugin=false, not true)"
    ) in answer.evidence
    (fix,) = answer.fixes
    assert [c.text for c in fix.commands] == [
        "kubectl label node gpu-h100-01 nvidia.com/gpu.deploy.device-plugin=true --overwrite"
    ]
    assert (fix.pod_patch, fix.opens) == (None, ("gpu-h100-01",))


def test_a_taint_the_device_plugin_daemonset_does_not_tolerate_is_tolerated_where_it_is_written() -> None:
    """The GPU Operator writes its DaemonSets from its ClusterPolicy (a change to one is undone): the
    toleration goes there; a DaemonSet no operator owns is patched itself."""
    view = view_of(ROOT / PLUGIN, "ml", "a100-finetune-w4dzt")
    added = '{"key":"dedicated","operator":"Equal","value":"training","effect":"NoSchedule"}'
    (fix,) = classify(view).fixes
    assert [c.text for c in fix.commands] == [
        "kubectl patch clusterpolicy cluster-policy --type=json -p "
        f'\'[{{"op":"add","path":"/spec/daemonsets/tolerations/-","value":{added}}}]\''
    ]
    assert fix.opens == ("gpu-a100-01",)
    unowned = tuple(
        {**d, "metadata": {k: v for k, v in d["metadata"].items() if k != "ownerReferences"}}
        for d in view.daemonsets
    )
    (fix,) = classify(replace(view, daemonsets=unowned)).fixes
    assert [c.text for c in fix.commands] == [
        "kubectl patch daemonset nvidia-device-plugin-daemonset -n gpu-operator --type=json -p "
        f'\'[{{"op":"add","path":"/spec/template/spec/tolerations/-","value":{added}}}]\''
    ]


def test_a_node_without_the_hardware_is_not_to_be_served_by_the_device_plugin() -> None:
    """cpu-01 has no GPU: that the device plugin DaemonSet does not select it is by design."""
    view = view_of(ROOT / PLUGIN, "ml", "h100-pretrain-9xq2m")
    cpu = {"kubernetes.io/hostname": "cpu-01", "nvidia.com/gpu.product": None}
    on_cpu = merge_patch(view.pod, {"spec": {"nodeSelector": cpu}})
    answer = classify(replace(view, pod=on_cpu))
    assert answer.verdict == "no-gpu-node"
    assert not any("DaemonSet" in line for line in answer.evidence)
    assert answer.fixes == ()


def test_without_the_daemonsets_a_node_without_its_plugin_is_only_to_be_repaired() -> None:
    view = replace(view_of(ROOT / PLUGIN, "ml", "h100-pretrain-9xq2m"), daemonsets=())
    (fix,) = classify(view).fixes
    assert fix.summary.startswith("repair the device plugin or driver on gpu-h100-01")


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


ENDINGS = [
    (c, d, f)
    for c, d, f in CLUSTER_FIXES
    if f.opens and f.objects and all(o.startswith("pod/") for o in f.objects)
]


@pytest.mark.parametrize(("case", "before", "fix"), ENDINGS, ids=[_id(c, f) for c, _, f in ENDINGS])
def test_ending_the_pods_a_fix_names_opens_what_it_says(case: Case, before: Diagnosis, fix: Fix) -> None:
    """The snapshot without those pods, and without the ResourceClaims only they reserved (the
    resourceclaim controller deletes a pod's own claims and deallocates the others: either way their
    devices are free), passes on the nodes it names (for a pod waiting on its preemption victims, as
    the scheduler's next attempt sees it: nominatedNodeName a hint only)."""
    view = view_of(case.snapshot, case.namespace, case.name)
    gone = {tuple(o.split("/")[1:]) for o in fix.objects}
    kept = tuple(p for p in view.bound_pods if (namespace(p), name(p)) not in gone)
    after = replace(
        view,
        bound_pods=kept,
        peers=replace(
            view.peers, pods=tuple(p for p in view.peers.pods if (namespace(p), name(p)) not in gone)
        ),
        storage=replace(
            view.storage, users=tuple(p for p in view.storage.users if (namespace(p), name(p)) not in gone)
        ),
        dra=Dra.of(o for o in items(case.snapshot) if not _freed(o, gone)),
    )
    if before.verdict == PodVerdict.PREEMPTING:
        pod_status = {k: v for k, v in view.pod["status"].items() if k != "nominatedNodeName"}
        after = replace(after, pod={**view.pod, "status": pod_status})
    assert len(kept) == len(view.bound_pods) - len(gone)
    assert passing(after) == fix.opens


def _freed(obj: Mapping[str, Any], gone: set[tuple[str, ...]]) -> bool:
    """A ResourceClaim reserved only for pods that are gone."""
    if kind(obj) != "ResourceClaim":
        return False
    users = [(namespace(obj), str(r.get("name"))) for r in obj.get("status", {}).get("reservedFor", [])]
    return bool(users) and all(u in gone for u in users)


def _fixes(snapshot: str, ns: str, pod: str) -> tuple[Fix, ...]:
    return classify(view_of(ROOT / snapshot, ns, pod)).fixes


def test_node_resources_frees_a_node_by_its_workload_then_asks_what_the_roomiest_node_has_free() -> None:
    fixes = _fixes("tests/corpus/triage/dgx-crowded.json", "ml", "feature-join-9fd2m")
    freeing, lowered = fixes[0], fixes[-1]
    assert lowered.summary.startswith(
        "ask 199.2Gi memory instead of 256.2Gi in the Job's pod template, only if the app can run with "
        "that (above its memory request a pod is evicted first): opens node dgx-h100-01"
    )
    assert lowered.pod_patch is not None
    container = lowered.pod_patch["spec"]["containers"][0]
    # 199.2Gi less the RuntimeClass overhead, in whole Mi
    assert container["resources"]["requests"]["memory"] == "203872Mi"
    assert (freeing.objects, freeing.opens) == (("pod/ml/embeddings-cache-0",), ("dgx-h100-01",))
    # Its StatefulSet would make the pod again: it is scaled down, from one above its last pod.
    assert freeing.summary.startswith("free dgx-h100-01: scale StatefulSet ml/embeddings-cache down by 1 ")
    assert [c.text for c in freeing.commands] == [
        "kubectl scale statefulset embeddings-cache -n ml --current-replicas=1 --replicas=0"
    ]


def _pod(ns: str, pod: str, replica_set: str, node: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {
            "namespace": ns,
            "name": pod,
            "labels": {"pod-template-hash": replica_set.rsplit("-", 1)[1]},
            "ownerReferences": [{"kind": "ReplicaSet", "name": replica_set, "controller": True}],
        },
        "spec": {"nodeName": node},
    }


def test_a_workloads_members_are_the_same_read_pod_by_pod_or_by_the_groups_a_cache_keeps() -> None:
    on = {
        "gpu-a": (
            _pod("ml", "vllm-7b-6d9f4-a", "vllm-7b-6d9f4", "gpu-a"),
            _pod("web", "vllm-7b-5c8b2-b", "vllm-7b-5c8b2", "gpu-a"),
        ),
        "gpu-b": (
            _pod("ml", "vllm-7b-6d9f4-c", "vllm-7b-6d9f4", "gpu-b"),
            _pod("ml", "embed-77f5c-d", "embed-77f5c", "gpu-b"),
        ),
    }
    groups = group_pods(on)
    kept = {node: group.pods for node, group in groups.items()}
    vllm, embed = Owner("Deployment", "vllm-7b"), Owner("Deployment", "embed")
    asked = _pod("ml", "vllm-7b-6d9f4-z", "vllm-7b-6d9f4", "")
    raw = Counted.of(asked, tuple(chain.from_iterable(on.values())))  # as a direct read lists them
    # The groups of one node and the other's pods as listed after them (a cache's unsynced node).
    gpu_a = {"gpu-a": groups["gpu-a"]}
    mixed = Counted.of(asked, (*groups["gpu-a"].pods, *on["gpu-b"]), grouped=gpu_a)
    read = [Members(c.within(set(on)), c.groups, c) for c in (raw, mixed)]
    for members in (Members(on), Members(kept, groups), Members(kept, groups), *read):  # the third: as kept
        assert [name(p) for p in members.of("ml", vllm)] == ["vllm-7b-6d9f4-a", "vllm-7b-6d9f4-c"]
        assert [name(p) for p in members.of("web", vllm)] == ["vllm-7b-5c8b2-b"]  # same name, not the same
        assert [name(p) for p in members.of("ml", embed)] == ["embed-77f5c-d"]
        assert members.of("web", embed) == []
    # Only the nodes handed over, and without the pods a fix ends.
    for counted in (raw, mixed):
        on_b = Members(counted.within({"gpu-b"}), counted.groups, counted)
        assert [name(p) for p in on_b.of("ml", vllm)] == ["vllm-7b-6d9f4-c"]
        after = counted.without(frozenset({("ml", "vllm-7b-6d9f4-c")}))
        members = Members(after.within(set(on)), after.groups, after)
        assert [name(p) for p in members.of("ml", vllm)] == ["vllm-7b-6d9f4-a"]


def test_a_rollout_that_its_old_pods_keep_out_by_anti_affinity_ends_an_old_pod_first() -> None:
    rollout = _fixes(
        "tests/corpus/triage/gke-anti-affinity-rollout.json", "inference", "sdxl-serve-7sw2x5gcnf-8ck49"
    )
    first = rollout[0]
    assert first.summary.startswith("let Deployment sdxl-serve end an old pod before it starts each new one")
    assert (first.pod_patch, first.objects) == (None, ("pod/inference/sdxl-serve-8g9k4r22pw-b845k",))
    assert first.opens == ("gke-ml-prod-l4-pool-b9492709-b28w",)
    assert [c.text for c in first.commands] == [
        "kubectl patch deployment sdxl-serve -n inference --type merge -p "
        '\'{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,'
        '"maxUnavailable":1}}}}\''
    ]
    # One ReplicaSet on every node: no rollout to change, one replica more than nodes.
    more = _fixes(
        "tests/corpus/triage/gke-anti-affinity-one-per-node.json", "inference", "sdxl-serve-4jxsr4v5t8-qrjmh"
    )
    assert not any("maxSurge" in f.summary for f in more)


def test_a_pod_already_terminating_where_its_end_is_enough_is_waited_for_first() -> None:
    view = view_of(ROOT / "tests/corpus/triage/dgx-crowded.json", "ml", "feature-join-9fd2m")
    going = {"deletionTimestamp": "2099-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30}
    pods = tuple(
        {**p, "metadata": {**p["metadata"], **going}} if p["metadata"]["name"] == "embeddings-cache-0" else p
        for p in view.bound_pods
    )
    fixes = classify(replace(view, bound_pods=pods)).fixes
    assert fixes[0].summary == (
        "wait: ml/embeddings-cache-0 (StatefulSet embeddings-cache, priority 0) is terminating on "
        "dgx-h100-01; once gone, opens node dgx-h100-01"
    )
    assert (fixes[0].commands, fixes[0].opens) == ((), ("dgx-h100-01",))
    # A pod already going is never offered to be ended again.
    assert all("embeddings-cache-0" not in f.summary for f in fixes[1:])


def test_too_many_pods_ends_one_pod_and_never_a_daemonset_pod() -> None:
    fixes = _fixes("tests/corpus/triage/dgx-crowded.json", "ml", "notebook-gpu-0")
    assert [(f.pod_patch, f.opens) for f in fixes] == [(None, ("dgx-h100-03",))]
    assert len(fixes[0].objects) == 1
    assert fixes[0].objects[0].startswith("pod/ml/tokenize-shard-")


def test_a_pod_larger_than_any_node_is_offered_only_a_smaller_request() -> None:
    fixes = _fixes("tests/corpus/triage/dgx-crowded.json", "ml", "eval-cpu-heavy-7xk2p")
    assert [f.summary.split(" in ")[0] for f in fixes] == ["ask 95 cpu instead of 500"]
    assert "if the app can run with that" in fixes[0].summary


def test_a_port_a_daemonset_holds_is_moved_or_dropped_never_freed() -> None:
    fixes = _fixes("tests/corpus/triage/gke-l4-hostports.json", "inference", "dcgm-profiling-debug-k2c9d")
    assert [f.summary.split(" in ")[0] for f in fixes] == [
        "use host port 9401 instead of 9400",
        "drop hostPort TCP/9400",
    ]
    assert all(f.pod_patch is not None for f in fixes)
    moved = fixes[0].pod_patch
    assert moved is not None
    port = moved["spec"]["containers"][0]["ports"][0]
    assert (port["containerPort"], port["hostPort"]) == (9400, 9401)


def test_a_host_network_pod_moves_its_container_port_with_the_host_port() -> None:
    fixes = _fixes("tests/corpus/triage/gke-l4-hostports.json", "inference", "ddp-train-resnet-0-hx4lm")
    moved = fixes[0].pod_patch
    assert moved is not None
    ports = [p for c in moved["spec"]["containers"] for p in c.get("ports", ())]
    assert {"containerPort": 29501, "hostPort": 29501} in [
        {k: p[k] for k in ("containerPort", "hostPort") if k in p} for p in ports
    ]
    assert not any(f.summary.startswith("drop hostPort") for f in fixes)
    assert [f.objects for f in fixes[1:]] == [
        ("pod/inference/nccl-smoke-7w2k-ft5r2",),
        ("pod/inference/nccl-smoke-b5vn-ft5r2",),
    ]


def test_a_missing_pvc_is_replaced_by_the_one_that_exists() -> None:
    fix = _first("tests/corpus/triage/gke-pvc-missing.json", "ml-train", "bert-finetune-3-k9gvp")
    assert fix.pod_patch is not None
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in fix.pod_patch["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert "shared-datasets" in claims
    assert "shared-dataset" not in claims
    assert len(fix.opens) == 2


def test_a_node_at_its_attach_limit_is_freed_by_ending_one_pod_with_a_volume() -> None:
    fixes = _fixes("tests/corpus/triage/eks-ebs-attach-limit.json", "features", "embed-refresh-88-shm64")
    assert [f.summary.split(":")[0] for f in fixes] == [
        "free volume attach slots on ip-10-0-40-18.us-west-2.compute.internal",
        "free volume attach slots on ip-10-0-41-96.us-west-2.compute.internal",
    ]
    assert [len(f.objects) for f in fixes] == [1, 1]


def test_a_claim_whose_storage_class_does_not_exist_is_made_again() -> None:
    view = view_of(ROOT / "tests/corpus/triage/gke-pvc-missing.json", "ml-train", "bert-finetune-3-k9gvp")
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "shared-dataset", "namespace": "ml-train", "uid": "4f0c2b7e-claim"},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": "500Gi"}},
            "storageClassName": "filestore-premium",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }
    storage = replace(view.storage, claims=(*view.storage.claims, claim))
    found = classify(replace(view, storage=storage))
    assert found.verdict == PodVerdict.VOLUME
    assert [(f.pod_patch, f.opens, f.objects) for f in found.fixes] == [
        (None, (), ("persistentvolumeclaim/ml-train/shared-dataset",))
    ]
    assert found.fixes[0].summary.startswith(
        "make PVC shared-dataset again with a StorageClass that exists (filestore-premium does not"
    )


def test_a_volume_in_a_zone_without_gpu_nodes_is_to_be_moved_which_cannot_be_shown() -> None:
    fixes = _fixes("tests/corpus/triage/eks-pv-zone-label.json", "research", "alphafold-infer-17-kw77d")
    assert [(f.pod_patch, f.opens, f.objects) for f in fixes] == [
        (None, (), ("persistentvolumeclaim/research/alphafold-db",))
    ]
    assert UNCHECKED in fixes[0].summary


def test_preemption_victims_past_their_grace_period_may_be_force_deleted() -> None:
    fix = _first("tests/corpus/triage/gke-a100-preemption.json", "research", "pretrain-70b-0-0-lk2vd")
    node = "gke-research-a100-pool-9e41b2d0-4hzm"
    assert fix.pod_patch is None
    assert fix.opens == (node,)
    assert fix.objects == ("pod/research/sweep-lr-1e-4-d2x8w", "pod/research/sweep-lr-3e-4-7qmcz")
    assert "4m past their grace period" in fix.summary
    assert [c.text for c in fix.commands if c.changes] == [
        "kubectl delete pod sweep-lr-1e-4-d2x8w -n research --grace-period=0 --force",
        "kubectl delete pod sweep-lr-3e-4-7qmcz -n research --grace-period=0 --force",
    ]


def _victims_changed(**fields: Any) -> Diagnosis:
    """The pod waiting on its preemption victims, each victim's metadata given `fields`."""
    snapshot = ROOT / "tests/corpus/triage/gke-a100-preemption.json"
    view = view_of(snapshot, "research", "pretrain-70b-0-0-lk2vd")
    victims = {"sweep-lr-1e-4-d2x8w", "sweep-lr-3e-4-7qmcz"}
    pods = tuple(
        {**p, "metadata": {**p["metadata"], **fields}} if p["metadata"]["name"] in victims else p
        for p in view.bound_pods
    )
    return classify(replace(view, bound_pods=pods))


def test_victims_within_their_grace_period_are_waited_for() -> None:
    later = _victims_changed(deletionTimestamp="2099-01-01T00:00:00Z")
    assert [(f.summary.split(";")[0], f.commands, len(f.opens)) for f in later.fixes] == [
        (
            "wait: research/sweep-lr-1e-4-d2x8w, research/sweep-lr-3e-4-7qmcz are terminating on "
            "gke-research-a100-pool-9e41b2d0-4hzm",
            (),
            1,
        )
    ]


def test_a_victim_in_its_grace_period_says_when_its_deletion_was_asked_and_when_the_period_ends() -> None:
    """The API server sets deletionTimestamp to now + the grace period: it is in the future while the
    victim terminates (seen on a real API server), so the deletion was asked a grace period before."""
    found = _victims_changed(deletionTimestamp="2026-11-29T09:00:20Z", deletionGracePeriodSeconds=30)
    assert found.summary.endswith(
        "waits for 2 of them to terminate, the first deleted 10s ago, its grace period ends in 20s"
    )
    assert any("terminating (deleted 10s ago, its grace period ends in 20s)" in e for e in found.evidence)
    unknown = _victims_changed(deletionTimestamp="2026-11-29T09:05:00Z", deletionGracePeriodSeconds=None)
    assert unknown.summary.endswith("to terminate, the first one's grace period ends in 5m")
    assert any("terminating (its grace period ends in 5m)" in e for e in unknown.evidence)


def test_victims_held_by_a_finalizer_are_not_force_deleted() -> None:
    held = _victims_changed(finalizers=["example.com/checkpoint-upload"])
    fix = held.fixes[0]
    assert "(held by finalizers example.com/checkpoint-upload)" in fix.summary
    assert [c.text for c in fix.commands if c.changes] == []


def test_a_nominated_pod_with_no_victim_left_has_nothing_to_fix() -> None:
    assert _fixes("tests/corpus/triage/gke-a100-preemption.json", "research", "hotfix-eval-p4k9s") == ()
    assert _fixes("tests/corpus/triage/gke-a100-preemption.json", "research", "canary-infer-b8t5n") == ()


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


@pytest.mark.parametrize("gone", [(), (0,), (9,), (3, 4), (0, 2, 5, 9), tuple(range(10))])
def test_the_pods_a_fix_leaves_read_as_a_copy_without_the_ended_ones(gone: tuple[int, ...]) -> None:
    """`Remaining` reads the view's bound pods in place: its length, order, items (from either end),
    slices and bounds are those of the copy without the positions taken out."""
    pods = tuple({"metadata": {"name": f"p{i}"}} for i in range(10))
    copied = tuple(p for i, p in enumerate(pods) if i not in gone)
    remaining = Remaining(pods, gone)
    assert len(remaining) == len(copied)
    assert tuple(remaining) == copied
    assert [remaining[i] for i in range(-len(copied), len(copied))] == [*copied, *copied]
    assert remaining[1:4] == copied[1:4]
    assert remaining[::-1] == copied[::-1]
    assert list(reversed(remaining)) == list(reversed(copied))
    for index in (len(copied), -len(copied) - 1):
        with pytest.raises(IndexError):
            remaining[index]


def test_a_smaller_request_is_cut_to_what_the_node_needing_the_least_cut_has_free() -> None:
    """Per node, the share of its asks a pod keeps when cut to what is free there, the first node of
    the largest; a node where some short resource is not to be asked less of (hugepages), or where
    nothing is free, is passed over."""
    pod = {
        "metadata": {"namespace": "ml", "name": "eval-0"},
        "spec": {"containers": [{"name": "eval", "resources": {"requests": {"cpu": "8", "memory": "10Gi"}}}]},
    }
    found = {
        "none-free": [Shortage("cpu", 4000, 4000, 8000)],
        "hugepages-short": [Shortage("cpu", 8000, 100, 8500), Shortage("hugepages-2Mi", 4 * GI, GI, 4 * GI)],
        "cpu-short": [Shortage("cpu", 4000, 1000, 8000)],  # keeps 3/8 of its cpu
        "memory-short": [Shortage("memory", 8 * GI, 4 * GI, 10 * GI)],  # keeps 4/10 of its memory
        "cpu-short-too": [Shortage("cpu", 4000, 800, 8000)],  # as much, listed later
    }
    change = _smaller_request(Ask(pod, {}), found)
    assert change is not None
    assert change.summary.startswith("ask 4Gi memory instead of 10Gi in ")
    passed_over = {host: found[host] for host in ("none-free", "hugepages-short")}
    assert _smaller_request(Ask(pod, {}), passed_over) is None
