"""`kubewhy serve` over real HTTP: signed slash commands in, Web API calls out to the local Slack, the
clusters read over HTTP from API simulators serving the corpus.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bot.app import WEB_API_METHODS
from bot.localslack import FORM, command_body
from cluster.cache import UNSCHEDULED_PODS
from devtools import corpus
from devtools.apisim import Request, serve
from devtools.slack import JSON, DevSlack, block_action, mention_event
from tests.slack.support import (
    GPU_LAB,
    ONCALL,
    TOKEN,
    Bot,
    World,
    assert_within_slack_limits,
    buttons,
    new_channel,
    ready,
    running_bot,
    shown,
    until,
    verdict_payload,
)

CASES = corpus.cases("triage") + corpus.cases("jobset")


def ask(case: corpus.Case, cluster: str, channel: str, bot: Bot) -> None:
    text = f"{case.namespace} {case.name} --cluster {cluster}"
    sent = bot.command(
        text if case.kind == "triage" else f"why {text}",
        channel,
        "/triage" if case.kind == "triage" else "/jobset",
    )
    assert sent.status == 200
    assert sent.body == f"Checking {case.namespace}/{case.name}…"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_corpus_case_is_answered_in_the_channel_with_a_thread(world: World, case: corpus.Case) -> None:
    channel = new_channel()
    cluster = world.cluster_of[case.snapshot]
    ask(case, cluster, channel, world.bot)

    verdict = world.bot.verdict(channel)
    kind = "pod" if case.kind == "triage" else "jobset"
    assert verdict_payload(verdict) == {
        "kind": kind,
        "namespace": case.namespace,
        "name": case.name,
        "cluster": cluster,
        "verdict": case.verdict,
    }
    assert shown(verdict).startswith(f"{verdict.blocks[0]['text']['text']}")
    assert f"{case.verdict}: " in verdict.blocks[0]["text"]["text"]
    assert f"{case.namespace}/{case.name}" in verdict.blocks[0]["text"]["text"]
    assert set(buttons(verdict)) == {"kubewhy_recheck", "kubewhy_watch", "kubewhy_details"}
    assert verdict.thread_ts is None

    thread = world.bot.thread(channel, verdict.ts)
    assert "Evidence" in shown(thread[0])
    for message in [verdict, *thread]:
        assert_within_slack_limits(message)
    if case.pod_verdict:
        assert f"blocking pod's triage: *{case.pod_verdict}*" in json.dumps(verdict.blocks)
    if case.cause:
        assert f"restart cause: *{case.cause}*" in json.dumps(verdict.blocks)


def test_the_ack_comes_before_a_slow_cluster_answers(world: World) -> None:
    """Slack's 3-second rule holds however long reading the cluster takes: the cluster answers nothing
    until the ack is in (`bench` measures how soon the ack comes)."""
    channel = new_channel()
    world.faulty.faults.hold()
    try:
        sent = world.bot.command("gpu-triage case-taint --cluster held", channel)
        assert sent.status == 200
        assert sent.body == "Checking gpu-triage/case-taint…"
        assert world.slack.channel_messages(channel) == []
    finally:
        world.faulty.faults.release()
    verdict = world.bot.verdict(channel)
    assert verdict_payload(verdict)["verdict"] == "taint"


def test_help_and_usage_errors_answer_in_the_ack(bot: Bot, channel: str) -> None:
    assert "/triage NAMESPACE POD" in bot.command("help", channel).body
    assert "/jobset why NAMESPACE NAME" in bot.command("", channel, "/jobset").body
    refused = bot.command("gpu-triage", channel).body
    assert "give a namespace and a pod name" in refused
    assert "Example: `/triage ml-training trainer-0`" in refused
    assert bot.slack.channel_messages(channel) == []


def test_hostile_text_is_escaped(bot: Bot, channel: str) -> None:
    """Slack escapes `<`, `>`, `&` in what people type; the bot must not unescape them into markup."""
    refused = bot.command("gpu-triage &lt;!channel&gt;", channel).body
    assert "&lt;!channel&gt;" in refused
    assert "<!channel>" not in refused

    pasted = (
        "&lt;!here&gt; admission webhook &lt;https://evil.example|click&gt; &amp; denied:"
        " follower pod node selector not set"
    )
    bot.command(f"why {pasted}", channel, "/jobset")
    verdict = bot.verdict(channel)
    thread = bot.thread(channel, verdict.ts)
    for message in [verdict, *thread]:
        posted = json.dumps(message.blocks) + message.text
        assert "<!here>" not in posted
        assert "<https://evil.example" not in posted
    assert "&lt;!here&gt;" in json.dumps([m.blocks for m in thread])


def test_a_pasted_error_is_explained_without_a_cluster(bot: Bot, channel: str) -> None:
    sent = bot.command(
        'why admission webhook "vpod.kb.io" denied the request: follower pod node selector not set',
        channel,
        "/jobset",
    )
    assert sent.body == "Explaining the pasted message…"
    verdict = bot.verdict(channel)
    assert verdict.metadata is None  # nothing to re-check
    assert buttons(verdict) == {}
    assert "leader-pending" in shown(verdict)
    assert "explained offline" in shown(verdict)


def test_a_missing_pod_gets_the_similar_names_to_the_asker_alone(bot: Bot, channel: str) -> None:
    """A name that does not exist is the asker's typo, not news for the channel; and there is nothing
    to re-check."""
    sent = bot.command("gpu-triage case-tain", channel)
    (answer,) = bot.responses(sent)
    assert answer["response_type"] == "ephemeral"
    assert "There is no pod `case-tain` in namespace `gpu-triage`" in shown(answer)
    assert "`case-taint`" in shown(answer)
    assert [b for b in answer["blocks"] if b["type"] == "actions"] == []
    assert bot.slack.channel_messages(channel) == []


def test_a_missing_jobset_asked_in_a_thread_is_answered_to_the_asker_alone(bot: Bot, channel: str) -> None:
    alert = bot.slack.post_as_user(channel, "U0SRE", "training is stuck since 10:00")
    bot.mention(channel, "jobset why gpu-triage/no-such-jobset", thread_ts=alert)
    (answer,) = bot.ephemerals(channel)
    assert answer.thread_ts == alert
    assert "There is no JobSet `no-such-jobset` in namespace `gpu-triage`" in shown(answer)
    assert buttons(answer) == {}
    assert bot.bot_messages(channel) == []
    assert [m for m in bot.slack.thread(channel, alert) if m.bot_id] == []


def test_a_refused_read_names_what_was_refused_and_offers_a_recheck(world: World) -> None:
    channel = new_channel()
    world.faulty.faults.forbid("nodes", verb="list")
    try:
        world.bot.command("gpu-triage case-taint --cluster faulty", channel)
        verdict = world.bot.verdict(channel)
    finally:
        world.faulty.faults.clear()
    text = shown(verdict)
    assert "cannot read cluster faulty" in text
    assert "forbidden: cannot list nodes at cluster scope" in text
    assert 'grant the rule {apiGroups: [""], resources: ["nodes"], verbs: ["list"]}' in text
    assert verdict_payload(verdict)["verdict"] == "error"
    assert set(buttons(verdict)) == {"kubewhy_recheck"}

    # the cluster is fixed: Re-check turns the same message into the verdict, evidence in its thread
    click = block_action(
        verdict,
        "kubewhy_recheck",
        buttons(verdict)["kubewhy_recheck"],
        user=ONCALL,
        response_url=world.slack.response_url(),
    )
    assert world.bot.interact(click).status == 200
    lines = world.bot.thread(channel, verdict.ts, at_least=2)
    assert "Changed since the last check: error → taint" in shown(lines[0])
    assert "Evidence" in shown(lines[1])
    updated = world.slack.find(channel, verdict.ts)
    assert updated is not None
    assert verdict_payload(updated)["verdict"] == "taint"
    assert "taint: pod gpu-triage/case-taint" in shown(updated)


def test_an_unreachable_cluster_says_so_with_the_fix(bot: Bot, channel: str) -> None:
    bot.command("gpu-triage case-taint --cluster down", channel)
    text = shown(bot.verdict(channel))
    assert "cannot read cluster down" in text
    assert "cannot reach the Kubernetes API at http://127.0.0.1:" in text
    assert "Fix: check the kubeconfig context" in text


def test_an_unknown_cluster_is_refused_to_the_asker_only(bot: Bot, channel: str) -> None:
    sent = bot.command("gpu-triage case-taint --cluster nope", channel)
    (refusal,) = bot.responses(sent)
    assert "There is no cluster named `nope`" in shown(refusal)
    assert "`lab`" in shown(refusal)
    assert refusal["response_type"] == "ephemeral"
    assert bot.slack.channel_messages(channel) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Slack-Signature": "v0=" + "0" * 64},
        {"X-Slack-Request-Timestamp": str(int(time.time()) - 600)},
    ],
    ids=["bad-signature", "stale-timestamp"],
)
def test_unsigned_or_stale_requests_are_refused(bot: Bot, channel: str, headers: dict[str, str]) -> None:
    body = command_body(
        "/triage",
        "gpu-triage case-taint",
        channel=channel,
        user=ONCALL,
        response_url=bot.slack.response_url(),
    )
    stamp = int(headers.get("X-Slack-Request-Timestamp", time.time()))
    sent = bot.send(body, FORM, headers, timestamp=stamp)
    assert sent.status == 401
    sent = bot.send(body, FORM, secret="another-apps-secret")
    assert sent.status == 401
    time.sleep(0.5)  # give a wrongly accepted request the time to be answered
    assert bot.slack.channel_messages(channel) == []


def test_a_retried_event_is_answered_once(bot: Bot, channel: str) -> None:
    incident = bot.slack.post_as_user(channel, ONCALL, "GPU jobs stuck?")
    ts = bot.slack.post_as_user(
        channel, ONCALL, "<@U0KUBEWHY> triage gpu-triage case-label", thread_ts=incident
    )
    event = mention_event(channel, ONCALL, "triage gpu-triage case-label", ts, incident)
    assert bot.event(event, event_id="Ev0RETRIED").status == 200
    assert (
        bot.event(
            event,
            event_id="Ev0RETRIED",
            headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
        ).status
        == 200
    )
    assert bot.event(event, event_id="Ev0RETRIED").status == 200  # the same delivery, without the header
    verdict = bot.slack.wait_for(lambda: [m for m in bot.slack.thread(channel, incident) if m.metadata])[0]
    assert verdict_payload(verdict)["verdict"] == "label-mismatch"
    time.sleep(1)  # time enough for a second answer, were there one
    assert len([m for m in bot.slack.thread(channel, incident) if m.metadata]) == 1


def test_a_rate_limited_post_is_retried_after_retry_after(bot: Bot, channel: str) -> None:
    bot.slack.rate_limit("chat.postMessage", times=1, retry_after=1, channel=channel)
    bot.command("gpu-triage case-exhaust", channel)
    verdict = bot.verdict(channel)
    assert verdict_payload(verdict)["verdict"] == "exhausted"
    posts = [c for c in bot.slack.calls_of("chat.postMessage") if c.args.get("channel") == channel]
    assert [c.status for c in posts[:2]] == [429, 200]


def test_an_unexpected_error_gets_a_polite_reply_with_a_request_id(bot: Bot, channel: str) -> None:
    bot.slack.fail("chat.postMessage", "fatal_error", channel=channel)
    sent = bot.command("gpu-triage case-ok", channel)
    (reply,) = bot.responses(sent)
    text = shown(reply)
    assert "Sorry, something went wrong on kubewhy's side (request `" in text
    request_id = text.split("request `")[1].split("`")[0]
    until(lambda: f"request {request_id} failed" in bot.log.read_text() or None)


def test_health_readiness_and_metrics(bot: Bot) -> None:
    assert bot.get("/healthz").status == 200
    said = until(lambda: said if (said := bot.get("/readyz")).json()["clusters"]["lab"] == "ok" else None)
    assert said.status == 503  # the `down` cluster cannot be read
    body = said.json()
    assert body["slack"] == "ok"
    assert body["caches"]["lab"]["state"] == "ready"  # the default: a cache, synced
    assert body["caches"]["down"] == {"state": "off", "detail": "cache.enabled is false: read directly"}
    assert "cannot reach the Kubernetes API" in body["clusters"]["down"]
    bot.command("gpu-triage case-taint", new_channel())
    bot.command("gpu-triage case-taint --cluster down", new_channel())
    counted = bot.slack.wait_for(lambda: 'command="/triage",verdict="error"' in bot.get("/metrics").body)
    assert counted
    metrics = bot.get("/metrics").body
    assert 'kubewhy_commands_total{command="/triage",verdict="taint"}' in metrics
    assert "kubewhy_answer_seconds_bucket{" in metrics
    assert 'kubewhy_api_errors_total{kind="Unavailable"}' in metrics
    assert 'kubewhy_event_loop_lag_seconds_bucket{le="0.1"}' in metrics
    assert "kubewhy_event_loop_lag_seconds_count" in metrics


def test_the_web_api_methods_called_are_the_declared_ones(bot: Bot) -> None:
    called = {c.method for c in bot.slack.calls} - {"response_url"}
    assert called <= set(WEB_API_METHODS), called - set(WEB_API_METHODS)


def test_url_verification(bot: Bot) -> None:
    body = json.dumps({"token": "x", "challenge": "kubewhy-challenge", "type": "url_verification"})
    sent = bot.send(body, JSON)
    assert sent.status == 200
    assert "kubewhy-challenge" in sent.body


def test_a_long_pasted_error_is_answered_within_slacks_limits(bot: Bot, channel: str) -> None:
    """Slack's own limit on command text is about 4,000 characters; a longer paste must still fit."""
    pasted = "admission webhook denied the request: " + " ".join(
        f"pods/worker-{i} forbidden" for i in range(600)
    )
    bot.command(f"why {pasted}", channel, "/jobset")
    verdict = bot.verdict(channel)
    thread = bot.thread(channel, verdict.ts)
    for message in [verdict, *thread]:
        assert_within_slack_limits(message)
    assert any("…" in shown(m) for m in thread)  # the echoed paste is clipped, with a mark


