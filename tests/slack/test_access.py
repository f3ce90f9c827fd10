"""Authorization and channel settings of KUBEWHY_CONFIG, over real HTTP to a running bot: allowed
channels, users and user groups, namespaces per channel, ephemeral channels, a default cluster per
channel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.localslack import Message
from devtools.apisim import serve
from devtools.slack import DevSlack, block_action
from tests.slack.support import GPU_LAB, TOKEN, Bot, buttons, ready, running_bot, shown, verdict_payload

ALICE = "U0ALICE"  # allowed by name
BOB = "U0BOB"  # allowed through the S0ONCALL user group
MALLORY = "U0MALLORY"  # neither
OPEN, EPHEMERAL, LIMITED, OTHER_CLUSTER, CLOSED = "C0OPEN", "C0EPHEMERAL", "C0LIMITED", "C0PINNED", "C0CLOSED"
ONE_CLUSTER = "C0ONECLUSTER"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with (
        DevSlack(bot_token=TOKEN, usergroups={"S0ONCALL": [BOB, "U0CAROL"]}) as slack,
        serve(GPU_LAB) as lab,
        serve(GPU_LAB) as other,
    ):
        config = {
            "default_cluster": "lab",
            "clusters": {"lab": {"kubeconfig": lab.kubeconfig}, "other": {"kubeconfig": other.kubeconfig}},
            "allow": {
                "channels": [OPEN, EPHEMERAL, LIMITED, OTHER_CLUSTER, ONE_CLUSTER],
                "users": [ALICE],
                "usergroups": ["S0ONCALL"],
            },
            "channels": {
                EPHEMERAL: {"ephemeral": True},
                LIMITED: {"namespaces": ["research"]},
                OTHER_CLUSTER: {"cluster": "other"},
                ONE_CLUSTER: {"clusters": ["other"]},
            },
        }
        with running_bot(slack, tmp_path_factory.mktemp("access"), config) as running:
            yield running


def refusal(bot: Bot, text: str, channel: str, user: str) -> str:
    sent = bot.command(text, channel, user=user)
    (told,) = bot.responses(sent)
    assert told["response_type"] == "ephemeral"
    return shown(told)


def test_a_channel_not_allowed_is_refused_with_the_reason(bot: Bot) -> None:
    said = refusal(bot, "gpu-triage case-taint", CLOSED, ALICE)
    assert "kubewhy is not enabled in this channel" in said
    assert bot.slack.channel_messages(CLOSED) == []


def test_a_person_not_allowed_is_refused_with_the_reason(bot: Bot) -> None:
    said = refusal(bot, "gpu-triage case-taint", OPEN, MALLORY)
    assert "You are not allowed to query kubewhy" in said
    assert "allow.usergroups" in said


def test_a_person_in_an_allowed_user_group_is_answered_and_the_group_is_cached(bot: Bot) -> None:
    before = len(bot.slack.calls_of("usergroups.users.list"))
    for _ in range(2):
        bot.command("gpu-triage case-taint", OPEN, user=BOB)
    bot.verdict(OPEN, count=2)
    assert len(bot.slack.calls_of("usergroups.users.list")) - before <= 1


def test_a_namespace_the_channel_may_not_query_is_refused(bot: Bot) -> None:
    said = refusal(bot, "gpu-triage case-taint", LIMITED, ALICE)
    assert "This channel may not query namespace `gpu-triage`; it may query: `research`." in said


def test_a_channel_default_cluster_is_used_and_recorded(bot: Bot) -> None:
    bot.command("gpu-triage case-ok", OTHER_CLUSTER, user=ALICE)
    assert verdict_payload(bot.verdict(OTHER_CLUSTER))["cluster"] == "other"


def test_a_channel_with_clusters_asks_only_those_the_first_by_default(bot: Bot) -> None:
    told = refusal(bot, "gpu-triage case-ok --cluster lab", ONE_CLUSTER, ALICE)
    assert "This channel may not ask cluster `lab`. It may ask: `other`." in told
    bot.command("gpu-triage case-ok", ONE_CLUSTER, user=ALICE)
    assert verdict_payload(bot.verdict(ONE_CLUSTER))["cluster"] == "other"


def test_an_ephemeral_channel_answers_the_asker_only_and_recheck_stays_private(bot: Bot) -> None:
    sent = bot.command("gpu-triage case-exhaust", EPHEMERAL, user=ALICE)
    answer = bot.responses(sent)
    text = "\n".join(shown(r) for r in answer)
    assert "exhausted: pod gpu-triage/case-exhaust" in text
    assert "Evidence" in text
    assert "[Re-check]" in text
    assert "[Watch]" not in text
    assert bot.slack.channel_messages(EPHEMERAL) == []

    first = answer[0]
    shown_to_alice = Message(EPHEMERAL, "1.000001", first["text"], first["blocks"], ephemeral_to=ALICE)
    response_url = bot.slack.response_url()
    click = block_action(
        shown_to_alice,
        "kubewhy_recheck",
        buttons(shown_to_alice)["kubewhy_recheck"],
        user=ALICE,
        response_url=response_url,
    )
    assert bot.interact(click).status == 200
    again = bot.slack.wait_for(lambda: [r for r in bot.slack.responses if r["_response_url"] == response_url])
    assert "exhausted: pod gpu-triage/case-exhaust" in shown(again[0])
    assert bot.slack.channel_messages(EPHEMERAL) == []


def test_buttons_are_authorized_too(bot: Bot) -> None:
    bot.command("gpu-triage case-label", OPEN, user=ALICE)
    verdict = bot.slack.wait_for(lambda: [m for m in bot.bot_messages(OPEN) if "case-label" in shown(m)])[0]
    response_url = bot.slack.response_url()
    click = block_action(
        verdict, "kubewhy_watch", buttons(verdict)["kubewhy_watch"], user=MALLORY, response_url=response_url
    )
    bot.interact(click)
    told = bot.slack.wait_for(lambda: [r for r in bot.slack.responses if r["_response_url"] == response_url])
    assert "You are not allowed to query kubewhy" in shown(told[0])
    assert all("Watching" not in shown(m) for m in bot.slack.thread(OPEN, verdict.ts))


def test_stop_is_authorized_too(bot: Bot) -> None:
    """A person who may not ask cannot end someone else's watch: `@kubewhy stop` is refused like a
    question, and the watch goes on until an allowed person stops it."""
    bot.command("gpu-triage case-alloc0", OPEN, user=ALICE)
    verdict = bot.slack.wait_for(lambda: [m for m in bot.bot_messages(OPEN) if "case-alloc0" in shown(m)])[0]
    bot.mention(OPEN, "watch", thread_ts=verdict.ts, user=ALICE)
    bot.slack.wait_for(lambda: any("Watching" in shown(m) for m in bot.slack.thread(OPEN, verdict.ts)))
    bot.mention(OPEN, "stop", thread_ts=verdict.ts, user=MALLORY)
    refused = bot.slack.wait_for(
        lambda: [m for m in bot.slack.ephemerals(MALLORY) if m.thread_ts == verdict.ts]
    )
    assert "You are not allowed to query kubewhy" in shown(refused[0])
    bot.mention(OPEN, "stop", thread_ts=verdict.ts, user=ALICE)
    stopped = bot.slack.wait_for(
        lambda: [shown(m) for m in bot.slack.thread(OPEN, verdict.ts) if "stopped by" in shown(m)]
    )
    assert len(stopped) == 1
    assert ALICE in stopped[0]


def test_ready_when_slack_and_every_cluster_answer_and_their_caches_have_synced(bot: Bot) -> None:
    synced = {"state": "ready", "detail": "synced: 3 nodes, 1 bound pods the diagnosis reads"}
    assert ready(bot).json() == {
        "slack": "ok",
        "clusters": {"lab": "ok", "other": "ok"},
        "caches": {"lab": synced, "other": synced},
    }
