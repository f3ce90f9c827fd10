"""The /triage corpus through `classify`: every case gets its verdict, and key evidence is right.

The view is built here from the snapshot's List, the way ARCHITECTURE.md says a reader fills it (the pod by
namespace/name, every node, every bound non-terminal pod, the pod's events), so these tests do not
depend on `cluster/snapshot.py`.
"""

from __future__ import annotations

import gc
import json
import weakref
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from devtools.corpus import ROOT, Case, cases
from diagnosis.autoscaling import events_to_read
from diagnosis.dra_objects import Dra
from diagnosis.model import Diagnosis, PodVerdict
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify, node_reads, serving_nothing, usage_candidates
from diagnosis.triage.findings import Findings
from diagnosis.triage.fixes import UNCHECKED
from diagnosis.triage.prepared import Prepared
from diagnosis.triage.runner import reaches_funnel
from diagnosis.views import Capacity, Peers, Storage, TriageView

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
"""The time the corpus snapshots were taken."""

CASES = cases("triage")


@cache
def items(snapshot: Path) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(snapshot.read_text())["items"])


def find_pod(snapshot: Path, namespace: str, name: str) -> dict[str, Any]:
    return next(
        o
        for o in items(snapshot)
        if o["kind"] == "Pod" and (o["metadata"]["namespace"], o["metadata"]["name"]) == (namespace, name)
    )


def _about(event: dict[str, Any], pod: dict[str, Any]) -> bool:
    ref = event.get("involvedObject") or event.get("regarding") or {}
    meta = pod["metadata"]
    return (ref.get("namespace"), ref.get("name")) == (meta["namespace"], meta["name"]) and ref.get(
        "uid"
    ) in (None, meta["uid"])


def view_of(
    snapshot: Path, namespace: str, name: str, *, only_nodes: tuple[str, ...] | None = None
) -> TriageView:
    """The TriageView a reader builds from the snapshot. `only_nodes`: keep only the bound pods of
    these nodes, as the live reader does with `usage_candidates`."""
    objects = items(snapshot)
    pod = find_pod(snapshot, namespace, name)
    bound = tuple(
        o
        for o in objects
        if o["kind"] == "Pod"
        and o["spec"].get("nodeName")
        and o["status"].get("phase") not in ("Succeeded", "Failed")
        and (only_nodes is None or o["spec"]["nodeName"] in only_nodes)
    )

    def of(kind: str) -> tuple[dict[str, Any], ...]:
        return tuple(o for o in objects if o["kind"] == kind)

    every_bound = tuple(
        o
        for o in of("Pod")
        if o["spec"].get("nodeName") and o["status"].get("phase") not in ("Succeeded", "Failed")
    )
    about = tuple(o for o in objects if o["kind"] == "Event" and _about(o, pod))
    return TriageView(
        pod=pod,
        nodes=of("Node"),
        bound_pods=bound,
        events=about,
        now=NOW,
        peers=Peers(pods=every_bound, namespaces=of("Namespace")),
        storage=Storage(
            claims=of("PersistentVolumeClaim"),
            volumes=of("PersistentVolume"),
            classes=of("StorageClass"),
            csinodes=of("CSINode"),
            users=every_bound,
            drivers=of("CSIDriver"),
            capacities=of("CSIStorageCapacity"),
        ),
        nominated_pods=tuple(
            o
            for o in objects
            if o["kind"] == "Pod" and not o["spec"].get("nodeName") and o["status"].get("nominatedNodeName")
        ),
        workloads=tuple(
            o for o in objects if o["kind"] == "Workload" and o["metadata"]["namespace"] == namespace
        ),
        queues=tuple(
            o
            for o in objects
            if o["kind"] == "ClusterQueue"
            or (o["kind"] == "LocalQueue" and o["metadata"]["namespace"] == namespace)
        ),
        dra=Dra.of(objects),
        capacity=Capacity(
            status=next(iter(of("ConfigMap")), None),
            nodepools=of("NodePool"),
            nodeclaims=of("NodeClaim"),
            requests=of("ProvisioningRequest"),
            events=tuple(e for e in of("Event") if any(r.holds(e) for r in events_to_read(about))),
        ),
        daemonsets=of("DaemonSet"),
    )