def test_a_cluster_is_cached_by_default_ready_once_synced_and_answers_directly_meanwhile(
    tmp_path: Path,
) -> None:
    with DevSlack(bot_token=TOKEN) as slack, serve(GPU_LAB) as lab:
        lab.faults.fail(503, times=None, resource="pods", verb="list")
        config = {"clusters": {"lab": {"kubeconfig": lab.kubeconfig}}}
        with running_bot(slack, tmp_path, config) as bot:
            syncing = until(lambda: said if "retrying" in (said := bot.get("/readyz")).body else None)
            assert syncing.status == 503
            said = syncing.json()
            assert said["clusters"]["lab"].startswith("cache not synced yet (syncing: nodes ")
            assert said["caches"]["lab"]["state"] == "syncing"
            assert "pods retrying in " in said["caches"]["lab"]["detail"]
            assert "HTTP 503" in said["caches"]["lab"]["detail"]
            # Meanwhile a question is answered from direct reads (a placed pod lists no pods), and says so.
            channel = new_channel()
            bot.command("gpu-triage case-ok", channel)
            verdict = bot.verdict(channel)
            assert verdict_payload(verdict)["verdict"] == "ok"
            thread = " ".join(shown(m) for m in bot.thread(channel, verdict.ts))
            assert "read directly from the API server: kubewhy's cache of this cluster is syncing" in thread

            lab.faults.clear()
            assert ready(bot).json() == {
                "slack": "ok",
                "clusters": {"lab": "ok"},
                "caches": {
                    "lab": {
                        "state": "ready",
                        "detail": "synced: 3 nodes, 6 bound pods",
                    }
                },
            }
            metrics = bot.get("/metrics").body
            assert 'kubewhy_cache_ready{cluster="lab"} 1.0' in metrics
            assert 'kubewhy_cache_objects{cluster="lab",resource="nodes"} 3.0' in metrics
            assert 'kubewhy_cache_objects{cluster="lab",resource="pods"} 6.0' in metrics
            assert 'kubewhy_cache_bytes{cluster="lab"} ' in metrics
            assert 'kubewhy_cache_sync_age_seconds{cluster="lab"} ' in metrics
            # Ready is the nodes and bound pods; the unscheduled pods' LIST retries on its own backoff.
            # Its watch opens once the LIST is through: the cache's own requests are over by then.
            until(lambda: True if any(_watches_unscheduled(r) for r in lab.requests) else None)
            start, channel = len(lab.requests), new_channel()
            bot.command("gpu-triage case-exhaust", channel)
            verdict = bot.verdict(channel)
            assert verdict_payload(verdict)["verdict"] == "exhausted"
            thread = " ".join(shown(m) for m in bot.thread(channel, verdict.ts))
            assert "read directly" not in thread
    # The cache's own watches may reopen at any moment (a watch ends at its timeout): not the question's.
    asked = [r for r in lab.requests[start:] if r.verb != "watch"]
    read = {(r.verb, r.resource, r.query.get("fieldSelector", "")) for r in asked}
    # The pod, its events and the pods nominated to a node (unbound, so never in the cache); whether an
    # autoscaler is there the cache knows (its status ConfigMap, Karpenter's NodePools and NodeClaims).
    nominated = "spec.nodeName=,status.nominatedNodeName!=,status.phase!=Succeeded,status.phase!=Failed"
    assert {(verb, resource) for verb, resource, _ in read} == {
        ("get", "pods"),
        ("list", "events"),
        ("list", "pods"),
    }
    assert {s for verb, resource, s in read if (verb, resource) == ("list", "pods")} == {nominated}


def _watches_unscheduled(request: Request) -> bool:
    return request.verb == "watch" and request.query.get("fieldSelector") == UNSCHEDULED_PODS


def test_a_cluster_that_opts_out_of_the_cache_is_read_directly(tmp_path: Path) -> None:
    with DevSlack(bot_token=TOKEN) as slack, serve(GPU_LAB) as lab:
        config = {"clusters": {"lab": {"kubeconfig": lab.kubeconfig, "cache": {"enabled": False}}}}
        with running_bot(slack, tmp_path, config) as bot:
            assert ready(bot).json()["caches"] == {
                "lab": {"state": "off", "detail": "cache.enabled is false: read directly"}
            }
            channel = new_channel()
            bot.command("gpu-triage case-exhaust", channel)
            verdict = bot.verdict(channel)
            assert verdict_payload(verdict)["verdict"] == "exhausted"
            assert "read directly" not in " ".join(shown(m) for m in bot.thread(channel, verdict.ts))
            assert "kubewhy_cache_ready{" not in bot.get("/metrics").body
    assert not [r for r in lab.requests if r.verb == "watch"]
