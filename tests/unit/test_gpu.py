"""The /triage ladder and funnel, rule by rule, on the GPU lab's objects with one thing changed."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import msgspec
import pytest

from cluster.compact import NODE
from cluster.transport import kept_items
from devtools.cluster import generate
from devtools.corpus import ROOT
from diagnosis.dra_objects import NO_DRA
from diagnosis.model import Diagnosis, PodVerdict
from diagnosis.objects import Object, name, namespace
from diagnosis.triage.classify import FUNNEL, classify, usage_candidates
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.findings import Findings
from diagnosis.triage.funnel import Ask, Drop, Stage, Step, candidates, offered, run, stage_line
from diagnosis.triage.prepared import Prepared
from diagnosis.triage.resources import effective_requests
from diagnosis.views import TriageView
from tests.unit.test_gpu_corpus import NOW, find_pod, items, view_of

LAB = ROOT / "bot/demo/gpu-lab.json"


def lab(kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in items(LAB) if o["kind"] == kind and o["metadata"]["name"] == name))


def lab_view(name: str, **changes: Any) -> TriageView:
    return replace(view_of(LAB, "gpu-triage", name), **changes)


def with_node(view: TriageView, node: dict[str, Any]) -> TriageView:
    """The view with one node replaced by a changed copy of it."""
    name = node["metadata"]["name"]
    return replace(view, nodes=tuple(node if n["metadata"]["name"] == name else n for n in view.nodes))


def pending(name: str, **spec: Any) -> dict[str, Any]:
    pod = lab("Pod", name)
    pod["spec"].update(spec)
    return pod


def test_funnel_is_one_ordered_tuple_of_the_contract_steps() -> None:
    """The funnel's steps are the contract's verdicts from label-mismatch to schedulable, in order."""
    words = list(PodVerdict)
    funnel = words[words.index(PodVerdict.LABEL_MISMATCH) : words.index(PodVerdict.SCHEDULABLE)]
    assert [step.verdict for step in FUNNEL] == funnel


# --- the ladder before the funnel --------------------------------------------------------------


def test_no_request_comes_before_ok() -> None:
    found = classify(view_of(LAB, "gpu-triage", "case-norequest"))
    assert found.verdict == PodVerdict.NO_REQUEST
    assert found.summary.endswith("it is on lab-node-0 (Running)")
    assert "lab-node-0 offers nvidia.com/gpu allocatable 2" in found.evidence
    assert found.snippets[0].text == "resources:\n  limits:\n    nvidia.com/gpu: 1\n"


def test_no_request_comes_before_gated() -> None:
    pod = pending("case-taint", schedulingGates=[{"name": "kueue.x-k8s.io/admission"}])
    pod["spec"]["containers"][0]["resources"] = {}
    found = classify(lab_view("case-taint", pod=pod))
    assert found.verdict == PodVerdict.NO_REQUEST
    assert "spec.schedulingGates: kueue.x-k8s.io/admission (not scheduled until removed)" in found.evidence


@pytest.mark.parametrize("phase", ["Pending", "Running", "Succeeded", "Failed", "Unknown"])
def test_ok_whatever_the_phase(phase: str) -> None:
    pod = lab("Pod", "case-ok")
    pod["status"]["phase"] = phase
    found = classify(lab_view("case-ok", pod=pod))
    assert found.verdict == PodVerdict.OK
    assert found.summary.startswith(f"The pod is placed on lab-node-0 and {phase}")
    assert f"spec.nodeName: lab-node-0; phase: {phase}" in found.evidence


def test_ok_says_what_holds_a_placed_pod() -> None:
    pod = lab("Pod", "case-ok")
    pod["status"]["containerStatuses"][0]["state"] = {
        "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container"}
    }
    found = classify(lab_view("case-ok", pod=pod))
    assert found.summary == (
        "The pod is placed on lab-node-0 but does not run: container cuda: CrashLoopBackOff: "
        "back-off 40s restarting failed container"
    )
    assert "kubectl describe node lab-node-0" in [c.text for c in found.next_commands]


def test_gated_before_the_funnel_even_without_nodes() -> None:
    pod = pending("case-taint", schedulingGates=[{"name": "example.com/wait"}, {"name": "example.com/quota"}])
    found = classify(lab_view("case-taint", pod=pod, nodes=()))
    assert found.verdict == PodVerdict.GATED
    assert found.summary.startswith(
        "The pod is held by scheduling gates example.com/wait, example.com/quota: "
    )
    assert "Kueue" not in found.summary
    assert not any("workloads.kueue" in c.text for c in found.next_commands)


def test_kueue_gate_mentions_kueue() -> None:
    pod = pending("case-taint", schedulingGates=[{"name": "kueue.x-k8s.io/admission"}])
    found = classify(lab_view("case-taint", pod=pod))
    assert found.verdict == PodVerdict.GATED
    assert "Kueue made no Workload for it" in found.summary  # the lab holds no Workload
    assert "kubectl get workloads.kueue.x-k8s.io -n gpu-triage -o wide" in [
        c.text for c in found.next_commands
    ]


# --- the funnel --------------------------------------------------------------------------------


def test_prefiltered_nodes_are_said_first() -> None:
    view = view_of(LAB, "gpu-triage", "case-taint")
    nodes = tuple(n for n in view.nodes if n["metadata"]["name"] == "lab-node-0")
    found = classify(replace(view, nodes=nodes, prefiltered=True))
    assert found.verdict == PodVerdict.TAINT
    assert found.evidence[1] == (
        "nodes: 1 listed by the API server for the nodeSelector kubernetes.io/hostname=lab-node-0 "
        "(nodes without these labels were not read)"
    )
    assert not any(e.startswith("note: the scheduler counted") for e in found.evidence)


def test_prefiltered_to_nothing_is_a_label_mismatch() -> None:
    found = classify(lab_view("case-label", nodes=(), prefiltered=True))
    assert found.verdict == PodVerdict.LABEL_MISMATCH
    assert found.summary == (
        "No node has the labels of the pod's nodeSelector nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB"
    )


def test_no_nodes_without_a_selector_is_no_gpu_node() -> None:
    pod = pending("case-label")
    del pod["spec"]["nodeSelector"]
    found = classify(lab_view("case-label", pod=pod, nodes=()))
    assert found.verdict == PodVerdict.NO_GPU_NODE
    assert found.summary == "There are no nodes: none reports nvidia.com/gpu"


def test_label_mismatch_comes_before_taint() -> None:
    """case-label tolerates nothing here: every node is still dropped by its selector first."""
    pod = pending("case-label", tolerations=[])
    assert classify(lab_view("case-label", pod=pod)).verdict == PodVerdict.LABEL_MISMATCH


def test_cordon_from_spec_alone_is_a_taint() -> None:
    node = lab("Node", "lab-node-0")
    node["spec"]["taints"] = []
    node["spec"]["unschedulable"] = True
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    found = classify(with_node(view, node))
    assert found.verdict == PodVerdict.TAINT
    assert found.summary == "No node left accepts the pod: lab-node-0 is cordoned"
    assert [(c.text, c.changes) for c in found.next_commands if c.changes] == [
        ("kubectl uncordon lab-node-0", True)
    ]


def test_missing_allocatable_key_is_allocatable_zero() -> None:
    node = lab("Node", "lab-node-0")
    del node["status"]["allocatable"]["nvidia.com/gpu"]
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    found = classify(with_node(view, node))
    assert found.verdict == PodVerdict.ALLOCATABLE_ZERO
    assert "dropped lab-node-0 (nvidia.com/gpu capacity 2, allocatable 0)" in "\n".join(found.evidence)


def test_capacity_zero_is_no_gpu_node() -> None:
    node = lab("Node", "lab-node-2")
    node["status"]["capacity"]["nvidia.com/gpu"] = "0"
    view = view_of(LAB, "gpu-triage", "case-alloc0")
    found = classify(with_node(view, node))
    assert found.verdict == PodVerdict.NO_GPU_NODE
    assert found.summary == (
        "lab-node-2 does not report nvidia.com/gpu (nvidia.com/gpu capacity 0): "
        "no device plugin serves it there; on lab-node-2 the GPU Operator validator is failing"
    )


def test_exhausted_names_the_short_resource_of_several() -> None:
    pod = lab("Pod", "case-exhaust")
    pod["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": "1", "example.com/fpga": "2"},
        "requests": {"nvidia.com/gpu": "1", "example.com/fpga": "2"},
    }
    node = lab("Node", "lab-node-0")
    node["status"]["capacity"]["example.com/fpga"] = "2"
    node["status"]["allocatable"]["example.com/fpga"] = "2"
    holder = lab("Pod", "case-ok")
    holder["metadata"].update(name="fpga-user", uid="0d0c9a3e-2f61-4bb6-9a62-5f0e51b7c1aa")
    holder["spec"]["containers"][0]["resources"] = {
        "limits": {"example.com/fpga": "1"},
        "requests": {"example.com/fpga": "1"},
    }
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    found = classify(replace(with_node(view, node), pod=pod, bound_pods=(*view.bound_pods, holder)))
    assert found.verdict == PodVerdict.EXHAUSTED
    assert (
        found.summary
        == "lab-node-0 has 1 example.com/fpga free of 2 (1 held by gpu-triage/fpga-user); the pod asks 2"
    )
    assert "dropped lab-node-0 (example.com/fpga allocatable 2, used 1, free 1 < 2 asked)" in "\n".join(
        found.evidence
    )


def test_schedulable_says_what_is_not_checked() -> None:
    pod = pending("case-taint", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
    pod["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    found = classify(lab_view("case-taint", pod=pod, events=()))
    assert found.verdict == PodVerdict.SCHEDULABLE
    assert found.summary == (
        "Nothing in the objects blocks the pod: 1 node passes every check "
        "(lab-node-0 has 1 nvidia.com/gpu free); "
        "the scheduler has not reported on it yet"
    )
    assert any(e.startswith("not checked by kubewhy: inline in-tree disks") for e in found.evidence)
    assert (
        "scheduler said: nothing yet (no PodScheduled=False condition, no FailedScheduling event)"
        in found.evidence
    )


def test_node_order_does_not_matter() -> None:
    view = view_of(ROOT / "tests/corpus/triage/gke-mixed-pools.json", "research", "sft-llama-vtnfs")
    shuffled = replace(view, nodes=view.nodes[::-1], bound_pods=view.bound_pods[::-1])
    assert classify(shuffled) == classify(view)


def test_pending_notes() -> None:
    pod = pending("case-exhaust", schedulerName="volcano")
    pod["status"]["nominatedNodeName"] = "lab-node-0"
    pod["metadata"]["deletionTimestamp"] = "2026-11-29T08:59:00Z"
    found = classify(lab_view("case-exhaust", pod=pod))
    assert found.verdict is PodVerdict.PREEMPTING
    assert found.summary.startswith("The scheduler nominated lab-node-0 for this pod (priority 0)")
    assert any(e.startswith("the pod names schedulerName volcano") for e in found.evidence)
    assert "status.nominatedNodeName: lab-node-0 (the pod is not bound yet)" in found.evidence
    assert "the pod is being deleted (metadata.deletionTimestamp is set)" in found.evidence


# --- the scheduler's message -------------------------------------------------------------------


def event(
    pod: Object, message: str, when: str, *, api: str = "v1", uid: str | None = None
) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod["metadata"]["name"],
        "namespace": pod["metadata"]["namespace"],
        "uid": uid or pod["metadata"]["uid"],
    }
    meta = {
        "name": f"{pod['metadata']['name']}.{when[-3:-1]}",
        "namespace": pod["metadata"]["namespace"],
        "uid": f"ev-{when}",
        "creationTimestamp": when,
    }
    if api == "v1":
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": meta,
            "involvedObject": ref,
            "reason": "FailedScheduling",
            "message": message,
            "type": "Warning",
            "eventTime": when[:-1] + ".000000Z",
            "firstTimestamp": None,
            "lastTimestamp": None,
            "reportingComponent": "default-scheduler",
            "source": {},
        }
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": meta,
        "regarding": ref,
        "reason": "FailedScheduling",
        "note": message,
        "type": "Warning",
        "eventTime": when[:-1] + ".000000Z",
        "reportingController": "default-scheduler",
        "action": "Scheduling",
    }


def said(found: Diagnosis) -> str:
    return next(e for e in found.evidence if e.startswith("scheduler said"))


def test_condition_is_preferred_over_events() -> None:
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    newer = event(view.pod, "0/3 nodes are available: 3 Insufficient cpu.", "2026-11-29T08:59:59Z")
    found = classify(replace(view, events=(*view.events, newer)))
    assert said(found).startswith(
        'scheduler said (PodScheduled=False, Unschedulable, for 41m): "0/3 nodes are'
    )


@pytest.mark.parametrize("api", ["v1", "events.k8s.io/v1"])
def test_newest_failed_scheduling_event_when_there_is_no_condition(api: str) -> None:
    pod = lab("Pod", "case-exhaust")
    pod["status"]["conditions"] = []
    events = (
        event(
            pod, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "2026-11-29T08:50:00Z", api=api
        ),
        event(
            pod, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", "2026-11-29T08:58:00Z", api=api
        ),
        event(
            pod,
            "0/9 nodes are available: from an older pod of that name.",
            "2026-11-29T08:59:00Z",
            api=api,
            uid="7a9f1f4e-0000-4000-8000-000000000001",
        ),
    )
    found = classify(lab_view("case-exhaust", pod=pod, events=events))
    assert said(found) == (
        "scheduler said (newest FailedScheduling event, last 2m ago): "
        '"0/2 nodes are available: 2 Insufficient nvidia.com/gpu."'
    )
    assert any(
        e.startswith("note: the scheduler counted 2 nodes and the cluster has 3 now") for e in found.evidence
    )
    assert any(e.startswith("note: `Insufficient nvidia.com/gpu` reads the same") for e in found.evidence)


def test_long_messages_are_cut_in_the_quote() -> None:
    pod = lab("Pod", "case-exhaust")
    pod["status"]["conditions"][0]["message"] = "0/3 nodes are available: " + "x" * 5000
    assert len(said(classify(lab_view("case-exhaust", pod=pod)))) < 900


# --- usage candidates --------------------------------------------------------------------------


def test_usage_candidates_are_the_nodes_before_the_free_slot_step() -> None:
    view = view_of(ROOT / "tests/corpus/triage/aks-mi300x.json", "rocm", "llama-pretrain-pzksl")
    assert usage_candidates(view.pod, view.nodes) == ("aks-mi300x-38112447-vmss000000",)
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    assert usage_candidates(view.pod, view.nodes) == ("lab-node-0",)
    # No node passes the taint step: the node it dropped is read, so that its fix can be checked.
    assert usage_candidates(find_pod(LAB, "gpu-triage", "case-taint"), view.nodes) == ("lab-node-0",)


@pytest.mark.parametrize("name", ["case-ok", "case-norequest"])
def test_usage_candidates_are_empty_when_no_funnel_runs(name: str) -> None:
    view = view_of(LAB, "gpu-triage", name)
    assert usage_candidates(view.pod, view.nodes) == ()
    gated = pending("case-exhaust", schedulingGates=[{"name": "x.io/y"}])
    assert usage_candidates(gated, view.nodes) == ()


def test_time_is_read_from_the_view_only() -> None:
    later = classify(lab_view("case-exhaust", now=NOW.replace(hour=11)))
    assert "PodScheduled=False, Unschedulable, for 2h" in said(later)


def test_a_step_names_at_most_ten_dropped_nodes() -> None:
    template = lab("Node", "lab-node-1")
    nodes = []
    for i in range(25):
        node = copy.deepcopy(template)
        node["metadata"]["name"] = f"gpu-{i:02d}"
        nodes.append(node)
    stage = Stage(FUNNEL[2], tuple(nodes), (), tuple(Drop(n, f"reason {i % 3}") for i, n in enumerate(nodes)))
    line = stage_line(3, stage, {"nvidia.com/gpu": 1})
    assert line.startswith("3. reports nvidia.com/gpu: 25 → 0 nodes; dropped gpu-00, gpu-03, ")
    assert sum(f"gpu-{i:02d}" in line for i in range(25)) == 10
    assert "gpu-00, gpu-03, gpu-06, gpu-09, gpu-12, gpu-15, gpu-18, gpu-21, gpu-24 (reason 0)" in line
    assert line.endswith("gpu-01 and 7 more (reason 1); 8 more for other reasons")


def test_devices_lost_while_held_still_count() -> None:
    """kubernetes#92592: allocatable shrinks when a held GPU goes unhealthy; the holder still counts."""
    node = lab("Node", "lab-node-0")
    node["status"]["allocatable"]["nvidia.com/gpu"] = "1"
    pod = pending("case-exhaust")
    pod["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": "1"},
        "requests": {"nvidia.com/gpu": "1"},
    }
    holder = lab("Pod", "case-ok")
    holder["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": "2"},
        "requests": {"nvidia.com/gpu": "2"},
    }
    view = view_of(LAB, "gpu-triage", "case-exhaust")
    others = tuple(p for p in view.bound_pods if p["metadata"]["name"] != "case-ok")
    found = classify(replace(with_node(view, node), pod=pod, bound_pods=(*others, holder)))
    assert found.verdict == PodVerdict.EXHAUSTED
    said = "dropped lab-node-0 (nvidia.com/gpu allocatable 1, used 2, none free (1 more than allocatable) < 1"
    assert said in "\n".join(found.evidence)
    assert found.summary == (
        "lab-node-0 has no nvidia.com/gpu free: 2 held by gpu-triage/case-ok, more than its 1 allocatable; "
        "the pod asks 1"
    )
    assert any(
        e.startswith("lab-node-0: its pods hold 2 nvidia.com/gpu but only 1 is allocatable")
        for e in found.evidence
    )


