"""Follow-ups in a verdict's thread: finding the verdict from Slack alone, re-checking, and watches.

The thread's verdict is read back from Slack (`conversations.replies` with metadata), not from memory,
so a restarted bot still follows up. Watches are the only state: asyncio tasks that end on their own
(settled verdict, time limit), on `@kubewhy stop`, or at shutdown, each with a last line in its thread.

With two replicas, a mention reaches either. So each line that starts or ends a watch carries a marker
in its message metadata (`WATCH_EVENT`): a replica asked to watch a thread another one already watches
says so instead of starting a second watch, and one asked to stop a watch it does not run posts a
`stop` marker, which the replica running it reads at its next re-check and ends the watch with the
usual line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import blocks, messages
from bot.answers import Poster, VerdictMeta
from bot.blocks import escape, note
from bot.checks import Check
from bot.settings import WatchConfig
from handlers.requests import Target

log = logging.getLogger(__name__)

MAX_WATCHES = 20
"""Each watch reads the cluster every interval; this bounds the load a busy incident can cause."""

SCAN_LIMIT = 200
"""Replies read when looking for the latest verdict in a thread the bot did not start."""

WATCH_EVENT = "kubewhy_watch"
"""The metadata event type of the lines that start (`watching`, with `until`), ask to stop (`stop`,
with `by`) or end (`ended`) a watch."""


def watch_marker(state: str, **fields: str | float) -> dict[str, Any]:
    return {"event_type": WATCH_EVENT, "event_payload": {"state": state, **fields}}


async def last_watch_marker(
    client: AsyncWebClient, channel: str, thread_ts: str, bot_id: str | None
) -> dict[str, Any] | None:
    """The payload of the newest watch marker the bot posted in the thread, if any."""
    thread = await client.conversations_replies(
        channel=channel, ts=thread_ts, include_all_metadata=True, limit=SCAN_LIMIT
    )
    for message in reversed(thread.get("messages") or []):
        metadata = message.get("metadata") or {}
        if message.get("bot_id") == bot_id and metadata.get("event_type") == WATCH_EVENT:
            payload: dict[str, Any] = metadata.get("event_payload") or {}
            return payload
    return None


async def watched_elsewhere(client: AsyncWebClient, channel: str, thread_ts: str, bot_id: str | None) -> bool:
    """The thread's newest marker is a watch that has not ended nor passed its time limit."""
    marker = await last_watch_marker(client, channel, thread_ts, bot_id)
    return (
        marker is not None
        and marker.get("state") == "watching"
        and float(marker.get("until", 0)) > time.time()
    )


@dataclass(frozen=True)
class Found:
    """A verdict message: what it is about and said, and its ts (the message to update)."""

    meta: VerdictMeta
    ts: str


async def find_verdict(
    client: AsyncWebClient, channel: str, thread_ts: str, bot_id: str | None
) -> Found | None:
    """The thread's latest kubewhy verdict: its parent when kubewhy started the thread (one message
    read), else the newest verdict the bot posted in it (an alert's thread). Only the bot's own messages
    are trusted."""

    def ours(message: dict[str, Any]) -> VerdictMeta | None:
        return VerdictMeta.from_message(message) if message.get("bot_id") == bot_id else None

    first = await client.conversations_replies(
        channel=channel, ts=thread_ts, include_all_metadata=True, limit=1
    )
    parent = (first.get("messages") or [{}])[0]
    if meta := ours(parent):
        return Found(meta, parent["ts"])
    if not first.get("has_more"):
        return None
    thread = await client.conversations_replies(
        channel=channel, ts=thread_ts, include_all_metadata=True, limit=SCAN_LIMIT
    )
    for message in reversed(thread.get("messages") or []):
        if meta := ours(message):
            return Found(meta, message["ts"])
    return None


async def post_change(poster: Poster, channel: str, thread_ts: str, found: Found, check: Check) -> None:
    """Update the verdict message to `check` and say in the thread what changed since it."""
    await poster.update(channel, found.ts, check)
    if check.verdict == found.meta.verdict:
        await poster.say(channel, thread_ts, note(messages.unchanged(check.verdict)))
        return
    await poster.say(
        channel, thread_ts, note(messages.changed(found.meta.verdict, check.verdict, escape(check.summary)))
    )
    await poster.details(channel, thread_ts, check)


@dataclass
class _Watch:
    target: Target
    until: float
    """When it ends by itself (epoch seconds)."""
    bot_id: str | None
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    last_line: str = ""
    task: asyncio.Task[None] | None = None


