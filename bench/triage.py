"""`/triage` end to end on one served cluster: kubewhy's live reader and handler, against the original
triage tool's method — three `kubectl get … -o json` calls (the pod, all nodes, all pods in all
namespaces) run by the real kubectl one after another, then the same classifier over their output.

kubectl runs under a watchdog: on 500k pods it needs more memory than the machine has (it was killed
by the kernel at 20 GB after 247 s on the 24 GiB benchmark machine), so a run that passes the time or
memory cap is stopped and reported as a lower bound.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import urllib3

from bench.apiserver import Key, Served
from bench.timing import Row, Sample, current_rss_mib, fmt_limit, fmt_s, repeat, repeat_async
from cluster.cache import CacheOptions, deep_size
from cluster.errors import ClusterError
from cluster.live import LiveReader
from cluster.live.nodes import label_selector, per_node
from cluster.transport import PAGE_SIZE, WORKERS, ReadStats
from devtools.apisim import TOKEN
from devtools.botenv import KUBECTL
from diagnosis.model import Diagnosis
from diagnosis.objects import name
from diagnosis.relations import NOT_TERMINAL, holds_node
from diagnosis.triage.classify import classify, usage_candidates
from diagnosis.triage.scheduling import node_selector
from diagnosis.views import TriageView
from handlers.reply import Reply, Scope
from handlers.triage import triage

BENCHMARK = "a. /triage"
BARE_FACTOR = 1.5
"""kubewhy's whole /triage (pod, events, nodes, per-node LISTs decoded, classification) against the
per-node LISTs alone sent bare: within this, its reads go at the server's pace."""
CACHE_MAX_OBJECTS = 2_000_000
"""Above the largest cluster measured (the default, 300,000, would stop the cache on 500k pods)."""
HUGE = 65_000
"""A cluster this large (GKE's largest) has targets of its own, for the cache and for reading it
directly."""
SYNC_S, HOLDS_GIB = 60.0, 1.0
"""The cache's targets on a `HUGE` cluster: synced within this, holding less than this (its deep size,
and the process's RSS growth)."""


@dataclass(frozen=True)
class Target:
    """What /triage should take on a cluster of at least `nodes` nodes: a p95 under `p95_s`, and, where
    the original tool's method was measured, `faster` times faster than it."""

    nodes: int
    cached: bool | None
    """Through the cache (True), reading directly (False), or either (None)."""
    case: str | None
    """For this pod only, or for any (None)."""
    p95_s: float
    faster: float | None = None

    def text(self) -> str:
        return (f"≥{self.faster:g}× faster, " if self.faster else "") + f"p95 < {fmt_limit(self.p95_s)}"


TARGETS = (
    Target(HUGE, True, None, 0.25),
    Target(HUGE, False, None, 15.0),
    Target(10_000, False, "unpinned pod", 3.0, faster=10),
    Target(5_000, None, None, 1.0, faster=10),
)
"""The first that applies is the target."""


def target_for(nodes: int, method: str, case: str) -> Target | None:
    cached = "cache" in method
    return next(
        (t for t in TARGETS if nodes >= t.nodes and t.cached in (None, cached) and t.case in (None, case)),
        None,
    )


class Stopped(Exception):
    """kubectl passed a cap of the watchdog and was stopped."""


@dataclass(frozen=True)
class Caps:
    """The baseline's limits: seconds for one kubectl call, and its resident memory."""

    seconds: float = 120.0
    rss_gib: float = 8.0


def _rss_gib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def kubectl_json(kubeconfig: str, cache: str, args: list[str], caps: Caps) -> Any:
    """`kubectl ARGS -o json`, decoded; stopped (Stopped) past a cap."""
    command = [str(KUBECTL), "--kubeconfig", kubeconfig, "--cache-dir", cache, *args, "-o", "json"]
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0.0
    while True:
        try:
            out, err = child.communicate(timeout=0.25)
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, _rss_gib(child.pid))
            elapsed = time.monotonic() - started
            if elapsed > caps.seconds or peak > caps.rss_gib:
                child.kill()
                child.communicate()
                raise Stopped(
                    f"kubectl {' '.join(args)} stopped after {elapsed:.0f} s at {peak:.1f} GiB RSS"
                ) from None
    if child.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {err.decode()[:300]}")
    return json.loads(out)


