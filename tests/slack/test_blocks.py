"""Block Kit rendering (bot/blocks.py), a pure unit: Slack's limits hold for any answer, and text from
people or clusters cannot mention, link or break the markup.

Limits are checked against slack_sdk's own models and against the numbers in Slack's Block Kit
reference (and slackapi/bolt-js#2509 for the total), not against the module's constants.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from bot import blocks
from bot.answers import VerdictMeta
from bot.checks import Check
from cluster.errors import Forbidden, Missing, NotFound
from diagnosis.model import Command, Diagnosis, JobSetVerdict, PodVerdict, RestartCause, Snippet
from diagnosis.objects import Ref
from handlers.reply import Reply
from handlers.requests import Target
from tests.slack.support import assert_within_slack_limits, texts_of

AT = datetime(2026, 11, 29, 8, 50, 19, tzinfo=UTC)
HOSTILE = "<!channel> <@U0BOSS> <https://evil.example|click> & *bold* ```"


def check(diagnosis: Diagnosis, name: str = "trainer-0", kind: Literal["pod", "jobset"] = "pod") -> Check:
    target = Target(kind=kind, namespace="ml", name=name, cluster="prod")
    return Check(target, Reply(Ref(kind, "ml", name), diagnosis), AT)


def diagnosis(evidence: int = 3, line: str = "evidence", commands: int = 2, snippet: str = "") -> Diagnosis:
    return Diagnosis(
        verdict=PodVerdict.EXHAUSTED,
        summary="every node left has no free nvidia.com/gpu",
        evidence=tuple(f"{i}: {line}" for i in range(evidence)),
        next_commands=tuple(
            Command(f"kubectl describe node gpu-node-{i}", f"node {i}", changes=i % 2 == 1)
            for i in range(commands)
        ),
        snippets=(Snippet("tolerations", "yaml", snippet),) if snippet else (),
    )


def test_a_small_answer_is_one_thread_message_with_commands_then_evidence() -> None:
    (message,) = blocks.detail_messages(check(diagnosis()))
    shown = blocks.plain_text(message.blocks)
    assert shown.index("Next commands") < shown.index("Evidence") < shown.index("0: evidence")
    assert "    kubectl describe node gpu-node-0" in shown
    assert_within_slack_limits(message)


def test_commands_that_change_the_cluster_are_marked() -> None:
    (message,) = blocks.detail_messages(check(diagnosis(commands=2)))
    sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
    reading = next(s for s in sections if "gpu-node-0" in s)
    changing = next(s for s in sections if "gpu-node-1" in s)
    assert "changes the cluster" in changing
    assert "changes the cluster" not in reading
    assert "```kubectl describe node gpu-node-1```" in changing


def test_a_long_answer_is_split_across_messages_within_every_limit() -> None:
    long = check(diagnosis(evidence=300, line="x" * 180, commands=40, snippet="- key: k\n" * 700))
    messages = blocks.detail_messages(long)
    assert 2 <= len(messages) <= blocks.MAX_MESSAGES
    for message in messages:
        assert_within_slack_limits(message)
    shown = "\n".join(blocks.plain_text(m.blocks) for m in messages)
    assert "0: " + "x" * 180 in shown
    assert "299: " + "x" * 180 in shown or "The full answer: `kubewhy triage ml trainer-0`" in shown


def test_an_answer_too_long_for_slack_is_cut_with_a_pointer_to_the_cli() -> None:
    huge = check(diagnosis(evidence=2000, line="y" * 200, commands=200), kind="jobset", name="llama")
    messages = blocks.detail_messages(huge)
    assert len(messages) == blocks.MAX_MESSAGES
    for message in messages:
        assert_within_slack_limits(message)
    last = blocks.plain_text(messages[-1].blocks)
    assert "The full answer: `kubewhy jobset why ml llama`" in last
    assert "Showing 4 of" in last


def test_a_single_huge_evidence_line_is_clipped_not_rejected() -> None:
    (message,) = blocks.detail_messages(check(diagnosis(evidence=1, line="z" * 10_000, commands=0)))
    assert_within_slack_limits(message)
    assert message.blocks[-1]["text"]["text"].endswith("…")


def test_long_names_keep_the_header_and_button_value_within_limits() -> None:
    name = ".".join(["a" * 63] * 4)  # 255 > 253: the longest valid name is 253
    name = name[:253]
    long = check(diagnosis(), name=name)
    meta = VerdictMeta.of(long)
    assert meta is not None
    value = meta.model_dump_json()
    message = blocks.verdict_message(long, blocks.ACTION_IDS, value)
    assert_within_slack_limits(message)
    assert message.blocks[0]["text"]["text"].endswith("…")


def test_hostile_text_is_escaped_everywhere() -> None:
    hostile = Diagnosis(
        verdict=JobSetVerdict.RESTARTING,
        summary=HOSTILE,
        evidence=(HOSTILE,),
        next_commands=(Command("kubectl get pods -n ml", HOSTILE),),
        snippets=(Snippet(HOSTILE, "yaml", HOSTILE),),
        cause=RestartCause.APP_FAILURE,
    )
    answer = check(hostile, kind="jobset", name="llama")
    rendered = [blocks.verdict_message(answer, (), ""), *blocks.detail_messages(answer)]
    for message in rendered:
        for text in [*texts_of(list(message.blocks)), message.text]:
            assert "<" not in text, text
            assert ">" not in text, text
        assert_within_slack_limits(message)
    code = json.dumps([list(m.blocks) for m in rendered])
    assert "&lt;!channel&gt;" in code
    assert "restart cause: *app-failure*" in code
    shown = blocks.plain_text(rendered[0].blocks)
    assert "<!channel>" in shown  # the terminal shows what the cluster said, decoded


def test_not_found_says_the_similar_names_and_refused_creations() -> None:
    missing = Missing(
        similar=("trainer-0-x7k2p",), rejections=("exceeded quota: gpu, requested: nvidia.com/gpu=8 <x>",)
    )
    lost = Check(
        Target(kind="pod", namespace="ml", name="trainer-0", cluster="prod"),
        NotFound("pod", "ml", "trainer-0", missing),
        AT,
    )
    message = blocks.verdict_message(lost, (blocks.RECHECK,), "{}")
    shown = blocks.plain_text(message.blocks)
    assert "There is no pod `trainer-0` in namespace `ml` on cluster prod." in shown
    assert "`trainer-0-x7k2p`" in shown
    assert "exceeded quota: gpu, requested: nvidia.com/gpu=8 <x>" in shown
    assert "[Re-check]" in shown
    assert blocks.detail_messages(lost) == []


def test_a_cluster_failure_says_what_was_refused_and_the_fix() -> None:
    failed = Check(
        Target(kind="pod", namespace="ml", name="trainer-0", cluster="prod"),
        Forbidden("list", "nodes", None),
        AT,
    )
    shown = blocks.plain_text(blocks.verdict_message(failed, (blocks.RECHECK,), "{}").blocks)
    assert "cannot read cluster prod" in shown
    assert "forbidden: cannot list nodes at cluster scope" in shown
    assert "Fix: grant the rule" in shown


@pytest.mark.parametrize(
    "value",
    [
        "",
        "{}",
        "not json",
        '{"kind": "pod", "namespace": "ML", "name": "x", "cluster": "c", "verdict": "ok"}',
        '{"kind": "node"}',
    ],
)
def test_a_forged_button_value_is_refused(value: str) -> None:
    assert VerdictMeta.from_value(value) is None


def test_metadata_round_trips_through_a_message() -> None:
    answer = check(diagnosis())
    meta = VerdictMeta.of(answer)
    assert meta is not None
    message: dict[str, Any] = {
        "metadata": {"event_type": "kubewhy_verdict", "event_payload": meta.model_dump()}
    }
    assert VerdictMeta.from_message(message) == meta
    assert meta.target == answer.target
    assert meta.verdict == "exhausted"
    assert (
        VerdictMeta.from_message({"metadata": {"event_type": "other", "event_payload": meta.model_dump()}})
        is None
    )


def test_not_found_in_a_namespace_that_does_not_exist_names_the_namespaces_meant() -> None:
    lost = Check(
        Target(kind="pod", namespace="ml-trian", name="trainer-0", cluster="prod"),
        NotFound("pod", "ml-trian", "trainer-0", Missing(namespaces=("ml-train",))),
        AT,
    )
    shown = blocks.plain_text(blocks.verdict_message(lost, (), "{}").blocks)
    assert "There is no namespace `ml-trian` on cluster prod." in shown
    assert "Did you mean: `ml-train`?" in shown
    assert "There is no pod" not in shown
