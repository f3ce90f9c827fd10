"""Run every benchmark and print one table: `python -m bench` (`make bench`), or the small smoke run
`python -m bench --quick`. `--markdown PATH` also writes the table, the command and the machine into
PATH between the `bench:begin`/`bench:end` markers, keeping the rest of the file.

A part of it: `--only cli,classifier,triage,burst,soak` (any of them; `triage` includes `/jobset why`),
and `--sizes 1000x10,5000x100` for the clusters `triage` is measured on (nodes × pods per node; a
`dra` suffix, `5000x10dra`, serves the cluster's GPUs as DRA devices; an `autoscaling` suffix,
`5000x10autoscaling`, has cluster-autoscaler speak about its pending pods).

Order: the live CLI's floor, the classifier in this process (it generates its own clusters), then one
API simulator process per cluster size for `/triage` and `/jobset why`, measured from a fresh process
of its own (`isolated`), then the Slack burst; each simulator is stopped before the next starts, so
only one large cluster is in memory at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench import burst, classifier, cli, soak
from bench.apiserver import ROOT, simulated
from bench.clusters import Plan, Size, isolated
from bench.timing import Row, table
from bench.triage import Caps
from bot.cli import tune
from devtools.botenv import KUBECTL
from devtools.cluster import generate
from devtools.dra_cluster import on_dra
from diagnosis.dra_objects import Dra

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


FULL = Plan(
    sizes=(
        Size(1000, 10, kubewhy_runs=20, baseline_runs=3, jobset_runs=10),
        Size(5000, 10, kubewhy_runs=5, baseline_runs=1, jobset_runs=3),
        Size(10000, 10, kubewhy_runs=3, baseline_runs=1, jobset_runs=3),
        Size(5000, 10, kubewhy_runs=5, baseline_runs=0, jobset_runs=0, dra=True),
        Size(5000, 10, kubewhy_runs=5, baseline_runs=0, jobset_runs=0, autoscaling=True),
        Size(65000, 10, kubewhy_runs=3, baseline_runs=0, jobset_runs=3, pending=1000, sweeps=3),
        Size(65000, 10, kubewhy_runs=3, baseline_runs=0, jobset_runs=0, dra=True),
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


def _parts(value: str) -> tuple[str, ...]:
    chosen = tuple(p.strip() for p in value.split(",") if p.strip())
    unknown = [p for p in chosen if p not in PARTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"parts are {', '.join(PARTS)} (not {', '.join(unknown) or 'none'})")
    return chosen


def _sizes(value: str) -> tuple[Size, ...]:
    """`1000x10,5000x100`: the default plan's measurement of each size (as planned where `FULL` has
    it, so `65000x10` also sweeps; `LARGE`'s for 100 pods a node);
    `5000x10dra`: the cluster with its GPUs served by the DRA driver; `5000x10autoscaling`: with
    cluster-autoscaler speaking."""
    sizes = []
    for part in value.split(","):
        shape, kind = part.strip(), ""
        for suffix in ("dra", "autoscaling"):
            if shape.endswith(suffix):
                shape, kind = shape.removesuffix(suffix), suffix
        nodes, _, per_node = shape.partition("x")
        if not (nodes.isdigit() and per_node.isdigit() and int(nodes) > 0 and int(per_node) > 0):
            raise argparse.ArgumentTypeError(
                "a size is NODESxPODS_PER_NODE, e.g. 5000x10, or 5000x10dra for GPUs by DRA, or"
                f" 5000x10autoscaling for cluster-autoscaler speaking (not {part!r})"
            )
        wanted = (int(nodes), int(per_node), kind == "dra", kind == "autoscaling")
        planned = [s for s in FULL.sizes if (s.nodes, s.pods_per_node, s.dra, s.autoscaling) == wanted]
        like = (
            planned[0]
            if planned
            else next(s for s in FULL.sizes if getattr(s, kind))
            if kind
            else (LARGE if int(per_node) >= LARGE.pods_per_node else FULL.sizes[0])
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
    tune()  # as every kubewhy process runs (bot.cli.main)
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
        rows += await isolated(size, plan)
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
