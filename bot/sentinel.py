"""The sentinel: kubewhy speaks first, in the channels that enable it (`channels.ID.sentinel`).

One message per incident, not per event. An incident is one stuck workload (`bot.stuck`): its pods
wait for a node past `pending_minutes`, or the JobSet restarted `restarts` times within
`restarts_window_minutes`. Its message (`bot.incident_message`, drawn from its metadata,
`bot.incidents`) gives the usual verdict, how many pods wait, the first fix, and the details in its
thread. While it lasts, the message follows the verdict and the thread gets a line when the verdict
changes; when no pod waits any more (or the JobSet stops restarting) the message is marked resolved in
place, with the time it took. Every message is posted, rewritten and read back by `bot.answers.Poster`.

Only the replica holding the Lease (`cluster.lease`) sweeps, and it checks that it still holds it right
before each post. Its state is Slack's: each sweep first reads the channel back (`conversations.history`
with message metadata). So a replica that takes over after a failover or a rolling update resumes the
open incidents and honours the silences without posting anything twice, and a `Silence` chosen on
either replica (both serve Slack) is seen by the leader at its next sweep.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError

from bot import messages
from bot.access import Access
from bot.answers import Place, Poster
from bot.blocks import SlackMessage, escape, note
from bot.checks import Check
from bot.clusters import Clusters
from bot.incident_message import clock, incident_message
from bot.incidents import HOUR, ChannelState, Incident, IncidentMeta, held_metadata
from bot.metrics import Metrics
from bot.settings import Config, SentinelConfig, SettingsError
from bot.stuck import RestartCounter, Stuck, stuck_in
from cluster.errors import ClusterError
from cluster.lease import LeaseOptions
from diagnosis.objects import Object
from handlers.reply import Reply
from handlers.requests import Target

log = logging.getLogger(__name__)

LOOKBACK_SECONDS = 24 * 3600
"""How far back a channel is read: the longest silence. An incident still open after that is posted
anew, as a reminder."""
HISTORY_LIMIT = 200
"""Messages per page of conversations.history (Slack recommends no more than 200)."""
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
        """Follow or resolve the channel's open incidents, then post the new ones (or count them in the
        summary line past the hourly limit), checking before each change that this replica leads."""
        settings = self._config.channel(channel)
        sentinel = settings.sentinel
        state = ChannelState.read(
            await self._poster.history(channel, now - LOOKBACK_SECONDS, HISTORY_LIMIT, HISTORY_PAGES),
            self.bot_id,
            now,
        )
        stuck = stuck_in(settings, self._config.watched_clusters(channel), found, self._restarts, now)
        for incident in state.open_in(found):
            if not leads():
                return
            if incident.meta.key in stuck:
                await self._follow(channel, incident, stuck[incident.meta.key], now, sentinel)
            else:
                await self._resolve(channel, incident, now, sentinel)
        held: list[str] = []
        for candidate in state.to_post(stuck, sentinel, now):
            if state.posted >= sentinel.max_posts_per_hour:
                held.append(candidate.path)
                continue
            check = await self._check(candidate.target)
            if not candidate.worth_posting(check, sentinel):
                continue
            if not leads():
                return
            await self._post(channel, candidate, check, now, sentinel)
            state.posted += 1
        if held:
            await self._hold(channel, state, held, sentinel.max_posts_per_hour)

    async def _post(
        self, channel: str, candidate: Stuck, check: Check, now: float, sentinel: SentinelConfig
    ) -> None:
        incident = IncidentMeta.opened(candidate, check)
        message = incident_message(incident, now, sentinel.restarts_window_minutes)
        ts = await self._poster.say(channel, None, message, incident.metadata())
        self._metrics.incident("opened")
        self._metrics.posted_after(time.time() - candidate.since)
        log.info("sentinel: posted %s %s %s in %s", check.verdict, candidate.kind, incident.what, channel)
        await self._poster.details(channel, ts, check)

    async def _follow(
        self, channel: str, incident: Incident, candidate: Stuck, now: float, sentinel: SentinelConfig
    ) -> None:
        """Re-check an open incident: redraw it with the current verdict and counts, and say in its
        thread when the verdict changed."""
        check = await self._check(candidate.target)
        if not isinstance(check.outcome, Reply):
            return  # the cluster could not be read: keep what the message says
        before = incident.meta
        after = before.followed(candidate, check)
        if after == before:
            return
        await self._update(channel, incident.ts, after, now, sentinel)
        if after.verdict != before.verdict and not before.silenced(now):
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
        latest = IncidentMeta.from_message(await self._poster.message(channel, ts), self.bot_id)
        incident = incident.keeping_silence(latest)
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
            await self._poster.personal(Place(channel, user), SlackMessage(f":no_entry: {refusal}", ()))
            return
        incident = IncidentMeta.from_message(await self._poster.message(channel, ts), context.bot_id)
        if incident is None:
            return
        scope, minutes = choice
        now = time.time()
        silenced = incident.model_copy(
            update={"silenced_until": now + minutes * 60, "silence_scope": scope, "silenced_by": user}
        )
        window = self._config.channel(channel).sentinel.restarts_window_minutes
        await self._poster.rewrite(channel, ts, incident_message(silenced, now, window), silenced.metadata())
        await self._poster.say(channel, ts, note(messages.silenced(scope, user, clock(now + minutes * 60))))
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
