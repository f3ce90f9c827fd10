"""`/why NS [KIND/]NAME` in Slack, through `kubewhy serve`: every LeaderWorkerSet of the corpus is found by
its name alone and answered by the LWS explainer in the channel, with its thread; help and usage errors
answer in the acknowledgement."""

from __future__ import annotations

import json

import pytest

from devtools import corpus
from tests.slack.support import Bot, World, new_channel, shown, verdict_payload

CASES = corpus.cases("lws")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_leaderworkerset_is_found_by_name_and_explained(world: World, case: corpus.Case) -> None:
    channel = new_channel()
    cluster = world.cluster_of[case.snapshot]
    sent = world.bot.command(f"{case.namespace} {case.name} --cluster {cluster}", channel, "/why")
    assert (sent.status, sent.body) == (200, f"Checking {case.namespace}/{case.name}…")

    verdict = world.bot.verdict(channel)
    assert verdict_payload(verdict) == {
        "kind": "any",
        "namespace": case.namespace,
        "name": case.name,
        "cluster": cluster,
        "verdict": case.verdict,
    }
    header = verdict.blocks[0]["text"]["text"]
    assert f"{case.verdict}: LeaderWorkerSet {case.namespace}/{case.name}" in header
    if case.pod_verdict:
        assert f"blocking pod's triage: *{case.pod_verdict}*" in json.dumps(verdict.blocks)
    thread = world.bot.thread(channel, verdict.ts)
    assert "Evidence" in shown(thread[0])


def test_a_kind_picks_among_objects_of_one_name(world: World) -> None:
    case = next(c for c in CASES if c.verdict == "running")
    channel = new_channel()
    cluster = world.cluster_of[case.snapshot]
    world.bot.command(f"{case.namespace} sts/{case.name} --cluster {cluster}", channel, "/why")
    verdict = world.bot.verdict(channel)
    assert verdict_payload(verdict)["kind"] == "statefulset"
    assert verdict_payload(verdict)["verdict"] == "ok"
    assert f"ok: StatefulSet {case.namespace}/{case.name}" in verdict.blocks[0]["text"]["text"]


def test_help_and_usage_errors_answer_in_the_ack(bot: Bot, channel: str) -> None:
    assert "/why NAMESPACE KIND/NAME" in bot.command("help", channel, "/why").body
    assert "/why NAMESPACE NAME" in bot.command("", channel, "/why").body
    assert "unknown kind 'cronjob'" in bot.command("serving cronjob/nightly", channel, "/why").body
    assert "give a namespace and a pod or workload name" in bot.command("serving", channel, "/why").body
    assert bot.slack.channel_messages(channel) == []


@pytest.mark.parametrize("case", corpus.cases("trainjob"), ids=[c.id for c in corpus.cases("trainjob")])
def test_jobset_why_on_a_trainjob_answers_about_the_trainjob(world: World, case: corpus.Case) -> None:
    channel = new_channel()
    cluster = world.cluster_of[case.snapshot]
    world.bot.command(f"why {case.namespace} {case.name} --cluster {cluster}", channel, "/jobset")
    verdict = world.bot.verdict(channel)
    assert verdict_payload(verdict)["verdict"] == case.verdict
    assert f"{case.verdict}: TrainJob {case.namespace}/{case.name}" in verdict.blocks[0]["text"]["text"]
