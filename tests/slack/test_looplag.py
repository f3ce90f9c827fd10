"""The bot's own view of its event loop, and its cap on concurrent checks: in-process, on the real
metrics registry and the real checker over the GPU lab snapshot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping

from bot import looplag
from bot.checks import Checker
from bot.clusters import Clusters
from bot.metrics import Metrics
from bot.settings import Config
from cluster.reader import Reader, TriageRead
from cluster.snapshot import SnapshotReader
from diagnosis.objects import Object
from diagnosis.views import JobSetView, LwsView, TrainJobView
from handlers.reply import Reply
from handlers.requests import Target
from tests.slack.support import GPU_LAB

LAG = "kubewhy_event_loop_lag_seconds"
BLOCKED_S = 0.15
"""Longer than the 0.1 s bucket plus the monitor's interval: the blocked wake-up lands above 0.1 s."""


def _samples(metrics: Metrics, le: str = "+Inf") -> float:
    return metrics.registry.get_sample_value(f"{LAG}_bucket", {"le": le}) or 0.0


def _recording(metrics: Metrics) -> tuple[Callable[[float], None], asyncio.Event]:
    """Observe into `metrics`; the event is set at the first sample."""
    sampled = asyncio.Event()

    def observe(seconds: float) -> None:
        metrics.loop_lagged(seconds)
        sampled.set()

    return observe, sampled


async def test_a_blocked_loop_shows_in_the_buckets_above_a_tenth_of_a_second() -> None:
    metrics = Metrics()
    assert f'{LAG}_bucket{{le="0.1"}} 0.0' in metrics.exposition().decode()
    observe, sampled = _recording(metrics)
    async with looplag.watching(observe):
        await asyncio.sleep(0)  # the monitor starts its first sleep
        time.sleep(BLOCKED_S)  # noqa: ASYNC251  # the stall under test: the loop is held
        await sampled.wait()
    assert _samples(metrics) - _samples(metrics, "0.1") >= 1  # the first wake-up: 0.125 s late at least
    assert f'{LAG}_bucket{{le="0.25"}}' in metrics.exposition().decode()
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "kubewhy-loop-lag"]


class Gated:
    """The GPU lab snapshot read through a gate the test opens, counting the reads inside at once."""

    def __init__(self, inner: Reader) -> None:
        self.inner = inner
        self.gate = asyncio.Event()
        self.inside = 0
        self.most = 0

    async def triage_view(self, namespace: str, pod: str) -> TriageRead:
        self.inside += 1
        self.most = max(self.most, self.inside)
        try:
            await self.gate.wait()
            return await self.inner.triage_view(namespace, pod)
        finally:
            self.inside -= 1

    async def jobset_view(self, namespace: str, name: str) -> JobSetView:
        return await self.inner.jobset_view(namespace, name)

    async def lws_view(self, namespace: str, name: str) -> LwsView:
        return await self.inner.lws_view(namespace, name)

    async def trainjob_view(self, namespace: str, name: str) -> TrainJobView | None:
        return await self.inner.trainjob_view(namespace, name)

    async def named(self, namespace: str, name: str) -> tuple[Object, ...]:
        return await self.inner.named(namespace, name)

    async def pods_matching(self, namespace: str, selector: Mapping[str, str]) -> tuple[Object, ...]:
        return await self.inner.pods_matching(namespace, selector)

    async def ping(self) -> None:
        await self.inner.ping()


async def test_checks_past_the_cap_wait_their_turn_and_all_finish() -> None:
    config = Config.model_validate(
        {"clusters": {"lab": {"snapshot": str(GPU_LAB)}}, "max_concurrent_checks": 2}
    )
    reader = Gated(SnapshotReader.from_path(GPU_LAB))
    check = Checker(Clusters({"lab": reader}, config), Metrics(), config.max_concurrent_checks)
    target = Target(kind="pod", namespace="gpu-triage", name="case-taint", cluster="lab")
    checks = [asyncio.create_task(check(target)) for _ in range(5)]
    for _ in range(20):  # every task runs until it reads or waits for a slot
        await asyncio.sleep(0)
    assert reader.inside == 2
    reader.gate.set()
    done = await asyncio.gather(*checks)
    assert reader.most == 2
    assert [c.verdict for c in done] == ["taint"] * 5
    assert all(isinstance(c.outcome, Reply) for c in done)