def test_a_node_is_checked_once_per_placement_until_it_changes() -> None:
    """`Findings` keeps what the steps before the free slots found on each node object, by the pod's
    placement: the same stages as checking every node, each node checked once until it is another
    object (changed) or forgotten; a new placement is checked anew."""
    checked: list[str] = []

    def counted(check: Callable[[Ask, Object], str | None]) -> Callable[[Ask, Object], str | None]:
        def counting(ask: Ask, node: Object) -> str | None:
            checked.append(name(node))
            return check(ask, node)

        return counting

    steps = tuple(replace(step, check=counted(step.check)) for step in FUNNEL[:4])
    view = lab_view("case-exhaust")
    ask = Ask(view.pod, effective_requests(view.pod))
    nodes = tuple(sorted(view.nodes, key=name))
    findings = Findings()

    def found(key: str, on: tuple[Object, ...]) -> list[tuple[Any, ...]]:
        return [(s.entered, s.kept, s.dropped) for s in findings.run(key, steps, ask, on)]

    def checking_every_node(on: tuple[Object, ...]) -> list[tuple[Any, ...]]:
        return [(s.entered, s.kept, s.dropped) for s in run(FUNNEL[:4], ask, on)]

    assert found("placement", nodes) == checking_every_node(nodes)
    assert checked
    checked.clear()
    assert found("placement", nodes) == checking_every_node(nodes)
    assert checked == []
    changed = (copy.deepcopy(nodes[0]), *nodes[1:])
    findings.forget(name(nodes[1]))
    assert found("placement", changed) == checking_every_node(changed)
    assert set(checked) == {name(nodes[0]), name(nodes[1])}
    checked.clear()
    found("another placement", nodes)
    assert set(checked) == {name(n) for n in nodes}


