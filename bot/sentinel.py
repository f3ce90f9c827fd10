"""The sentinel: kubewhy speaks first, in the channels that enable it (`channels.ID.sentinel`).

One message per cause, not per event nor per workload. A workload is stuck (`bot.stuck`) when its pods
wait for a node past `pending_minutes`, or its JobSet restarted `restarts` times within
`restarts_window_minutes`; each sweep diagnoses every stuck workload and groups them by what blocks
them (`bot.stuck.blocked_by`: the verdict and the blocking nodes and holders, from the diagnosis), and
each group is one incident that lists its workloads (`bot.incidents.assign` keeps an incident's message
when its workloads' cause changes). Its message (`bot.incident_message`, drawn from its metadata,
`bot.incidents`) gives the verdict, how many pods wait, the first fix, the user groups told
(`sentinel.mention`), and the details in its thread. While it lasts, the message grows, shrinks and
follows the verdict in place, and the thread gets a line and the details when the verdict changes;
when no workload is stuck any more it is marked resolved in place, with the time it took. Re-check,
Acknowledge and Silence work on either replica and are kept in the message's metadata. Every message is
posted, rewritten and read back by `bot.answers.Poster`.

Only the replica holding the Lease (`cluster.lease`) sweeps, and it checks that it still holds it right
before each post. Its state is Slack's: each sweep first reads the channel back (`conversations.history`
with message metadata). So a replica that takes over after a failover or a rolling update resumes the
open incidents, completes a thread its poster left unfinished (`IncidentMeta.thread_done`) and
honours the silences without posting anything twice.

Bounded and quiet: pods that leave Pending before the threshold are never posted, nor while a node
is on its way for them (until the provision timeout); a channel gets at most `max_posts_per_hour` new
incidents an hour, and past that one summary line, updated in place, counts the others; `ignore` names
verdicts never posted.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError

from bot import blocks, messages
from bot.access import Access
from bot.answers import HISTORY_LIMIT, Place, Poster
from bot.blocks import SlackMessage, escape, note
from bot.checks import Check
from bot.clusters import Clusters
from bot.incident_message import clock, incident_message, mentions
from bot.incidents import HOUR, Blocked, ChannelState, Incident, IncidentMeta, assign, first, held_metadata
from bot.metrics import Metrics
from bot.settings import Config, SentinelConfig, SettingsError
from bot.stuck import Key, RestartCounter, Stuck, blocked_by, node_on_its_way, stuck_in
from bot.threads import Watches
from cluster.errors import ClusterError
from cluster.lease import LeaseOptions
from diagnosis.objects import Object
from handlers.reply import Reply
from handlers.requests import Target

log = logging.getLogger(__name__)

LOOKBACK_SECONDS = 24 * 3600
"""How far back a channel is read: the longest silence. An incident still open after that is posted
anew, as a reminder."""
PART = "kubewhy_incident_part"
"""The metadata event type of the messages of an incident's thread (`part_metadata`)."""
HISTORY_PAGES = 5
"""Pages read back per channel and sweep at most: a busy channel's day, within Tier 3's 50 calls a
minute at the default interval."""


