"""Support for the Slack tests: a running `kubewhy serve` talking to a local Slack and to API
simulators, and signed requests to it.

The bot runs as a real subprocess in HTTP mode on a free port; its Web API calls go to the local Slack
(`devtools.slack.DevSlack`) and its clusters are API simulators (devtools/apisim) serving corpus
snapshots. Tests send what Slack sends (signed slash commands, events, interactions) over HTTP and read
what the bot posted from the local Slack. Every test uses its own channel, so one bot serves a whole
module.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from slack_sdk.models.blocks import Block

from bot.blocks import SlackMessage, plain_text
from bot.localslack import FORM, Message, command_body, signed_headers
from devtools.apisim import Simulator
from devtools.botenv import KUBEWHY, SECRET, bot_env, free_port
from devtools.slack import JSON, DevSlack, event_body, interaction_body, mention_event

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "xoxb-kubewhy-test"
ONCALL = "U0ONCALL"
T = TypeVar("T")


def until(found: Callable[[], T | None], seconds: float = 60.0) -> T:
    """Poll until `found()` gives something (the bot's state changes without calling Slack)."""
    deadline = time.monotonic() + seconds
    while (result := found()) is None:
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
    return result


def ready(bot: Bot) -> Sent:
    """/readyz once it answers 200 (the bot's caches have synced)."""
    return until(lambda: answer if (answer := bot.get("/readyz")).status == 200 else None)


def new_channel() -> str:
    return "C" + uuid.uuid4().hex[:10].upper()


@dataclass(frozen=True)
class Sent:
    """The bot's HTTP answer to one request."""

    status: int
    body: str
    response_url: str = ""
    """The response_url the request carried (commands, interactions)."""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Bot:
    url: str
    slack: DevSlack
    process: subprocess.Popen[bytes]
    log: Path

    def send(
        self,
        body: str,
        content_type: str,
        headers: Mapping[str, str] | None = None,
        timestamp: int | None = None,
        secret: str = SECRET,
    ) -> Sent:
        all_headers = signed_headers(secret, body, content_type, timestamp) | dict(headers or {})
        request = urllib.request.Request(
            f"{self.url}/slack/events", body.encode(), all_headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return Sent(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            with error:
                return Sent(error.code, error.read().decode())

    def command(self, text: str, channel: str, command: str = "/triage", user: str = ONCALL) -> Sent:
        response_url = self.slack.response_url()
        body = command_body(command, text, channel=channel, user=user, response_url=response_url)
        return replace(self.send(body, FORM), response_url=response_url)

    def event(
        self, event: Mapping[str, Any], event_id: str | None = None, headers: Mapping[str, str] | None = None
    ) -> Sent:
        return self.send(event_body(event, event_id), JSON, headers)

    def mention(self, channel: str, text: str, thread_ts: str | None = None, user: str = ONCALL) -> str:
        """@kubewhy `text`, as a person's message in `channel` (in a thread if given); returns its ts."""
        ts = self.slack.post_as_user(channel, user, f"<@U0KUBEWHY> {text}", thread_ts=thread_ts)
        sent = self.event(mention_event(channel, user, text, ts, thread_ts))
        assert sent.status == 200, sent
        return ts

    def interact(self, payload: Mapping[str, Any]) -> Sent:
        sent = self.send(interaction_body(payload), FORM)
        return replace(sent, response_url=str(payload.get("response_url", "")))

    def get_quietly(self, path: str) -> int | None:
        try:
            return self.get(path).status
        except OSError:
            return None

    def get(self, path: str) -> Sent:
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=60) as response:
                return Sent(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            with error:
                return Sent(error.code, error.read().decode())

    # what the bot posted

    def verdict(self, channel: str, count: int = 1) -> Message:
        """The `count`-th top-level message the bot posted in `channel`, once it is there."""
        def posted() -> Message | None:
            found = self.bot_messages(channel)
            return found[count - 1] if len(found) >= count else None

        return self.slack.wait_for(posted)

    def bot_messages(self, channel: str) -> list[Message]:
        return [m for m in self.slack.channel_messages(channel) if m.bot_id]

    def thread(self, channel: str, ts: str, at_least: int = 1) -> list[Message]:
        """The replies in a thread, once there are `at_least` of them."""
        return self.slack.wait_for(_at_least(lambda: self.slack.thread(channel, ts), at_least))

    def responses(self, sent: Sent, at_least: int = 1) -> list[dict[str, Any]]:
        """What the bot posted to the response_url of the request `sent` (only its asker sees those)."""

        return self.slack.wait_for(
            _at_least(
                lambda: [r for r in self.slack.responses if r["_response_url"] == sent.response_url], at_least
            )
        )

    def ephemerals(self, channel: str, user: str = ONCALL, at_least: int = 1) -> list[Message]:
        """What the bot showed `user` alone in `channel` with chat.postEphemeral."""
        return self.slack.wait_for(
            _at_least(lambda: [m for m in self.slack.ephemerals(user) if m.channel == channel], at_least)
        )


def _at_least(items: Callable[[], list[T]], count: int) -> Callable[[], list[T] | None]:
    def enough() -> list[T] | None:
        found = items()
        return found if len(found) >= count else None

    return enough


@contextmanager
def running_bot(slack: DevSlack, folder: Path, config: Mapping[str, Any], **env: str) -> Iterator[Bot]:
    """`kubewhy serve` with `config` until the block ends; then SIGTERM, which must end it cleanly."""
    config_file = folder / "kubewhy.yaml"
    config_file.write_text(yaml.safe_dump(dict(config)))
    port = free_port()
    log = folder / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(KUBEWHY), "serve"],
            env=bot_env(slack, port, config_file, **env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    bot = Bot(f"http://127.0.0.1:{port}", slack, process, log)
    try:
        deadline = time.monotonic() + 30
        while bot.get_quietly("/healthz") != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kubewhy serve did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield bot
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        assert status == 0, f"kubewhy serve exited {status}:\n{log.read_text()}"


GPU_LAB = ROOT / "bot" / "demo" / "gpu-lab.json"
WATCH_SECONDS = 0.3
WATCH_MINUTES = 0.05
"""Watches in the tests: a re-check every 0.3 s, for up to 3 s."""


@dataclass
class World:
    """One `kubewhy serve` for the session, with its clusters:

    - `s0`, `s1`, …: an API simulator per corpus snapshot (`cluster_of[snapshot]`);
    - `lab`: the GPU lab (the default cluster);
    - `faulty`: the GPU lab again, for fault injection (`faulty.faults`);
    - `mutable`: the GPU lab again, whose objects tests change (`mutable.store`), restored after each;
    - `down`: a kubeconfig pointing at a port where nothing listens.
    """

    bot: Bot
    slack: DevSlack
    cluster_of: dict[Path, str]
    faulty: Simulator
    mutable: Simulator


def kubeconfig_for(server: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }


def verdict_payload(message: Message) -> dict[str, Any]:
    """The metadata payload of a verdict message, checked to be kubewhy's."""
    assert message.metadata is not None, message
    assert message.metadata["event_type"] == "kubewhy_verdict"
    payload: dict[str, Any] = message.metadata["event_payload"]
    return payload


def shown(message: Message | Mapping[str, Any]) -> str:
    """A message as Slack shows it."""
    raw = message.blocks if isinstance(message, Message) else message.get("blocks") or []
    return plain_text(raw)


def buttons(message: Message) -> dict[str, str]:
    """action_id → value of the message's buttons."""
    return {
        e["action_id"]: e["value"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]
    }


def texts_of(node: object) -> list[str]:
    if isinstance(node, dict):
        return [
            t for k, v in node.items() for t in ([v] if k == "text" and isinstance(v, str) else texts_of(v))
        ]
    if isinstance(node, list):
        return [t for item in node for t in texts_of(item)]
    return []


def assert_within_slack_limits(message: Message | SlackMessage) -> None:
    """What Slack accepts (Block Kit reference: 50 blocks, section text 3000, header 150, button value
    2000; about 13k characters in all, slackapi/bolt-js#2509), checked with slack_sdk's models and with
    Slack's numbers rather than the bot's own constants."""
    assert 1 <= len(message.blocks) <= 50
    assert sum(len(t) for t in texts_of(list(message.blocks))) <= 13_000
    for raw in message.blocks:
        block = Block.parse(raw)
        assert block is not None
        block.to_dict()  # raises past a per-field limit
        if raw["type"] == "header":
            assert len(raw["text"]["text"]) <= 150
        if raw["type"] == "section":
            assert len(raw["text"]["text"]) <= 3000
        for element in raw.get("elements", []):
            assert len(element.get("value", "")) <= 2000
    assert message.text
