"""`/jobset why` end to end on the 256-pod TPU JobSet: kubewhy's live reader and handler."""

from __future__ import annotations

from bench.apiserver import Served
from bench.timing import Row, fmt_limit
from bench.triage import HUGE, repeat_reads
from cluster.live import LiveReader
from handlers.jobset import why
from handlers.reply import Scope

BENCHMARK = "d. /jobset why"


async def measure(reader: LiveReader, served: Served, method: str, runs: int, budget_s: float) -> Row:
    """`/jobset why` of the TPU JobSet: under 1 s, and through the cache on a `HUGE` cluster under
    100 ms (p95)."""
    case = f"{method}, {served.jobset[0]}/{served.jobset[1]} (leader pending)"
    limit = 0.1 if "cache" in method and served.nodes >= HUGE else 1.0
    target = f"p95 < {fmt_limit(limit)}"
    done = await repeat_reads(reader, lambda: why(reader, *served.jobset, Scope("bench")), runs, budget_s)
    if isinstance(done, str):
        return Row(BENCHMARK, served.label, case, "0", "—", "—", done, target, "NO")
    sample, diagnosis = done.sample, done.reply.diagnosis
    result = f"{diagnosis.verdict} (leader: {diagnosis.pod_verdict}), {done.cost}"
    return Row.timed(BENCHMARK, served.label, case, sample, result, target, sample.p95 < limit)
