"""Repeated timings and the one results table every benchmark adds rows to."""

from __future__ import annotations

import math
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Sample:
    """Wall-clock durations of repeated runs, in seconds."""

    seconds: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p95(self) -> float:
        """Nearest-rank 95th percentile: with fewer than 20 runs, the slowest run."""
        ordered = sorted(self.seconds)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class _Schedule:
    """Which runs to time: `warmup` untimed runs, then up to `runs` timed ones, stopping once
    `budget_s` is spent (after at least one). A warm-up run that takes half the budget or more needs
    no warming up: it becomes the only run measured."""

    runs: int
    budget_s: float
    warmup: int
    seconds: list[float] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    def again(self, took: float) -> bool:
        """Note a run of `took` seconds; whether to run once more."""
        if self.warmup:
            self.warmup -= 1
            if took >= self.budget_s / 2:
                self.seconds.append(took)
                return False
            self.started = time.perf_counter()
            return True
        self.seconds.append(took)
        return len(self.seconds) < self.runs and time.perf_counter() - self.started < self.budget_s

    @property
    def sample(self) -> Sample:
        return Sample(tuple(self.seconds))


def repeat(run: Callable[[], T], runs: int, budget_s: float = math.inf, warmup: int = 1) -> tuple[Sample, T]:
    """Time `run` (see `_Schedule`); the sample and the last result."""
    schedule = _Schedule(runs, budget_s, warmup)
    while True:
        t0 = time.perf_counter()
        result = run()
        if not schedule.again(time.perf_counter() - t0):
            return schedule.sample, result


async def repeat_async(
    run: Callable[[], Awaitable[T]], runs: int, budget_s: float = math.inf, warmup: int = 1
) -> tuple[Sample, T]:
    """`repeat` for a coroutine function, awaited on the running loop."""
    schedule = _Schedule(runs, budget_s, warmup)
    while True:
        t0 = time.perf_counter()
        result = await run()
        if not schedule.again(time.perf_counter() - t0):
            return schedule.sample, result


def current_rss_mib() -> int:
    """This process's resident memory now."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


def peak_rss_mib() -> int:
    """This process's peak resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def fmt_s(seconds: float) -> str:
    """A duration at a precision that reads at a glance: 3.2 ms, 412 ms, 7.41 s."""
    if seconds < 0.01:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def fmt_limit(seconds: float) -> str:
    """A target's limit as written: 250 ms, 1 s, 15 s."""
    return f"{seconds:g} s" if seconds >= 1 else f"{seconds * 1000:g} ms"


@dataclass(frozen=True)
class Row:
    """One line of the results table."""

    benchmark: str
    cluster: str
    case: str
    runs: str
    median: str
    p95: str
    result: str
    """What came out beside the time: the verdict, a ratio, a memory peak."""
    target: str = ""
    met: str = ""

    @classmethod
    def timed(
        cls,
        benchmark: str,
        cluster: str,
        case: str,
        sample: Sample,
        result: str,
        target: str = "",
        met: bool | None = None,
    ) -> Row:
        return cls(
            benchmark,
            cluster,
            case,
            str(sample.runs),
            fmt_s(sample.median),
            fmt_s(sample.p95),
            result,
            target,
            "" if met is None else ("yes" if met else "NO"),
        )


HEADER = ("Benchmark", "Cluster", "Case", "Runs", "Median", "p95", "Result", "Target", "Met")


def table(rows: list[Row]) -> str:
    """A Markdown table, columns padded so it also reads in a terminal."""
    cells = [list(HEADER)] + [
        [r.benchmark, r.cluster, r.case, r.runs, r.median, r.p95, r.result, r.target, r.met] for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADER))]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(c) for c in cells[1:])])
