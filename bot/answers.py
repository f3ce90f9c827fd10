"""Posting a check where it belongs: a compact verdict message whose thread holds the details, or, in
a channel configured for it, the whole answer to the asker alone.

The verdict message carries its target in Slack message metadata (and in its buttons' values), so a
follow-up in its thread, or a click, needs no server state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import blocks, messages
from bot.blocks import SlackMessage
from bot.checks import Check
from handlers.reply import Reply
from handlers.requests import Target

EVENT_TYPE = "kubewhy_verdict"
Model = TypeVar("Model", bound=BaseModel)


def metadata_payload(model: type[Model], message: Mapping[str, Any], event_type: str) -> Model | None:
    """The payload of a message's Slack metadata of this event type, or None when the message carries
    none or a payload that does not validate (metadata is shown to anyone who reads the channel)."""
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != event_type:
        return None
    try:
        return model.model_validate(metadata.get("event_payload"))
    except ValidationError:
        return None

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
    """The buttons a verdict gets: nothing to re-check without a target; watching needs a thread, and
    only a diagnosis has details beyond the verdict message."""
    if check.target is None:
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
    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def answer(self, place: Place, check: Check) -> str | None:
        """Post `check`; returns the ts of its verdict message (None when it went to the asker only).

        Where the bot cannot post (not invited to the channel, or a direct message between people),
        the asker still gets the whole answer, privately through the command's response_url, with the
        line that fixes it: `/invite @kubewhy`."""
        if place.ephemeral:
            await self._privately(place, check)
            return None
        verdict = blocks.verdict_message(check, actions(check, False), _button(check))
        try:
            response = await self._client.chat_postMessage(
                channel=place.channel,
                thread_ts=place.thread_ts,
                text=verdict.text,
                blocks=list(verdict.blocks),
                metadata=_metadata(check),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as error:
            if place.respond is None or error.response.get("error") not in NOT_A_MEMBER:
                raise
            await self.personal(place, blocks.note(messages.not_in_channel()))
            await self._privately(place, check)
            return None
        ts: str = response["ts"]
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
        await self._client.chat_update(
            channel=channel, ts=ts, text=verdict.text, blocks=list(verdict.blocks), metadata=_metadata(check)
        )

    async def say(
        self,
        channel: str,
        thread_ts: str | None,
        message: SlackMessage,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=message.text,
            blocks=list(message.blocks),
            metadata=metadata,
            unfurl_links=False,
            unfurl_media=False,
        )

    async def personal(self, place: Place, message: SlackMessage) -> None:
        """Show `message` to the asker only: through the response_url when there is one (it works even
        where the bot is not a member), else with chat.postEphemeral."""
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
            blocks=list(message.blocks),
        )