def diagnose(snapshot: str, namespace: str, name: str) -> Diagnosis:
    return classify(view_of(ROOT / snapshot, namespace, name))


def joined(diagnosis: Diagnosis) -> str:
    """The evidence, one line each, each as it read before it was folded to fit (`model.folded`)."""
    return "\n".join(e.replace("\n", " ") for e in diagnosis.evidence)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdict(case: Case) -> None:
    answer = classify(view_of(case.snapshot, case.namespace, case.name))
    assert answer.verdict == case.verdict
    if case.autoscaling is not None:
        assert answer.autoscaling is not None
        assert answer.autoscaling.state == case.autoscaling


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bound_pods_of_usage_candidates_are_enough(case: Case) -> None:
    """The live reader reads bound pods only on `usage_candidates` (and on the nodes that serve no
    device, for their device plugin pods): the answer must not change, but for fixes that would open a
    node whose pods were not read (they cannot be proven, so are not claimed)."""
    full = view_of(case.snapshot, case.namespace, case.name)
    candidates = (*usage_candidates(full.pod, full.nodes), *serving_nothing(full.pod, full.nodes))
    partial = replace(
        view_of(case.snapshot, case.namespace, case.name, only_nodes=candidates),
        bound_nodes=frozenset(candidates),
    )
    read, everything = classify(partial), classify(full)
    assert replace(read, fixes=()) == replace(everything, fixes=())
    proven = {f.summary: f.opens for f in everything.fixes}
    for fix in read.fixes:
        assert set(fix.opens) <= set(candidates)
        assert set(fix.opens) <= set(proven.get(fix.summary, fix.opens))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_what_the_reader_worked_out_changes_no_answer(case: Case) -> None:
    """The live reader hands the classifier what `node_reads` found about the view's nodes
    (`Prepared.memo`): the classifier starts from it, and answers as it would without it."""
    view = view_of(case.snapshot, case.namespace, case.name)
    reads = node_reads(view.pod, view.nodes, view.dra)
    answer = classify(view)
    assert classify(view, Prepared(memo=reads.memo)) == answer
    # It is used whenever the funnel runs (which keeps the view's objects alive in it, `Shared.keep`):
    # the pod reaches it, and no claim holds it first.
    used = any(kept is view.peers for kept in reads.memo.alive)
    assert used == (reaches_funnel(view.pod) and answer.verdict is not PodVerdict.CLAIM)


FINDINGS = Findings()
"""Kept across the cases, as the cache keeps it across questions: nodes of one name are other
objects in another snapshot."""


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_what_earlier_questions_found_changes_no_answer(case: Case) -> None:
    """The cache hands the classifier what earlier questions found on its nodes, by placement
    (`Prepared.findings`): the first question of a placement and the next one answer as checking
    every node does, through the reader's `node_reads` too."""
    view = view_of(case.snapshot, case.namespace, case.name)
    answer = classify(view)
    assert classify(view, Prepared(findings=FINDINGS)) == answer
    reads = node_reads(view.pod, view.nodes, view.dra, FINDINGS)
    assert classify(view, Prepared(memo=reads.memo, findings=FINDINGS)) == answer
    assert reads.usage == node_reads(view.pod, view.nodes, view.dra).usage


def test_the_readers_memo_is_freed_with_its_question() -> None:
    """The memo keeps the view's objects alive, never itself through them: once the question is
    answered it goes by reference counting alone, not at the cyclic collector's next run (in
    `kubewhy serve` that may be many questions later, each memo holding a cluster's worth)."""
    case = next(c for c in CASES if c.verdict == PodVerdict.EXHAUSTED.value)
    view = view_of(case.snapshot, case.namespace, case.name)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        reads = node_reads(view.pod, view.nodes, view.dra)
        memo = weakref.ref(reads.memo)
        classify(view, Prepared(memo=reads.memo))
        assert memo() is not None
        del reads
        assert memo() is None
    finally:
        if was_enabled:
            gc.enable()


