"""A placed pod (`ok`): does it run, and if not why (`started`), from its own status and events; the
first screen leads with the cause, with the fix its cause calls for."""

from __future__ import annotations

import pytest

from bot.render import first_screen
from devtools.corpus import Case, cases
from diagnosis.model import StartState
from diagnosis.objects import Ref
from diagnosis.triage.classify import classify
from handlers.reply import Reply, Scope
from tests.unit.test_gpu_corpus import diagnose, view_of

PLACED = [c for c in cases("triage") if c.started]
SNAPSHOT = "tests/corpus/triage/gke-placed-not-running.json"


@pytest.mark.parametrize("case", PLACED, ids=[c.id for c in PLACED])
def test_started_state_and_reason(case: Case) -> None:
    found = classify(view_of(case.snapshot, case.namespace, case.name))
    assert found.started is not None
    assert (found.started.state.value, found.started.reason) == (case.started, case.reason)
    if found.started.state is StartState.FAILING:
        assert f"but does not run: {'' if found.started.container is None else 'container '}" in found.summary
        assert str(found.started.reason) in found.summary
        assert found.evidence[-1].startswith("not running: ")


def test_not_placed_has_no_started() -> None:
    assert diagnose("bot/demo/gpu-lab.json", "gpu-triage", "case-taint").started is None


def test_crash_loop_quotes_the_last_termination_and_the_previous_logs() -> None:
    found = diagnose(SNAPSHOT, "serving", "embedder-1")
    assert found.started is not None
    assert (found.started.container, found.started.restarts) == ("main", 9)
    assert found.started.message is not None
    assert found.started.message.startswith("last ended: Error, exit code 1: RuntimeError: CUDA error")
    assert "back-off 5m0s" in found.started.message
    assert found.next_commands[1].text == "kubectl logs embedder-1 -n serving -c main --previous --tail=50"
    assert found.fixes == ()


def test_image_pull_fix_names_the_image_and_shows_the_pull_secrets() -> None:
    found = diagnose(SNAPSHOT, "serving", "vllm-llama-9tjv8v6k76-d6mn7")
    fix = found.fixes[0]
    assert fix.summary.startswith("check the image name and its pull secret: container main cannot pull ")
    assert "us-docker.pkg.dev/ml-prod/serving/vllm:0.6.4-cu124" in fix.summary
    assert (fix.pod_patch, fix.opens) == (None, ())
    assert ".spec.imagePullSecrets[*].name" in fix.commands[0].text
    assert not fix.commands[0].changes


def test_driver_not_loading_cordons_the_node() -> None:
    found = diagnose(SNAPSHOT, "serving", "whisper-asr-pf27nf5lwr-kzsnz")
    assert "nvidia-container-cli: initialization error: nvml error: driver not loaded" in found.summary
    fix = found.fixes[0]
    assert fix.summary.startswith("cordon gke-ml-prod-l4-pool-b1181153-b5wl: its NVIDIA driver does not load")
    cordon = next(c.text for c in fix.commands if c.changes)
    assert cordon == "kubectl cordon gke-ml-prod-l4-pool-b1181153-b5wl"


def test_admission_refusal_restarts_the_device_plugin_then_recreates_the_pod() -> None:
    found = diagnose(SNAPSHOT, "serving", "batch-embed-1130-pg8lb")
    assert found.started is not None
    assert found.started.message is not None
    assert found.started.message.startswith("Pod Node didn't have enough resource: nvidia.com/gpu")
    fix = found.fixes[0]
    assert fix.summary.startswith("restart the device plugin on gke-ml-prod-l4-pool-b1181153-bg9p")
    assert [c.text for c in fix.commands if c.changes] == [
        "kubectl delete pod -n gpu-operator -l app=nvidia-device-plugin-daemonset "
        "--field-selector spec.nodeName=gke-ml-prod-l4-pool-b1181153-bg9p",
        "kubectl delete pod batch-embed-1130-pg8lb -n serving",
    ]


def test_events_hold_a_pod_whose_containers_are_not_created() -> None:
    mount = diagnose(SNAPSHOT, "serving", "tts-serve-vbmsb4zbnr-tww5z").started
    sandbox = diagnose(SNAPSHOT, "serving", "rerank-n4sq7rcmwv-gff77").started
    assert mount is not None
    assert sandbox is not None
    assert mount.message == 'MountVolume.SetUp failed for volume "config" : configmap "tts-config" not found'
    assert sandbox.message is not None
    assert 'no runtime for "nvidia" is configured' in sandbox.message


def test_failing_init_container_is_named() -> None:
    found = diagnose(SNAPSHOT, "serving", "sglang-z4kfflsrpc-9nn65")
    assert found.started is not None
    assert (found.started.container, found.started.restarts) == ("fetch-weights", 8)
    assert found.started.message is not None
    assert "AccessDeniedException: 403" in found.started.message


def test_first_screen_leads_with_the_cause_and_the_fix() -> None:
    found = diagnose(SNAPSHOT, "serving", "whisper-asr-pf27nf5lwr-kzsnz")
    target = Ref("pod", "serving", "whisper-asr-pf27nf5lwr-kzsnz")
    screen = first_screen(Reply.of(target, found, Scope("gke-prod")))
    assert screen[0] == "Verdict: ok"
    assert screen[2].startswith("The pod is placed on gke-ml-prod-l4-pool-b1181153-b5wl but does not run: ")
    assert screen[3].startswith("Fix: cordon gke-ml-prod-l4-pool-b1181153-b5wl")
