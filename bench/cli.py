"""The live CLI's floor: `kubewhy triage` run as a process, from its start to its exit, through a
kubeconfig against the API simulator serving the GPU lab (`bot/demo/gpu-lab.json`, 7 nodes). On a
small cluster nearly all of it is starting Python and importing kubewhy and the `kubernetes` client;
the same question on the same lab read from the snapshot file shows what reading costs beside it.

The packages are byte-compiled first, as an installed kubewhy is (pip compiles at install; the
Dockerfile's image too): with `PYTHONDONTWRITEBYTECODE` set, every run of an editable checkout would
otherwise compile kubewhy's modules again.
"""

from __future__ import annotations

import compileall
import resource
import statistics
import subprocess
from pathlib import Path

from bench.apiserver import ROOT
from bench.timing import Row, fmt_s, repeat
from devtools.apisim import serve
from devtools.botenv import KUBEWHY

BENCHMARK = "e. live CLI"
LAB = ROOT / "bot" / "demo" / "gpu-lab.json"
POD = ("gpu-triage", "case-exhaust")
"""Pinned to the lab's A100 node, whose GPUs are taken: a funnel, the node's pods read, `exhausted`."""
PACKAGES = ("bot", "cluster", "diagnosis", "handlers")
FLOOR_S = 0.25


def run_cli(*source: str) -> str:
    """One `kubewhy triage … --format word`; its verdict word."""
    done = subprocess.run(
        [str(KUBEWHY), "triage", *POD, *source, "--format", "word"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=True,
    )
    return done.stdout.strip()


def cpu_s(*source: str) -> float:
    """The CPU time (user and system) of one run: what the run costs whatever else the machine is
    doing, where its wall-clock time grows with the machine's load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_cli(*source)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def measure(runs: int, budget_s: float) -> list[Row]:
    for package in PACKAGES:
        compileall.compile_dir(Path(ROOT, package), quiet=1)
    label = "GPU lab (7 nodes)"
    with serve(LAB) as sim:
        live, _ = repeat(lambda: run_cli("--kubeconfig", sim.kubeconfig), runs, budget_s)
        start = len(sim.requests)
        verdict = run_cli("--kubeconfig", sim.kubeconfig)
        per_run = len(sim.requests) - start
        cpu = statistics.median(cpu_s("--kubeconfig", sim.kubeconfig) for _ in range(3))
    snapshot, offline = repeat(lambda: run_cli("--snapshot", str(LAB)), runs, budget_s)
    return [
        Row.timed(
            BENCHMARK,
            label,
            "kubewhy triage through a kubeconfig, process start to exit",
            live,
            f"{verdict}; {per_run} calls a run; CPU time {fmt_s(cpu)} a run",
            f"median ≤ {FLOOR_S * 1000:.0f} ms",
            live.median <= FLOOR_S,
        ),
        Row.timed(BENCHMARK, label, "kubewhy triage --snapshot, process start to exit", snapshot, offline),
    ]