def test_corpus_reaches_every_verdict_three_ways() -> None:
    counts = Counter(c.verdict for c in CASES)
    assert set(counts) == {v.value for v in PodVerdict}
    assert min(counts.values()) >= 3, counts
    assert len(CASES) >= 40


def test_gpu_lab_is_in_the_corpus() -> None:
    lab = {c.name: c.verdict for c in CASES if c.snapshot == ROOT / "bot/demo/gpu-lab.json"}
    assert lab == {
        "case-ok": "ok",
        "case-nogpunode": "no-gpu-node",
        "case-alloc0": "allocatable-zero",
        "case-taint": "taint",
        "case-label": "label-mismatch",
        "case-exhaust": "exhausted",
        "case-norequest": "no-request",
    }


# --- key evidence ------------------------------------------------------------------------------


def test_lab_taint_names_the_taint_and_gives_the_toleration() -> None:
    found = diagnose("bot/demo/gpu-lab.json", "gpu-triage", "case-taint")
    assert "lab-node-0" in found.summary
    assert "nvidia.com/gpu=present:NoSchedule" in found.summary
    assert (
        "2. no untolerated taint, not cordoned: 1 → 0 nodes; dropped lab-node-0 (untolerated taint "
        "nvidia.com/gpu=present:NoSchedule)" in found.evidence
    )
    assert [s.text for s in found.snippets] == [
        'tolerations:\n- key: nvidia.com/gpu\n  operator: Equal\n  value: "present"\n  effect: NoSchedule\n'
    ]


def test_lab_exhausted_shows_used_free_and_the_holder() -> None:
    found = diagnose("bot/demo/gpu-lab.json", "gpu-triage", "case-exhaust")
    assert found.summary == (
        "lab-node-0 has 1 nvidia.com/gpu free of 2 (1 held by gpu-triage/case-ok); the pod asks 2"
    )
    assert "dropped lab-node-0 (nvidia.com/gpu allocatable 2, used 1, free 1 < 2 asked)" in joined(found)
    assert [(h.kind, h.namespace, h.name, h.nodes, dict(h.devices)) for h in found.holders] == [
        ("Pod", "gpu-triage", "case-ok", ("lab-node-0",), {"nvidia.com/gpu": 1})
    ]
    # The holders are the answer's holders list, grouped by workload: the evidence does not repeat them.
    assert "held by" not in joined(found).replace(found.summary, "")


def test_lab_label_mismatch_names_the_label_and_what_nodes_have() -> None:
    found = diagnose("bot/demo/gpu-lab.json", "gpu-triage", "case-label")
    assert "nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB" in found.summary
    assert "label nvidia.com/gpu.product on the 3 nodes: NVIDIA-L4 ×2, (absent) ×1" in found.evidence
    assert "kubectl get nodes -L nvidia.com/gpu.product" in [c.text for c in found.next_commands]


def test_lab_message_is_quoted_with_the_insufficient_note() -> None:
    found = diagnose("bot/demo/gpu-lab.json", "gpu-triage", "case-alloc0")
    said = next(e for e in found.evidence if e.startswith("scheduler said"))
    assert said.startswith(
        'scheduler said (PodScheduled=False, Unschedulable, for 43m): "0/3 nodes are available: '
    )
    assert any(e.startswith("note: `Insufficient nvidia.com/gpu` reads the same") for e in found.evidence)
    assert (
        "4. nvidia.com/gpu allocatable above 0: 1 → 0 nodes; dropped lab-node-2 (nvidia.com/gpu capacity 4, "
        "allocatable 0)" in found.evidence
    )


