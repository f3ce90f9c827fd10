"""Prometheus metrics of one bot, in its own registry (no process-global state): questions by command
and verdict, how long answers take, API errors by kind, how late the event loop runs, and what each
cluster's cache holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from prometheus_client import Metric

    from cluster.cache import ClusterCache

LOOP_LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
"""Slack wants an ack within 3 s; a stall past 100 ms is already felt by every request in flight."""

POST_DELAY_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600)
"""From a pod's wait beginning to its incident's post: the threshold (10 min by default) plus the
sentinel's delay."""


class Metrics:
    CONTENT_TYPE = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter(
            "kubewhy_commands",
            "Questions answered, by command and verdict.",
            ["command", "verdict"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kubewhy_answer_seconds",
            "From the request to the answer posted, by command.",
            ["command"],
            registry=self.registry,
            buckets=(0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30),
        )
        self.api_errors = Counter(
            "kubewhy_api_errors",
            "Errors from the Kubernetes API and Slack's Web API, by kind.",
            ["kind"],
            registry=self.registry,
        )
        self.loop_lag = Histogram(
            "kubewhy_event_loop_lag_seconds",
            "How late the event loop ran a timer (bot.looplag): every request waited as long.",
            registry=self.registry,
            buckets=LOOP_LAG_BUCKETS,
        )

        self.incidents = Counter(
            "kubewhy_sentinel_incidents",
            "Sentinel incidents by event: opened, resolved, silenced, held (past the hourly limit).",
            ["event"],
            registry=self.registry,
        )
        self.post_delay = Histogram(
            "kubewhy_sentinel_post_delay_seconds",
            "From the moment the oldest pod of a workload began to wait (or the loop began) to the post.",
            registry=self.registry,
            buckets=POST_DELAY_BUCKETS,
        )
        self.lease_leading = Gauge(
            "kubewhy_lease_leading",
            "1 while this replica holds the Lease and runs the sentinel.",
            registry=self.registry,
        )
        self.lease_holder = Gauge(
            "kubewhy_lease_holder",
            "1 for the Lease's current holder, as this replica last read it.",
            ["holder"],
            registry=self.registry,
        )
        self.lease_transitions = Gauge(
            "kubewhy_lease_transitions",
            "The Lease's leaseTransitions: how often it changed hands.",
            registry=self.registry,
        )

    def incident(self, event: str) -> None:
        self.incidents.labels(event=event).inc()

    def posted_after(self, seconds: float) -> None:
        self.post_delay.observe(seconds)

    def lease(self, holder: str, transitions: int, leading: bool) -> None:
        self.lease_holder.clear()
        if holder:
            self.lease_holder.labels(holder=holder).set(1)
        self.lease_transitions.set(transitions)
        self.lease_leading.set(1 if leading else 0)

    def track_caches(self, caches: Callable[[], Mapping[str, ClusterCache]]) -> None:
        """Report the caches `caches()` gives (by cluster name) at every scrape."""
        self.registry.register(_CacheCollector(caches))

    def answered(self, command: str, verdict: str, seconds: float) -> None:
        self.commands.labels(command=command, verdict=verdict).inc()
        self.latency.labels(command=command).observe(seconds)

    def api_error(self, kind: str) -> None:
        self.api_errors.labels(kind=kind).inc()

    def loop_lagged(self, seconds: float) -> None:
        self.loop_lag.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _CacheCollector(Collector):
    """Each cache's state, read when /metrics is scraped: whether answers come from it, the objects
    it holds (bounded by `cache.max_objects`), the memory they take (estimated) and how long since the
    API server last told it anything."""

    def __init__(self, caches: Callable[[], Mapping[str, ClusterCache]]) -> None:
        self._caches = caches

    def collect(self) -> Iterator[Metric]:
        ready = GaugeMetricFamily(
            "kubewhy_cache_ready",
            "1 when the cluster's cache answers; 0 while it syncs, falls behind or stopped (read directly).",
            labels=["cluster"],
        )
        held = GaugeMetricFamily(
            "kubewhy_cache_objects", "Objects the cache holds, by resource.", labels=["cluster", "resource"]
        )
        size = GaugeMetricFamily(
            "kubewhy_cache_bytes", "Memory the cache's objects take (estimated).", labels=["cluster"]
        )
        age = GaugeMetricFamily(
            "kubewhy_cache_sync_age_seconds",
            "Seconds since the API server last sent the cache a page, an event or a bookmark.",
            labels=["cluster"],
        )
        for cluster, cache in self._caches().items():
            ready.add_metric([cluster], 1.0 if cache.synced else 0.0)
            for resource, count in cache.held.items():
                held.add_metric([cluster, resource], count)
            size.add_metric([cluster], cache.estimated_bytes())
            if (seconds := cache.age()) is not None:
                age.add_metric([cluster], seconds)
        yield from (ready, held, size, age)
