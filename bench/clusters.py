"""One simulated cluster per size, and `/triage` and `/jobset why` measured on it: kubewhy reading it
directly and through its cache, against the original tool's method; each size from a process of its
own (`isolated`), and its cache from another (`apart`)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from bench import jobset, sweep, triage
from bench.apiserver import ROOT, Key, Served, simulated
from bench.timing import Row, current_rss_mib
from bench.triage import Caps, Measured
from bot.cli import tune
from cluster.live import LiveReader

T = TypeVar("T")


@dataclass(frozen=True)
class Size:
    """One simulated cluster and how often to measure on it."""

    nodes: int
    pods_per_node: int
    kubewhy_runs: int
    baseline_runs: int
    jobset_runs: int
    direct_pods: int = 2
    """For how many of the two pods (pinned, unpinned) kubewhy is timed reading the cluster directly."""
    direct_jobset: bool = True
    slices: int = 4
    hosts_per_slice: int = 64
    dra: bool = False
    """GPUs served by the DRA driver: kubewhy's `/triage`, directly and through the cache, on its
    pinned and unpinned pods (the original tool's method reads no DRA object, so it has no row)."""
    autoscaling: bool = False
    """cluster-autoscaler speaks about the pending pods: measured as with `dra` (`run_p95_size`)."""
    pending: int | None = None
    """Pods waiting for a node (None: the generator's share, `devtools.cluster.catalog.PENDING_SHARE`)."""
    sweeps: int = 0
    """Sentinel sweeps measured through the cache (`bench.sweep`), after the questions."""


@dataclass(frozen=True)
class Plan:
    sizes: tuple[Size, ...]
    classifier: tuple[tuple[int, int], ...]
    """(nodes, pods per node) of the clusters the classifier is timed on."""
    classifier_runs: int
    burst: Size
    burst_commands: int
    burst_late: int
    soak_commands: int
    budget_s: float
    """Time for the repeated runs of one case; every case gets at least one run."""
    caps: Caps
    cli_runs: int
    sync_timeout_s: float = 300


CACHED_RUNS = 20
"""Runs of a question through the cache, at least: its targets are on the 95th percentile, which fewer
runs cannot tell from the slowest one (and each run takes a tenth of a second)."""


def cached_runs(size: Size) -> int:
    return max(size.kubewhy_runs, CACHED_RUNS)


async def run_p95_size(size: Size, plan: Plan, served: Served) -> list[Row]:
    """`/triage` on a cluster whose GPUs are DRA devices, or whose autoscaler speaks about its pending
    pods, for the pinned and the unpinned pod: kubewhy reading the cluster directly, then through its
    cache, in a new process (`cached_p95`; target: a p95 under 100 ms)."""
    rows: list[Row] = []
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        for case, pod in _pods(served).items():
            ours = await triage.measure_kubewhy(reader, pod, size.kubewhy_runs, plan.budget_s)
            rows.append(triage.p95_row(served, "kubewhy", case, ours))
    finally:
        await reader.aclose()
    sync, cached = await apart(cached_p95, size, plan, served)
    return [sync, *rows, *cached]


async def _cached_p95(size: Size, plan: Plan, served: Served) -> tuple[Row, list[Row]]:
    rows: list[Row] = []
    before = current_rss_mib()
    async with triage.cached_reader(served, plan.sync_timeout_s) as (cached, sync):
        if cached.cache is not None and cached.cache.synced:
            for case, pod in _pods(served).items():
                ours = await triage.measure_kubewhy(cached, pod, cached_runs(size), plan.budget_s)
                rows.append(triage.p95_row(served, "kubewhy + cache", case, ours))
            rows.append(triage.held_row(served, current_rss_mib() - before, _asked(rows)))
    return sync, rows


def cached_p95(size: Size, plan: Plan, served: Served) -> tuple[Row, list[Row]]:
    """`run_p95_size`'s questions through the cache: its sync row, then a row for each pod."""
    return _in_this_process(_cached_p95(size, plan, served))


ByPod = dict[str, list[Row]]
"""A cluster's rows for each pod asked about (`_pods`)."""


async def run_size(size: Size, plan: Plan, served: Served) -> list[Row]:
    """`/triage` for the pinned and the unpinned pod by the baseline, by kubewhy reading the cluster
    directly, and by kubewhy with its watch-backed cache once synced (`cached_size`, in a new process);
    `/jobset why` both ways.

    A baseline stopped by the watchdog is not repeated for the other pod (its kubectl calls are the
    same but for the pod's own GET), and none is run where `size.baseline_runs` is 0 (on 10,000 nodes
    kubectl is stopped already); `size.direct_pods` limits the direct reads where one takes
    minutes."""
    pods = _pods(served)
    baselines: dict[str, Measured] = {}
    for case, pod in pods.items() if size.baseline_runs else ():
        stopped = [m for m in baselines.values() if m.floor_s]
        baselines[case] = (
            stopped[0]
            if stopped
            else await asyncio.to_thread(
                triage.measure_baseline, served, pod, size.baseline_runs, plan.budget_s, plan.caps
            )
        )
    by_pod: ByPod = {case: [] for case in pods} | {
        case: [triage.baseline_row(served, case, m)] for case, m in baselines.items()
    }
    unmeasured = triage.Measured(None, "")
    rows: list[Row] = []
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        for case in list(pods)[: size.direct_pods]:
            ours = await triage.measure_kubewhy(reader, pods[case], size.kubewhy_runs, plan.budget_s)
            by_pod[case].append(
                triage.kubewhy_row(served, "kubewhy", case, ours, baselines.get(case, unmeasured))
            )
            paced = await triage.measure_bare(served, reader, pods[case], size.kubewhy_runs, plan.budget_s)
            if paced is not None:  # the pods of its nodes are read one LIST a node
                bare, reads = paced
                by_pod[case].append(triage.bare_row(served, case, bare, ours, reads))
        if size.direct_jobset:
            rows.append(await jobset.measure(reader, served, "kubewhy", size.jobset_runs, plan.budget_s))
    finally:
        await reader.aclose()
    sync, cached_by_pod, cached_rows = await apart(cached_size, size, plan, served, baselines)
    return [
        sync,
        *(row for case in pods for row in (*by_pod[case], *cached_by_pod.get(case, ()))),
        *rows,
        *cached_rows,
    ]


async def _cached_size(
    size: Size, plan: Plan, served: Served, baselines: dict[str, Measured]
) -> tuple[Row, ByPod, list[Row]]:
    pods = _pods(served)
    by_pod: ByPod = {case: [] for case in pods}
    rows: list[Row] = []
    unmeasured = triage.Measured(None, "")
    before = current_rss_mib()
    async with triage.cached_reader(served, plan.sync_timeout_s) as (cached, sync):
        if cached.cache is not None and cached.cache.synced:
            # The unpinned pod's funnel reaches the most nodes: asked first, it finds the cache cold.
            first = await triage.first_question(cached, pods["unpinned pod"])
            after_sync = "kubewhy + cache, first question after the sync"
            by_pod["unpinned pod"].append(triage.cache_row(served, after_sync, "unpinned pod", first))
            for case, pod in pods.items():
                ours = await triage.measure_new_placement(cached, pod, cached_runs(size), plan.budget_s)
                by_pod[case].append(
                    triage.cache_row(served, "kubewhy + cache, first question of its placement", case, ours)
                )
                ours = await triage.measure_kubewhy(cached, pod, cached_runs(size), plan.budget_s)
                by_pod[case].append(
                    triage.kubewhy_row(
                        served, "kubewhy + cache", case, ours, baselines.get(case, unmeasured)
                    )
                )
            rows.append(
                await jobset.measure(cached, served, "kubewhy + cache", size.jobset_runs, plan.budget_s)
            )
            if size.sweeps:
                rows += await sweep.measure(served, cached, size.sweeps)
            asked = [*rows, *(row for case in pods for row in by_pod[case])]
            rows.append(triage.held_row(served, current_rss_mib() - before, _asked(asked)))
    return sync, by_pod, rows


def cached_size(
    size: Size, plan: Plan, served: Served, baselines: dict[str, Measured]
) -> tuple[Row, ByPod, list[Row]]:
    """`run_size`'s questions through the cache: its sync row, the rows of each pod, and those of
    `/jobset why` and the sentinel's sweeps."""
    return _in_this_process(_cached_size(size, plan, served, baselines))


def _asked(rows: list[Row]) -> int:
    """The runs of these rows (questions, sweeps)."""
    return sum(int(row.runs) for row in rows if row.runs.isdigit())


def _pods(served: Served) -> dict[str, Key]:
    return {"pinned pod": served.pinned, "unpinned pod": served.unpinned}


def _in_this_process(work: Coroutine[Any, Any, T]) -> T:
    """`work` run as the whole of a process that `apart` started."""
    tune()
    os.chdir(ROOT)
    return asyncio.run(work)


async def apart(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a new process. Python keeps the memory a process freed for its next objects:
    after the direct reads of a larger cluster and kubectl's output decoded for the baseline, the next
    cluster's cache lies scattered among them, and its answers measured 15 % slower (85 → 100 ms on
    5,000 nodes) for the order of the run alone; a cache synced in a process that read the cluster
    directly before grows it less than it grows a new one (it reuses the memory they freed: at 65,000
    nodes with DRA, +219 MiB against +1,342 in a new process), and direct reads after a sync in the
    same process slowed by half. A `kubewhy serve` holds one cache per cluster from its start."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return await asyncio.wrap_future(pool.submit(work, *args))


async def isolated(size: Size, plan: Plan) -> list[Row]:
    """`measure_size` in a new process (`apart`): the simulator it starts, and the direct reads, are
    its own; the cache is measured in a new process of its own."""
    return await apart(measure_size, size, plan)


def measure_size(size: Size, plan: Plan) -> list[Row]:
    """`/triage` and `/jobset why` on one simulated cluster (`run_size`, `run_p95_size`)."""

    async def measure() -> list[Row]:
        with simulated(
            size.nodes,
            size.pods_per_node,
            slices=size.slices,
            hosts_per_slice=size.hosts_per_slice,
            dra=size.dra,
            autoscaling=size.autoscaling,
            pending=size.pending,
        ) as served:
            return await (run_p95_size if size.dra or size.autoscaling else run_size)(size, plan, served)

    return _in_this_process(measure())
