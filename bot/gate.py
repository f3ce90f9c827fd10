"""The door of `/slack/events`: the signature and the timestamp are checked on the raw bytes before
anything is parsed, and a request that fails any check gets a 4xx and one log line.

The endpoint is public, so whoever can reach it can send anything. bolt parses the body before its
own signature check (`AsyncBoltRequest` decodes JSON and form fields in its constructor), so junk
(`{not json`, `payload=notjson`, a timestamp that is not a number, bytes that are not UTF-8) would
reach the parser unsigned and end as a 500 with a traceback. Here, Slack's signing scheme is applied
first (api.slack.com/authentication/verifying-requests-from-slack: `v0=HMAC-SHA256(secret,
"v0:{timestamp}:{body}")` over the raw body, compared in constant time, refused beyond five minutes
of skew); only a signed request is decoded and handed to bolt, which checks the signature again.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

log = logging.getLogger(__name__)

MAX_SKEW_SECONDS = 300
"""Slack's own bound between the request's timestamp and now (5 minutes)."""

MAX_BODY_BYTES = 1 << 20
"""Slack's requests are a few kilobytes (a command's text is capped at about 4,000 characters)."""

_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Refused(Exception):
    """Why a request is not let in, and its HTTP status."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def verify(secret: bytes, timestamp: str | None, signature: str | None, body: bytes, now: float) -> None:
    """Raise Refused (401) unless `body` is signed with `secret` at a timestamp within the skew."""
    if timestamp is None or signature is None:
        raise Refused(401, "no X-Slack-Request-Timestamp or X-Slack-Signature header")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise Refused(401, "X-Slack-Request-Timestamp is not a number of seconds")
    if abs(now - int(timestamp)) > MAX_SKEW_SECONDS:
        raise Refused(401, "X-Slack-Request-Timestamp is more than 5 minutes away (a replay?)")
    expected = "v0=" + hmac.new(secret, b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    if not (_SIGNATURE.fullmatch(signature) and hmac.compare_digest(expected, signature)):
        raise Refused(401, "the signature does not match (not signed with this app's signing secret)")


def bolt_request(request: web.Request, body: bytes) -> AsyncBoltRequest:
    """The signed body as bolt's request, or Refused (400) when it is not what Slack sends: UTF-8
    text holding a JSON object, or form fields (a `payload` field holding a JSON object)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(400, f"the body is not UTF-8 (byte {error.start})") from None
    try:
        parsed = AsyncBoltRequest(body=text, query=request.query_string, headers=dict(request.headers))
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as error:
        raise Refused(400, f"the body is not a Slack request ({type(error).__name__})") from None
    if not isinstance(parsed.body, dict):
        raise Refused(400, "the body is not a JSON object")
    return parsed


def slack_events(app: AsyncApp, signing_secret: str, clock: Callable[[], float] = time.time) -> Handler:
    """The aiohttp handler of `/slack/events`: verify, then dispatch to `app`."""
    secret = signing_secret.encode()

    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            if (request.content_length or 0) > MAX_BODY_BYTES:
                raise Refused(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
            body = await request.content.read(MAX_BODY_BYTES + 1)
            if len(body) > MAX_BODY_BYTES:
                raise Refused(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
            headers = request.headers
            stamp, signature = headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature")
            verify(secret, stamp, signature, body, clock())
            bolt = bolt_request(request, body)
        except Refused as refused:
            log.warning("refused a request to %s from %s: %s", request.path, request.remote, refused)
            return web.Response(status=refused.status, text=f"{refused}\n")
        return await to_aiohttp_response(await app.async_dispatch(bolt))

    return handle
