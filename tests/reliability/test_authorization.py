"""The authorization matrix: user × channel × cluster × action, through a running `kubewhy serve`.

Every way in — a command, a mention, a follow-up in a verdict's thread (recheck, watch, stop), a
button (Re-check, Watch, Details), the message shortcut — is allowed only when the channel is
allowed, the person is allowed, and the cluster is one the channel may use (`channels.ID.clusters`).
Follow-ups and buttons act on a verdict message that names its cluster: here the bot's own messages,
posted with its token as an earlier policy would have let it, and buttons whose value anyone can
forge.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from slack_sdk import WebClient

from bot.answers import EVENT_TYPE, VerdictMeta
from bot.localslack import Message
from devtools.apisim import serve
from devtools.slack import DevSlack, block_action, message_shortcut
from tests.slack.support import (
    GPU_LAB,
    TOKEN,
    WATCH_MINUTES,
    WATCH_SECONDS,
    Bot,
    running_bot,
    texts_of,
    verdict_payload,
)

ALICE, MALLORY = "U0ALICE", "U0MALLORY"
OPEN, DEV, CLOSED = "C0OPEN", "C0DEV", "C0CLOSED"
"""OPEN may use every cluster; DEV only `dev`; CLOSED is not an allowed channel."""
CLUSTERS = ("dev", "prod")
TARGET = "gpu-triage case-taint"

REFUSALS = {
    "channel": "kubewhy is not enabled in this channel",
    "user": "You are not allowed to query kubewhy",
    "cluster": "This channel may not ask cluster `prod`. It may ask: `dev`.",
}


def why_refused(user: str, channel: str, cluster: str) -> str | None:
    """The reason the policy gives, checked in its order (the cluster, where the target is resolved;
    then the channel and the person), or None."""
    if channel == DEV and cluster != "dev":
        return "cluster"
    if channel == CLOSED:
        return "channel"
    if user != ALICE:
        return "user"
    return None


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with DevSlack(bot_token=TOKEN) as slack, serve(GPU_LAB) as dev, serve(GPU_LAB) as prod:
        config = {
            "default_cluster": "prod",
            "clusters": {"dev": {"kubeconfig": dev.kubeconfig}, "prod": {"kubeconfig": prod.kubeconfig}},
            "allow": {"channels": [OPEN, DEV], "users": [ALICE]},
            "channels": {DEV: {"clusters": ["dev"]}},  # no `cluster`: its default is `dev`, not `prod`
            "watch": {"interval_seconds": WATCH_SECONDS, "max_minutes": WATCH_MINUTES},
        }
        with running_bot(slack, tmp_path_factory.mktemp("authorization"), config) as running:
            yield running


@dataclass(frozen=True)
class Case:
    """Where the answer or the refusal of one action will show."""

    channel: str
    thread: str | None
    response_url: str


def earlier_verdict(bot: Bot, channel: str, cluster: str) -> Message:
    """A verdict message of kubewhy about TARGET on `cluster`, in `channel`."""
    meta = VerdictMeta(
        kind="pod", namespace="gpu-triage", name="case-taint", cluster=cluster, verdict="taint"
    )
    posted = WebClient(token=TOKEN, base_url=bot.slack.api_url).chat_postMessage(
        channel=channel,
        text=f"taint: pod gpu-triage/case-taint ({cluster})",
        metadata={"event_type": EVENT_TYPE, "event_payload": meta.model_dump()},
    )
    found = bot.slack.find(channel, str(posted["ts"]))
    assert found is not None
    return found


def command(bot: Bot, user: str, channel: str, cluster: str) -> Case:
    sent = bot.command(f"{TARGET} --cluster {cluster}", channel, user=user)
    return Case(channel, None, sent.response_url)


def mention(bot: Bot, user: str, channel: str, cluster: str) -> Case:
    ts = bot.mention(channel, f"triage {TARGET} --cluster {cluster}", user=user)
    return Case(channel, ts, "")


def follow_up(word: str) -> Callable[[Bot, str, str, str], Case]:
    def act(bot: Bot, user: str, channel: str, cluster: str) -> Case:
        verdict = earlier_verdict(bot, channel, cluster)
        bot.mention(channel, word, thread_ts=verdict.ts, user=user)
        return Case(channel, verdict.ts, "")

    return act


def button(action_id: str) -> Callable[[Bot, str, str, str], Case]:
    def act(bot: Bot, user: str, channel: str, cluster: str) -> Case:
        verdict = earlier_verdict(bot, channel, "dev")
        forged = VerdictMeta.model_validate(verdict_payload(verdict) | {"cluster": cluster}).model_dump_json()
        response_url = bot.slack.response_url()
        sent = bot.interact(block_action(verdict, action_id, forged, user=user, response_url=response_url))
        assert sent.status == 200
        return Case(channel, verdict.ts, response_url)

    return act


ACTIONS: dict[str, Callable[[Bot, str, str, str], Case]] = {
    "command": command,
    "mention": mention,
    "recheck": follow_up("recheck"),
    "watch": follow_up("watch"),
    "stop": follow_up("stop"),
    "recheck button": button("kubewhy_recheck"),
    "watch button": button("kubewhy_watch"),
    "details button": button("kubewhy_details"),
}


def outcome(bot: Bot, case: Case, calls: int, responses: int) -> str:
    """What the person saw first after the action: its words (a refusal starts with :no_entry:)."""

    def seen() -> list[str] | None:
        for call in bot.slack.calls[calls:]:
            args = call.args
            in_place = args.get("channel") == case.channel and case.thread in (
                args.get("thread_ts"),
                args.get("ts"),
            )
            if call.method in ("chat.postMessage", "chat.postEphemeral", "chat.update") and in_place:
                return texts_of(dict(args))
        for response in bot.slack.responses[responses:]:
            if response["_response_url"] == case.response_url:
                return texts_of(response)
        return None

    return "\n".join(bot.slack.wait_for(seen))


@pytest.mark.parametrize(
    ("user", "channel", "cluster", "action"),
    list(itertools.product((ALICE, MALLORY), (OPEN, DEV, CLOSED), CLUSTERS, ACTIONS)),
)
def test_matrix(bot: Bot, user: str, channel: str, cluster: str, action: str) -> None:
    calls, responses = len(bot.slack.calls), len(bot.slack.responses)
    case = ACTIONS[action](bot, user, channel, cluster)
    said = outcome(bot, case, calls, responses)
    reason = why_refused(user, channel, cluster)
    if reason is None:
        assert ":no_entry:" not in said, said
    else:
        assert ":no_entry:" in said, said
        assert REFUSALS[reason] in said, said


@pytest.mark.parametrize(("user", "channel"), list(itertools.product((ALICE, MALLORY), (OPEN, DEV, CLOSED))))
def test_the_shortcut_uses_the_channels_default_cluster(bot: Bot, user: str, channel: str) -> None:
    alert_ts = bot.slack.post_as_user(
        channel, "U0ALERTS", 'KubePodNotScheduled namespace="gpu-triage" pod="case-taint"'
    )
    alert = bot.slack.find(channel, alert_ts)
    assert alert is not None
    calls, responses = len(bot.slack.calls), len(bot.slack.responses)
    response_url = bot.slack.response_url()
    bot.interact(message_shortcut(alert, "triage_with_kubewhy", user=user, response_url=response_url))
    said = outcome(bot, Case(channel, alert_ts, response_url), calls, responses)
    reason = why_refused(user, channel, "dev" if channel == DEV else "prod")
    if reason is not None:
        assert REFUSALS[reason] in said, said
        return
    verdict = bot.slack.wait_for(lambda: [m for m in bot.slack.thread(channel, alert_ts) if m.metadata])[0]
    assert verdict_payload(verdict)["cluster"] == ("dev" if channel == DEV else "prod")


def test_a_person_not_allowed_cannot_stop_anothers_watch(bot: Bot) -> None:
    verdict = earlier_verdict(bot, OPEN, "dev")
    bot.mention(OPEN, "watch", thread_ts=verdict.ts, user=ALICE)
    bot.slack.wait_for(
        lambda: any("Watching" in t for m in bot.slack.thread(OPEN, verdict.ts) for t in texts_of(m.blocks))
    )
    bot.mention(OPEN, "stop", thread_ts=verdict.ts, user=MALLORY)
    refused = bot.slack.wait_for(
        lambda: [m for m in bot.slack.ephemerals(MALLORY) if m.thread_ts == verdict.ts]
    )
    assert REFUSALS["user"] in "\n".join(texts_of(refused[0].blocks))
    ended = bot.slack.wait_for(
        lambda: [
            t
            for m in bot.slack.thread(OPEN, verdict.ts)
            for t in texts_of(m.blocks)
            if "ended" in t or "stopped" in t
        ],
        timeout=30,
    )
    assert "stopped by" not in ended[0]