def baseline(served: Served, target: Key, cache: str, caps: Caps) -> Diagnosis:
    """The original tool's method: the pod, every node, every pod, then the classifier."""
    namespace, name = target
    pod = kubectl_json(served.kubeconfig, cache, ["get", "pod", "-n", namespace, name], caps)
    nodes = kubectl_json(served.kubeconfig, cache, ["get", "nodes"], caps)["items"]
    pods = kubectl_json(served.kubeconfig, cache, ["get", "pods", "--all-namespaces"], caps)["items"]
    bound = tuple(filter(holds_node, pods))
    return classify(TriageView(pod, tuple(nodes), bound, (), datetime.now(UTC)))


@dataclass(frozen=True)
class Measured:
    """One method on one pod: its times and verdict, or why it did not finish."""

    sample: Sample | None
    verdict: str
    failure: str = ""
    detail: str = ""
    floor_s: float = 0.0
    """For a run stopped by the watchdog: how long it had run (a lower bound of its time)."""


@dataclass(frozen=True)
class Reads:
    """Repeated runs of one question through a live reader."""

    sample: Sample
    reply: Reply
    cost: str
    """What the last run cost the API server: calls and bytes."""


async def repeat_reads(
    reader: LiveReader, ask: Callable[[], Awaitable[Reply]], runs: int, budget_s: float
) -> Reads | str:
    """`ask()` repeated (see `repeat_async`), or why it failed: the cluster error and when."""
    last = ReadStats()

    async def run() -> Reply:
        calls, size = reader.stats.calls, reader.stats.bytes
        reply = await ask()
        last.calls, last.bytes = reader.stats.calls - calls, reader.stats.bytes - size
        return reply

    started = time.perf_counter()
    try:
        sample, reply = await repeat_async(run, runs, budget_s)
    except ClusterError as error:
        return f"failed after {fmt_s(time.perf_counter() - started)}: {error.message}"
    return Reads(sample, reply, f"{last.calls} calls, {last.bytes / 1e6:.1f} MB")


async def measure_kubewhy(reader: LiveReader, target: Key, runs: int, budget_s: float) -> Measured:
    """`/triage` through `reader`; the detail is what the last run cost the API server."""
    done = await repeat_reads(reader, lambda: triage(reader, *target, Scope("bench")), runs, budget_s)
    if isinstance(done, str):
        return Measured(None, "", done)
    return Measured(done.sample, str(done.reply.diagnosis.verdict), detail=done.cost)


async def first_question(reader: LiveReader, target: Key) -> Measured:
    """`/triage` once, through a cache that has answered nothing yet: it groups the pods of every node
    the pod's funnel reaches and checks every node (`NodePods`, `Findings`)."""
    started = time.perf_counter()
    try:
        reply = await triage(reader, *target, Scope("bench"))
    except ClusterError as error:
        return Measured(None, "", f"failed: {error.message}")
    return Measured(Sample((time.perf_counter() - started,)), str(reply.diagnosis.verdict))


async def measure_new_placement(reader: LiveReader, target: Key, runs: int, budget_s: float) -> Measured:
    """`/triage` through the cache as the first question of its pod's placement: what earlier
    questions found on the nodes (`Findings`) is forgotten before each run (5,000 dict deletions, in
    the time); the nodes' groups of pods are kept, as after any question about another pod."""
    cache = reader.cache
    assert cache is not None

    async def ask() -> Reply:
        for node in cache.nodes():
            cache.findings.forget(name(node))
        return await triage(reader, *target, Scope("bench"))

    done = await repeat_reads(reader, ask, runs, budget_s)
    if isinstance(done, str):
        return Measured(None, "", done)
    return Measured(done.sample, str(done.reply.diagnosis.verdict), detail=done.cost)


