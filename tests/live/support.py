"""What the live tests share: this folder's own realistic cases (beside the corpus) and readers over
a running simulator (direct, or with a synced cache) that are always closed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from cluster.cache import CacheOptions
from cluster.live import LiveReader
from devtools.apisim import Simulator
from tests.corpus import Case

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
async def live_reader(sim: Simulator, call_timeout: float = 5.0) -> AsyncIterator[LiveReader]:
    reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, call_timeout)
    try:
        yield reader
    finally:
        await reader.aclose()


@asynccontextmanager
async def cached_reader(
    sim: Simulator, options: CacheOptions | None = None, call_timeout: float = 5.0
) -> AsyncIterator[LiveReader]:
    """A reader whose cache of nodes and bound pods has synced."""
    reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, call_timeout, cache=options or CacheOptions())
    assert reader.cache is not None
    try:
        reader.cache.start()
        assert await reader.cache.wait_synced(10), reader.cache.state
        yield reader
    finally:
        await reader.aclose()
