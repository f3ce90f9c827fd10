"""The sentinel's incidents as Slack keeps them: what an incident message is about and last said, and
what a channel's messages say about its incidents. Pure: no Slack client, no clock.

Every incident message carries what it is about and what it last said, and its silence, in its Slack
metadata (`IncidentMeta`): a channel's messages are all the state there is (`ChannelState.read`), so any
replica resumes the open incidents and honours the silences.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot import messages, render
from bot.metadata import metadata_payload
from bot.settings import SentinelConfig
from bot.stuck import Cause, Key, Stuck
from handlers.reply import Reply
from handlers.requests import ClusterName, Namespace, ObjectName

if TYPE_CHECKING:
    from bot.checks import Check

INCIDENT = "kubewhy_incident"
"""The metadata event type of an incident message."""
HELD = "kubewhy_sentinel_held"
"""The metadata event type of the summary line posted when the hourly limit is hit."""

HOUR = 3600.0
SUMMARY_CHARS = 1000
"""Of the diagnosis's summary kept in an incident's metadata (and shown as its first fix)."""


class IncidentMeta(BaseModel):
    """What an incident message is about and last said: its metadata payload. Read back from Slack,
    so validated, and trusted only on the bot's own messages."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    cluster: ClusterName
    namespace: Namespace
    kind: str = Field(min_length=1, max_length=63)
    name: ObjectName
    cause: Cause
    verdict: str = Field(min_length=1, max_length=40)
    summary: str = Field(default="", max_length=SUMMARY_CHARS)
    fix: str = Field(default="", max_length=SUMMARY_CHARS)
    """The diagnosis's first fix, in one line ("" when it has none)."""
    detail: str = Field(default="", max_length=200)
    """The restart cause or the blocking pod's verdict, as a line of facts."""
    node: str = Field(default="", max_length=SUMMARY_CHARS)
    """Whether a node will come for the pods (`Node: coming — …`, `No node will come: …`; "" when no
    autoscaler is seen): redrawn in place as it changes."""
    pods: int = Field(default=0, ge=0)
    restarts: int = Field(default=0, ge=0)
    since: float
    """When it began (epoch seconds): the oldest pod went pending, or the first restart was seen."""
    resolved: float | None = None
    silenced_until: float | None = None
    silence_scope: Literal["workload", "namespace"] | None = None
    silenced_by: str | None = Field(default=None, max_length=20)

    @classmethod
    def opened(cls, stuck: Stuck, check: Check) -> IncidentMeta:
        """A new incident about `stuck`, saying what `check` found."""
        return cls(
            cluster=stuck.cluster,
            namespace=stuck.namespace,
            kind=stuck.kind,
            name=stuck.name,
            cause=stuck.cause,
            since=stuck.since,
            **_said(stuck, check),
        )

    def followed(self, stuck: Stuck, check: Check) -> IncidentMeta:
        """This incident saying what a re-check of it found, with its current counts."""
        return self.model_copy(update=_said(stuck, check))

    def keeping_silence(self, latest: IncidentMeta | None) -> IncidentMeta:
        """This incident with the silence its message carries now (chosen since it was read back)."""
        if latest is None or latest.silenced_until == self.silenced_until:
            return self
        silence = ("silenced_until", "silence_scope", "silenced_by")
        return self.model_copy(update={f: getattr(latest, f) for f in silence})

    @property
    def key(self) -> Key:
        return (self.cluster, self.namespace, self.kind, self.name, self.cause)

    @property
    def what(self) -> str:
        return f"{self.namespace}/{self.name}"

    def silenced(self, now: float) -> bool:
        return self.silenced_until is not None and self.silenced_until > now

    def silences(self, stuck: Stuck, now: float) -> bool:
        """This incident's silence covers `stuck` now."""
        if not self.silenced(now):
            return False
        if (self.cluster, self.namespace) != (stuck.cluster, stuck.namespace):
            return False
        return self.silence_scope == "namespace" or (self.kind, self.name) == (stuck.kind, stuck.name)

    def metadata(self) -> dict[str, Any]:
        return {"event_type": INCIDENT, "event_payload": self.model_dump(exclude_none=True)}

    @classmethod
    def from_message(cls, message: Mapping[str, Any], bot_id: str | None) -> IncidentMeta | None:
        if message.get("bot_id") != bot_id:
            return None
        return metadata_payload(cls, message, INCIDENT)


