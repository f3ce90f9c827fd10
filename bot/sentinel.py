"""The sentinel: kubewhy speaks first, in the channels that enable it (`channels.ID.sentinel`).

One message per incident, not per event. An incident is one stuck workload: the accelerator pods of
one JobSet, Deployment, Job… (`diagnosis.relations.workload`) that have waited for a node longer than
`pending_minutes`, or a JobSet that restarted `restarts` times within `restarts_window_minutes`. Its
message gives the usual verdict (of the JobSet, or of the workload's oldest waiting pod), how many pods
wait, the first fix, and the details in its thread. While it lasts, the message follows the verdict and
the thread gets a line when the verdict changes; when no pod waits any more (or the JobSet stops
restarting) the message is marked resolved in place, with the time it took.

Only the replica holding the Lease (`cluster.lease`) sweeps, and it checks that it still holds it right
before each post. Its state is Slack's: each sweep first reads the channel back
(`conversations.history` with message metadata), where every incident message carries what it is about
and what it last said, and its silence. So a replica that takes over after a failover or a rolling
update resumes the open incidents and honours the silences without posting anything twice, and a
`Silence` chosen on either replica (both serve Slack) is seen by the leader at its next sweep.

Bounded and quiet: pods that leave Pending before the threshold are never posted; a channel gets at
most `max_posts_per_hour` new incidents an hour, and past that one summary line, updated in place, counts
the others; `ignore` names verdicts never posted.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import aiohttp
from pydantic import BaseModel, ConfigDict, Field
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
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
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages, render
from bot.access import Access
from bot.answers import Poster
from bot.blocks import SlackMessage, escape, note
from bot.checks import Check
from bot.clusters import Clusters
from bot.metadata import metadata_payload
from bot.metrics import Metrics
from bot.settings import Config, SentinelConfig, SettingsError
from cluster.errors import ClusterError
from cluster.lease import LeaseOptions
from diagnosis.model import JobSetVerdict
from diagnosis.objects import Object, condition, meta, name, namespace, timestamp
from diagnosis.relations import workload
from handlers.reply import Reply
from handlers.requests import ClusterName, Namespace, ObjectName, Target

log = logging.getLogger(__name__)

INCIDENT = "kubewhy_incident"
"""The metadata event type of an incident message."""
HELD = "kubewhy_sentinel_held"
"""The metadata event type of the summary line posted when the hourly limit is hit."""
SILENCE = "kubewhy_silence"
"""The action id of the Silence menu."""

LOOKBACK_SECONDS = 24 * 3600
"""How far back a channel is read: the longest silence. An incident still open after that is posted
anew, as a reminder."""
HISTORY_LIMIT = 200
"""Messages per page of conversations.history (Slack recommends no more than 200)."""
HISTORY_PAGES = 5
"""Pages read back per channel and sweep at most: a busy channel's day, within Tier 3's 50 calls a
minute at the default interval."""
HOUR = 3600.0
SUMMARY_CHARS = 1000
"""Of the diagnosis's summary kept in an incident's metadata (and shown as its first fix)."""

Cause = Literal["pending", "restarts"]
Key = tuple[str, str, str, str, str]
"""(cluster, namespace, workload kind, workload name, cause)."""


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
    pods: int = Field(default=0, ge=0)
    restarts: int = Field(default=0, ge=0)
    since: float
    """When it began (epoch seconds): the oldest pod went pending, or the first restart was seen."""
    resolved: float | None = None
    silenced_until: float | None = None
    silence_scope: Literal["workload", "namespace"] | None = None
    silenced_by: str | None = Field(default=None, max_length=20)

    @property
    def key(self) -> Key:
        return (self.cluster, self.namespace, self.kind, self.name, self.cause)

    @property
    def what(self) -> str:
        return f"{self.namespace}/{self.name}"

    def silences(self, stuck: Stuck, now: float) -> bool:
        """This incident's silence covers `stuck` now."""
        if self.silenced_until is None or self.silenced_until <= now:
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