class Watches:
    """Re-checks of a thread's target every `interval_seconds`, posting only when the verdict changes."""

    def __init__(
        self,
        poster: Poster,
        check: Callable[[Target], Awaitable[Check]],
        config: WatchConfig,
        client: AsyncWebClient,
    ) -> None:
        self._poster = poster
        self._client = client
        self._check = check
        self._config = config
        self._watches: dict[tuple[str, str], _Watch] = {}

    def marker(self, channel: str, thread_ts: str) -> dict[str, Any] | None:
        """The metadata of a line about the thread's watch, when this replica runs one there."""
        watch = self._watches.get((channel, thread_ts))
        return watch_marker("watching", until=watch.until) if watch is not None else None

    def start(
        self, channel: str, thread_ts: str, found: Found, bot_id: str | None, until: float | None = None
    ) -> str:
        """Start watching in this thread (until `until`, or for `watch.max_minutes`); returns the line
        to post."""
        what = str(found.meta.target)
        if (channel, thread_ts) in self._watches:
            return messages.watch_already(what)
        if len(self._watches) >= MAX_WATCHES:
            return messages.too_many_watches(MAX_WATCHES)
        watch = _Watch(found.meta.target, until or time.time() + self._config.max_minutes * 60, bot_id)
        self._watches[channel, thread_ts] = watch
        watch.task = asyncio.create_task(self._run(channel, thread_ts, found, watch), name=f"watch {what}")
        watch.task.add_done_callback(_log_failure)
        return messages.watch_started(what, self._config.interval_seconds, self._config.max_minutes)

    def carried(self) -> str:
        """This replica's watches (their threads), as the Lease carries them (`cluster.lease.CARRIED`)
        for the replica that takes over if this one dies."""
        return json.dumps(sorted(self._watches))

    async def inherit(self, carried: str, bot_id: str | None) -> None:
        """Resume the watches a replica that died was running (`carried`), each whose thread's newest
        marker still says it watches, until the time it was given, with a line in its thread."""
        try:
            threads = [(str(c), str(t)) for c, t in json.loads(carried)]
        except (ValueError, TypeError):
            log.warning("ignoring the watches carried by the Lease: %.100s", carried)
            return
        for channel, thread_ts in threads:
            marker = await last_watch_marker(self._client, channel, thread_ts, bot_id)
            if (
                marker is None
                or marker.get("state") != "watching"
                or float(marker.get("until", 0)) <= time.time()
            ):
                continue
            found = await find_verdict(self._client, channel, thread_ts, bot_id)
            if found is not None:
                self.start(channel, thread_ts, found, bot_id, float(marker["until"]))
                line = messages.watch_resumed(str(found.meta.target))
                await self._poster.say(channel, thread_ts, blocks.note(line), self.marker(channel, thread_ts))

    def stop(self, channel: str, thread_ts: str, user: str) -> bool:
        """End the thread's watch (its last line names who stopped it); False if there is none."""
        watch = self._watches.get((channel, thread_ts))
        if watch is None:
            return False
        watch.last_line = messages.watch_stopped(str(watch.target), user)
        watch.stopping.set()
        return True

    async def close(self) -> None:
        """End every watch with a line in its thread (at shutdown), and wait for them to post it."""
        for watch in self._watches.values():
            watch.last_line = messages.watch_shutdown(str(watch.target))
            watch.stopping.set()
        await asyncio.gather(
            *(w.task for w in list(self._watches.values()) if w.task), return_exceptions=True
        )

    async def _run(self, channel: str, thread_ts: str, found: Found, watch: _Watch) -> None:
        loop = asyncio.get_running_loop()
        interval = self._config.interval_seconds
        deadline = loop.time() + watch.until - time.time()
        what = str(watch.target)
        try:
            while True:
                check = await self._check(watch.target)
                if check.verdict != found.meta.verdict:
                    await post_change(self._poster, channel, thread_ts, found, check)
                    found = Found(VerdictMeta.of(check) or found.meta, found.ts)
                if check.settled:
                    watch.last_line = messages.watch_settled(what, check.verdict)
                    break
                if loop.time() + interval > deadline:
                    watch.last_line = messages.watch_timed_out(what, self._config.max_minutes, check.verdict)
                    break
                try:
                    await asyncio.wait_for(watch.stopping.wait(), interval)
                    break
                except TimeoutError:
                    pass
                marker = await last_watch_marker(self._client, channel, thread_ts, watch.bot_id)
                if marker is not None and marker.get("state") == "stop":  # asked on another replica
                    watch.last_line = messages.watch_stopped(what, str(marker.get("by", "")))
                    break
            await self._poster.say(channel, thread_ts, blocks.note(watch.last_line), watch_marker("ended"))
        finally:
            del self._watches[channel, thread_ts]


def _log_failure(task: asyncio.Task[None]) -> None:
    """A watch runs outside any request, so bolt's error handler never sees its failure: log it here."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("%s failed", task.get_name(), exc_info=error)
