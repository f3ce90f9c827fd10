"""The local Slack as the tests and benchmarks use it: `bot.localslack.LocalSlack` plus what only they
need, and the other requests Slack sends to an app.

`DevSlack` adds people posting in channels (`post_as_user`), Socket Mode (`apps.connections.open`, a
WebSocket that delivers envelopes with `socket_send` and records the app's acknowledgements in
`socket_acks`), and injected failures: a method answered with 429 and Retry-After, as Slack's rate
limiter does (`rate_limit`), or with `{"ok": false}` (`fail`). The payload builders make the Events
API callbacks, interactions and Socket Mode payloads Slack sends, shaped as its docs show them.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import WSMsgType, web

from bot.localslack import APP_ID, BOT_USER_ID, TEAM_ID, Call, LocalSlack, Message, command_body, trigger_id

JSON = "application/json"


@dataclass
class _Fault:
    """The next `remaining` calls of `method` (about `channel`, if given) fail with `status`/`error`."""

    method: str
    channel: str | None
    remaining: int
    status: int
    error: str
    headers: dict[str, str] = field(default_factory=dict)

    def spoils(self, method: str, args: Mapping[str, Any]) -> bool:
        return self.remaining > 0 and method == self.method and self.channel in (None, args.get("channel"))


class DevSlack(LocalSlack):
    """The local Slack with people, Socket Mode and injected failures. `app_token`: the token Socket Mode
    connects with (`apps.connections.open`)."""

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-local-kubewhy",
        app_token: str | None = None,
        usergroups: Mapping[str, list[str]] | None = None,
    ) -> None:
        super().__init__(bot_token=bot_token, usergroups=usergroups)
        self.app_token = app_token
        self.socket_acks: dict[str, dict[str, Any]] = {}
        """The app's Socket Mode acknowledgements, by envelope id."""
        self._faults: list[_Fault] = []
        self._sockets: list[web.WebSocketResponse] = []

    # ---- what tests do as people, or as Slack

    def post_as_user(
        self,
        channel: str,
        user: str,
        text: str,
        thread_ts: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> str:
        """A person's (or an alerting integration's) message; returns its ts."""
        message = Message(
            channel, self._next_ts(), text, thread_ts=thread_ts, user=user, attachments=attachments or []
        )
        with self._changed:
            self.messages.append(message)
            self._changed.notify_all()
        return message.ts

    def rate_limit(
        self, method: str, times: int = 1, retry_after: int = 1, channel: str | None = None
    ) -> None:
        """Answer the next `times` calls of `method` (about `channel`, if given) with 429 and
        `Retry-After: retry_after`."""
        self._add_fault(_Fault(method, channel, times, 429, "ratelimited", {"Retry-After": str(retry_after)}))

    def fail(
        self, method: str, error: str = "internal_error", times: int = 1, channel: str | None = None
    ) -> None:
        """Answer the next `times` calls of `method` (about `channel`, if given) with
        `{"ok": false, "error": error}`."""
        self._add_fault(_Fault(method, channel, times, 200, error))

    def socket_send(self, envelope_type: str, payload: dict[str, Any]) -> str:
        """Deliver a request over Socket Mode to the connected app; returns the envelope id, under which
        the app's acknowledgement lands in `socket_acks`."""
        envelope_id = uuid.uuid4().hex
        envelope = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": payload,
            "accepts_response_payload": envelope_type != "events_api",
            "retry_attempt": 0,
        }
        ws = self.wait_for(lambda: self._sockets[-1] if self._sockets else None)
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(ws.send_str(json.dumps(envelope)), self._loop).result(10)
        return envelope_id

    # ---- the server

    def _add_fault(self, fault: _Fault) -> None:
        with self._changed:
            self._faults.append(fault)

    def _routes(self) -> list[web.RouteDef]:
        return [*super()._routes(), web.get("/socket", self._socket)]

    async def _shutdown(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        await super()._shutdown()

    def _answer(self, method: str, args: dict[str, Any], token: str) -> web.Response:
        with self._changed:
            fault = next((f for f in self._faults if f.spoils(method, args)), None)
            if fault:
                fault.remaining -= 1
                self.calls.append(Call(method, args, fault.status))
                self._changed.notify_all()
                return web.json_response(
                    {"ok": False, "error": fault.error}, status=fault.status, headers=fault.headers
                )
        return super()._answer(method, args, token)

    def _token_for(self, method: str) -> str | None:
        return self.app_token if method == "apps.connections.open" else super()._token_for(method)

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(
            json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": APP_ID}})
        )
        with self._changed:
            self._sockets.append(ws)
            self._changed.notify_all()
        async for frame in ws:
            if frame.type == WSMsgType.TEXT:
                ack: dict[str, Any] = json.loads(frame.data)
                self._record(
                    Call("socket_ack", ack, 200),
                    partial(self.socket_acks.__setitem__, ack.get("envelope_id", ""), ack),
                )
        with self._changed:
            self._sockets.remove(ws)
        return ws


# ---- requests Slack sends to an app


def command_payload(command: str, text: str, *, channel: str, user: str, response_url: str) -> dict[str, str]:
    """A slash command invocation's fields (the payload of a Socket Mode `slash_commands` envelope)."""
    body = command_body(command, text, channel=channel, user=user, response_url=response_url)
    return dict(parse_qsl(body, keep_blank_values=True))


def event_body(event: Mapping[str, Any], event_id: str | None = None) -> str:
    """An Events API callback around `event`."""
    return json.dumps(
        {
            "token": "unused-verification-token",
            "team_id": TEAM_ID,
            "api_app_id": APP_ID,
            "event": dict(event),
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
        }
    )


def mention_event(
    channel: str, user: str, text: str, ts: str, thread_ts: str | None = None
) -> dict[str, Any]:
    """An `app_mention` event: `text` is what follows the bot's mention."""
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    return event | ({"thread_ts": thread_ts} if thread_ts else {})


def interaction_body(payload: Mapping[str, Any]) -> str:
    """An interactivity request (block action, shortcut), form-encoded with a `payload` field."""
    return urlencode({"payload": json.dumps(dict(payload))})


def block_action(
    message: Message, action_id: str, value: str, *, user: str, response_url: str
) -> dict[str, Any]:
    """A click on a button of `message`."""
    container = {
        "type": "message",
        "message_ts": message.ts,
        "channel_id": message.channel,
        "is_ephemeral": message.ephemeral_to is not None,
    }
    if message.thread_ts:
        container["thread_ts"] = message.thread_ts
    return {
        "type": "block_actions",
        "team": {"id": TEAM_ID, "domain": "local"},
        "api_app_id": APP_ID,
        "user": {"id": user, "team_id": TEAM_ID},
        "channel": {"id": message.channel, "name": "oncall"},
        "container": container,
        "message": message.as_api(False),
        "response_url": response_url,
        "trigger_id": trigger_id(),
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "verdict",
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def message_shortcut(message: Message, callback_id: str, *, user: str, response_url: str) -> dict[str, Any]:
    """The message shortcut `callback_id` run on `message`."""
    return {
        "type": "message_action",
        "callback_id": callback_id,
        "team": {"id": TEAM_ID, "domain": "local"},
        "user": {"id": user, "team_id": TEAM_ID},
        "channel": {"id": message.channel, "name": "oncall"},
        "message": message.as_api(False),
        "message_ts": message.ts,
        "response_url": response_url,
        "trigger_id": trigger_id(),
        "action_ts": f"{time.time():.6f}",
    }
