"""The clusters the bot can read, by name, and which one a question goes to.

Readers are built once at start (a bad kubeconfig or snapshot stops the start with a clear error) and
closed at shutdown. A question names its cluster with `--cluster`, else its channel's default, else the
config's default. Every live cluster has a cache unless it opts out (`cache.enabled: false`); the caches
are started with the bot (`start`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from bot import messages
from bot.settings import ClusterConfig, Config
from cluster.errors import ClusterError
from cluster.reader import Reader
from handlers.reply import Scope
from handlers.requests import Target

if TYPE_CHECKING:
    from cluster.cache import ClusterCache
    from cluster.lease import Elector, LeaseOptions, Observer

PING_SECONDS = 5.0


def build_reader(config: ClusterConfig, pending: bool = False) -> Reader:
    """A reader for one configured cluster. The live client is imported only when a live cluster is
    configured, so `kubewhy ask` on a snapshot starts quickly. A cache also keeps the unscheduled pods
    that ask for devices (`/triage` names those competing with the pod); `pending`: a sentinel
    watches the cluster, so its cache is started even if not enabled."""
    if config.snapshot is not None:
        from cluster.snapshot import SnapshotReader

        return SnapshotReader.from_path(config.snapshot)
    from cluster.cache import CacheOptions
    from cluster.live import LiveReader

    wanted = config.cache.enabled or pending
    cache = CacheOptions(max_objects=config.cache.max_objects, pending=True) if wanted else None
    if config.in_cluster:
        return LiveReader.in_cluster(timeout=config.timeout, cache=cache)
    kubeconfig = str(config.kubeconfig) if config.kubeconfig else None
    return LiveReader.from_kubeconfig(kubeconfig, config.context, timeout=config.timeout, cache=cache)


def kubectl_context(config: ClusterConfig, reader: Reader) -> str | None:
    """The kubectl context people reach a configured cluster with: its `context` (which an
    in-cluster cluster may set for its commands alone), else the kubeconfig context the bot reads it
    through (the kubeconfig's current one). None for an in-cluster cluster that sets none, and for a
    snapshot."""
    if config.context or config.in_cluster or config.snapshot is not None:
        return config.context
    context: str = getattr(reader, "context", "")  # a live reader's; "" when it fell back to in-cluster
    return context or None


class Clusters:
    def __init__(self, readers: Mapping[str, Reader], config: Config) -> None:
        self._readers = dict(readers)
        self._config = config

    @classmethod
    def from_config(cls, config: Config) -> Clusters:
        watched = {c for channel in config.sentinel_channels for c in config.watched_clusters(channel)}
        return cls({name: build_reader(c, name in watched) for name, c in config.clusters.items()}, config)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._readers)

    @property
    def caches(self) -> dict[str, ClusterCache]:
        """The caches of the clusters that have one, by cluster name."""
        found = {name: getattr(reader, "cache", None) for name, reader in self._readers.items()}
        return {name: cache for name, cache in found.items() if cache is not None}

    def jobset_restarts(
        self, cluster: str
    ) -> Callable[[Sequence[str] | None], Awaitable[dict[tuple[str, str], int]]] | None:
        """How the sentinel reads the JobSets' restart counts on a live cluster (None for a snapshot)."""
        found: Callable[[Sequence[str] | None], Awaitable[dict[tuple[str, str], int]]] | None = getattr(
            self._readers.get(cluster), "jobset_restarts", None
        )
        return found

    def elector(self, cluster: str, options: LeaseOptions, identity: str, observer: Observer) -> Elector:
        """A leader elector on a Lease in `cluster`, which must be live."""
        make = getattr(self._readers[cluster], "elector", None)
        if make is None:
            raise ClusterError(
                f"cluster {cluster} is a snapshot: it cannot hold a Lease", "set lease.cluster to a live one"
            )
        elector: Elector = make(options, identity, observer)
        return elector

    def cache_states(self) -> dict[str, dict[str, str]]:
        """Each cluster's cache, for /readyz: its condition word (`off` when it has none) and a line
        saying where it stands."""
        caches = self.caches
        states = {}
        for name in self._readers:
            cache, config = caches.get(name), self._config.clusters.get(name)
            if cache is not None:
                states[name] = {"state": cache.condition, "detail": cache.state}
            elif config is not None and config.snapshot is not None:
                states[name] = {"state": "off", "detail": "a snapshot: read from memory"}
            else:
                states[name] = {"state": "off", "detail": "cache.enabled is false: read directly"}
        return states

    def start(self) -> None:
        """Start filling the caches (on the running event loop); /readyz waits for them."""
        for cache in self.caches.values():
            cache.start()

    def resolve(self, target: Target, channel: str) -> Target | str:
        """`target` with its cluster named, or why it cannot be asked (an unknown cluster, or one the
        channel's `clusters` leaves out)."""
        cluster = target.cluster or self._config.channel_cluster(channel)
        if cluster not in self._readers:
            return messages.unknown_cluster(cluster, self._readers)
        allowed = self._config.channel(channel).clusters
        if allowed is not None and cluster not in allowed:
            return messages.cluster_not_allowed(cluster, allowed)
        return target.model_copy(update={"cluster": cluster})

    def reader(self, target: Target) -> Reader:
        """The reader of a resolved target's cluster."""
        return self._readers[target.cluster or self._config.fallback_cluster]

    def scope(self, target: Target) -> Scope:
        """How a resolved target's answer names its cluster and aims its kubectl commands, which
        people paste on their own machines: never with the bot's kubeconfig (a path on the bot's
        machine), and with `--context` only where the cluster's kubectl context is known
        (`kubectl_context`). Without one, the answer names the cluster and the commands no context:
        a guessed one would make kubectl refuse them all."""
        name = target.cluster or self._config.fallback_cluster
        config = self._config.clusters.get(name)
        if config is None:
            return Scope(name)
        return Scope(name, kubectl_context(config, self._readers[name]))

    async def not_ready(self) -> dict[str, str]:
        """The clusters that cannot be read now, or whose cache has not synced yet, with why (for
        /readyz). A cache that stopped leaves its cluster ready: it is read directly."""

        async def ping(reader: Reader) -> str | None:
            try:
                await asyncio.wait_for(reader.ping(), PING_SECONDS)
            except ClusterError as error:
                return str(error)
            except TimeoutError:
                return f"no answer within {PING_SECONDS:g} s"
            return None

        names = list(self._readers)
        results = await asyncio.gather(*(ping(self._readers[n]) for n in names))
        found = {name: why for name, why in zip(names, results, strict=True) if why is not None}
        for name, cache in self.caches.items():
            if name not in found and not (cache.has_synced or cache.stopped):
                found[name] = f"cache not synced yet ({cache.state})"
        return found

    async def aclose(self) -> None:
        for reader in self._readers.values():
            close = getattr(reader, "aclose", None)  # live readers hold a connection pool; snapshots nothing
            if close is not None:
                await close()