def test_terminating_and_other_namespace_pods_count_succeeded_do_not() -> None:
    trainer = diagnose("tests/corpus/triage/gke-mixed-pools.json", "research", "sft-llama-vtnfs")
    held = {(h.namespace, h.name): h for h in trainer.holders}
    old = held[("research", "sft-llama-old")]
    assert (old.pods, old.nodes, dict(old.devices), old.terminating) == (
        ("sft-llama-old-jwpxb",),
        ("gke-prod-ml-l4-pool-e7bf76b4-zp96",),
        {"nvidia.com/gpu": 2},
        1,
    )
    other = held[("team-b", "embed-batch")]
    assert (other.pods, other.nodes, dict(other.devices)) == (
        ("embed-batch-czdtm",),
        ("gke-prod-ml-l4-pool-e7bf76b4-p5ck",),
        {"nvidia.com/gpu": 1},
    )
    probe = diagnose("tests/corpus/triage/gke-mixed-pools.json", "research", "embed-probe-2rm7g")
    assert probe.verdict == PodVerdict.SCHEDULABLE
    assert "embed-batch-prev" not in joined(probe)
    assert "nodes that pass every check: gke-prod-ml-l4-pool-e7bf76b4-p5ck" in probe.evidence


def test_cordon_and_not_ready_are_told_apart() -> None:
    found = diagnose("tests/corpus/triage/gke-mixed-pools.json", "research", "pretrain-a100-vnnch")
    assert (
        "dropped gke-prod-ml-a100-pool-e8473e72-fw5v "
        "(cordoned (node.kubernetes.io/unschedulable:NoSchedule)); "
        "gke-prod-ml-a100-pool-e8473e72-nxr9 (untolerated taint node.kubernetes.io/unreachable:NoSchedule)"
        in joined(found)
    )
    uncordon = [c for c in found.next_commands if c.text.startswith("kubectl uncordon")]
    assert [(c.text, c.changes) for c in uncordon] == [
        ("kubectl uncordon gke-prod-ml-a100-pool-e8473e72-fw5v", True)
    ]
    assert found.snippets == ()  # tolerating a cordon or an unreachable node is no fix


def test_mig_node_with_gpu_zero_is_no_gpu_node_with_a_hint() -> None:
    found = diagnose("tests/corpus/triage/eks-p4d-mig.json", "inference", "full-a100-72nwr")
    assert (
        "dropped ip-10-0-11-23.us-west-2.compute.internal, ip-10-0-11-87.us-west-2.compute.internal "
        "(nvidia.com/gpu capacity 0)" in joined(found)
    )
    assert any("MIG mixed strategy" in e for e in found.evidence)


def test_several_resources_need_one_node_with_all() -> None:
    found = diagnose("tests/corpus/triage/eks-p4d-mig.json", "inference", "nccl-test-5vqm6")
    assert found.summary == (
        "None of the 4 nodes left reports nvidia.com/gpu and vpc.amazonaws.com/efa: "
        "no device plugin serves it there"
    )
    assert "ip-10-0-12-5.us-west-2.compute.internal (no vpc.amazonaws.com/efa in capacity)" in joined(found)


def test_init_container_and_sidecars_set_the_request() -> None:
    found = diagnose("tests/corpus/triage/eks-init-sidecar.json", "ml", "sidecar-before-init-2fc8w")
    assert found.evidence[0].startswith("the pod asks nvidia.com/gpu=4: ")
    after = diagnose("tests/corpus/triage/eks-init-sidecar.json", "ml", "sidecar-after-init-jfzs8")
    assert after.evidence[0].startswith("the pod asks nvidia.com/gpu=3: ")
    assert any("1 Insufficient memory" in e for e in after.evidence)


def test_request_above_any_node_says_it_can_never_fit() -> None:
    found = diagnose("tests/corpus/triage/workstation-one-node.json", "ml", "eval-pair-xvb55")
    assert found.summary == (
        "The pod asks 2 nvidia.com/gpu but no node left has more than 1 allocatable: "
        "it cannot fit even on an empty node"
    )