class Sentinel:
    """Sweeps the enabled channels every `sentinel.interval_seconds` while `leads()` says this replica
    holds the Lease; serves the Silence menu on every replica."""

    def __init__(
        self,
        config: Config,
        clusters: Clusters,
        check: Callable[[Target], Awaitable[Check]],
        poster: Poster,
        access: Access,
        metrics: Metrics,
    ) -> None:
        self._config = config
        self._clusters = clusters
        self._check = check
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
        """Diagnose the channel's stuck workloads, group them by what blocks them, follow or resolve
        the open incidents, then post the new causes (or count them in the summary line past the
        hourly limit), checking before each change that this replica leads."""
        settings = self._config.channel(channel)
        sentinel = settings.sentinel
        state = ChannelState.read(
            await self._poster.history(channel, now - LOOKBACK_SECONDS, HISTORY_LIMIT, HISTORY_PAGES),
            self.bot_id,
            now,
        )
        stuck = stuck_in(settings, self._config.watched_clusters(channel), found, self._restarts, now)
        incidents = state.open_in(found)
        groups, kept = await self._diagnose(
            state.to_check(stuck, incidents, sentinel, now), incidents, sentinel
        )
        taken = {incident.ts: cause for cause, incident in assign(incidents, groups).items()}
        for incident in incidents:
            if not leads():
                return
            if incident.ts in taken:
                cause = taken[incident.ts]
                await self._follow(channel, incident, cause, groups[cause], now, sentinel, leads)
            elif not incident.meta.member_keys & kept:
                await self._resolve(channel, incident, now, sentinel)
        new = {cause: group for cause, group in groups.items() if cause not in taken.values()}
        await self._open(channel, state, new, now, sentinel, leads)

    async def _open(
        self,
        channel: str,
        state: ChannelState,
        new: Mapping[str, Sequence[Blocked]],
        now: float,
        sentinel: SentinelConfig,
        leads: Callable[[], bool],
    ) -> None:
        """Post the new causes, oldest first, but a silenced one and one whose workloads all wait for
        a node on its way (`bot.stuck.node_on_its_way`: posted once it fails, is refused or is late);
        past the hourly limit, count their workloads in the summary line instead."""
        held: list[str] = []
        for cause, group in sorted(new.items(), key=lambda pair: first(pair[1]).stuck.since):
            if state.silenced_cause(cause) or all(node_on_its_way(b.check) for b in group):
                continue
            if state.posted >= sentinel.max_posts_per_hour:
                held += [b.stuck.path for b in group]
                continue
            if not leads():
                return
            await self._post(channel, cause, group, now, sentinel, leads)
            state.posted += 1
        if held:
            await self._hold(channel, state, held, sentinel.max_posts_per_hour)

    async def _diagnose(
        self, watched: Sequence[Stuck], incidents: Sequence[Incident], sentinel: SentinelConfig
    ) -> tuple[dict[str, list[Blocked]], set[Key]]:
        """Diagnose each workload (`bot.checks` runs a few at once) and group those worth an incident
        by what blocks them; the workloads of open incidents whose cluster could not be read are
        `kept` where they are."""
        listed = {key for incident in incidents for key in incident.meta.member_keys}
        checks = await asyncio.gather(*(self._check(s.target) for s in watched))
        groups: dict[str, list[Blocked]] = {}
        kept: set[Key] = set()
        for stuck, check in zip(watched, checks, strict=True):
            if not isinstance(check.outcome, Reply):
                kept |= {stuck.key} & listed
            elif stuck.worth_posting(check, sentinel):
                named = stuck.named_by(check)
                groups.setdefault(blocked_by(named, check), []).append(Blocked(named, check))
        return groups, kept

    def _groups(self, group: Sequence[Blocked], sentinel: SentinelConfig) -> list[str]:
        """The user groups to mention for these workloads (`sentinel.mention`)."""
        return [g for b in group if (g := b.stuck.group(sentinel.mention)) is not None]

    async def _post(
        self,
        channel: str,
        cause: str,
        group: Sequence[Blocked],
        now: float,
        sentinel: SentinelConfig,
        leads: Callable[[], bool],
    ) -> None:
        incident = IncidentMeta.opened(cause, group, self._groups(group, sentinel))
        message = incident_message(incident, now, sentinel.restarts_window_minutes)
        ts = await self._poster.say(channel, None, message, incident.metadata())
        self._metrics.incident("opened")
        self._metrics.posted_after(time.time() - incident.since)
        log.info("sentinel: posted %s %s in %s", incident.verdict, incident.what, channel)
        await self._complete(channel, Incident(incident, ts), first(group).check, 0, now, sentinel, leads)

    async def _follow(
        self,
        channel: str,
        incident: Incident,
        cause: str,
        group: Sequence[Blocked],
        now: float,
        sentinel: SentinelConfig,
        leads: Callable[[], bool],
    ) -> None:
        """Redraw an open incident with the workloads it now blocks and what their re-check found;
        mention the user groups of workloads that joined it; then write the round of its thread that
        a new verdict opened, or complete the one its poster left unfinished."""
        before = incident.meta
        mentioned = self._groups(group, sentinel)
        after = before.followed(cause, group, mentioned, quiet=before.silenced(now))
        if after != before:
            await self._update(channel, incident.ts, after, now, sentinel)
        told = tuple(g for g in after.groups if g not in before.groups)
        if told and not before.silenced(now):
            await self._tell(channel, incident.ts, told, group, sentinel)
        if not after.thread_done:
            present = 0 if after.thread != before.thread else None
            await self._complete(
                channel, Incident(after, incident.ts), first(group).check, present, now, sentinel, leads
            )

    async def _tell(
        self, channel: str, ts: str, told: tuple[str, ...], group: Sequence[Blocked], sentinel: SentinelConfig
    ) -> None:
        """Mention, in the incident's thread, the user groups of the workloads that joined it (a
        message rewritten in place notifies nobody)."""
        joined = [b.stuck for b in group if b.stuck.group(sentinel.mention) in told]
        what = ", ".join(escape(f"{s.kind} {s.namespace}/{s.name}") for s in joined)
        await self._poster.say(channel, ts, note(messages.joined(mentions(told), what)))

    async def _complete(
        self,
        channel: str,
        incident: Incident,
        check: Check,
        present: int | None,
        now: float,
        sentinel: SentinelConfig,
        leads: Callable[[], bool],
    ) -> None:
        """Write the incident's latest thread round from its `present`-th message (None: as many as
        its thread holds already), then mark the round done in the incident's metadata. A round is
        the line saying the verdict changed (after a change), then the details of `check`; each of
        its messages carries its round and place in its metadata (`PART`), so that a replica taking
        over after the poster died mid-round (`thread_done` still false) posts only what is missing."""
        meta = incident.meta
        if present is None:
            present = await self._present(channel, incident.ts, meta.thread)
        changed = messages.verdict_changed(meta.was, meta.verdict, escape(meta.summary))
        said = [note(changed)] if meta.was else []
        for part, message in enumerate([*said, *blocks.detail_messages(check)]):
            if part < present:
                continue
            if not leads():
                return
            await self._poster.say(channel, incident.ts, message, part_metadata(meta.thread, part))
        await self._update(channel, incident.ts, meta.model_copy(update={"thread_done": True}), now, sentinel)

    async def _present(self, channel: str, ts: str, round_: int) -> int:
        """How many messages of the round the incident's thread holds."""
        return sum(1 for m in await self._poster.thread(channel, ts) if part_of(m, self.bot_id) == round_)

    async def _resolve(self, channel: str, incident: Incident, now: float, sentinel: SentinelConfig) -> None:
        resolved = incident.meta.model_copy(update={"resolved": now})
        await self._update(channel, incident.ts, resolved, now, sentinel)
        self._metrics.incident("resolved")
        await self._poster.say(
            channel, incident.ts, note(messages.resolved_line(messages.minutes(now - resolved.since)))
        )
        log.info("sentinel: resolved %s in %s", resolved.what, channel)

    async def _update(
        self, channel: str, ts: str, incident: IncidentMeta, now: float, sentinel: SentinelConfig
    ) -> None:
        """Redraw the incident, keeping what people chose since the channel was read back (on either
        replica): the message's metadata is read again right before it is rewritten."""
        latest = IncidentMeta.from_message(await self._poster.message(channel, ts), self.bot_id)
        incident = incident.keeping_people(latest)
        message = incident_message(incident, now, sentinel.restarts_window_minutes)
        await self._poster.rewrite(channel, ts, message, incident.metadata())

    async def _hold(self, channel: str, state: ChannelState, held: list[str], limit: int) -> None:
        """One summary line an hour for the incidents past the limit, its count updated in place."""
        workloads = sorted(set(state.held) | set(held))[:HISTORY_LIMIT]
        if workloads == sorted(state.held):
            return
        line = note(messages.held(len(workloads), limit))
        metadata = held_metadata(workloads)
        new = len(set(workloads) - set(state.held))
        if state.held_ts is None:
            await self._poster.say(channel, None, line, metadata, unfurl=None)
        else:
            await self._poster.rewrite(channel, state.held_ts, line, metadata)
        for _ in range(new):
            self._metrics.incident("held")

    # ---- the buttons and the Silence menu (every replica: both serve Slack)

    async def silence(
        self, ack: AsyncAck, body: Mapping[str, Any], action: Mapping[str, Any], context: AsyncBoltContext
    ) -> None:
        """Silence the incident or its namespaces for the chosen time: written into the incident
        message's metadata, where the leader reads it back."""
        await ack()
        chosen = str((action.get("selected_option") or {}).get("value", ""))
        choice = next(((s, m) for s, m, _ in messages.SILENCE_CHOICES if f"{s}:{m}" == chosen), None)
        if choice is None:
            log.warning("ignoring a Silence with a malformed value: %.100s", chosen)
            return
        clicked = await self._clicked(body, context)
        if clicked is None:
            return
        scope, minutes = choice
        now = time.time()
        silenced = clicked.incident.model_copy(
            update={"silenced_until": now + minutes * 60, "silence_scope": scope, "silenced_by": clicked.user}
        )
        await self._redraw(clicked, silenced, now)
        line = messages.silenced(scope, clicked.user, clock(now + minutes * 60))
        await self._poster.say(clicked.channel, clicked.ts, note(line))
        self._metrics.incident("silenced")

    async def acknowledge(
        self, ack: AsyncAck, body: Mapping[str, Any], action: Mapping[str, Any], context: AsyncBoltContext
    ) -> None:
        """Record who acknowledged the incident, and when, in its metadata, and show it in place."""
        await ack()
        clicked = await self._clicked(body, context)
        if clicked is not None and clicked.incident.acked_by is None:
            now = time.time()
            acked = clicked.incident.model_copy(update={"acked_by": clicked.user, "acked_at": now})
            await self._redraw(clicked, acked, now)

    async def recheck(
        self, ack: AsyncAck, body: Mapping[str, Any], action: Mapping[str, Any], context: AsyncBoltContext
    ) -> None:
        """Diagnose the incident's first workload again and show what it says now, in place."""
        await ack()
        clicked = await self._clicked(body, context)
        if clicked is None:
            return
        incident = clicked.incident
        check = await self._check(incident.workloads[0].checked(incident.cluster))
        if not isinstance(check.outcome, Reply):
            place = Place(clicked.channel, clicked.user)
            await self._poster.personal(place, note(f":warning: {escape(check.summary)}"))
            return
        now = time.time()
        await self._redraw(clicked, incident.rechecked(check, clicked.user, now), now)

    async def _clicked(self, body: Mapping[str, Any], context: AsyncBoltContext) -> Clicked | None:
        """The incident whose button or menu was used, by whom, once they may use it."""
        container = body.get("container") or {}
        channel, user = (body.get("channel") or {}).get("id", ""), (body.get("user") or {}).get("id", "")
        ts = str(container.get("message_ts", ""))
        if not (channel and user and ts):
            log.warning("ignoring an incident action without its channel, user or message")
            return None
        refusal = await self._access.refusal(channel, user, None)
        if refusal is not None:
            await self._poster.personal(Place(channel, user), SlackMessage(f":no_entry: {refusal}", ()))
            return None
        incident = IncidentMeta.from_message(await self._poster.message(channel, ts), context.bot_id)
        return None if incident is None else Clicked(channel, user, ts, incident)

    async def _redraw(self, clicked: Clicked, incident: IncidentMeta, now: float) -> None:
        window = self._config.channel(clicked.channel).sentinel.restarts_window_minutes
        message = incident_message(incident, now, window)
        await self._poster.rewrite(clicked.channel, clicked.ts, message, incident.metadata())


