"""Socket Mode (SLACK_APP_TOKEN set): the bot opens a WebSocket to the local Slack
(`apps.connections.open`), receives the same requests in envelopes, and acknowledges each."""

from __future__ import annotations

import json
from pathlib import Path

from bot.app import SOCKET_MODE_METHODS, WEB_API_METHODS
from devtools.apisim import serve
from devtools.slack import DevSlack, command_payload, event_body, mention_event
from tests.slack.support import GPU_LAB, ONCALL, TOKEN, new_channel, running_bot, shown, verdict_payload

APP_TOKEN = "xapp-1-kubewhy-test"


def test_socket_mode_answers_commands_and_mentions(tmp_path: Path) -> None:
    with DevSlack(bot_token=TOKEN, app_token=APP_TOKEN) as slack, serve(GPU_LAB) as lab:
        config = {"clusters": {"lab": {"kubeconfig": lab.kubeconfig}}}
        with running_bot(slack, tmp_path, config, SLACK_APP_TOKEN=APP_TOKEN) as bot:
            slack.wait_for(lambda: bot.get("/readyz").status == 200)
            assert slack.calls_of("apps.connections.open")

            channel = new_channel()
            payload = command_payload(
                "/triage",
                "gpu-triage case-taint",
                channel=channel,
                user=ONCALL,
                response_url=slack.response_url(),
            )
            envelope = slack.socket_send("slash_commands", payload)
            ack = slack.wait_for(lambda: slack.socket_acks.get(envelope))
            assert ack["payload"]["text"] == "Checking gpu-triage/case-taint…"
            verdict = bot.verdict(channel)
            assert verdict_payload(verdict)["verdict"] == "taint"

            ts = slack.post_as_user(channel, ONCALL, "<@U0KUBEWHY> recheck", thread_ts=verdict.ts)
            event = mention_event(channel, ONCALL, "recheck", ts, verdict.ts)
            slack.socket_send("events_api", json.loads(event_body(event)))
            said = slack.wait_for(
                lambda: [m for m in slack.thread(channel, verdict.ts) if "No change" in shown(m)]
            )
            assert len(said) == 1
            assert bot.get("/slack/events").status in (404, 405)  # no HTTP endpoint for Slack in Socket Mode
            called = {c.method for c in slack.calls} - {"socket_ack", "response_url"}
            assert called <= set(WEB_API_METHODS + SOCKET_MODE_METHODS)