def test_generic_taint_message_gets_a_note() -> None:
    found = diagnose("tests/corpus/triage/onprem-gfd-affinity.json", "ml", "no-toleration-2gsbl")
    assert "node(s) had untolerated taint(s)" in joined(found)
    assert any(
        e.startswith("note: since Kubernetes 1.34.7 the scheduler no longer names the taint")
        for e in found.evidence
    )
    assert (
        "dgx-a100-01, dgx-a100-02, dgx-a100-03, dgx-a100-04 (untolerated taint nvidia.com/gpu:NoSchedule)"
        in joined(found)
    )
    assert (
        found.snippets[0].text
        == "tolerations:\n- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule\n"
    )


def test_affinity_not_in_keeps_nodes_without_the_label() -> None:
    found = diagnose("tests/corpus/triage/onprem-gfd-affinity.json", "ml", "not-a100-h100-9zqj8")
    assert "cpu-01, cpu-02 (no nvidia.com/gpu in capacity)" in joined(found)
    assert (
        "dgx-a100-01, dgx-a100-02, dgx-a100-03, dgx-a100-04 (affinity nvidia.com/gpu.product NotIn "
        "[NVIDIA-A100-SXM4-80GB, NVIDIA-H100-80GB-HBM3]: has nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB)"
        in joined(found)
    )


def test_no_nodes_says_so() -> None:
    selector = diagnose("tests/corpus/triage/no-nodes.json", "ml", "pinned-l4-4gbwm")
    assert selector.summary.startswith("There are no nodes")
    assert "nodes: 0 in the cluster" in selector.evidence
    plain = diagnose("tests/corpus/triage/no-nodes.json", "ml", "anywhere-4j27q")
    assert plain.summary == "There are no nodes: none reports nvidia.com/gpu"


def test_kueue_gate_is_named_with_the_workloads_command() -> None:
    found = diagnose("tests/corpus/triage/kueue-gated.json", "team-a", "llm-sft-0-c7bjc")
    assert found.summary.startswith("The pod is held by scheduling gate kueue.x-k8s.io/admission: Kueue ")
    assert "kubectl get workloads.kueue.x-k8s.io -n team-a -o wide" in [c.text for c in found.next_commands]


def test_kueue_gate_without_a_workload_blames_the_integration_not_the_quota() -> None:
    found = diagnose("tests/corpus/triage/kueue-gated.json", "team-b", "vllm-gemma-6d9f7c8b5-k2x9q")
    assert found.summary.endswith(
        "Kueue made no Workload for it: its integration for Deployment vllm-gemma is off, or it does not "
        "manage namespace team-b"
    )
    assert "quota" not in found.summary
    config, fix = found.fixes
    assert config.summary.startswith(
        "enable Kueue's integration for Deployment pods, or select namespace team-b in its "
        "managedJobsNamespaceSelector; then restart Kueue"
    )
    assert [c.text for c in config.commands] == [
        "kubectl get configmaps -n kueue-system --field-selector metadata.name=kueue-manager-config -o yaml",
        "kubectl rollout restart deployment kueue-controller-manager -n kueue-system",
    ]
    assert (fix.pod_patch, fix.opens) == (None, ())
    assert UNCHECKED in fix.summary
    assert [c.text for c in fix.commands] == [
        "kubectl patch pod vllm-gemma-6d9f7c8b5-k2x9q -n team-b --type=json "
        '-p \'[{"op":"remove","path":"/spec/schedulingGates"}]\''
    ]


def test_another_controllers_gate_is_removed_only_where_that_controller_is_gone() -> None:
    found = diagnose("tests/corpus/triage/workstation-one-node.json", "ml", "train-after-sync-mbhfm")
    (fix,) = found.fixes
    assert fix.summary == (
        "remove gate example.com/dataset-synced only if the controller that lifts it is gone or stuck (the "
        f"pod then starts without what it waits for): {UNCHECKED}"
    )
    assert (fix.pod_patch, fix.opens, fix.objects) == (None, (), ("pod/ml/train-after-sync-mbhfm",))
    (command,) = fix.commands
    assert command.changes
    assert command.text == (
        "kubectl patch pod train-after-sync-mbhfm -n ml --type=json "
        '-p \'[{"op":"remove","path":"/spec/schedulingGates"}]\''
    )


