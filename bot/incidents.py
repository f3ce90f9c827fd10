"""The sentinel's incidents as Slack keeps them: what an incident message is about and last said, and
what a channel's messages say about its incidents. Pure: no Slack client, no clock.

Every incident message carries its cause, the workloads it blocks, what it last said, its silence and
acknowledgement, and how far its thread is written, in its Slack metadata (`IncidentMeta`): a
channel's messages are all the state there is (`ChannelState.read`), so any replica resumes the open
incidents, completes their threads and honours the silences.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot import messages, render
from bot.metadata import metadata_payload
from bot.settings import SentinelConfig
from bot.stuck import EXPLAINED, Cause, Key, Stuck, keyed_kind
from handlers.reply import Reply
from handlers.requests import ClusterName, Namespace, ObjectName, Target

if TYPE_CHECKING:
    from bot.checks import Check

INCIDENT = "kubewhy_incident"
"""The metadata event type of an incident message."""
HELD = "kubewhy_sentinel_held"
"""The metadata event type of the summary line posted when the hourly limit is hit."""

HOUR = 3600.0
SUMMARY_CHARS = 1000
"""Of the diagnosis's summary kept in an incident's metadata (and shown as its first fix)."""
MEMBERS = 50
"""Workloads listed in an incident's metadata at most; the others are counted."""