@dataclass
class Incident:
    meta: IncidentMeta
    ts: str


@dataclass
class ChannelState:
    """A channel as read back from Slack."""

    incidents: dict[Key, Incident] = field(default_factory=dict)
    """The newest message of each incident."""
    posted: int = 0
    """Incidents posted within the last hour."""
    silences: list[IncidentMeta] = field(default_factory=list)
    held_ts: str | None = None
    held: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, found: Iterable[Mapping[str, Any]], bot_id: str | None, now: float) -> ChannelState:
        """The incidents, silences and summary line in the channel's messages, newest first; only the
        bot's own messages count."""
        state = cls()
        for message in found:
            ts = str(message.get("ts", "0"))
            recent = now - float(ts) <= HOUR
            incident = IncidentMeta.from_message(message, bot_id)
            if incident is not None:
                if incident.key not in state.incidents:
                    state.incidents[incident.key] = Incident(incident, ts)
                    if incident.silenced(now):
                        state.silences.append(incident)
                state.posted += recent
            elif recent and state.held_ts is None and (held := _held(message, bot_id)) is not None:
                state.held_ts, state.held = ts, held
        return state

    def open_in(self, clusters: Collection[str]) -> list[Incident]:
        """The incidents not resolved yet in these clusters (the ones read in this sweep)."""
        return [i for i in self.incidents.values() if i.meta.resolved is None and i.meta.cluster in clusters]

    def to_post(self, stuck: Mapping[Key, Stuck], sentinel: SentinelConfig, now: float) -> list[Stuck]:
        """The stuck workloads without an open incident that are due and not silenced, oldest first."""
        return [
            candidate
            for key, candidate in sorted(stuck.items(), key=lambda pair: pair[1].since)
            if not (key in self.incidents and self.incidents[key].meta.resolved is None)
            and candidate.due(sentinel, now)
            and not any(s.silences(candidate, now) for s in self.silences)
        ]


def held_metadata(workloads: list[str]) -> dict[str, Any]:
    """The metadata of the summary line: the workloads it counts."""
    return {"event_type": HELD, "event_payload": {"workloads": workloads}}


def _held(message: Mapping[str, Any], bot_id: str | None) -> list[str] | None:
    """The workloads the bot's summary line counts, if `message` is one."""
    metadata = message.get("metadata") or {}
    if message.get("bot_id") != bot_id or metadata.get("event_type") != HELD:
        return None
    return [str(w) for w in (metadata.get("event_payload") or {}).get("workloads", [])]


# ---- what an incident says of a check


def _said(stuck: Stuck, check: Check) -> dict[str, Any]:
    """The fields of an incident that follow its workload: its verdict and counts."""
    return {
        "verdict": check.verdict,
        "summary": _clipped(" ".join(check.summary.split())),
        "fix": _fix(check),
        "detail": _detail(check),
        "node": _clipped(render.node_line(check.outcome.diagnosis))
        if isinstance(check.outcome, Reply)
        else "",
        "pods": stuck.pods,
        "restarts": stuck.restarts,
    }


def _clipped(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _fix(check: Check) -> str:
    if not isinstance(check.outcome, Reply) or not check.outcome.diagnosis.fixes:
        return ""
    return _clipped(render.fix_line(check.outcome.diagnosis.fixes[0]))


def _detail(check: Check) -> str:
    if not isinstance(check.outcome, Reply):
        return ""
    diagnosis = check.outcome.diagnosis
    facts = [messages.cause(str(diagnosis.cause))] if diagnosis.cause else []
    facts += [messages.blocking_pod(str(diagnosis.pod_verdict))] if diagnosis.pod_verdict else []
    return " · ".join(facts)