def test_kueues_topology_gate_is_never_removed_by_hand() -> None:
    found = diagnose("tests/corpus/triage/kueue-gated.json", "team-a", "tas-train-3-g2cl7")
    assert all("remove" not in f.summary for f in found.fixes)


def test_kubelet_rejection_is_ok_with_the_reason() -> None:
    found = diagnose("tests/corpus/triage/eks-p4d-mig.json", "inference", "a10g-serve-0")
    assert found.summary.startswith(
        "The pod is placed on ip-10-0-12-5.us-west-2.compute.internal but does not run: "
        "UnexpectedAdmissionError: "
    )
    assert not any(c.text.startswith("kubectl logs") for c in found.next_commands)  # no container ever ran


def test_node_resources_gives_the_numbers_and_the_schedulers_reason() -> None:
    """The issue's pod: 1 GPU and 500 CPU, on nodes with free GPUs and 96 CPU."""
    found = diagnose("tests/corpus/triage/dgx-crowded.json", "ml", "eval-cpu-heavy-7xk2p")
    assert found.summary == (
        "The pod asks 500 cpu but no node left has more than 96 allocatable: "
        "it cannot fit even on an empty node"
    )
    text = joined(found)
    assert "dgx-h100-01 (cpu allocatable 96, used 1, asked 500: Insufficient cpu)" in text
    assert "dgx-h100-03 (pods allocatable 8, used 8, asked 1: Too many pods; cpu allocatable 96" in text
    # dgx-h100-04's free GPUs go to the higher-priority pod nominated there
    assert "dropped dgx-h100-04 (nvidia.com/gpu allocatable 8, used 8, free 0 < 1 asked)" in text


def test_node_resources_counts_the_runtime_class_overhead() -> None:
    found = diagnose("tests/corpus/triage/dgx-crowded.json", "ml", "feature-join-9fd2m")
    assert "cpu 8.25, memory 256.2Gi, nvidia.com/gpu 1" in joined(found)
    assert found.summary.startswith("None of the 3 nodes left has 256.2Gi memory free for the pod")


def test_a_nominated_pod_of_higher_priority_holds_the_free_devices() -> None:
    found = diagnose("tests/corpus/triage/dgx-crowded.json", "ml", "finetune-small-q8v2n")
    assert found.verdict == PodVerdict.EXHAUSTED
    assert (
        "nominated there, not bound yet, of this pod's priority or more (the scheduler counts them first): "
        "ml/rlhf-reward-model-0-zb7kp on dgx-h100-04 (nvidia.com/gpu ×4)"
    ) in found.evidence
    assert [(h.name, h.terminating, h.priority) for h in found.holders] == [
        ("batch-infer-nightly", 1, 0),
        ("rlhf-reward-model-0", 0, 100000),
    ]


def test_a_nominated_pod_of_lower_priority_does_not_count() -> None:
    view = view_of(ROOT / "tests/corpus/triage/dgx-crowded.json", "ml", "finetune-small-q8v2n")
    nominee = next(p for p in view.nominated_pods if p["metadata"]["name"] == "rlhf-reward-model-0-zb7kp")
    lower = {**nominee, "spec": {**nominee["spec"], "priority": -1}}
    others = tuple(p for p in view.nominated_pods if p is not nominee)
    assert classify(replace(view, nominated_pods=(*others, lower))).verdict == PodVerdict.SCHEDULABLE