@dataclass(frozen=True)
class Stuck:
    """A workload found stuck in this sweep."""

    cluster: str
    namespace: str
    kind: str
    name: str
    cause: Cause
    since: float
    target: Target
    """What is diagnosed: the JobSet, or the workload's oldest waiting pod."""
    pods: int = 0
    restarts: int = 0

    @property
    def key(self) -> Key:
        return (self.cluster, self.namespace, self.kind, self.name, self.cause)


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


def pending_since(pod: Object) -> float | None:
    """When the pod began waiting for a node: its PodScheduled=False condition, else its creation."""
    scheduled = condition(pod, "PodScheduled")
    began = timestamp(scheduled.get("lastTransitionTime")) if scheduled is not None else None
    began = began or timestamp(meta(pod).get("creationTimestamp"))
    return began.timestamp() if began is not None else None


def waiting_workloads(cluster: str, pods: Iterable[Object]) -> dict[Key, Stuck]:
    """The unscheduled pods grouped by workload: how many, since when, and which one to diagnose."""
    groups: dict[tuple[str, str, str], list[tuple[float, Object]]] = {}
    for pod in pods:
        since = pending_since(pod)
        if since is not None and not meta(pod).get("deletionTimestamp"):
            groups.setdefault((namespace(pod), *workload(pod)), []).append((since, pod))
    found: dict[Key, Stuck] = {}
    for (ns, kind, owner), waiting in groups.items():
        since, oldest = min(waiting, key=lambda pair: (pair[0], name(pair[1])))
        target = Target(
            kind="jobset" if kind == "JobSet" else "pod",
            namespace=ns,
            name=owner if kind == "JobSet" else name(oldest),
            cluster=cluster,
        )
        stuck = Stuck(cluster, ns, kind, owner, "pending", since, target, pods=len(waiting))
        found[stuck.key] = stuck
    return found


