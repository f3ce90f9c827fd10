"""Reliability at the Slack edge: each request answered once, and in-flight work tracked so that a
shutdown (or `kubewhy ask`) can wait for it."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any


def request_key(body: Mapping[str, Any]) -> str | None:
    """What identifies one request across Slack's retries: the event id of an event, the trigger id of
    a command or interaction (Slack gives each invocation its own)."""
    key = body.get("event_id") or body.get("trigger_id")
    return str(key) if key else None


class SeenRequests:
    """Request keys seen in the last `ttl` seconds. Slack retries an event up to three times within
    about five minutes (immediately, ~1 min, ~5 min), so ten minutes covers every retry."""

    def __init__(
        self, ttl: float = 600.0, limit: int = 50_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._limit = limit
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, key: str) -> bool:
        """True the first time `key` is offered within the TTL; it is then remembered."""
        now = self._clock()
        while self._seen and (next(iter(self._seen.values())) < now or len(self._seen) > self._limit):
            self._seen.popitem(last=False)
        if key in self._seen:
            return False
        self._seen[key] = now + self._ttl
        return True


class Inflight:
    """Counts the answers being worked on: `async with inflight:` around each, `await drain()` to wait
    until none is left."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __aenter__(self) -> None:
        self._count += 1
        self._idle.clear()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._count -= 1
        if self._count == 0:
            self._idle.set()

    async def drain(self) -> None:
        """Wait until no answer is in flight (bound it with `asyncio.timeout`)."""
        await self._idle.wait()
