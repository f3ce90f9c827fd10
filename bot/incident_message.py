"""Block Kit for an incident: its channel message, drawn from its metadata alone so that any replica
can redraw it, with the Silence menu while it is open and not silenced."""

from __future__ import annotations

from datetime import UTC, datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    Option,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from bot import messages
from bot.blocks import SlackMessage, escape
from bot.incidents import IncidentMeta

SILENCE = "kubewhy_silence"
"""The action id of the Silence menu."""


def clock(epoch: float) -> str:
    """The time of day of `epoch`, UTC, as an incident shows it."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M")


def _silence_menu() -> ActionsBlock:
    return ActionsBlock(
        block_id="incident",
        elements=[
            StaticSelectElement(
                action_id=SILENCE,
                placeholder=PlainTextObject(text=messages.SILENCE),
                options=[
                    Option(value=f"{scope}:{minutes}", text=PlainTextObject(text=label))
                    for scope, minutes, label in messages.SILENCE_CHOICES
                ],
            )
        ],
    )


def incident_message(incident: IncidentMeta, now: float, window_minutes: float = 0.0) -> SlackMessage:
    """The channel message of an incident, from its metadata alone (so that any replica can redraw it)."""
    what = escape(incident.what)
    kind = escape(incident.kind)
    facts = ContextBlock(
        elements=[MarkdownTextObject(text=messages.incident_facts(incident.cluster, clock(incident.since)))]
    )
    blocks: list[Block]
    if incident.resolved is not None:
        took = messages.minutes(incident.resolved - incident.since)
        said = (
            messages.resolved(took, incident.verdict)
            if incident.cause == "pending"
            else messages.resolved_restarts(window_minutes, incident.verdict)
        )
        blocks = [
            HeaderBlock(text=PlainTextObject(text=messages.resolved_header(kind, incident.what)[:150])),
            SectionBlock(text=MarkdownTextObject(text=said)),
            facts,
        ]
        return SlackMessage(f"resolved: {kind} {what}", tuple(b.to_dict() for b in blocks))
    how = (
        messages.incident_waiting(incident.pods, messages.minutes(now - incident.since))
        if incident.cause == "pending"
        else messages.incident_restarting(incident.restarts, window_minutes)
    )
    blocks = [
        HeaderBlock(text=PlainTextObject(text=messages.header(incident.verdict, kind, incident.what)[:150])),
        SectionBlock(text=MarkdownTextObject(text=how)),
    ]
    if incident.summary:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=escape(incident.summary)[:3000])))
    if incident.node:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=escape(incident.node)[:3000])))
    if incident.fix:
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=messages.first_fix(escape(incident.fix))[:3000]))
        )
    if incident.detail:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=incident.detail)]))
    blocks.append(facts)
    if incident.silenced_until is not None and incident.silenced_until > now:
        line = messages.silenced(
            incident.silence_scope or "workload", incident.silenced_by or "", clock(incident.silenced_until)
        )
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=line)]))
    else:
        blocks.append(_silence_menu())
    return SlackMessage(f"{incident.verdict}: {kind} {what}", tuple(b.to_dict() for b in blocks))
