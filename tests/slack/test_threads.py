"""Follow-ups over real HTTP: re-check, watch and stop (by mention and by button), the Details button,
mentions in any thread, the message shortcut on an alert, and watches ended at shutdown."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.localslack import Message
from devtools.apisim import serve
from devtools.apisim.store import Store
from devtools.slack import DevSlack, block_action, message_shortcut
from tests.slack.support import (
    GPU_LAB,
    ONCALL,
    TOKEN,
    WATCH_MINUTES,
    Bot,
    World,
    buttons,
    new_channel,
    running_bot,
    shown,
    verdict_payload,
)

ALERTMANAGER = "U0ALERTS"


def asked(bot: Bot, text: str, cluster: str | None = None) -> tuple[str, Message]:
    """A new channel where `/triage text` was asked, and the verdict message."""
    channel = new_channel()
    bot.command(f"{text} --cluster {cluster}" if cluster else text, channel)
    return channel, bot.verdict(channel)


def click(bot: Bot, message: Message, action_id: str, user: str = ONCALL) -> str:
    """Click a button of `message`; returns the response_url the click carried."""
    response_url = bot.slack.response_url()
    payload = block_action(
        message, action_id, buttons(message)[action_id], user=user, response_url=response_url
    )
    assert bot.interact(payload).status == 200
    return response_url


def lines(bot: Bot, channel: str, ts: str, at_least: int) -> list[str]:
    return [shown(m) for m in bot.thread(channel, ts, at_least)]


@pytest.fixture
def mutable(world: World) -> Iterator[Store]:
    """The `mutable` cluster's store; every object a test replaces is put back afterwards."""
    store = world.mutable.store
    saved = {id(c): copy.deepcopy(c.entries) for c in store.collections.values()}
    yield store
    for collection in store.collections.values():
        for key in list(collection.entries):
            collection.remove(key)
        for entry in saved[id(collection)].values():
            collection.add(entry.obj)


def lab_object(kind: str, name: str) -> dict[str, Any]:
    items = json.loads(GPU_LAB.read_text())["items"]
    return next(o for o in items if o["kind"] == kind and o["metadata"]["name"] == name)


def placed(pod: dict[str, Any], node: str, ready: bool = True) -> dict[str, Any]:
    """The pod as the API serves it once the scheduler bound it: Running and Ready, or (not `ready`)
    still creating its container."""
    pod = copy.deepcopy(pod)
    pod["spec"]["nodeName"] = node
    if ready:
        pod["status"] = {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True"},
            ],
        }
    else:
        name = pod["spec"]["containers"][0]["name"]
        pod["status"] = {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [
                {
                    "name": name,
                    "ready": False,
                    "restartCount": 0,
                    "state": {"waiting": {"reason": "ContainerCreating"}},
                }
            ],
        }
    return pod


def test_recheck_in_the_thread_says_nothing_changed(bot: Bot) -> None:
    channel, verdict = asked(bot, "gpu-triage case-taint")
    bot.thread(channel, verdict.ts)
    bot.mention(channel, "recheck", thread_ts=verdict.ts)
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, verdict.ts, 1) if "No change" in t])
    assert said == ["No change since the last check: still taint."]
    updates = [c for c in bot.slack.calls_of("chat.update") if c.args.get("ts") == verdict.ts]
    assert len(updates) == 1
    replies = [c for c in bot.slack.calls_of("conversations.replies") if c.args.get("ts") == verdict.ts]
    assert replies[0].args["limit"] in (1, "1")  # the parent holds the verdict: one message read


def test_recheck_after_a_change_updates_the_verdict_and_says_what_changed(bot: Bot, mutable: Store) -> None:
    channel, verdict = asked(bot, "gpu-triage case-taint", "mutable")
    node = copy.deepcopy(lab_object("Node", "lab-node-0"))
    node["spec"]["taints"] = []
    mutable.add(node)
    click(bot, verdict, "kubewhy_recheck")
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, verdict.ts, 1) if "Changed since" in t])
    assert said[0].startswith(":arrows_counterclockwise: Changed since the last check: taint → ")
    updated = bot.slack.find(channel, verdict.ts)
    assert updated is not None
    after = verdict_payload(updated)
    assert after["verdict"] != "taint"
    assert f"{after['verdict']}: pod gpu-triage/case-taint" in shown(updated)