def cache_row(served: Served, method: str, case: str, ours: Measured) -> Row:
    """A line of the cache's colder questions (no target: the targets are for a question asked
    before)."""
    if ours.sample is None:
        return _failed_row(served, f"{method}, {case}", ours, "")
    result = ", ".join(x for x in (ours.verdict, ours.detail) if x)
    return Row.timed(BENCHMARK, served.label, f"{method}, {case}", ours.sample, result, "", None)


@asynccontextmanager
async def cached_reader(served: Served, sync_timeout_s: float) -> AsyncIterator[tuple[LiveReader, Row]]:
    """A live reader with its watch-backed cache keeping the pending pods too, as `kubewhy serve`
    keeps it, once synced with every resource it keeps (or `sync_timeout_s` has passed), and a row
    for the sync: how long it took, what the cache holds (in all, a node, a bound pod), and how much
    this process grew (in a new process, `bench.clusters.apart`: one that freed memory before grows
    less)."""
    before = current_rss_mib()
    options = CacheOptions(max_objects=CACHE_MAX_OBJECTS, pending=True)
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None, cache=options)
    assert reader.cache is not None
    try:
        started = time.perf_counter()
        reader.cache.start()
        synced = await reader.cache.wait_synced(sync_timeout_s, complete=True)
        took = time.perf_counter() - started
        stats = reader.cache.stats
        # Before the deep size's walk, which makes an attribute dict for each instance it reads that
        # kept its attributes without one.
        grew = current_rss_mib() - before
        nodes = reader.cache.nodes()
        pods = reader.cache.bound_pods(name(n) for n in nodes) if synced else []
        in_nodes = deep_size([nodes])
        in_pods = deep_size([pods], held=[nodes])
        # The DRA objects, parsed as the cache keeps them.
        in_dra = deep_size([reader.cache.dra()]) if served.dra and reader.cache.dra_synced else 0
        held = (in_nodes + in_pods + in_dra) / 2**20
        result = (
            f"{reader.cache.state}; {stats.calls} calls, {stats.bytes / 1e6:.0f} MB; "
            f"holds {held:,.0f} MiB ({in_nodes / max(1, len(nodes)) / 1024:.1f} KiB a node, "
            f"{in_pods / max(1, len(pods)):,.0f} B a bound pod"
            + (f", {in_dra / 2**20:,.0f} MiB of DRA objects" if in_dra else "")
            + f"); RSS +{grew:,} MiB"
        )
        huge = served.nodes >= HUGE
        met = took < SYNC_S and max(held, grew) < HOLDS_GIB * 1024
        row = Row(
            BENCHMARK,
            served.label,
            "kubewhy + cache: initial sync",
            "1",
            fmt_s(took),
            fmt_s(took),
            result,
            f"< {fmt_limit(SYNC_S)}, holds < {HOLDS_GIB:g} GiB" if huge else "",
            ("yes" if synced and met else "NO") if huge else ("" if synced else "NO"),
        )
        yield reader, row
    finally:
        await reader.aclose()


def held_row(served: Served, grew_mib: int, runs: int) -> Row:
    """How much the process that keeps the cache grew from before its sync to after `runs` runs
    through it (questions, sweeps): the groups of pods and what the questions found on the nodes are
    kept too (target on a `HUGE` cluster: under `HOLDS_GIB`)."""
    huge = served.nodes >= HUGE
    return Row(
        BENCHMARK,
        served.label,
        "kubewhy + cache: memory after the questions",
        "1",
        "—",
        "—",
        f"RSS +{grew_mib:,} MiB after the {runs} runs through the cache above",
        f"< {HOLDS_GIB:g} GiB" if huge else "",
        ("yes" if grew_mib < HOLDS_GIB * 1024 else "NO") if huge else "",
    )