@dataclass(frozen=True)
class Clicked:
    """An incident message someone acted on, as it was then."""

    channel: str
    user: str
    ts: str
    incident: IncidentMeta


def part_metadata(round_: int, part: int) -> dict[str, Any]:
    """The metadata of a message of an incident's thread: its round and its place in it."""
    return {"event_type": PART, "event_payload": {"round": round_, "part": part}}


def part_of(message: Mapping[str, Any], bot_id: str | None) -> int | None:
    """The round of the bot's thread message `message`, if it is part of one."""
    metadata = message.get("metadata") or {}
    if message.get("bot_id") != bot_id or metadata.get("event_type") != PART:
        return None
    found = (metadata.get("event_payload") or {}).get("round")
    return found if isinstance(found, int) else None


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
    config: Config, clusters: Clusters, sentinel: Sentinel, metrics: Metrics, watches: Watches
) -> AsyncIterator[None]:
    """Elect a leader and sweep under it while the block runs, when a channel enables the sentinel;
    at the end, stop sweeping and release the Lease so that the other replica takes over at once.
    The Lease carries the holder's watches: a replica that takes it over from a holder that died
    resumes them (`Watches.inherit`)."""
    if not config.sentinel_channels:
        yield
        return
    identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    elector = clusters.elector(
        config.lease.cluster or config.fallback_cluster, lease_options(config), identity, metrics.lease
    )
    inheriting: set[asyncio.Task[None]] = set()

    def inherit(carried: str) -> None:
        task = asyncio.create_task(
            watches.inherit(carried, sentinel.bot_id), name="kubewhy-inherited-watches"
        )
        inheriting.add(task)
        task.add_done_callback(inheriting.discard)
        task.add_done_callback(_log_failure)

    elector.carry, elector.inherit = watches.carried, inherit
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
        await asyncio.gather(sweeping, *inheriting, return_exceptions=True)
        electing.cancel()
        await asyncio.gather(electing, return_exceptions=True)
        await elector.release()
        await elector.aclose()


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("%s failed", task.get_name(), exc_info=error)