def test_a_watch_posts_the_change_and_ends_when_the_pod_is_placed(bot: Bot, mutable: Store) -> None:
    channel, verdict = asked(bot, "gpu-triage case-exhaust", "mutable")
    click(bot, verdict, "kubewhy_watch")
    bot.slack.wait_for(
        lambda: any("Watching gpu-triage/case-exhaust" in t for t in lines(bot, channel, verdict.ts, 1))
    )
    pod = lab_object("Pod", "case-exhaust")
    mutable.add(placed(pod, "lab-node-0", ready=False))
    # Placed is not running: the watch says so and goes on until the pod runs (or fails).
    bot.slack.wait_for(
        lambda: any(
            "Changed since the last check: exhausted → ok" in t for t in lines(bot, channel, verdict.ts, 1)
        )
    )
    assert not any("Watch of" in t for t in lines(bot, channel, verdict.ts, 1))
    mutable.add(placed(pod, "lab-node-0"))
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, verdict.ts, 1) if "Watch of" in t])
    assert said == [":checkered_flag: Watch of gpu-triage/case-exhaust ended: the verdict is ok."]
    updated = bot.slack.find(channel, verdict.ts)
    assert updated is not None
    assert verdict_payload(updated)["verdict"] == "ok"


def test_a_watch_without_change_ends_at_its_time_limit(bot: Bot) -> None:
    channel, verdict = asked(bot, "gpu-triage case-label")
    bot.mention(channel, "watch", thread_ts=verdict.ts)
    bot.mention(channel, "watch", thread_ts=verdict.ts)
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, verdict.ts, 1) if "ended after" in t])
    assert said == [
        f":hourglass: Watch of gpu-triage/case-label ended after {WATCH_MINUTES:g} min;"
        " the verdict is still label-mismatch."
    ]
    thread = lines(bot, channel, verdict.ts, 1)
    assert sum("Already watching gpu-triage/case-label" in t for t in thread) == 1
    assert not any("Changed since" in t for t in thread)


def test_stop_ends_the_watch_with_who_stopped_it(bot: Bot) -> None:
    channel, verdict = asked(bot, "gpu-triage case-alloc0")
    bot.mention(channel, "stop", thread_ts=verdict.ts)
    bot.slack.wait_for(
        lambda: any("Nothing is being watched" in t for t in lines(bot, channel, verdict.ts, 1))
    )
    bot.mention(channel, "watch", thread_ts=verdict.ts)
    bot.slack.wait_for(lambda: any("Watching" in t for t in lines(bot, channel, verdict.ts, 1)))
    bot.mention(channel, "stop", thread_ts=verdict.ts, user="U0LEAD")
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, verdict.ts, 1) if "stopped by" in t])
    assert said == [":octagonal_sign: Watch of gpu-triage/case-alloc0 stopped by <@U0LEAD>."]


def test_details_shows_the_whole_answer_to_the_clicker_only(bot: Bot) -> None:
    channel, verdict = asked(bot, "gpu-triage case-nogpunode")
    response_url = click(bot, verdict, "kubewhy_details", user="U0OTHER")
    answers = bot.slack.wait_for(
        lambda: [r for r in bot.slack.responses if r["_response_url"] == response_url]
    )
    text = "\n".join(shown(r) for r in answers)
    assert "no-gpu-node: pod gpu-triage/case-nogpunode" in text
    assert "Evidence" in text
    # Aimed at the cluster it was read from: the context of the bot's kubeconfig, never its path.
    assert "kubectl --context apisim describe pod case-nogpunode -n gpu-triage" in text
    assert "--kubeconfig" not in text
    assert all(r["response_type"] == "ephemeral" and r["replace_original"] is False for r in answers)
    assert len(bot.bot_messages(channel)) == 1  # nothing new in the channel


