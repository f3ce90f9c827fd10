"""Run every benchmark and print one table: `python -m bench` (`make bench`), or the small smoke run
`python -m bench --quick`. `--markdown PATH` also writes the table, the command and the machine into
PATH between the `bench:begin`/`bench:end` markers, keeping the rest of the file.

A part of it: `--only cli,classifier,triage,burst,soak` (any of them; `triage` includes `/jobset why`),
and `--sizes 1000x10,5000x100` for the clusters `triage` is measured on (nodes × pods per node; a
`dra` suffix, `5000x10dra`, serves the cluster's GPUs as DRA devices).

Order: the live CLI's floor, the classifier in this process (it generates its own clusters), then one
API simulator process per cluster size for `/triage` and `/jobset why`, then the Slack burst; each
simulator is stopped before the next starts, so only one large cluster is in memory at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from bench import burst, classifier, cli, jobset, soak, triage
from bench.apiserver import ROOT, Served, simulated
from bench.timing import Row, table
from bench.triage import Caps, Measured
from bot.cli import GC_THRESHOLDS
from cluster.live import LiveReader
from devtools.botenv import KUBECTL
from devtools.cluster import generate
from devtools.dra_cluster import on_dra
from diagnosis.dra_objects import Dra

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


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


FULL = Plan(
    sizes=(
        Size(1000, 10, kubewhy_runs=20, baseline_runs=3, jobset_runs=10),
        Size(5000, 10, kubewhy_runs=5, baseline_runs=1, jobset_runs=3),
        Size(10000, 10, kubewhy_runs=3, baseline_runs=1, jobset_runs=3),
        Size(5000, 10, kubewhy_runs=5, baseline_runs=0, jobset_runs=0, dra=True),
    ),
    classifier=((5000, 10),),
    classifier_runs=20,
    burst=Size(500, 10, 0, 0, 0),
    burst_commands=50,
    burst_late=5,
    soak_commands=1000,
    budget_s=30,
    caps=Caps(seconds=60, rss_gib=8),
    cli_runs=20,
)
QUICK = Plan(
    sizes=(
        Size(40, 10, kubewhy_runs=2, baseline_runs=1, jobset_runs=2, slices=2, hosts_per_slice=4),
        Size(40, 10, kubewhy_runs=2, baseline_runs=0, jobset_runs=0, slices=2, hosts_per_slice=4, dra=True),
    ),
    classifier=((40, 10),),
    classifier_runs=3,
    burst=Size(40, 10, 0, 0, 0, slices=2, hosts_per_slice=4),
    burst_commands=5,
    burst_late=2,
    soak_commands=25,
    budget_s=10,
    caps=Caps(seconds=30, rss_gib=2),
    cli_runs=3,
)
PARTS = ("cli", "classifier", "triage", "burst", "soak")
LARGE = Size(5000, 100, kubewhy_runs=3, baseline_runs=1, jobset_runs=3, direct_pods=1, direct_jobset=False)
"""How a cluster with 100 pods a node is measured when `--sizes` asks for one: reading it directly
takes minutes, so only the pinned pod is."""


def run_classifier(plan: Plan) -> list[Row]:
    rows = []
    for nodes, per_node in plan.classifier:
        slices, hosts = plan.sizes[0].slices, plan.sizes[0].hosts_per_slice
        cluster = generate(nodes, per_node, slices=slices, hosts_per_slice=hosts)
        label = f"{len(cluster.nodes):,} nodes / {len(cluster.pods):,} pods"
        rows += classifier.measure(cluster, label, plan.classifier_runs, plan.budget_s / 4)
        del cluster
        if any(s.dra for s in plan.sizes):
            converted = on_dra(generate(nodes, per_node, slices=slices, hosts_per_slice=hosts))
            on = converted.cluster
            label = f"{len(on.nodes):,} nodes / {len(on.pods):,} pods, GPUs by DRA"
            dra = Dra.of(converted.dra_objects)
            rows += classifier.measure(on, label, plan.classifier_runs, plan.budget_s / 4, dra)
            del converted, on, dra
    return rows


CACHED_RUNS = 20
"""Runs of a question through the cache, at least: its targets are on the 95th percentile, which fewer
runs cannot tell from the slowest one (and each run takes a tenth of a second)."""


def cached_runs(size: Size) -> int:
    return max(size.kubewhy_runs, CACHED_RUNS)


async def run_dra_size(size: Size, plan: Plan, served: Served) -> list[Row]:
    """`/triage` on a cluster whose GPUs are DRA devices, for the pinned and the unpinned pod: kubewhy
    reading the cluster directly, then through its cache (target: under 100 ms)."""
    pods = {"pinned pod": served.pinned, "unpinned pod": served.unpinned}
    rows: list[Row] = []
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        for case, pod in pods.items():
            ours = await triage.measure_kubewhy(reader, pod, size.kubewhy_runs, plan.budget_s)
            rows.append(triage.dra_row(served, "kubewhy", case, ours))
    finally:
        await reader.aclose()
    async with triage.cached_reader(served, plan.sync_timeout_s) as (cached, sync):
        rows.insert(0, sync)
        if cached.cache is not None and cached.cache.synced:
            for case, pod in pods.items():
                ours = await triage.measure_kubewhy(cached, pod, cached_runs(size), plan.budget_s)
                rows.append(triage.dra_row(served, "kubewhy + cache", case, ours))
    return rows


async def run_size(size: Size, plan: Plan, served: Served) -> list[Row]:
    """`/triage` for the pinned and the unpinned pod by the baseline, by kubewhy reading the cluster
    directly, and by kubewhy with its watch-backed cache once synced; `/jobset why` both ways.

    A baseline stopped by the watchdog is not repeated for the other pod (its kubectl calls are the
    same but for the pod's own GET); `size.direct_pods` limits the direct reads where one takes
    minutes."""
    pods = {"pinned pod": served.pinned, "unpinned pod": served.unpinned}
    baselines: dict[str, Measured] = {}
    for case, pod in pods.items():
        stopped = [m for m in baselines.values() if m.floor_s]
        baselines[case] = (
            stopped[0]
            if stopped
            else await asyncio.to_thread(
                triage.measure_baseline, served, pod, size.baseline_runs, plan.budget_s, plan.caps
            )
        )
    by_pod: dict[str, list[Row]] = {
        case: [triage.baseline_row(served, case, m)] for case, m in baselines.items()
    }
    rows: list[Row] = []
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        for case in list(pods)[: size.direct_pods]:
            ours = await triage.measure_kubewhy(reader, pods[case], size.kubewhy_runs, plan.budget_s)
            by_pod[case].append(triage.kubewhy_row(served, "kubewhy", case, ours, baselines[case]))
            if case == "pinned pod":  # its pool's nodes are read one LIST each
                bare, reads = await triage.measure_bare(
                    served, reader, pods[case], size.kubewhy_runs, plan.budget_s
                )
                by_pod[case].append(triage.bare_row(served, case, bare, ours, reads))
        if size.direct_jobset:
            rows.append(await jobset.measure(reader, served, "kubewhy", size.jobset_runs, plan.budget_s))
    finally:
        await reader.aclose()
    async with triage.cached_reader(served, plan.sync_timeout_s) as (cached, sync):
        if cached.cache is not None and cached.cache.synced:
            for case, pod in pods.items():
                ours = await triage.measure_kubewhy(cached, pod, cached_runs(size), plan.budget_s)
                by_pod[case].append(
                    triage.kubewhy_row(served, "kubewhy + cache", case, ours, baselines[case])
                )
            rows.append(
                await jobset.measure(cached, served, "kubewhy + cache", size.jobset_runs, plan.budget_s)
            )
    return [sync, *(row for case in pods for row in by_pod[case]), *rows]


def _parts(value: str) -> tuple[str, ...]:
    chosen = tuple(p.strip() for p in value.split(",") if p.strip())
    unknown = [p for p in chosen if p not in PARTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"parts are {', '.join(PARTS)} (not {', '.join(unknown) or 'none'})")
    return chosen


def _sizes(value: str) -> tuple[Size, ...]:
    """`1000x10,5000x100`: the default plan's measurement of each size (`LARGE`'s for 100 pods a node);
    `5000x10dra`: the cluster with its GPUs served by the DRA driver."""
    sizes = []
    for part in value.split(","):
        dra = part.strip().endswith("dra")
        nodes, _, per_node = part.strip().removesuffix("dra").partition("x")
        if not (nodes.isdigit() and per_node.isdigit() and int(nodes) > 0 and int(per_node) > 0):
            raise argparse.ArgumentTypeError(
                f"a size is NODESxPODS_PER_NODE, e.g. 5000x10, or 5000x10dra for GPUs by DRA (not {part!r})"
            )
        like = next(s for s in FULL.sizes if s.dra) if dra else (
            LARGE if int(per_node) >= LARGE.pods_per_node else FULL.sizes[0]
        )
        sizes.append(replace(like, nodes=int(nodes), pods_per_node=int(per_node)))
    return tuple(sizes)


def machine() -> list[str]:
    memory = next(
        line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")
    )
    kubectl = subprocess.run([str(KUBECTL), "version", "--client"], capture_output=True, text=True).stdout
    return [
        f"- CPUs (nproc): {os.cpu_count()}",
        f"- Memory: {int(memory.split()[1]) / 2**20:.1f} GiB",
        f"- Python {platform.python_version()} on {platform.platform()}",
        f"- kubectl: {kubectl.splitlines()[0] if kubectl else '?'}",
    ]


def report(rows: list[Row], command: str, started: datetime, elapsed: float, load: list[str]) -> str:
    return "\n".join(
        [
            f"Command: `{command}` — {started:%Y-%m-%d %H:%M} UTC, {elapsed / 60:.1f} minutes",
            "",
            *machine(),
            f"- Load average (1 min) at start and end: {load[0]} → {load[1]} (other work shared the machine)",
            "",
            table(rows),
        ]
    )


def write_markdown(path: Path, text: str) -> None:
    """Put `text` between the markers in `path` (appended with the markers if absent)."""
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
    else:
        head, tail = old + ("\n" if old else ""), "\n"
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Run every kubewhy benchmark and print one table."
    )
    parser.add_argument("--quick", action="store_true", help="a small smoke run (about a minute)")
    parser.add_argument("--markdown", type=Path, help="also write the results into this Markdown file")
    parser.add_argument(
        "--only", type=_parts, default=PARTS, help=f"a comma-separated part of: {','.join(PARTS)}"
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        help="clusters for triage, e.g. 1000x10,5000x100 (nodes x pods per node; 5000x10dra: GPUs by DRA)",
    )
    args = parser.parse_args(argv)
    gc.set_threshold(*GC_THRESHOLDS)  # as every kubewhy process runs (bot.cli.main)
    plan = QUICK if args.quick else FULL
    if args.sizes:
        plan = replace(plan, sizes=args.sizes)
    started, t0 = datetime.now(UTC), time.monotonic()
    load = [f"{os.getloadavg()[0]:.1f}"]

    def progress(what: str) -> None:
        print(f"[{time.monotonic() - t0:6.0f} s] {what}", file=sys.stderr, flush=True)

    rows: list[Row] = []
    if "cli" in args.only:
        progress("the live CLI's floor")
        rows += await asyncio.to_thread(cli.measure, plan.cli_runs, plan.budget_s)
    if "classifier" in args.only:
        progress("classifier")
        rows += run_classifier(plan)
    for size in plan.sizes if "triage" in args.only else ():
        progress(f"/triage and /jobset why on {size.nodes} nodes × {size.pods_per_node} pods")
        with simulated(
            size.nodes,
            size.pods_per_node,
            slices=size.slices,
            hosts_per_slice=size.hosts_per_slice,
            dra=size.dra,
        ) as s:
            rows += await (run_dra_size if size.dra else run_size)(size, plan, s)
    if "burst" in args.only:
        progress("burst through kubewhy serve")
        b = plan.burst
        with simulated(
            b.nodes, b.pods_per_node, slices=b.slices, hosts_per_slice=b.hosts_per_slice
        ) as served:
            for cached in (False, True):
                rows += await burst.measure(served, plan.burst_commands, plan.burst_late, cached)
    if "soak" in args.only:
        progress(f"soak: {plan.soak_commands} commands through kubewhy serve, faults in turn")
        rows += await soak.measure(plan.soak_commands)
    rows.sort(key=lambda r: r.benchmark)
    load.append(f"{os.getloadavg()[0]:.1f}")
    command = " ".join(shlex.quote(a) for a in ["python", "-m", "bench", *argv])
    text = report(rows, command, started, time.monotonic() - t0, load)
    print(text)
    if args.markdown:
        write_markdown(args.markdown, text)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(asyncio.run(main(sys.argv[1:])))
