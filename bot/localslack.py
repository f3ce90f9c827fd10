"""A local Slack: the Web API and `response_url` answered on 127.0.0.1, and the slash command Slack
sends to an app, built and signed as Slack builds and signs it.

`kubewhy ask` runs the whole Slack pipeline in-process against it, so it needs no workspace or
internet. It records every call, answers `conversations.replies` and `conversations.history` from what
was posted (with message metadata, which `chat.update` rewrites), and rejects what real Slack rejects
(more than 50 blocks, a section over 3000 characters, a header over 150, a button value over 2000,
about 13k characters in all), so a message it accepts is one Slack would accept. The tests and
benchmarks use `devtools.slack.DevSlack`, which adds what only they need: people posting, Socket Mode,
injected failures and the other requests Slack sends.

The server runs on its own event loop in a thread, so the code under test (a subprocess, or the
caller's own event loop) reaches it over real HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar
from urllib.parse import parse_qsl, urlencode

from aiohttp import web
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from bot.blocks import MAX_BLOCKS, text_chars

TEAM_ID = "T0LOCAL"
BOT_USER_ID = "U0KUBEWHY"
BOT_ID = "B0KUBEWHY"
APP_ID = "A0KUBEWHY"

SLACK_BLOCK_CHARS = 13_200
"""Slack answers `msg_blocks_too_long` past about this many characters of block text in one message,
although no documented per-block limit is exceeded (slackapi/bolt-js#2509)."""

T = TypeVar("T")


@dataclass
class Message:
    """A message as Slack stores it: posted by the bot (`bot_id`), by a person (`user`), or shown to one
    person only (`ephemeral_to`)."""

    channel: str
    ts: str
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    metadata: dict[str, Any] | None = None
    user: str | None = None
    bot_id: str | None = None
    ephemeral_to: str | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)

    def as_api(self, with_metadata: bool) -> dict[str, Any]:
        """The message as the Web API returns it."""
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text}
        for key in ("blocks", "attachments"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        for key in ("thread_ts", "user", "bot_id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if with_metadata and self.metadata is not None:
            out["metadata"] = self.metadata
        return out


@dataclass(frozen=True)
class Call:
    """One request received: a Web API method, `response_url`, or a Socket Mode acknowledgement."""

    method: str
    args: Mapping[str, Any]
    status: int


def block_problem(blocks: object) -> str | None:
    """The error real Slack gives for these blocks, or None if it would accept them."""
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return "invalid_blocks"
    for raw in blocks:
        block = Block.parse(raw) if isinstance(raw, dict) else None
        if block is None:
            return "invalid_blocks"
        try:
            block.to_dict()  # slack_sdk checks Slack's per-field limits here
        except SlackObjectFormationError:
            return "invalid_blocks"
    if text_chars(blocks) > SLACK_BLOCK_CHARS:
        return "msg_blocks_too_long"
    return None


class LocalSlack:
    """Slack's side of the conversation, on 127.0.0.1. Use as a context manager (`with LocalSlack() as
    slack:`); `slack.api_url` is the Web API base URL to give the bot."""

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-local-kubewhy",
        usergroups: Mapping[str, list[str]] | None = None,
    ) -> None:
        self.bot_token = bot_token
        self.usergroups = dict(usergroups or {})
        self.calls: list[Call] = []
        self.messages: list[Message] = []
        self.responses: list[dict[str, Any]] = []
        """JSON bodies posted to response URLs, each with `_response_url` naming which."""
        self._changed = threading.Condition()
        self._ts = itertools.count(int(time.time()) * 1_000_000)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ---- lifecycle

    def __enter__(self) -> Self:
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), name="local-slack", daemon=True)
        self._thread.start()
        if not started.wait(10) or not self.port:
            raise RuntimeError("the local Slack server did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None and self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        app.add_routes(self._routes())
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else 0
        started.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.route("*", "/api/{method}", self._api),
            web.post("/response/{name}", self._response_url),
        ]

    async def _shutdown(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    def response_url(self) -> str:
        """A fresh response URL, as Slack puts in each command and interaction payload."""
        return f"{self.url}/response/{uuid.uuid4().hex}"

    # ---- what tests and `ask` read

    def wait_for(self, predicate: Callable[[], T | None], timeout: float = 60.0) -> T:
        """Wait until `predicate()` is truthy (re-checked at every call received) and return it."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not (result := predicate()):
                left = deadline - time.monotonic()
                if left <= 0:
                    methods = [c.method for c in self.calls]
                    raise TimeoutError(f"local Slack: condition not met after {timeout}s; calls: {methods}")
                self._changed.wait(left)
            return result

    def channel_messages(self, channel: str) -> list[Message]:
        """Top-level messages of a channel visible to everyone, oldest first."""
        return [
            m
            for m in self.messages
            if m.channel == channel and m.thread_ts in (None, m.ts) and m.ephemeral_to is None
        ]

    def thread(self, channel: str, ts: str) -> list[Message]:
        """The replies of a thread visible to everyone (not its parent), oldest first."""
        return [
            m
            for m in self.messages
            if m.channel == channel and m.thread_ts == ts and m.ts != ts and m.ephemeral_to is None
        ]

    def ephemerals(self, user: str | None = None) -> list[Message]:
        return [m for m in self.messages if m.ephemeral_to is not None and user in (None, m.ephemeral_to)]

    def find(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self.messages if m.channel == channel and m.ts == ts), None)

    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # ---- the server

    def _next_ts(self) -> str:
        micro = next(self._ts)
        return f"{micro // 1_000_000}.{micro % 1_000_000:06d}"

    def _record(self, call: Call, *changes: Callable[[], None]) -> None:
        with self._changed:
            for change in changes:
                change()
            self.calls.append(call)
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            raw = await request.text()
            if request.content_type == "application/json":
                args.update(json.loads(raw or "{}"))
            else:
                args.update(parse_qsl(raw))
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or args.get("token", "")
        return self._answer(method, args, token)

    def _answer(self, method: str, args: dict[str, Any], token: str) -> web.Response:
        """The answer to one Web API call, recorded."""
        if token != self._token_for(method):
            body: dict[str, Any] = {"ok": False, "error": "invalid_auth"}
        else:
            handler = getattr(self, "_m_" + method.replace(".", "_"), None)
            body = handler(args) if handler else {"ok": False, "error": "unknown_method"}
        self._record(Call(method, args, 200))
        return web.json_response(body)

    def _token_for(self, method: str) -> str | None:
        """The token a method must be called with."""
        return self.bot_token

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://local.slack.invalid/",
            "team": "local",
            "user": "kubewhy",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _posted(self, args: dict[str, Any], **fields: Any) -> Message | dict[str, Any]:
        """A Message from the arguments of a posting method, or the error Slack would answer."""
        blocks = args.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if not args.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not args.get("text") and not blocks:
            return {"ok": False, "error": "no_text"}
        if problem := block_problem(blocks):
            return {"ok": False, "error": problem}
        metadata = args.get("metadata")
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        return Message(
            args["channel"],
            self._next_ts(),
            args.get("text") or "",
            blocks,
            thread_ts=args.get("thread_ts") or None,
            metadata=metadata,
            **fields,
        )

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._posted(args, bot_id=BOT_ID, user=BOT_USER_ID)
        if isinstance(message, dict):
            return message
        with self._changed:
            self.messages.append(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": message.as_api(True)}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        message = self._posted(args, bot_id=BOT_ID, ephemeral_to=args["user"])
        if isinstance(message, dict):
            return message
        with self._changed:
            self.messages.append(message)
        return {"ok": True, "message_ts": message.ts}

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        old = self.find(args.get("channel", ""), args.get("ts", ""))
        if old is None or old.ephemeral_to is not None:
            return {"ok": False, "error": "message_not_found"}
        if old.bot_id != BOT_ID:
            return {"ok": False, "error": "cant_update_message"}
        new = self._posted(args | {"thread_ts": old.thread_ts}, bot_id=BOT_ID, user=BOT_USER_ID)
        if isinstance(new, dict):
            return new
        with self._changed:
            old.text, old.blocks = new.text, new.blocks
            if "metadata" in args:
                old.metadata = new.metadata
        return {"ok": True, "channel": old.channel, "ts": old.ts, "text": old.text}

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        parent = self.find(args.get("channel", ""), args.get("ts", ""))
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        root = parent.thread_ts or parent.ts
        thread = [
            m
            for m in self.messages
            if m.channel == parent.channel
            and m.ephemeral_to is None
            and (m.ts == root or m.thread_ts == root)
        ]
        start = int(args.get("cursor") or 0)
        limit = int(args.get("limit") or 1000)
        page = thread[start : start + limit]
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        more = start + limit < len(thread)
        return {
            "ok": True,
            "messages": [m.as_api(with_metadata) for m in page],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _m_conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        """A channel's top-level messages, newest first, between `oldest` and `latest` (exclusive
        unless `inclusive`), in pages of `limit` (Slack's default 100)."""
        channel = args.get("channel", "")
        oldest, latest = float(args.get("oldest") or 0), float(args.get("latest") or "inf")
        inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")

        def within(ts: str) -> bool:
            at = float(ts)
            return oldest <= at <= latest if inclusive else oldest < at < latest

        with self._changed:
            found = [m for m in reversed(self.channel_messages(channel)) if within(m.ts)]
        start = int(args.get("cursor") or 0)
        limit = int(args.get("limit") or 100)
        more = start + limit < len(found)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        return {
            "ok": True,
            "messages": [m.as_api(with_metadata) for m in found[start : start + limit]],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _m_usergroups_users_list(self, args: dict[str, Any]) -> dict[str, Any]:
        group = args.get("usergroup", "")
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[group]}

    async def _response_url(self, request: web.Request) -> web.Response:
        body = await request.json()
        self._record(
            Call("response_url", body, 200),
            lambda: self.responses.append(body | {"_response_url": str(request.url)}),
        )
        return web.Response(text="ok")


# ---- requests Slack sends to an app


def signed_headers(
    signing_secret: str, body: str, content_type: str, timestamp: int | None = None
) -> dict[str, str]:
    """Headers Slack sends with `body`: `v0=HMAC-SHA256(secret, "v0:{timestamp}:{body}")`."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(signing_secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


FORM = "application/x-www-form-urlencoded"


def command_body(command: str, text: str, *, channel: str, user: str, response_url: str) -> str:
    """A slash command invocation, form-encoded as Slack posts it over HTTP."""
    fields = {
        "token": "unused-verification-token",
        "team_id": TEAM_ID,
        "team_domain": "local",
        "channel_id": channel,
        "channel_name": "oncall",
        "user_id": user,
        "user_name": user.lower(),
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id(),
    }
    return urlencode(fields)


def trigger_id() -> str:
    """A fresh trigger id, as Slack puts in each request a person starts."""
    return f"{uuid.uuid4().int % 10**12}.{TEAM_ID}.local"