def test_a_mention_in_any_thread_answers_in_that_thread_and_follows_up(bot: Bot) -> None:
    channel = new_channel()
    incident = bot.slack.post_as_user(channel, "U0SRE", "training jobs are stuck since 10:00")
    bot.mention(channel, "triage gpu-triage/case-label", thread_ts=incident)
    verdict = bot.slack.wait_for(lambda: [m for m in bot.slack.thread(channel, incident) if m.metadata])[0]
    assert verdict.thread_ts == incident
    assert verdict_payload(verdict)["verdict"] == "label-mismatch"
    assert bot.slack.channel_messages(channel)[-1].ts == incident  # nothing posted at the top level
    bot.mention(channel, "recheck", thread_ts=incident)
    said = bot.slack.wait_for(lambda: [t for t in lines(bot, channel, incident, 1) if "No change" in t])
    assert said == ["No change since the last check: still label-mismatch."]


def test_a_follow_up_in_a_thread_without_verdict_is_explained_to_the_asker(bot: Bot) -> None:
    channel = new_channel()
    root = bot.slack.post_as_user(channel, "U0SRE", "anyone?")
    bot.mention(channel, "recheck", thread_ts=root)
    (told,) = bot.ephemerals(channel)
    assert "This thread has no kubewhy verdict" in shown(told)
    assert told.thread_ts == root
    bot.mention(channel, "dance")
    assert any("I don't know 'dance'" in shown(m) for m in bot.ephemerals(channel, at_least=2))


def test_the_shortcut_on_an_alert_answers_in_its_thread(bot: Bot) -> None:
    channel = new_channel()
    alert = bot.slack.post_as_user(
        channel,
        ALERTMANAGER,
        "",
        attachments=[
            {
                "title": "[FIRING:1] KubePodNotScheduled",
                "text": "*Description:* pod stuck Pending\n*Details:*\n"
                ' • *alertname:* `KubePodNotScheduled`\n • namespace="gpu-triage"\n • pod="case-alloc0"',
                "fallback": "[FIRING:1] KubePodNotScheduled",
            }
        ],
    )
    message = bot.slack.find(channel, alert)
    assert message is not None
    payload = message_shortcut(
        message, "triage_with_kubewhy", user=ONCALL, response_url=bot.slack.response_url()
    )
    assert bot.interact(payload).status == 200
    verdict = bot.slack.wait_for(lambda: [m for m in bot.slack.thread(channel, alert) if m.metadata])[0]
    assert verdict_payload(verdict) | {"cluster": "lab"} == {
        "kind": "pod",
        "namespace": "gpu-triage",
        "name": "case-alloc0",
        "cluster": "lab",
        "verdict": "allocatable-zero",
    }
    assert any("Evidence" in t for t in lines(bot, channel, alert, 2))


def test_the_shortcut_on_a_message_without_labels_says_so(bot: Bot) -> None:
    channel = new_channel()
    ts = bot.slack.post_as_user(channel, "U0SRE", "the GPUs are on fire")
    message = bot.slack.find(channel, ts)
    assert message is not None
    payload = message_shortcut(
        message, "triage_with_kubewhy", user=ONCALL, response_url=bot.slack.response_url()
    )
    sent = bot.interact(payload)
    (told,) = bot.responses(sent)
    assert "I could not find a `namespace=` label" in json.dumps(told)
    assert bot.slack.thread(channel, ts) == []


def test_watches_end_with_a_line_when_the_bot_stops(tmp_path: Path) -> None:
    with DevSlack(bot_token=TOKEN) as slack, serve(GPU_LAB) as sim:
        config = {
            "clusters": {"lab": {"kubeconfig": sim.kubeconfig}},
            "watch": {"interval_seconds": 0.2, "max_minutes": 10},
        }
        channel = new_channel()
        with running_bot(slack, tmp_path, config) as bot:
            bot.command("gpu-triage case-taint", channel)
            verdict = bot.verdict(channel)
            bot.mention(channel, "watch", thread_ts=verdict.ts)
            slack.wait_for(lambda: any("Watching" in shown(m) for m in slack.thread(channel, verdict.ts)))
        # running_bot sent SIGTERM and checked the exit status 0
        last = shown(slack.thread(channel, verdict.ts)[-1])
        assert last == (
            ":octagonal_sign: Watch of gpu-triage/case-taint ended: kubewhy is shutting down."
            " Ask `@kubewhy watch` again once it is back."
        )
