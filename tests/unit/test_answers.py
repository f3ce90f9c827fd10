"""What an on-call engineer reads first: the root cause one hop away (the device plugin, operator and
driver pods), who holds the devices and who else waits for them, and an `ok` that tells whether the
pod runs."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from bot import messages
from diagnosis.model import PodState, PodVerdict
from diagnosis.objects import Object
from diagnosis.triage.classify import classify
from diagnosis.triage.devices import role_of
from diagnosis.triage.findings import Findings
from diagnosis.triage.fixes import UNCHECKED
from diagnosis.triage.funnel import Ask, Shared
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.scheduling import Placement
from diagnosis.triage.steps.exhausted import competing
from tests.unit.test_gpu import lab, lab_view


def test_allocatable_zero_quotes_the_crash_looping_validator_on_the_node() -> None:
    found = classify(lab_view("case-alloc0"))
    assert (
        "GPU Operator validator gpu-operator/nvidia-operator-validator-9r4hm on lab-node-2: Pending, init "
        "container driver-validation waiting (CrashLoopBackOff), 812 restarts, last exit 1 (Error)"
    ) in found.evidence
    assert found.summary.endswith("; on lab-node-2 the GPU Operator validator is failing")
    assert found.fixes[0].summary.startswith(
        "repair the GPU Operator validator gpu-operator/nvidia-operator-validator-9r4hm on lab-node-2"
    )
    assert "pod/gpu-operator/nvidia-operator-validator-9r4hm" in found.fixes[0].objects
    logs = (
        "kubectl logs nvidia-operator-validator-9r4hm -n gpu-operator -c driver-validation --previous "
        "--tail=50"
    )
    assert logs in [c.text for c in found.next_commands]


def test_no_gpu_node_quotes_the_device_plugin_and_says_what_cannot_be_shown() -> None:
    found = classify(lab_view("case-nogpunode"))
    line = next(e for e in found.evidence if e.startswith("NVIDIA device plugin "))
    assert (
        "on lab-node-1: Running, container nvidia-device-plugin waiting (CrashLoopBackOff), 14 restarts"
        in line
    )
    (fix,) = found.fixes
    assert fix.opens == ()
    assert UNCHECKED in fix.summary


def test_device_pods_are_known_by_labels_or_images_never_by_name() -> None:
    plugin = lab("Pod", "nvidia-device-plugin-daemonset-998bd")
    unlabelled = copy.deepcopy(plugin)
    unlabelled["metadata"]["labels"] = {}
    assert role_of(plugin) is not None
    assert role_of(unlabelled) is not None  # by its image nvcr.io/nvidia/k8s-device-plugin
    named_only = copy.deepcopy(unlabelled)
    for container in named_only["spec"]["containers"]:
        container["image"] = "registry.example.com/tools/sleeper:1"
    assert role_of(named_only) is None  # the name alone proves nothing


def test_gpu_feature_discovery_in_the_device_plugins_image_is_not_the_device_plugin() -> None:
    """GPU Feature Discovery ships in the k8s-device-plugin image since v0.15: its labels tell it
    apart, so a node where it runs alone is still seen as serving no device."""
    plugin = lab("Pod", "nvidia-device-plugin-daemonset-998bd")
    discovery = copy.deepcopy(plugin)
    discovery["metadata"]["labels"] = {"app": "gpu-feature-discovery"}
    discovery["spec"]["containers"][0]["command"] = ["gpu-feature-discovery"]
    assert "/k8s-device-plugin:" in discovery["spec"]["containers"][0]["image"]
    found = role_of(discovery)
    assert found is not None
    assert (found.title, found.serves) == ("GPU Feature Discovery", "")


def _placed(state: dict[str, Any], phase: str, ready: bool) -> Any:
    pod = lab("Pod", "case-ok")
    pod["status"]["phase"] = phase
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True" if ready else "False"},
    ]
    pod["status"]["containerStatuses"][0].update(state=state, ready=ready)
    return classify(lab_view("case-ok", pod=pod))


def test_ok_is_green_only_when_the_pod_runs_and_is_ready() -> None:
    running = classify(lab_view("case-ok"))
    assert (running.verdict, running.pod_state) == (PodVerdict.OK, PodState.RUNNING)
    assert messages.header("ok", "pod", "x/y", running.pod_state).startswith(":white_check_mark:")
    creating = _placed({"waiting": {"reason": "ContainerCreating"}}, "Pending", False)
    assert (creating.verdict, creating.pod_state) == (PodVerdict.OK, PodState.STARTING)
    assert "not Ready yet" in creating.summary
    assert any("waiting (ContainerCreating)" in e for e in creating.evidence)
    assert messages.header("ok", "pod", "x/y", creating.pod_state).startswith(":large_yellow_circle:")
    failed = _placed({"terminated": {"reason": "Error", "exitCode": 1}}, "Failed", False)
    assert failed.pod_state is PodState.FAILED
    assert messages.header("ok", "pod", "x/y", failed.pod_state).startswith(":red_circle:")
    assert any("terminated (Error, exit 1)" in e for e in failed.evidence)


def test_holders_are_grouped_by_workload_with_priority_and_preemptibility() -> None:
    pod = lab("Pod", "case-exhaust")
    pod["spec"]["priority"] = 1000
    found = classify(lab_view("case-exhaust", pod=pod))
    (held,) = found.holders
    assert (held.kind, held.name, held.pods, held.nodes, dict(held.devices)) == (
        "Pod",
        "case-ok",
        ("case-ok",),
        ("lab-node-0",),
        {"nvidia.com/gpu": 1},
    )
    assert held.preemptible
    pod["spec"]["preemptionPolicy"] = "Never"
    assert not classify(lab_view("case-exhaust", pod=pod)).holders[0].preemptible


def test_other_pending_pods_after_the_same_nodes_are_named() -> None:
    rival = lab("Pod", "case-exhaust")
    rival["metadata"].update(name="rival-0", uid="rival-0")
    rival["spec"]["priority"] = 10
    view = lab_view("case-exhaust")
    found = classify(replace(view, pending_pods=(rival, view.pod)))
    assert found.competing == ("gpu-triage/rival-0 (priority 10, asks 2 nvidia.com/gpu)",)
    elsewhere = copy.deepcopy(rival)
    elsewhere["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "lab-node-2"}
    assert classify(replace(view, pending_pods=(elsewhere,))).competing == ()


def test_which_placements_the_nodes_admit_is_kept_with_the_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that keeps the nodes keeps which of the pending pods' placements they admit: the next
    question about the same nodes checks no node for them, and other nodes are checked again."""
    rival = lab("Pod", "case-exhaust")
    rival["metadata"].update(name="rival-0", uid="rival-0")
    elsewhere = copy.deepcopy(rival)
    elsewhere["metadata"].update(name="elsewhere-0", uid="elsewhere-0")
    elsewhere["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "lab-node-2"}
    view = lab_view("case-exhaust")
    nodes = tuple(n for n in view.nodes if n["metadata"]["name"] != "lab-node-2")
    checked: list[Object] = []
    mismatch = Placement.mismatch

    def counting(placement: Placement, node: Object) -> str | None:
        checked.append(node)
        return mismatch(placement, node)

    monkeypatch.setattr(Placement, "mismatch", counting)
    kept = Findings()

    def asked(on: tuple[Object, ...]) -> tuple[str, ...]:
        ask = Ask(view.pod, effective_requests(view.pod), shared=Shared(kept=kept))
        return competing(ask, (rival, elsewhere), on)

    named = ("gpu-triage/rival-0 (priority 0, asks 2 nvidia.com/gpu)",)
    assert asked(nodes) == named
    assert checked
    checked.clear()
    assert asked(nodes) == named
    assert checked == []
    assert asked(tuple(view.nodes)) == ("gpu-triage/elsewhere-0 (priority 0, asks 2 nvidia.com/gpu)", *named)
    assert checked
