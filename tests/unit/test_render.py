"""The CLI's renderings of a Reply: the word, the JSON contract, the text for people, and "not found"."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.render import CHANGES_MARK, as_json, as_text, as_word, not_found
from cluster.errors import Missing, NotFound
from diagnosis.model import Command, Diagnosis, Fix, JobSetVerdict, PodVerdict, RestartCause, Snippet
from diagnosis.objects import Ref
from handlers.reply import Reply

TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

TAINT = Reply(
    Ref("pod", "ml", "notebook-gpu"),
    Diagnosis(
        verdict=PodVerdict.TAINT,
        summary="Node a100-node-7xkq has the untolerated taint nvidia.com/gpu=present:NoSchedule.",
        evidence=(
            "2 nodes; nodeSelector cloud.google.com/gke-accelerator=nvidia-tesla-a100 keeps 1",
            "taint drops a100-node-7xkq: nvidia.com/gpu=present:NoSchedule\nno toleration matches",
        ),
        next_commands=(
            Command(
                "kubectl get node a100-node-7xkq -o jsonpath='{.spec.taints}'",
                "Show the node's taints",
            ),
            Command("kubectl cordon a100-node-7xkq", "Stop new pods landing there", changes=True),
        ),
        snippets=(
            Snippet(
                "Toleration to add to the pod",
                "yaml",
                "tolerations:\n- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule",
            ),
        ),
        fixes=(
            Fix(
                "tolerate nvidia.com/gpu=present:NoSchedule in the Job's pod template",
                {"spec": {"tolerations": [TOLERATION]}},
                ("a100-node-7xkq",),
            ),
        ),
        pending_since=datetime(2026, 11, 29, 8, 18, 30, tzinfo=UTC),
        checked_at=datetime(2026, 11, 29, 9, 0, tzinfo=UTC),
    ),
    "gke-prod",
)

RESTARTING = Reply(
    Ref("jobset", "ml", "trainer"),
    Diagnosis(
        verdict=JobSetVerdict.RESTARTING,
        summary="JobSet ml/trainer restarted 4 times; its pods ended when spot nodes were preempted.",
        evidence=("status.restarts is 4",),
        next_commands=(),
        cause=RestartCause.NODE_PREEMPTION,
        pod_verdict=PodVerdict.EXHAUSTED,
    ),
)

PASTED = Reply(
    None,
    Diagnosis(
        verdict=JobSetVerdict.UNKNOWN,
        summary="The message is not one JobSet's webhooks write.",
        evidence=(),
        next_commands=(),
    ),
)


def test_word_is_the_verdict_alone() -> None:
    assert as_word(TAINT) == "taint"
    assert as_word(RESTARTING) == "restarting"
    assert as_word(PASTED) == "unknown"


def test_json_has_every_key_of_the_contract() -> None:
    assert as_json(TAINT) == {
        "verdict": "taint",
        "summary": TAINT.diagnosis.summary,
        "evidence": list(TAINT.diagnosis.evidence),
        "next_commands": [
            "kubectl get node a100-node-7xkq -o jsonpath='{.spec.taints}'",
            "kubectl cordon a100-node-7xkq",
        ],
        "cause": None,
        "pod_verdict": None,
        "target": {"kind": "pod", "namespace": "ml", "name": "notebook-gpu"},
        "cluster": "gke-prod",
        "checked_at": "2026-11-29T09:00:00Z",
        "pending_since": "2026-11-29T08:18:30Z",
        "started": None,
        "fixes": [
            {
                "summary": "tolerate nvidia.com/gpu=present:NoSchedule in the Job's pod template",
                "pod_patch": {"spec": {"tolerations": [TOLERATION]}},
                "opens": ["a100-node-7xkq"],
            }
        ],
        "holders": [],
        "competing": [],
        "snippets": [
            {
                "title": "Toleration to add to the pod",
                "language": "yaml",
                "text": "tolerations:\n- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule",
            }
        ],
        "autoscaling": None,
    }


def test_json_of_a_jobset_carries_cause_and_pod_verdict() -> None:
    rendered = as_json(RESTARTING)
    assert (rendered["cause"], rendered["pod_verdict"]) == ("node-preemption", "exhausted")
    assert rendered["target"] == {"kind": "jobset", "namespace": "ml", "name": "trainer"}


def test_json_of_a_pasted_message_has_the_same_keys_with_no_target() -> None:
    rendered = as_json(PASTED)
    assert rendered.keys() == as_json(TAINT).keys()
    assert rendered["target"] is None


def test_json_is_plain_json() -> None:
    for reply in (TAINT, RESTARTING, PASTED):
        rendered = as_json(reply)
        assert json.loads(json.dumps(rendered)) == rendered
        assert type(rendered["verdict"]) is str


def test_text_for_people() -> None:
    assert as_text(TAINT) == "\n".join(
        [
            "Verdict: taint",
            "Pod: ml/notebook-gpu · cluster: gke-prod · pending for 41m",
            "Node a100-node-7xkq has the untolerated taint nvidia.com/gpu=present:NoSchedule.",
            "Fix: tolerate nvidia.com/gpu=present:NoSchedule in the Job's pod template",
            "",
            "Next commands:",
            "",
            "  # Show the node's taints",
            "  kubectl get node a100-node-7xkq -o jsonpath='{.spec.taints}'",
            "",
            f"  {CHANGES_MARK} Stop new pods landing there",
            "  kubectl cordon a100-node-7xkq",
            "",
            "Evidence:",
            "  - 2 nodes; nodeSelector cloud.google.com/gke-accelerator=nvidia-tesla-a100 keeps 1",
            "  - taint drops a100-node-7xkq: nvidia.com/gpu=present:NoSchedule",
            "    no toleration matches",
            "",
            "Toleration to add to the pod (yaml):",
            "    tolerations:",
            "    - key: nvidia.com/gpu",
            "      operator: Exists",
            "      effect: NoSchedule",
        ]
    )


def test_text_marks_every_changing_command_and_no_other() -> None:
    lines = as_text(TAINT).splitlines()
    for command in TAINT.diagnosis.next_commands:
        above = lines[lines.index(f"  {command.text}") - 1]
        assert above.startswith(f"  {CHANGES_MARK}") is command.changes
        assert above.lstrip().startswith("#")


def test_text_of_a_jobset_and_of_a_pasted_message() -> None:
    assert as_text(RESTARTING).splitlines()[:3] == [
        "Verdict: restarting (cause: node-preemption)",
        "JobSet: ml/trainer · blocking pod's verdict: exhausted",
        "JobSet ml/trainer restarted 4 times; its pods ended when spot nodes were preempted.",
    ]
    assert as_text(PASTED) == "Verdict: unknown\nThe message is not one JobSet's webhooks write."


def test_not_found_suggests_names_and_quotes_refusals() -> None:
    error = NotFound(
        "pod",
        "ml",
        "trainer-workers-0-0",
        Missing(
            similar=("trainer-workers-0-0-b8mzq",),
            rejections=(
                'Job batch-infer: Error creating: pods "batch-infer-0-7tq4v" is forbidden: exceeded quota',
            ),
        ),
    )
    assert not_found(error) == "\n".join(
        [
            "Pod ml/trainer-workers-0-0 not found.",
            "Closest names in namespace ml: trainer-workers-0-0-b8mzq",
            "List them: kubectl get pods -n ml",
            "The API refused to create objects in namespace ml; a refused object never exists:",
            '  - Job batch-infer: Error creating: pods "batch-infer-0-7tq4v" is forbidden: exceeded quota',
        ]
    )


def test_not_found_with_nothing_close() -> None:
    assert not_found(NotFound("jobset", "ml", "trainr")) == "\n".join(
        [
            "JobSet ml/trainr not found.",
            "No JobSet in namespace ml has a similar name.",
            "List them: kubectl get jobsets.jobset.x-k8s.io -n ml",
        ]
    )
