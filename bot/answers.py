"""Posting a check where it belongs: a compact verdict message whose thread holds the details, or, in
a channel configured for it, the whole answer to the asker alone.

The verdict message carries its target in Slack message metadata (and in its buttons' values), so a
follow-up in its thread, or a click, needs no server state. `Poster` also posts, rewrites and reads back
the sentinel's incidents (`bot.sentinel`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import blocks, messages
from bot.blocks import SlackMessage
from bot.checks import Check
from bot.metadata import metadata_payload
from cluster.errors import NotFound
from handlers.reply import Reply
from handlers.requests import Target

EVENT_TYPE = "kubewhy_verdict"
HISTORY_LIMIT = 200
"""Messages per page of conversations.history and .replies (Slack recommends no more than 200)."""

NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})
"""What chat.postMessage answers where the bot is not a member: a channel it was not invited to, a
private channel, or a direct message between people."""


class VerdictMeta(Target):
    """What a verdict message is about and what it last said: its metadata payload and button value."""

    verdict: str = Field(min_length=1, max_length=40)

    @property
    def target(self) -> Target:
        return Target(kind=self.kind, namespace=self.namespace, name=self.name, cluster=self.cluster)

    @classmethod
    def of(cls, check: Check) -> VerdictMeta | None:
        if check.target is None:
            return None
        return cls(**check.target.model_dump(), verdict=check.verdict)

    @classmethod
    def from_value(cls, value: str) -> VerdictMeta | None:
        """From a button value: untrusted (anyone can forge a payload), so validated like a command."""
        try:
            return cls.model_validate_json(value)
        except ValidationError:
            return None

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> VerdictMeta | None:
        return metadata_payload(cls, message, EVENT_TYPE)


@dataclass(frozen=True)
class Place:
    """Where an answer goes, and to whom."""

    channel: str
    user: str
    thread_ts: str | None = None
    """Answer inside this thread (a mention, a shortcut, a follow-up); None: a new channel message."""
    ephemeral: bool = False
    """The channel's config wants answers shown to the asker only."""
    respond: AsyncRespond | None = None
    """The response_url of a command or interaction: ephemeral replies go there."""


def actions(check: Check, ephemeral: bool) -> tuple[str, ...]:
    """The buttons a verdict gets: nothing to re-check without a target, or for one that does not
    exist; watching needs a thread, and only a diagnosis has details beyond the verdict message."""
    if check.target is None or isinstance(check.outcome, NotFound):
        return ()
    if ephemeral or not isinstance(check.outcome, Reply):
        return (blocks.RECHECK,)
    return (blocks.RECHECK, blocks.WATCH, blocks.DETAILS)


def _button(check: Check) -> str:
    meta = VerdictMeta.of(check)
    return meta.model_dump_json() if meta else ""


def _metadata(check: Check) -> dict[str, Any] | None:
    meta = VerdictMeta.of(check)
    return {"event_type": EVENT_TYPE, "event_payload": meta.model_dump()} if meta else None


