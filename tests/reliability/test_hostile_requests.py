"""Malformed and hostile HTTP requests to `/slack/events`, the bot's public door: each gets a 4xx and
exactly one line in the log (no traceback), and nothing is posted."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping

import pytest

from bot.localslack import FORM, command_body
from devtools.botenv import SECRET
from devtools.slack import JSON
from tests.reliability.conftest import Rig
from tests.slack.support import ONCALL, new_channel


def signed(body: bytes, content_type: str, stamp: str | None = None, secret: str = SECRET) -> dict[str, str]:
    stamp = str(int(time.time())) if stamp is None else stamp
    digest = hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


def post(url: str, body: bytes, headers: Mapping[str, str]) -> int:
    request = urllib.request.Request(f"{url}/slack/events", body, dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        with error:
            return error.code


COMMAND = command_body(
    "/triage", "ml-train llama-ft-0-x7k2p", channel="C0HOSTILE", user=ONCALL, response_url=""
).encode()
Headers = Callable[[bytes], dict[str, str]]
"""The headers of a body, made when it is sent (a signature is valid for five minutes)."""


def as_signed(content_type: str, stamp: Callable[[int], str] = str) -> Headers:
    return lambda body: signed(body, content_type, stamp(int(time.time())))


def unsigned(content_type: str, **headers: str) -> Headers:
    return lambda body: {"Content-Type": content_type, **headers}


CASES: list[tuple[str, bytes, Headers, int]] = [
    ("unsigned {not json as JSON", b"{not json", unsigned(JSON), 401),
    ("unsigned payload=notjson", b"payload=notjson", unsigned(FORM), 401),
    ("unsigned invalid UTF-8", b"\xff\xfe{\x80", unsigned(JSON), 401),
    ("unsigned empty body", b"", unsigned(FORM), 401),
    (
        "non-numeric timestamp",
        b"{not json",
        unsigned(JSON, **{"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=" + "0" * 64}),
        401,
    ),
    ("timestamp in the future", COMMAND, as_signed(FORM, lambda now: str(now + 3600)), 401),
    ("stale timestamp", COMMAND, as_signed(FORM, lambda now: str(now - 600)), 401),
    ("negative timestamp", COMMAND, as_signed(FORM, lambda now: "-1"), 401),
    ("huge timestamp", COMMAND, as_signed(FORM, lambda now: "9" * 400), 401),
    ("timestamp in float notation", COMMAND, as_signed(FORM, lambda now: f"{now:.3e}"), 401),
    ("signature of another app", COMMAND, lambda body: signed(body, FORM, secret="other-app"), 401),
    (
        "signature not v0",
        COMMAND,
        lambda body: signed(body, FORM) | {"X-Slack-Signature": "v1=" + "a" * 64},
        401,
    ),
    (
        "no signature header",
        COMMAND,
        lambda body: {"Content-Type": FORM, "X-Slack-Request-Timestamp": str(int(time.time()))},
        401,
    ),
    ("signed {not json", b"{not json", as_signed(JSON), 400),
    ("signed payload=notjson", b"payload=notjson", as_signed(FORM), 400),
    ("signed invalid UTF-8", b'{"a": "\xff"}', as_signed(JSON), 400),
    ("signed JSON list", b"[1, 2]", as_signed(JSON), 400),
    ("signed payload holding a list", b"payload=%5B1%5D", as_signed(FORM), 400),
    ("signed JSON string", b'"x"', as_signed(JSON), 400),
    ("2 MB body", b"x" * (2 << 20), as_signed(FORM), 413),
]


@pytest.mark.parametrize(("body", "headers", "status"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_with_a_4xx_and_one_log_line(rig: Rig, body: bytes, headers: Headers, status: int) -> None:
    before = rig.bot.log.read_text().splitlines()
    posts = len(rig.slack.calls)
    assert post(rig.bot.url, body, headers(body)) == status
    added = rig.bot.log.read_text().splitlines()[len(before) :]
    assert len(added) == 1, added
    assert "refused a request to /slack/events" in added[0]
    assert len(added[0]) < 400
    assert len(rig.slack.calls) == posts


def test_a_flood_of_junk_costs_one_short_line_each(rig: Rig) -> None:
    before = rig.bot.log.read_bytes()
    for number in range(200):
        body = json.dumps({"junk": number}).encode()[:-1]
        assert post(rig.bot.url, body, {"Content-Type": JSON}) == 401
    added = rig.bot.log.read_bytes()[len(before) :]
    assert added.count(b"\n") == 200
    assert len(added) < 200 * 200
    assert b"Traceback" not in added


def test_a_signed_command_still_gets_in(rig: Rig) -> None:
    channel = new_channel()
    sent = rig.bot.command("ml-train llama-ft-0-x7k2p", channel)
    assert sent.status == 200
    assert rig.bot.verdict(channel)
