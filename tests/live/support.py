"""What the live tests share: this folder's own realistic cases (beside the corpus), readers over a
running simulator (direct, or with a cache in its steady state) that are always closed, and waiting
for state that other threads keep."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from cluster.cache import CacheOptions
from cluster.errors import NotFound
from cluster.live import LiveReader
from devtools.apisim import Simulator
from devtools.corpus import Case

GPU_CLUSTER = Path(__file__).with_name("data") / "gpu-cluster.json"
"""A GKE cluster with A100, L4 Spot and CPU pools, pods of every triage verdict, Kueue and a JobSet
whose leader cannot be placed."""

OWN_TRIAGE = [
    Case("triage", GPU_CLUSTER, namespace, name, verdict)
    for namespace, name, verdict in (
        ("ml-train", "llama-ft-0-x7k2p", "exhausted"),
        ("ml-train", "notebook-alice", "no-gpu-node"),
        ("ml-train", "notebook-bob", "allocatable-zero"),
        ("ml-train", "notebook-carol", "schedulable"),
        ("ml-train", "notebook-dave", "taint"),
        ("ml-train", "h100-probe", "label-mismatch"),
        ("ml-train", "batch-infer-0-4tq8m", "gated"),
        ("ml-serve", "vllm-llama3-8b-7d9f8b6c5-k2xjp", "ok"),
        ("ml-serve", "router-6b8f9c7d4d-2lmwz", "no-request"),
    )
]

OWN_JOBSET = [
    Case("jobset", GPU_CLUSTER, "ml-train", "resnet-dist", "leader-pending", pod_verdict="exhausted")
]


@asynccontextmanager
async def live_reader(
    sim: Simulator, call_timeout: float = 5.0, all_pods: bool = False
) -> AsyncIterator[LiveReader]:
    reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, call_timeout, all_pods=all_pods)
    try:
        yield reader
    finally:
        await reader.aclose()


@asynccontextmanager
async def cached_reader(
    sim: Simulator, options: CacheOptions | None = None, call_timeout: float = 5.0
) -> AsyncIterator[LiveReader]:
    """A reader whose cache of nodes and bound pods is in its steady state (see `start_cache`)."""
    reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, call_timeout, cache=options or CacheOptions())
    try:
        await start_cache(reader, sim)
        yield reader
    finally:
        await reader.aclose()


async def start_cache(reader: LiveReader, sim: Simulator) -> None:
    """Start the reader's cache and wait until it has listed what it keeps and the simulator serves
    its watches. Synced is not enough: a synced cache opens its watches afterwards, and those
    requests would land among the ones a test counts after it."""
    cache = reader.cache
    assert cache is not None
    cache.start()
    assert await cache.wait_synced(10), cache.state
    await settled(lambda: sim.open_watches() == cache.watches)


async def settled(condition: Callable[[], bool]) -> None:
    """Wait until `condition()` holds: the cache applying what the API server sent, or the simulator
    seeing a request. Both happen in threads of their own, so there is nothing to await: it is polled."""
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110 (polls state kept by other threads)
            await asyncio.sleep(0.01)


ABSENT = "kubewhy-absent"
"""A name no corpus snapshot uses: the NotFound paths read more (similar names)."""


async def ask_absent(reader: LiveReader, namespaces: Iterable[str]) -> None:
    """Ask for a pod, a JobSet and a LeaderWorkerSet that do not exist in each namespace: each is
    NotFound, after the reads that look for similar names."""
    for namespace in namespaces:
        with pytest.raises(NotFound):
            await reader.triage_view(namespace, ABSENT)
        with pytest.raises(NotFound):
            await reader.jobset_view(namespace, ABSENT)
        with pytest.raises(NotFound):
            await reader.lws_view(namespace, ABSENT)