def test_preempting_names_the_victims_and_since_when() -> None:
    found = diagnose("tests/corpus/triage/gke-a100-preemption.json", "research", "pretrain-70b-0-0-lk2vd")
    assert found.summary == (
        "The scheduler preempted pods on gke-research-a100-pool-9e41b2d0-4hzm for this pod "
        "(priority 1000000) and waits for 2 of them to terminate, the first deleted 5m ago, its grace "
        "period ended 4m ago"
    )
    assert (
        "victim research/sweep-lr-1e-4-d2x8w (Job/sweep-lr-1e-4), priority 1000, terminating (deleted "
        "5m ago, its grace period ended 4m ago), evicted by the scheduler (DisruptionTarget "
        "PreemptionByScheduler)"
    ) in found.evidence
    gone = diagnose("tests/corpus/triage/gke-a100-preemption.json", "research", "canary-infer-b8t5n")
    assert "but that node is gone" in gone.summary


def test_host_port_names_the_port_and_its_holder() -> None:
    found = diagnose("tests/corpus/triage/gke-l4-hostports.json", "inference", "dcgm-profiling-debug-k2c9d")
    assert found.summary.startswith("Host port TCP/9400 that the pod asks is taken on every one")
    assert (
        "gke-inference-l4-pool-3c9a1e07-b5vn: TCP/9400 held by monitoring/dcgm-exporter-b5vn "
        "(DaemonSet/dcgm-exporter)"
    ) in found.evidence
    ports = "tests/corpus/triage/gke-l4-hostports.json"
    host_network = diagnose(ports, "inference", "ddp-train-resnet-0-hx4lm")
    assert "the pod asks host ports TCP/29500" in host_network.evidence


def test_a_kueue_gated_pod_short_of_quota_is_given_the_quota_its_cluster_queue_lacks() -> None:
    """8 GPUs reserved of a nominal 8 in flavor h100, 8 more asked: the quota becomes 16."""
    (fix,) = diagnose("tests/corpus/triage/kueue-gated.json", "team-a", "llm-sft-0-c7bjc").fixes
    assert fix.summary.startswith(
        "raise ClusterQueue gpu-h100-cq's nominalQuota of nvidia.com/gpu in flavor h100 from 8 to 16, "
        "or borrow in a cohort"
    )
    assert [c.text for c in fix.commands if c.changes] == [
        "kubectl patch clusterqueue gpu-h100-cq --type=json -p "
        '\'[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":"16"}]\''
    ]
    assert fix.objects == ("clusterqueue/gpu-h100-cq",)


def test_a_kueue_gated_pod_whose_local_queue_is_missing_is_told_to_create_it() -> None:
    found = diagnose("tests/corpus/triage/kueue-localqueue-missing.json", "team-c", "finetune-7b-0")
    (fix,) = found.fixes
    assert fix.summary.startswith(
        "create LocalQueue team-c-queue in team-c for a ClusterQueue, or name an existing one instead"
    )
    assert [c.text for c in fix.commands] == [
        "kubectl get localqueues.kueue.x-k8s.io -n team-c",
        "kubectl get clusterqueues.kueue.x-k8s.io",
    ]


def test_a_kueue_gated_pod_with_no_queue_and_no_workload_is_told_to_name_a_queue() -> None:
    view = view_of(ROOT / "tests/corpus/triage/kueue-gated.json", "team-b", "vllm-gemma-6d9f7c8b5-k2x9q")
    unqueued = merge_patch(view.pod, {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": None}}})
    label, _ = classify(replace(view, pod=unqueued)).fixes
    assert label.summary.startswith(
        "label Deployment vllm-gemma's pod template kueue.x-k8s.io/queue-name with a LocalQueue of team-b"
    )


def test_a_kueue_gated_pod_quotes_its_workload() -> None:
    found = diagnose("tests/corpus/triage/kueue-gated.json", "team-a", "llm-sft-0-c7bjc")
    assert (
        "QuotaReserved=False Pending: \"couldn't assign flavors to pod set main: insufficient unused quota "
        'for nvidia.com/gpu in flavor h100, 8 more needed"'
    ) in found.evidence
