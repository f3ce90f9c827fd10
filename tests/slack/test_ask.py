"""`kubewhy ask`: the Slack pipeline in-process (signed request, bolt, local Slack), printed as Slack
shows it; the real console script, on the embedded demo cluster and on corpus snapshots."""

from __future__ import annotations

import subprocess

import pytest

from devtools import corpus
from devtools.botenv import KUBEWHY


def ask(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(KUBEWHY), "ask", *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert "Traceback" not in done.stderr
    return done


def test_ask_prints_the_channel_message_and_its_thread_from_the_demo_cluster() -> None:
    done = ask("/triage gpu-triage case-taint")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ":red_circle: taint: pod gpu-triage/case-taint"
    assert "cluster gpu-lab · checked" in done.stdout
    assert "[Re-check] [Watch] [Details]" in lines
    assert "  │ Evidence" in lines
    assert "  │     kubectl describe pod case-taint -n gpu-triage" in lines


def test_ask_answers_a_dra_pod_with_the_claims_that_hold_its_devices() -> None:
    done = ask("/triage dra-lab case-dra-exhaust")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ":red_circle: exhausted: pod dra-lab/case-dra-exhaust"
    assert "cluster gpu-dra · checked" in done.stdout
    assert "held by 3 claims of pods llm-finetune-0, pretrain-0 and 1 more" in lines[1]
    # The claims themselves are named in the evidence.
    assert any(
        "held by claim dra-lab/llm-finetune-gpus (request gpus; reserved for pod llm-finetune-0)" in line
        for line in lines
    )
    assert "  │     kubectl get resourceclaim a100-pair-claim -n dra-lab -o yaml" in lines
    assert "  │     kubectl get resourceslices --field-selector spec.nodeName=dra-a100-0 -o yaml" in lines


def test_ask_answers_from_the_demo_cluster_that_holds_the_jobset() -> None:
    done = ask("/jobset why llm maxtext-v5e")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == ":red_circle: leader-pending: JobSet llm/maxtext-v5e"
    assert "cluster jobset-leader-pending-tpu · checked" in done.stdout


@pytest.mark.parametrize(
    "case", corpus.cases("triage")[::15] + corpus.cases("jobset")[::15], ids=lambda c: c.id
)
def test_ask_on_a_snapshot_gives_the_corpus_verdict(case: corpus.Case) -> None:
    command = "/triage" if case.kind == "triage" else "/jobset why"
    done = ask(f"{command} {case.namespace} {case.name}", "--snapshot", str(case.snapshot))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith(
        f" {case.verdict}: {'pod' if case.kind == 'triage' else 'JobSet'} {case.namespace}/{case.name}"
    )


def test_ask_a_missing_pod_exits_1_with_the_similar_names() -> None:
    done = ask("/triage gpu-triage case-tain")
    assert done.returncode == 1
    assert "`case-taint`" in done.stdout


def test_ask_a_pasted_error_is_explained() -> None:
    done = ask(
        '/jobset why admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
    )
    assert done.returncode == 0
    assert "leader-pending" in done.stdout.splitlines()[0]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("/triage ML x", "'ML' is not a namespace name"),
        ("/deploy prod", "give a slash command: /triage or /jobset"),
    ],
)
def test_ask_a_usage_error_exits_2(text: str, problem: str) -> None:
    done = ask(text)
    assert done.returncode == 2
    assert problem in done.stderr
    assert done.stdout == ""


def test_ask_a_broken_snapshot_exits_3_naming_it() -> None:
    done = ask("/triage ml x", "--snapshot", "/nonexistent/snapshot.json")
    assert done.returncode == 3
    assert "cannot read snapshot /nonexistent/snapshot.json" in done.stderr
