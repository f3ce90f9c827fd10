"""The bolt listeners: slash commands, mentions, buttons, the message shortcut, and the one error
handler. Each is a short sequence: parse, acknowledge, authorize, check, post.

Commands and interactions are acknowledged before any cluster read (Slack's 3-second rule); the work
continues in the same coroutine, which bolt runs after sending the acknowledgement.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import checks, messages
from bot.access import Access
from bot.answers import Place, Poster, VerdictMeta
from bot.blocks import escape, note
from bot.checks import Checker
from bot.clusters import Clusters
from bot.edge import Inflight, SeenRequests, request_key
from bot.metrics import Metrics
from bot.sentinel import Sentinel
from bot.settings import Config
from bot.threads import Found, Watches, find_verdict, post_change, watch_marker, watched_elsewhere
from handlers.requests import (
    Explain,
    FollowUp,
    Help,
    Target,
    UsageError,
    find_in_alert,
    parse_jobset,
    parse_mention,
    parse_triage,
    parse_why,
)

log = logging.getLogger(__name__)

Body = Mapping[str, Any]


@dataclass(frozen=True)
class Deps:
    """Everything the listeners use, built once by `bot.app.assemble` and passed in."""

    config: Config
    client: AsyncWebClient
    clusters: Clusters
    access: Access
    check: Checker
    poster: Poster
    watches: Watches
    metrics: Metrics
    seen: SeenRequests
    inflight: Inflight
    sentinel: Sentinel


class Listeners:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    # ---- the edge: request ids, and each request answered once

    async def edge(
        self,
        body: Body,
        context: AsyncBoltContext,
        logger: logging.Logger,
        next: Callable[[], Awaitable[None]],
    ) -> BoltResponse | None:
        """Give the request an id for the logs, and drop Slack's retries of a request already taken
        (`X-Slack-Retry-Num`, or the same event delivered twice)."""
        context["request_id"] = uuid.uuid4().hex[:12]
        key = request_key(body)
        if key is not None and not self.deps.seen.first_time(key):
            logger.info("request %s: %s was already taken; dropping the repeat", context["request_id"], key)
            return BoltResponse(status=200, body="")
        await next()
        return None

    # ---- slash commands

    async def triage_command(self, ack: AsyncAck, command: Body, respond: AsyncRespond) -> None:
        await self._command("/triage", parse_triage, ack, command, respond)

    async def jobset_command(self, ack: AsyncAck, command: Body, respond: AsyncRespond) -> None:
        await self._command("/jobset", parse_jobset, ack, command, respond)

    async def why_command(self, ack: AsyncAck, command: Body, respond: AsyncRespond) -> None:
        await self._command("/why", parse_why, ack, command, respond)

    async def _command(
        self,
        name: str,
        parse: Callable[[str], Target | Explain | Help],
        ack: AsyncAck,
        command: Body,
        respond: AsyncRespond,
    ) -> None:
        async with self.deps.inflight:  # entered before the ack, so `kubewhy ask` can wait for the answer
            started = time.monotonic()
            verdict = await self._acknowledged(parse, ack, command, respond)
            self.deps.metrics.answered(name, verdict, time.monotonic() - started)

    async def _acknowledged(
        self,
        parse: Callable[[str], Target | Explain | Help],
        ack: AsyncAck,
        command: Body,
        respond: AsyncRespond,
    ) -> str:
        """Parse and acknowledge at once (help and usage errors are the acknowledgement), then answer."""
        try:
            request = parse(command.get("text", ""))
        except UsageError as error:
            await ack(text=messages.usage(escape(error.problem), error.topic))
            return "usage"
        if isinstance(request, Help):
            await ack(text=messages.USAGE[request.topic])
            return "help"
        await ack(
            text=messages.checking(str(request)) if isinstance(request, Target) else messages.explaining()
        )
        channel = command["channel_id"]
        # A direct message has no room for a thread the bot may post in (app_mention is not sent there
        # either): the answer goes to the asker alone, with a line saying where threads work.
        direct = channel.startswith("D")
        place = Place(
            channel,
            command["user_id"],
            ephemeral=direct or self.deps.config.channel(channel).ephemeral,
            respond=respond,
        )
        if direct:
            await self.deps.poster.personal(place, note(messages.direct_message()))
        return await self._answer(place, request)

    async def _answer(self, place: Place, request: Target | Explain) -> str:
        """Authorize, check and post; returns the verdict word for the metrics."""
        async with self.deps.inflight:
            if isinstance(request, Target):
                allowed: Target | Explain | str = await self._resolved(place, request)
            else:
                allowed = await self.deps.access.refusal(place.channel, place.user, None) or request
            if isinstance(allowed, str):
                return await self._refuse(place, allowed)
            check = (
                await self.deps.check(allowed)
                if isinstance(allowed, Target)
                else checks.explain(allowed.message)
            )
            await self.deps.poster.answer(place, check)
            return check.verdict

    async def _resolved(self, place: Place, target: Target) -> Target | str:
        """The target with its cluster named, or why it is refused. Asked before every read: buttons
        and follow-ups can come from anyone in the channel."""
        resolved = self.deps.clusters.resolve(target, place.channel)
        if isinstance(resolved, str):
            return resolved
        return await self.deps.access.refusal(place.channel, place.user, resolved) or resolved

    async def _refuse(self, place: Place, why: str) -> str:
        await self.deps.poster.personal(place, note(f":no_entry: {why}"))
        return "refused"

    # ---- mentions

    async def mention(self, event: Body, context: AsyncBoltContext) -> None:
        started = time.monotonic()
        channel, user = event["channel"], event.get("user", "")
        thread_ts = event.get("thread_ts")
        place = Place(
            channel,
            user,
            thread_ts=thread_ts or event["ts"],
            ephemeral=self.deps.config.channel(channel).ephemeral,
        )
        try:
            request = parse_mention(event.get("text", ""))
        except UsageError as error:
            await self.deps.poster.personal(place, note(messages.usage(escape(error.problem), error.topic)))
            return
        if isinstance(request, Help):
            await self.deps.poster.personal(place, note(messages.USAGE[request.topic]))
            return
        if isinstance(request, FollowUp):
            verdict = await self._follow_up(place, request, thread_ts, context.bot_id)
        else:
            verdict = await self._answer(place, request)
        self.deps.metrics.answered("mention", verdict, time.monotonic() - started)

    async def _follow_up(
        self, place: Place, request: FollowUp, thread_ts: str | None, bot_id: str | None
    ) -> str:
        """recheck / watch / stop, about the verdict the thread holds."""
        found = await find_verdict(self.deps.client, place.channel, thread_ts, bot_id) if thread_ts else None
        if found is None or thread_ts is None:
            await self.deps.poster.personal(place, note(messages.no_verdict_here()))
            return "usage"
        if request.action == "stop":
            if isinstance(why := await self._resolved(place, found.meta.target), str):
                return await self._refuse(place, why)
            if not self.deps.watches.stop(place.channel, thread_ts, place.user):
                await self._stop_elsewhere(place, thread_ts, bot_id)
            return "stop"
        if request.action == "watch":
            return await self._watch(place, found, bot_id)
        return await self._recheck(place, found)

    async def _recheck(self, place: Place, found: Found) -> str:
        """Check the verdict message's target again: update the message, say in its thread what changed."""
        assert place.thread_ts is not None
        async with self.deps.inflight:
            allowed = await self._resolved(place, found.meta.target)
            if isinstance(allowed, str):
                return await self._refuse(place, allowed)
            check = await self.deps.check(allowed)
            await post_change(self.deps.poster, place.channel, place.thread_ts, found, check)
            return check.verdict

    async def _watch(self, place: Place, found: Found, bot_id: str | None) -> str:
        assert place.thread_ts is not None
        if isinstance(why := await self._resolved(place, found.meta.target), str):
            return await self._refuse(place, why)
        watches, channel, thread_ts = self.deps.watches, place.channel, place.thread_ts
        if watches.marker(channel, thread_ts) is None and await watched_elsewhere(
            self.deps.client, channel, thread_ts, bot_id
        ):
            line = messages.watch_already(str(found.meta.target))  # by the other replica
        else:
            line = watches.start(channel, thread_ts, found, bot_id)
        await self.deps.poster.say(channel, thread_ts, note(line), watches.marker(channel, thread_ts))
        return "watch"

    async def _stop_elsewhere(self, place: Place, thread_ts: str, bot_id: str | None) -> None:
        """Ask the replica that watches this thread to stop (a marker it reads at its next re-check),
        or say that nothing is watched."""
        if await watched_elsewhere(self.deps.client, place.channel, thread_ts, bot_id):
            marker = watch_marker("stop", by=place.user)
            await self.deps.poster.say(place.channel, thread_ts, note(messages.watch_stopping()), marker)
        else:
            await self.deps.poster.say(place.channel, thread_ts, note(messages.no_watch()))

    # ---- buttons

    async def recheck_button(self, ack: AsyncAck, body: Body, action: Body, respond: AsyncRespond) -> None:
        """Re-check the verdict in place; an ephemeral verdict (no message to update) is answered anew."""
        await ack()
        if clicked := self._clicked(body, action, respond):
            place, found = clicked
            started = time.monotonic()
            recheck = (
                self._answer(place, found.meta.target) if place.ephemeral else self._recheck(place, found)
            )
            self.deps.metrics.answered("recheck", await recheck, time.monotonic() - started)

    async def watch_button(
        self, ack: AsyncAck, body: Body, action: Body, respond: AsyncRespond, context: AsyncBoltContext
    ) -> None:
        await ack()
        if clicked := self._clicked(body, action, respond):
            await self._watch(*clicked, context.bot_id)

    async def details_button(self, ack: AsyncAck, body: Body, action: Body, respond: AsyncRespond) -> None:
        """The whole answer, freshly checked, for the person who clicked (without opening the thread)."""
        await ack()
        if clicked := self._clicked(body, action, respond):
            place, found = clicked
            await self._answer(
                Place(place.channel, place.user, ephemeral=True, respond=respond), found.meta.target
            )

    def _clicked(self, body: Body, action: Body, respond: AsyncRespond) -> tuple[Place, Found] | None:
        """Where the clicked verdict message is, and what its button says it is about."""
        meta = VerdictMeta.from_value(action.get("value", ""))
        container = body.get("container") or {}
        if meta is None or "message_ts" not in container:
            log.warning("ignoring a click with a malformed value or container: %.200s", action.get("value"))
            return None
        message_ts = container["message_ts"]
        place = Place(
            body["channel"]["id"],
            body["user"]["id"],
            thread_ts=container.get("thread_ts") or message_ts,
            ephemeral=bool(container.get("is_ephemeral")),
            respond=respond,
        )
        return place, Found(meta, message_ts)

    # ---- the message shortcut

    async def shortcut(self, ack: AsyncAck, shortcut: Body, respond: AsyncRespond) -> None:
        """The shortcut "Triage with kubewhy" on an alert: find its namespace and pod (or JobSet), and
        answer in its thread."""
        await ack()
        started = time.monotonic()
        message = shortcut.get("message") or {}
        channel = shortcut["channel"]["id"]
        place = Place(
            channel,
            shortcut["user"]["id"],
            thread_ts=message.get("thread_ts") or message.get("ts"),
            ephemeral=self.deps.config.channel(channel).ephemeral,
            respond=respond,
        )
        target = find_in_alert("\n".join(_texts(message)))
        if target is None:
            await self.deps.poster.personal(place, note(messages.nothing_in_alert()))
            return
        verdict = await self._answer(place, target)
        self.deps.metrics.answered("shortcut", verdict, time.monotonic() - started)

    # ---- the one error handler

    async def on_error(
        self,
        error: Exception,
        body: Body,
        context: AsyncBoltContext,
        logger: logging.Logger,
        respond: AsyncRespond | None,
    ) -> None:
        """An unexpected error: a log line with the request id, and a polite reply where the request
        came from. Slack refusing a call, or not answering, is the world's failure, not a bug: one line;
        anything else keeps its traceback."""
        request_id = context.get("request_id", "-")
        if isinstance(error, SlackApiError):
            refused = error.response.get("error", "unknown")
            method = error.response.api_url.rsplit("/", 1)[-1]
            logger.error("request %s failed: Slack refused %s: %s", request_id, method, refused)
            self.deps.metrics.api_error(f"slack_{refused}")
        elif isinstance(error, aiohttp.ClientError):
            logger.error("request %s failed: Slack's Web API could not be reached: %r", request_id, error)
        else:
            logger.error("request %s failed: %s", request_id, error, exc_info=error)
        reply = note(messages.unexpected(request_id))
        event = body.get("event")
        try:
            if isinstance(event, Mapping):
                # An event has no response_url (bolt's respond() raises for it): the apology goes to
                # the thread the mention was made in.
                if isinstance(channel := event.get("channel"), str):
                    await self.deps.poster.say(channel, event.get("thread_ts") or event.get("ts"), reply)
            elif respond is not None:
                await respond(
                    text=reply.text,
                    blocks=list(reply.blocks),
                    response_type="ephemeral",
                    replace_original=False,
                )
        except (SlackApiError, aiohttp.ClientError) as failure:
            logger.error("request %s: could not tell the person either: %s", request_id, failure)


def _texts(node: object) -> Iterator[str]:
    """The readable strings of a message: its text, its attachments' (Alertmanager posts those) and
    its blocks'."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("text", "fallback", "pretext", "title", "value") and isinstance(value, str):
                yield value
            else:
                yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)