class Member(BaseModel):
    """One stuck workload of an incident."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    namespace: Namespace
    kind: str = Field(min_length=1, max_length=63)
    name: ObjectName
    target: ObjectName
    """What is diagnosed: the JobSet, or the workload's oldest waiting pod."""
    pods: int = Field(default=0, ge=0)
    restarts: int = Field(default=0, ge=0)
    since: float

    @classmethod
    def of(cls, stuck: Stuck) -> Member:
        return cls(
            namespace=stuck.namespace,
            kind=stuck.kind,
            name=stuck.name,
            target=stuck.target.name,
            pods=stuck.pods,
            restarts=stuck.restarts,
            since=stuck.since,
        )

    @property
    def what(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def checked(self, cluster: str) -> Target:
        kind: Literal["pod", "jobset", "leaderworkerset"] = EXPLAINED.get(self.kind, "pod")
        return Target(kind=kind, namespace=self.namespace, name=self.target, cluster=cluster)


class IncidentMeta(BaseModel):
    """What an incident message is about and last said: its metadata payload. Read back from Slack,
    so validated, and trusted only on the bot's own messages.

    An incident is one cause (`blocked_by`, `bot.stuck.blocked_by`) and the workloads it blocks; its
    words are those of the first workload's diagnosis. Its thread is written in rounds (the details
    when it is posted, then a line and the details again at each change of verdict): `thread` counts
    them and `thread_done` says whether the latest round is all posted, so that a replica that takes
    over completes a round its poster did not finish."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    cluster: ClusterName
    cause: Cause
    blocked_by: str = Field(pattern=r"^[0-9a-f]{16}$")
    verdict: str = Field(min_length=1, max_length=40)
    summary: str = Field(default="", max_length=SUMMARY_CHARS)
    fix: str = Field(default="", max_length=SUMMARY_CHARS)
    """The diagnosis's first fix, in one line ("" when it has none)."""
    detail: str = Field(default="", max_length=200)
    """The restart cause or the blocking pod's verdict, as a line of facts."""
    node: str = Field(default="", max_length=SUMMARY_CHARS)
    """Whether a node will come for the pods (`Node: coming — …`, `No node will come: …`; "" when no
    autoscaler is seen): redrawn in place as it changes."""
    workloads: tuple[Member, ...] = Field(min_length=1, max_length=MEMBERS)
    more: int = Field(default=0, ge=0)
    """Workloads blocked by the same cause beyond the ones listed."""
    pods: int = Field(default=0, ge=0)
    restarts: int = Field(default=0, ge=0)
    groups: tuple[str, ...] = Field(default=(), max_length=MEMBERS)
    """The Slack user groups mentioned (`sentinel.mention`)."""
    since: float
    """When it began (epoch seconds): the oldest pod went pending, or the first restart was seen."""
    resolved: float | None = None
    silenced_until: float | None = None
    silence_scope: Literal["incident", "namespace"] | None = None
    silenced_by: str | None = Field(default=None, max_length=20)
    acked_by: str | None = Field(default=None, max_length=20)
    acked_at: float | None = None
    checked_by: str | None = Field(default=None, max_length=20)
    checked_at: float | None = None
    was: str = Field(default="", max_length=40)
    """The verdict before the latest change ("" before any)."""
    thread: int = Field(default=0, ge=0)
    thread_done: bool = False

    @classmethod
    def opened(cls, cause: str, group: Sequence[Blocked], groups: Iterable[str]) -> IncidentMeta:
        """A new incident about the workloads of `group`, blocked by `cause`."""
        first = group[0].stuck
        return cls(
            cluster=first.cluster,
            cause=first.cause,
            blocked_by=cause,
            since=min(b.stuck.since for b in group),
            **_said(group, groups),
        )

    def followed(
        self, cause: str, group: Sequence[Blocked], groups: Iterable[str], quiet: bool
    ) -> IncidentMeta:
        """This incident with the workloads `group` now counts and what a re-check of them found; a
        new verdict starts a new round of its thread, unless `quiet` (silenced)."""
        said = _said(group, groups, self.groups)
        if said["verdict"] != self.verdict and not quiet:
            said |= {"was": self.verdict, "thread": self.thread + 1, "thread_done": False}
        return self.model_copy(update=said | {"blocked_by": cause})

    def rechecked(self, check: Check, user: str, now: float) -> IncidentMeta:
        """This incident saying what a re-check of its first workload found, asked by `user`."""
        return self.model_copy(update=_words(check) | {"checked_by": user, "checked_at": now})

    def keeping_people(self, latest: IncidentMeta | None) -> IncidentMeta:
        """This incident with what people chose on its message since it was read back (on either
        replica): its silence, acknowledgement and re-check."""
        if latest is None:
            return self
        return self.model_copy(update={f: getattr(latest, f) for f in PEOPLE_FIELDS})

    @property
    def member_keys(self) -> frozenset[Key]:
        return frozenset(
            (self.cluster, m.namespace, keyed_kind(m.kind), m.name, self.cause) for m in self.workloads
        )

    @property
    def what(self) -> str:
        """The workloads, as a header names them: the first, and how many more."""
        others = len(self.workloads) - 1 + self.more
        first = self.workloads[0].what
        return first if not others else f"{first} and {others} more workload{'s' if others > 1 else ''}"

    def silenced(self, now: float) -> bool:
        return self.silenced_until is not None and self.silenced_until > now

    def silences(self, stuck: Stuck, now: float) -> bool:
        """This incident's silence covers `stuck` now: one of its workloads, or in its namespaces."""
        if not self.silenced(now) or stuck.cluster != self.cluster:
            return False
        if self.silence_scope == "namespace":
            return any(m.namespace == stuck.namespace for m in self.workloads)
        return stuck.key in self.member_keys

    def metadata(self) -> dict[str, Any]:
        return {"event_type": INCIDENT, "event_payload": self.model_dump(exclude_none=True)}

    @classmethod
    def from_message(cls, message: Mapping[str, Any], bot_id: str | None) -> IncidentMeta | None:
        if message.get("bot_id") != bot_id:
            return None
        return metadata_payload(cls, message, INCIDENT)


PEOPLE_FIELDS = (
    "silenced_until",
    "silence_scope",
    "silenced_by",
    "acked_by",
    "acked_at",
    "checked_by",
    "checked_at",
)
"""What people set on an incident message (Silence, Acknowledge, Re-check)."""


@dataclass(frozen=True)
class Blocked:
    """A stuck workload, diagnosed."""

    stuck: Stuck
    check: Check


@dataclass
class Incident:
    meta: IncidentMeta
    ts: str


@dataclass
class ChannelState:
    """A channel as read back from Slack."""

    incidents: dict[str, Incident] = field(default_factory=dict)
    """The newest message of each cause."""
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
                if incident.blocked_by not in state.incidents:
                    state.incidents[incident.blocked_by] = Incident(incident, ts)
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
        """The stuck workloads in no open incident that are due and not silenced, oldest first."""
        open_ = [i.meta for i in self.incidents.values() if i.meta.resolved is None]
        listed = {key for meta in open_ for key in meta.member_keys}
        return [
            candidate
            for key, candidate in sorted(stuck.items(), key=lambda pair: pair[1].since)
            if key not in listed
            and candidate.due(sentinel, now)
            and not any(s.silences(candidate, now) for s in self.silences)
        ]

    def to_check(
        self, stuck: Mapping[Key, Stuck], incidents: Iterable[Incident], sentinel: SentinelConfig, now: float
    ) -> list[Stuck]:
        """The stuck workloads to diagnose: those the open `incidents` list, then those due for a new
        incident."""
        listed = {key for incident in incidents for key in incident.meta.member_keys}
        return [s for key, s in stuck.items() if key in listed] + self.to_post(stuck, sentinel, now)

    def silenced_cause(self, cause: str) -> bool:
        """An incident of this cause is silenced (resolved since, perhaps): a new one stays unposted."""
        return any(s.blocked_by == cause and s.silence_scope == "incident" for s in self.silences)


def assign(incidents: Sequence[Incident], groups: Mapping[str, Sequence[Blocked]]) -> dict[str, Incident]:
    """The open incident each group of workloads (by cause) continues: the incident of the same cause,
    else the one that lists most of its workloads (their cause changed, a node was tainted say: the
    incident changes in place); an incident continues one group at most. The other groups are new."""
    free = list(incidents)
    taken: dict[str, Incident] = {}
    for cause in groups:
        same = next((i for i in free if i.meta.blocked_by == cause), None)
        if same is not None:
            taken[cause] = same
            free.remove(same)
    for cause, group in sorted(groups.items(), key=lambda pair: -len(pair[1])):
        keys = {b.stuck.key for b in group}
        best = max(free, key=lambda i: len(keys & i.meta.member_keys), default=None)
        if cause not in taken and best is not None and keys & best.meta.member_keys:
            taken[cause] = best
            free.remove(best)
    return taken


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


def _said(group: Sequence[Blocked], groups: Iterable[str], mentioned: Iterable[str] = ()) -> dict[str, Any]:
    """The fields of an incident that follow its workloads: the first one's diagnosis, the workloads
    (oldest first) and their counts, and the user groups mentioned so far."""
    ordered = sorted(group, key=_age)
    return _words(ordered[0].check) | {
        "workloads": tuple(Member.of(b.stuck) for b in ordered[:MEMBERS]),
        "more": max(len(ordered) - MEMBERS, 0),
        "pods": sum(b.stuck.pods for b in group),
        "restarts": sum(b.stuck.restarts for b in group),
        "groups": tuple(dict.fromkeys([*mentioned, *groups]))[:MEMBERS],
    }


def _age(blocked: Blocked) -> tuple[float, Key]:
    return blocked.stuck.since, blocked.stuck.key


def first(group: Sequence[Blocked]) -> Blocked:
    """The workload whose diagnosis an incident shows: the one stuck the longest."""
    return min(group, key=_age)


def _words(check: Check) -> dict[str, Any]:
    """What an incident says of a check: its verdict, summary, first fix, facts and whether a node
    will come."""
    return {
        "verdict": check.verdict,
        "summary": _clipped(" ".join(check.summary.split())),
        "fix": _fix(check),
        "detail": _detail(check),
        "node": _clipped(render.node_line(check.outcome.diagnosis))
        if isinstance(check.outcome, Reply)
        else "",
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