def measure_baseline(served: Served, target: Key, runs: int, budget_s: float, caps: Caps) -> Measured:
    with tempfile.TemporaryDirectory(prefix="kubectl-cache-") as cache:
        # Warm kubectl's discovery cache, as on a workstation that has used kubectl before.
        kubectl_json(served.kubeconfig, cache, ["get", "pod", "-n", target[0], target[1]], caps)
        started = [0.0]

        def run() -> Diagnosis:
            started[0] = time.perf_counter()
            return baseline(served, target, cache, caps)

        try:
            sample, diagnosis = repeat(run, runs, budget_s, warmup=0)
        except Stopped as stopped:
            return Measured(None, "", str(stopped), floor_s=time.perf_counter() - started[0])
    return Measured(sample, str(diagnosis.verdict))


@dataclass(frozen=True)
class Bare:
    """The LISTs that reading one pod directly sends, sent without kubewhy."""

    sample: Sample
    requests: int
    bytes: int


def node_names(view: TriageView) -> tuple[str, ...]:
    """The nodes whose bound pods the live reader lists one by one for this view's pod."""
    return usage_candidates(view.pod, view.nodes)


class _Page(msgspec.Struct):
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


_CONTINUE = msgspec.json.Decoder(_Page)
"""A LIST page read for its `continue` token alone, its items parsed past (a page of 500 nodes in 1 ms)."""


async def measure_bare(
    served: Served, reader: LiveReader, target: Key, runs: int, budget_s: float
) -> tuple[Bare, Sample | None] | None:
    """The server's pace: the LISTs that reading `target` directly sends — its nodes (every node for
    a pod with no nodeSelector, else those of the selector's labels), page after page, then the
    per-node LISTs of bound pods (`spec.nodeName=N`, not terminated), `WORKERS` at a time over
    pooled connections — as raw bytes, never decoded but for each node page's `continue` token:
    what the reads cost with no Python client work beyond sending and receiving. Beside it,
    kubewhy's reads alone for `target` (`triage_view`: every call, decoded into the view, not
    classified; None if a read failed). A run of each in turn, after one warm-up of each, so that
    both see the same load of the machine, up to `runs` each within `budget_s`. None when the reader
    reads the pods of `target`'s nodes with one LIST of the cluster's bound pods instead
    (`per_node`)."""
    view = (await reader.triage_view(*target)).view
    nodes = node_names(view)
    if not per_node(len(nodes), None if view.prefiltered else len(view.nodes)):
        return None
    pool = urllib3.PoolManager(maxsize=WORKERS)
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"}
    selector = label_selector(node_selector(view.pod)) if view.prefiltered else None
    listed = {"limit": PAGE_SIZE} | ({"labelSelector": selector} if selector else {})
    urls = [
        f"{served.url}/api/v1/pods?"
        + urllib.parse.urlencode({"fieldSelector": f"spec.nodeName={n},{NOT_TERMINAL}", "limit": PAGE_SIZE})
        for n in nodes
    ]

    def get(url: str) -> bytes:
        return pool.request("GET", url, headers=headers).data

    def node_pages() -> list[int]:
        sizes, token = [], None
        while True:
            query = listed | ({"continue": token} if token else {})
            data = get(f"{served.url}/api/v1/nodes?{urllib.parse.urlencode(query)}")
            sizes.append(len(data))
            token = _CONTINUE.decode(data).metadata.get("continue")
            if not token:
                return sizes

    bare: list[float] = []
    reads: list[float] | None = []
    sizes: list[int] = []
    started = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as workers:

        def sent() -> list[int]:
            return [*node_pages(), *map(len, workers.map(get, urls))]

        for run in range(runs + 1):  # the first of each is the warm-up
            t0 = time.perf_counter()
            sizes = await asyncio.to_thread(sent)
            if run:
                bare.append(time.perf_counter() - t0)
            if reads is not None:
                t0 = time.perf_counter()
                try:
                    await reader.triage_view(*target)
                except ClusterError:
                    reads = None
                else:
                    if run:
                        reads.append(time.perf_counter() - t0)
            if run and time.perf_counter() - started > budget_s:
                break
    pool.clear()
    return Bare(Sample(tuple(bare)), len(sizes), sum(sizes)), None if reads is None else Sample(tuple(reads))