class Poster:
    """The bot's messages in Slack: posted, rewritten, and read back with their metadata."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def answer(self, place: Place, check: Check) -> str | None:
        """Post `check`; returns the ts of its verdict message (None when it went to the asker only).

        A target that does not exist is the asker's typo, not news for the channel: that answer, with
        the names closest to it, goes to the asker alone. Where the bot cannot post (not invited to
        the channel, or a direct message between people), the asker still gets the whole answer,
        privately through the command's response_url, with the line that fixes it: `/invite @kubewhy`."""
        if place.ephemeral or isinstance(check.outcome, NotFound):
            await self._privately(place, check)
            return None
        verdict = blocks.verdict_message(check, actions(check, False), _button(check))
        try:
            ts = await self.say(place.channel, place.thread_ts, verdict, _metadata(check))
        except SlackApiError as error:
            if place.respond is None or error.response.get("error") not in NOT_A_MEMBER:
                raise
            await self.personal(place, blocks.note(messages.not_in_channel()))
            await self._privately(place, check)
            return None
        await self.details(place.channel, place.thread_ts or ts, check)
        return ts

    async def _privately(self, place: Place, check: Check) -> None:
        """The whole answer to the asker alone: the verdict (with the buttons that work without a
        thread), then the details."""
        for message in blocks.detail_messages(check, actions(check, True), _button(check)):
            await self.personal(place, message)

    async def details(self, channel: str, thread_ts: str, check: Check) -> None:
        for message in blocks.detail_messages(check):
            await self.say(channel, thread_ts, message)

    async def update(self, channel: str, ts: str, check: Check) -> None:
        """Show the latest check in the verdict message, so the channel sees the current verdict."""
        verdict = blocks.verdict_message(check, actions(check, False), _button(check))
        await self.rewrite(channel, ts, verdict, _metadata(check))

    async def say(
        self,
        channel: str,
        thread_ts: str | None,
        message: SlackMessage,
        metadata: dict[str, Any] | None = None,
        *,
        unfurl: bool | None = False,
    ) -> str:
        """Post `message` in the thread of `thread_ts`, or in the channel when it is None; returns its
        ts. Its links get no preview unless `unfurl` (None: Slack's default)."""
        response = await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=message.text,
            blocks=list(message.blocks),
            metadata=metadata,
            unfurl_links=unfurl,
            unfurl_media=unfurl,
        )
        ts: str = response["ts"]
        return ts

    async def rewrite(
        self, channel: str, ts: str, message: SlackMessage, metadata: dict[str, Any] | None
    ) -> None:
        """Replace the message at `ts`, its metadata included."""
        await self._client.chat_update(
            channel=channel, ts=ts, text=message.text, blocks=list(message.blocks), metadata=metadata
        )

    async def history(self, channel: str, oldest: float, limit: int, pages: int) -> list[Mapping[str, Any]]:
        """The channel's messages since `oldest` (epoch seconds), newest first, with their metadata: at
        most `pages` pages of `limit` messages."""
        found: list[Mapping[str, Any]] = []
        cursor = None
        for _ in range(pages):
            answer = await self._client.conversations_history(
                channel=channel, oldest=f"{oldest:.6f}", limit=limit, cursor=cursor, include_all_metadata=True
            )
            found += answer.get("messages") or []
            cursor = (answer.get("response_metadata") or {}).get("next_cursor")
            if not (answer.get("has_more") and cursor):
                break
        return found

    async def message(self, channel: str, ts: str) -> Mapping[str, Any]:
        """The channel's message at `ts` as it is now, with its metadata ({} when it is gone)."""
        answer = await self._client.conversations_history(
            channel=channel, latest=ts, oldest=ts, inclusive=True, limit=1, include_all_metadata=True
        )
        found: Mapping[str, Any] = next((m for m in answer.get("messages") or [] if m.get("ts") == ts), {})
        return found

    async def thread(self, channel: str, ts: str) -> list[Mapping[str, Any]]:
        """The replies in the thread of `ts` (its first page), with their metadata."""
        answer = await self._client.conversations_replies(
            channel=channel, ts=ts, limit=HISTORY_LIMIT, include_all_metadata=True
        )
        return [m for m in answer.get("messages") or [] if m.get("ts") != ts]

    async def personal(self, place: Place, message: SlackMessage) -> None:
        """Show `message` to the asker only: through the response_url when there is one (it works even
        where the bot is not a member), else with chat.postEphemeral (as text alone when it has no
        blocks)."""
        if place.respond is not None:
            await place.respond(
                text=message.text,
                blocks=list(message.blocks),
                response_type="ephemeral",
                replace_original=False,
            )
            return
        await self._client.chat_postEphemeral(
            channel=place.channel,
            user=place.user,
            thread_ts=place.thread_ts,
            text=message.text,
            blocks=list(message.blocks) or None,
        )