def test_a_step_that_reads_a_few_parts_of_a_node_checks_one_node_of_each_shape() -> None:
    """Taints, cordons and what a node offers of the pod's extended resources: the steps that read
    only these (`Step.shape`) check one node of each shape; nodes read as a direct read keeps them
    (`cluster.compact.NODE`) share a pool's parts, and the stages are those of checking every node.
    The labels are read of no node for a pod without a nodeSelector or node affinity (`Step.skips`),
    of every node for one with. A pod that asks DRA devices has its nodes checked one by one (the
    devices differ per node)."""
    generated = generate(300, 10, slices=2, hosts_per_slice=16)
    page = msgspec.json.encode({"apiVersion": "v1", "kind": "NodeList", "items": generated.nodes})
    nodes = candidates(kept_items(NODE.page.decode(page), NODE.item))
    (pod,) = [p for p in generated.pods if (namespace(p), name(p)) == generated.unpinned]
    checked: Counter[str] = Counter()

    def counted(step: Step) -> Step:
        def counting(ask: Ask, node: Object) -> str | None:
            checked[step.verdict] += 1
            return step.check(ask, node)

        return replace(step, check=counting)

    shaped = tuple(map(counted, FUNNEL[:4]))
    assert [bool(step.shape) for step in shaped] == [False, True, True, True]
    ask = Ask(pod, effective_requests(pod))
    stages = run(shaped, ask, nodes)
    every = run(tuple(replace(step, shape=None, skips=None) for step in FUNNEL[:4]), ask, nodes)
    assert [(s.entered, s.kept, s.dropped) for s in stages] == [(s.entered, s.kept, s.dropped) for s in every]
    assert all(s.kept and s.dropped for s in stages[1:])  # each shaped step both keeps and drops nodes
    assert checked[PodVerdict.LABEL_MISMATCH] == 0
    selecting = copy.deepcopy(pod)
    selecting["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
    run(shaped[:1], Ask(selecting, effective_requests(selecting)), nodes)
    assert checked[PodVerdict.LABEL_MISMATCH] == 300
    for step, stage in zip(shaped[1:], stages[1:], strict=True):
        assert step.shape is not None
        read = step.shape(ask)
        assert read is not None
        shapes = {read(node) for node in stage.entered}
        assert checked[step.verdict] == len(shapes) < len(stage.entered) / 4
    asking_devices = replace(ask, devices=Devices.of(pod, NO_DRA, None, {}))
    assert offered(asking_devices) is None


def test_what_is_kept_of_a_tuple_of_nodes_serves_only_those_nodes_with_the_same_holders() -> None:
    """A reader that keeps the nodes hands over the same tuple until one changes; `Findings` keeps
    what is worked out of it (the candidates, the steps before the free slots, the free-slot stage
    and what its check read) for the next question. The free-slot stage serves only while every
    node has the very same holders: a holder gone from one node is seen, as without `Findings`."""
    view = lab_view("case-exhaust")
    view = replace(view, nodes=tuple(view.nodes))
    findings = Findings()
    asked = effective_requests(view.pod)
    first = classify(view, Prepared(findings=findings))
    assert first == classify(view)
    assert first.verdict is PodVerdict.EXHAUSTED
    again = classify(replace(view, bound_pods=tuple(view.bound_pods)), Prepared(findings=findings))
    assert again == first
    holder = next(p for p in view.bound_pods if asked.keys() & effective_requests(p).keys())
    freed = replace(view, bound_pods=tuple(p for p in view.bound_pods if p is not holder))
    found = classify(freed, Prepared(findings=findings))
    assert found == classify(freed)
    assert found.verdict is not PodVerdict.EXHAUSTED