class RestartCounter:
    """The restarts of each JobSet seen by this replica within a window: `status.restarts` read at each
    sweep, its increases kept with the time they were seen."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str], int] = {}
        self._bumps: dict[tuple[str, str, str], deque[tuple[float, int]]] = {}

    def observe(self, cluster: str, counts: Mapping[tuple[str, str], int], now: float) -> None:
        for (ns, jobset), restarts in counts.items():
            key = (cluster, ns, jobset)
            before = self._last.get(key)
            self._last[key] = restarts
            if before is not None and restarts > before:
                self._bumps.setdefault(key, deque()).append((now, restarts - before))

    def loops(self, cluster: str, window: float, now: float) -> dict[Key, Stuck]:
        """The JobSets of `cluster` that restarted within `window` seconds, with how often."""
        found: dict[Key, Stuck] = {}
        for (in_cluster, ns, jobset), bumps in self._bumps.items():
            recent = [(at, n) for at, n in bumps if now - at <= window]
            if in_cluster != cluster or not recent:
                continue
            target = Target(kind="jobset", namespace=ns, name=jobset, cluster=cluster)
            stuck = Stuck(
                cluster,
                ns,
                "JobSet",
                jobset,
                "restarts",
                recent[0][0],
                target,
                restarts=sum(n for _, n in recent),
            )
            found[stuck.key] = stuck
        return found

    def forget_before(self, horizon: float) -> None:
        for bumps in self._bumps.values():
            while bumps and bumps[0][0] < horizon:
                bumps.popleft()


# ---- the messages


def _at(epoch: float) -> str:
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
        elements=[MarkdownTextObject(text=messages.incident_facts(incident.cluster, _at(incident.since)))]
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
    if incident.fix:
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=messages.first_fix(escape(incident.fix))[:3000]))
        )
    if incident.detail:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=incident.detail)]))
    blocks.append(facts)
    if incident.silenced_until is not None and incident.silenced_until > now:
        line = messages.silenced(
            incident.silence_scope or "workload", incident.silenced_by or "", _at(incident.silenced_until)
        )
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=line)]))
    else:
        blocks.append(_silence_menu())
    return SlackMessage(f"{incident.verdict}: {kind} {what}", tuple(b.to_dict() for b in blocks))


def _clipped(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _summary(check: Check) -> str:
    return _clipped(" ".join(check.summary.split()))


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


def _words(check: Check) -> set[str]:
    """The verdict words `ignore` is matched against: the workload's, and its blocking pod's."""
    words = {check.verdict}
    if isinstance(check.outcome, Reply) and check.outcome.diagnosis.pod_verdict:
        words.add(str(check.outcome.diagnosis.pod_verdict))
    return words


# ---- the sentinel


class Sentinel:
    """Sweeps the enabled channels every `sentinel.interval_seconds` while `leads()` says this replica
    holds the Lease; serves the Silence menu on every replica."""

    def __init__(
        self,
        config: Config,
        clusters: Clusters,
        check: Callable[[Target], Awaitable[Check]],
        client: AsyncWebClient,
        poster: Poster,
        access: Access,
        metrics: Metrics,
    ) -> None:
        self._config = config
        self._clusters = clusters
        self._check = check
        self._client = client
        self._poster = poster
        self._access = access
        self._metrics = metrics
        self._restarts = RestartCounter()
        self.bot_id: str | None = None
        """The bot's own id (auth.test): only its messages are read back."""

    @property
    def channels(self) -> tuple[str, ...]:
        return self._config.sentinel_channels

    async def run(self, leading: asyncio.Event, leads: Callable[[], bool]) -> None:
        """Sweep while leading, until cancelled."""
        interval = self._config.sentinel.interval_seconds
        while True:
            await leading.wait()
            try:
                await self.sweep(leads)
            except (SlackApiError, aiohttp.ClientError, ClusterError) as error:
                log.warning("sentinel: the sweep stopped early: %s", error)
            await asyncio.sleep(interval)

    async def sweep(self, leads: Callable[[], bool]) -> None:
        now = time.time()
        windows = [self._config.channel(c).sentinel.restarts_window_minutes * 60 for c in self.channels]
        self._restarts.forget_before(now - max(windows, default=HOUR))
        watched = {cluster for channel in self.channels for cluster in self._config.watched_clusters(channel)}
        found: dict[str, list[Object]] = {}
        for cluster in sorted(watched):
            cache = self._clusters.caches.get(cluster)
            if cache is None or not cache.pending_synced:
                continue  # what waits there is not known now: neither post nor resolve
            found[cluster] = list(cache.pending_pods())
            read_restarts = self._clusters.jobset_restarts(cluster)
            if read_restarts is not None:
                self._restarts.observe(cluster, await read_restarts(None), now)
        for channel in self.channels:
            if not leads():
                return
            await self._sweep_channel(channel, found, now, leads)

    async def _sweep_channel(
        self, channel: str, found: Mapping[str, Sequence[Object]], now: float, leads: Callable[[], bool]
    ) -> None:
        settings = self._config.channel(channel)
        sentinel = settings.sentinel
        window = sentinel.restarts_window_minutes * 60
        state = await self._read_back(channel, now)
        stuck: dict[Key, Stuck] = {}
        for cluster in self._config.watched_clusters(channel):
            if cluster not in found:
                continue
            scoped = [
                p
                for p in found[cluster]
                if settings.namespaces is None or namespace(p) in settings.namespaces
            ]
            stuck |= waiting_workloads(cluster, scoped)
            stuck |= {
                key: loop
                for key, loop in self._restarts.loops(cluster, window, now).items()
                if settings.namespaces is None or loop.namespace in settings.namespaces
            }
        for key, incident in state.incidents.items():
            if incident.meta.resolved is not None or incident.meta.cluster not in found:
                continue
            if not leads():
                return
            if key in stuck:
                await self._follow(channel, incident, stuck[key], now, sentinel)
            else:
                await self._resolve(channel, incident, now, sentinel)
        held: list[str] = []
        for key, candidate in sorted(stuck.items(), key=lambda pair: pair[1].since):
            if key in state.incidents and state.incidents[key].meta.resolved is None:
                continue
            if not self._due(candidate, sentinel, now) or any(
                s.silences(candidate, now) for s in state.silences
            ):
                continue
            if state.posted >= sentinel.max_posts_per_hour:
                held.append(f"{candidate.cluster}/{candidate.namespace}/{candidate.kind}/{candidate.name}")
                continue
            check = await self._check(candidate.target)
            if not self._worth_posting(candidate, check, sentinel):
                continue
            if not leads():
                return
            await self._post(channel, candidate, check, now, sentinel)
            state.posted += 1
        if held:
            await self._hold(channel, state, held, sentinel.max_posts_per_hour)

    @staticmethod
    def _worth_posting(candidate: Stuck, check: Check, sentinel: SentinelConfig) -> bool:
        """A diagnosis (not a cluster error), not an ignored verdict, and still stuck: a pending
        workload whose pod was placed meanwhile is not, while a JobSet seen restarting is, whatever
        the explainer calls it now (running between two restarts, failed past maxRestarts), unless it
        completed."""
        if not isinstance(check.outcome, Reply) or _words(check) & set(sentinel.ignore):
            return False
        if candidate.cause == "restarts":
            return check.verdict != JobSetVerdict.COMPLETED
        return not check.settled

    @staticmethod
    def _due(candidate: Stuck, sentinel: SentinelConfig, now: float) -> bool:
        if candidate.cause == "restarts":
            return candidate.restarts >= sentinel.restarts
        return now - candidate.since >= sentinel.pending_minutes * 60

    async def _read_back(self, channel: str, now: float) -> ChannelState:
        """The channel's incidents, silences and summary line, from its messages of the last
        LOOKBACK_SECONDS (newest first, at most HISTORY_PAGES pages)."""
        messages: list[Mapping[str, Any]] = []
        cursor = None
        for _ in range(HISTORY_PAGES):
            answer = await self._client.conversations_history(
                channel=channel,
                oldest=f"{now - LOOKBACK_SECONDS:.6f}",
                limit=HISTORY_LIMIT,
                cursor=cursor,
                include_all_metadata=True,
            )
            messages += answer.get("messages") or []
            cursor = (answer.get("response_metadata") or {}).get("next_cursor")
            if not (answer.get("has_more") and cursor):
                break
        state = ChannelState()
        for message in messages:
            ts = str(message.get("ts", "0"))
            recent = now - float(ts) <= HOUR
            incident = IncidentMeta.from_message(message, self.bot_id)
            if incident is not None:
                if incident.key not in state.incidents:
                    state.incidents[incident.key] = Incident(incident, ts)
                    if incident.silenced_until is not None and incident.silenced_until > now:
                        state.silences.append(incident)
                state.posted += recent
            elif (
                message.get("bot_id") == self.bot_id
                and (message.get("metadata") or {}).get("event_type") == HELD
                and recent
                and state.held_ts is None
            ):
                state.held_ts = ts
                state.held = [
                    str(w) for w in (message["metadata"].get("event_payload") or {}).get("workloads", [])
                ]
        return state

    async def _post(
        self, channel: str, candidate: Stuck, check: Check, now: float, sentinel: SentinelConfig
    ) -> None:
        incident = IncidentMeta(
            cluster=candidate.cluster,
            namespace=candidate.namespace,
            kind=candidate.kind,
            name=candidate.name,
            cause=candidate.cause,
            verdict=check.verdict,
            summary=_summary(check),
            fix=_fix(check),
            detail=_detail(check),
            pods=candidate.pods,
            restarts=candidate.restarts,
            since=candidate.since,
        )
        message = incident_message(incident, now, sentinel.restarts_window_minutes)
        posted = await self._client.chat_postMessage(
            channel=channel,
            text=message.text,
            blocks=list(message.blocks),
            metadata=incident.metadata(),
            unfurl_links=False,
            unfurl_media=False,
        )
        self._metrics.incident("opened")
        self._metrics.posted_after(time.time() - candidate.since)
        log.info("sentinel: posted %s %s %s in %s", check.verdict, candidate.kind, incident.what, channel)
        await self._poster.details(channel, posted["ts"], check)

    async def _follow(
        self, channel: str, incident: Incident, candidate: Stuck, now: float, sentinel: SentinelConfig
    ) -> None:
        """Re-check an open incident: redraw it with the current verdict and counts, and say in its
        thread when the verdict changed."""
        check = await self._check(candidate.target)
        if not isinstance(check.outcome, Reply):
            return  # the cluster could not be read: keep what the message says
        before = incident.meta
        after = before.model_copy(
            update={
                "verdict": check.verdict,
                "summary": _summary(check),
                "fix": _fix(check),
                "detail": _detail(check),
                "pods": candidate.pods,
                "restarts": candidate.restarts,
            }
        )
        if after == before:
            return
        await self._update(channel, incident.ts, after, now, sentinel)
        silenced = before.silenced_until is not None and before.silenced_until > now
        if after.verdict != before.verdict and not silenced:
            line = messages.verdict_changed(before.verdict, after.verdict, escape(check.summary))
            await self._poster.say(channel, incident.ts, note(line))
            await self._poster.details(channel, incident.ts, check)

    async def _resolve(self, channel: str, incident: Incident, now: float, sentinel: SentinelConfig) -> None:
        resolved = incident.meta.model_copy(update={"resolved": now})
        await self._update(channel, incident.ts, resolved, now, sentinel)
        self._metrics.incident("resolved")
        await self._poster.say(
            channel, incident.ts, note(messages.resolved_line(messages.minutes(now - resolved.since)))
        )
        log.info("sentinel: resolved %s %s in %s", resolved.kind, resolved.what, channel)

    async def _update(
        self, channel: str, ts: str, incident: IncidentMeta, now: float, sentinel: SentinelConfig
    ) -> None:
        """Redraw the incident, keeping a silence chosen since the channel was read back (on either
        replica): the message's metadata is read again right before it is rewritten."""
        latest = await self._incident_at(channel, ts, self.bot_id)
        if latest is not None and latest.silenced_until != incident.silenced_until:
            silence = ("silenced_until", "silence_scope", "silenced_by")
            incident = incident.model_copy(update={f: getattr(latest, f) for f in silence})
        message = incident_message(incident, now, sentinel.restarts_window_minutes)
        await self._client.chat_update(
            channel=channel,
            ts=ts,
            text=message.text,
            blocks=list(message.blocks),
            metadata=incident.metadata(),
        )

    async def _hold(self, channel: str, state: ChannelState, held: list[str], limit: int) -> None:
        """One summary line an hour for the incidents past the limit, its count updated in place."""
        workloads = sorted(set(state.held) | set(held))[:HISTORY_LIMIT]
        if workloads == sorted(state.held):
            return
        line = note(messages.held(len(workloads), limit))
        metadata = {"event_type": HELD, "event_payload": {"workloads": workloads}}
        new = len(set(workloads) - set(state.held))
        if state.held_ts is None:
            await self._client.chat_postMessage(
                channel=channel, text=line.text, blocks=list(line.blocks), metadata=metadata
            )
        else:
            await self._client.chat_update(
                channel=channel, ts=state.held_ts, text=line.text, blocks=list(line.blocks), metadata=metadata
            )
        for _ in range(new):
            self._metrics.incident("held")

    async def _incident_at(self, channel: str, ts: str, bot_id: str | None) -> IncidentMeta | None:
        """The incident the bot's message at `ts` carries now, read from Slack."""
        answer = await self._client.conversations_history(
            channel=channel, latest=ts, oldest=ts, inclusive=True, limit=1, include_all_metadata=True
        )
        message: Mapping[str, Any] = next((m for m in answer.get("messages") or [] if m.get("ts") == ts), {})
        return IncidentMeta.from_message(message, bot_id)

    # ---- the Silence menu (every replica)

    async def silence(
        self, ack: AsyncAck, body: Mapping[str, Any], action: Mapping[str, Any], context: AsyncBoltContext
    ) -> None:
        """Silence the incident's workload or namespace for the chosen time: written into the incident
        message's metadata, where the leader reads it back."""
        await ack()
        chosen = str((action.get("selected_option") or {}).get("value", ""))
        choice = next(((s, m) for s, m, _ in messages.SILENCE_CHOICES if f"{s}:{m}" == chosen), None)
        container = body.get("container") or {}
        channel, user = (body.get("channel") or {}).get("id", ""), (body.get("user") or {}).get("id", "")
        ts = str(container.get("message_ts", ""))
        if choice is None or not (channel and user and ts):
            log.warning("ignoring a Silence with a malformed value or container: %.100s", chosen)
            return
        refusal = await self._access.refusal(channel, user, None)
        if refusal is not None:
            await self._client.chat_postEphemeral(channel=channel, user=user, text=f":no_entry: {refusal}")
            return
        incident = await self._incident_at(channel, ts, context.bot_id)
        if incident is None:
            return
        scope, minutes = choice
        now = time.time()
        silenced = incident.model_copy(
            update={"silenced_until": now + minutes * 60, "silence_scope": scope, "silenced_by": user}
        )
        window = self._config.channel(channel).sentinel.restarts_window_minutes
        drawn = incident_message(silenced, now, window)
        await self._client.chat_update(
            channel=channel, ts=ts, text=drawn.text, blocks=list(drawn.blocks), metadata=silenced.metadata()
        )
        await self._poster.say(channel, ts, note(messages.silenced(scope, user, _at(now + minutes * 60))))
        self._metrics.incident("silenced")


SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
"""The pod's own namespace, as the kubelet mounts it with the ServiceAccount token."""


def lease_options(config: Config) -> LeaseOptions:
    """The Lease from the config; its namespace, when not set, is the pod's own."""
    namespace = config.lease.namespace
    if namespace is None:
        try:
            namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
        except OSError:
            raise SettingsError(
                "lease.namespace is required when kubewhy does not run in a pod (the sentinel's Lease"
                " lives in the bot's namespace)"
            ) from None
    return LeaseOptions(
        namespace,
        config.lease.name,
        config.lease.duration_seconds,
        config.lease.renew_deadline_seconds,
        config.lease.retry_seconds,
    )


@asynccontextmanager
async def running(
    config: Config, clusters: Clusters, sentinel: Sentinel, metrics: Metrics
) -> AsyncIterator[None]:
    """Elect a leader and sweep under it while the block runs, when a channel enables the sentinel;
    at the end, stop sweeping and release the Lease so that the other replica takes over at once."""
    if not config.sentinel_channels:
        yield
        return
    identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    elector = clusters.elector(
        config.lease.cluster or config.fallback_cluster, lease_options(config), identity, metrics.lease
    )
    electing = asyncio.create_task(elector.run(), name="kubewhy-lease")
    sweeping = asyncio.create_task(
        sentinel.run(elector.leading, lambda: elector.is_leader), name="kubewhy-sentinel"
    )
    for task in (electing, sweeping):
        task.add_done_callback(_log_failure)
    log.info("sentinel: %d channels; electing a leader as %s", len(config.sentinel_channels), identity)
    try:
        yield
    finally:
        sweeping.cancel()
        await asyncio.gather(sweeping, return_exceptions=True)
        electing.cancel()
        await asyncio.gather(electing, return_exceptions=True)
        await elector.release()
        await elector.aclose()


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("%s failed", task.get_name(), exc_info=error)
