"""Block Kit for an incident: its channel message, drawn from its metadata alone so that any replica
can redraw it: the workloads it blocks, the cause, the first fix, who is told, and, while it is open,
Re-check, Acknowledge (until someone does) and the Silence menu (until someone silences it)."""

from __future__ import annotations

from datetime import UTC, datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    InteractiveElement,
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
RECHECK = "kubewhy_incident_recheck"
ACKNOWLEDGE = "kubewhy_incident_ack"
ACTION_IDS = (RECHECK, ACKNOWLEDGE, SILENCE)
LISTED = 10
"""Workloads listed in the message; the others are counted."""


def clock(epoch: float) -> str:
    """The time of day of `epoch`, UTC, as an incident shows it."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M")


def mentions(groups: tuple[str, ...]) -> str:
    return " ".join(f"<!subteam^{g}>" for g in groups)


def _actions(incident: IncidentMeta, now: float) -> ActionsBlock:
    elements: list[InteractiveElement] = [
        ButtonElement(text=messages.RECHECK, action_id=RECHECK, value="recheck")
    ]
    if incident.acked_by is None:
        elements.append(ButtonElement(text=messages.ACKNOWLEDGE, action_id=ACKNOWLEDGE, value="ack"))
    if not incident.silenced(now):
        elements.append(
            StaticSelectElement(
                action_id=SILENCE,
                placeholder=PlainTextObject(text=messages.SILENCE),
                options=[
                    Option(value=f"{scope}:{minutes}", text=PlainTextObject(text=label))
                    for scope, minutes, label in messages.SILENCE_CHOICES
                ],
            )
        )
    return ActionsBlock(block_id="incident", elements=elements)


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=text)])


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:3000]))


def _workloads(incident: IncidentMeta) -> SectionBlock:
    lines = [
        messages.incident_member(escape(m.what), m.pods, m.restarts) for m in incident.workloads[:LISTED]
    ]
    hidden = len(incident.workloads) - LISTED + incident.more
    if hidden > 0:
        lines.append(messages.more_members(hidden))
    return _section("\n".join(lines))


def _people(incident: IncidentMeta, now: float) -> list[Block]:
    """Who acknowledged it, re-checked it or silenced it, in place."""
    lines = []
    if incident.acked_by is not None and incident.acked_at is not None:
        lines.append(messages.acknowledged(incident.acked_by, clock(incident.acked_at)))
    if incident.checked_by is not None and incident.checked_at is not None:
        lines.append(messages.rechecked(incident.checked_by, clock(incident.checked_at)))
    if incident.silenced_until is not None and incident.silenced(now):
        scope = incident.silence_scope or "incident"
        lines.append(messages.silenced(scope, incident.silenced_by or "", clock(incident.silenced_until)))
    return [_context(line) for line in lines]


def incident_message(incident: IncidentMeta, now: float, window_minutes: float = 0.0) -> SlackMessage:
    """The channel message of an incident, from its metadata alone (so that any replica can redraw it)."""
    what = escape(incident.what)
    count = len(incident.workloads) + incident.more
    facts = _context(messages.incident_facts(incident.cluster, clock(incident.since)))
    blocks: list[Block]
    if incident.resolved is not None:
        took = messages.minutes(incident.resolved - incident.since)
        said = (
            messages.resolved(took, incident.verdict)
            if incident.cause == "pending"
            else messages.resolved_restarts(window_minutes, incident.verdict)
        )
        blocks = [
            HeaderBlock(text=PlainTextObject(text=messages.resolved_header(incident.what)[:150])),
            _section(said),
            facts,
        ]
        return SlackMessage(f"resolved: {what}", tuple(b.to_dict() for b in blocks))
    how = (
        messages.incident_waiting(incident.pods, messages.minutes(now - incident.since), count)
        if incident.cause == "pending"
        else messages.incident_restarting(incident.restarts, window_minutes, count)
    )
    blocks = [
        HeaderBlock(text=PlainTextObject(text=messages.header(incident.verdict, "", incident.what)[:150])),
        _section(how),
    ]
    if count > 1:
        blocks.append(_workloads(incident))
    if incident.summary:
        blocks.append(_section(escape(incident.summary)))
    if incident.fix:
        blocks.append(_section(messages.first_fix(escape(incident.fix))))
    if incident.detail:
        blocks.append(_context(incident.detail))
    if incident.groups:
        blocks.append(_section(messages.mention(mentions(incident.groups))))
    blocks += [facts, *_people(incident, now), _actions(incident, now)]
    told = f" {mentions(incident.groups)}" if incident.groups else ""
    return SlackMessage(f"{incident.verdict}: {what}{told}", tuple(b.to_dict() for b in blocks))