def bare_row(served: Served, case: str, bare: Bare, ours: Measured, reads: Sample | None) -> Row:
    """The LISTs alone, and how kubewhy's whole /triage, and its reads alone, compare."""
    within = ours.sample.median / bare.sample.median if ours.sample is not None else None
    result = f"{bare.requests} requests, {bare.bytes / 1e6:.1f} MB" + (
        f"; kubewhy's whole /triage takes {within:.2f}× this" if within is not None else ""
    ) + (
        f", its reads alone (every call, decoded; no classifying) {reads.median / bare.sample.median:.2f}×"
        if reads is not None
        else ""
    )
    return Row.timed(
        BENCHMARK,
        served.label,
        f"the same LISTs sent bare: the nodes, then each node's pods, {WORKERS} at a time, {case}",
        bare.sample,
        result,
        f"kubewhy ≤ {BARE_FACTOR:g}× this",
        within is not None and within <= BARE_FACTOR,
    )


def _failed_row(served: Served, case: str, ours: Measured, target: str) -> Row:
    """The line of a case that gave no sample: why, and a missed target if it had one."""
    return Row(BENCHMARK, served.label, case, "0", "—", "—", ours.failure, target, "NO" if target else "")


def kubewhy_row(served: Served, method: str, case: str, ours: Measured, theirs: Measured) -> Row:
    """kubewhy's line, with its speed-up over the baseline on the same pod and the target check
    (`TARGETS`)."""
    target = target_for(served.nodes, method, case)
    text = target.text() if target else ""
    if ours.sample is None:
        return _failed_row(served, f"{method}, {case}", ours, text)
    median = ours.sample.median
    if theirs.sample is not None:
        ratio, floor = f"{theirs.sample.median / median:.1f}× faster", theirs.sample.median
    elif theirs.floor_s:
        ratio, floor = f"≥ {theirs.floor_s / median:.1f}× faster (baseline stopped)", theirs.floor_s
    else:
        ratio, floor = "", 0.0
    met = (
        ours.sample.p95 < target.p95_s and (not target.faster or floor >= target.faster * median)
        if target
        else None
    )
    result = ", ".join(x for x in (ours.verdict, ratio, ours.detail) if x)
    return Row.timed(BENCHMARK, served.label, f"{method}, {case}", ours.sample, result, text, met)


def p95_row(served: Served, method: str, case: str, ours: Measured) -> Row:
    """kubewhy's line on a cluster whose GPUs are DRA devices or whose autoscaler speaks; through the
    cache, the target is a p95 under 100 ms (`TARGETS` on a `HUGE` cluster)."""
    huge = target_for(served.nodes, method, case) if served.nodes >= HUGE else None
    limit = (huge.p95_s if huge else 0.1) if "cache" in method else None
    target = f"p95 < {fmt_limit(limit)}" if limit else ""
    if ours.sample is None:
        return _failed_row(served, f"{method}, {case}", ours, target)
    result = ", ".join(x for x in (ours.verdict, ours.detail) if x)
    met = ours.sample.p95 < limit if limit else None
    return Row.timed(BENCHMARK, served.label, f"{method}, {case}", ours.sample, result, target, met)


def baseline_row(served: Served, case: str, theirs: Measured) -> Row:
    name = f"kubectl ×3 + classify, {case}"
    if theirs.sample is None:
        return Row(BENCHMARK, served.label, name, "0", "—", "—", theirs.failure)
    return Row.timed(BENCHMARK, served.label, name, theirs.sample, theirs.verdict)
