"""`/jobset why` end to end on the 256-pod TPU JobSet: kubewhy's live reader and handler."""

from __future__ import annotations

from bench.apiserver import Served
from bench.timing import Row
from bench.triage import repeat_reads
from cluster.live import LiveReader
from handlers.jobset import why
from handlers.reply import Scope

BENCHMARK = "d. /jobset why"


async def measure(reader: LiveReader, served: Served, method: str, runs: int, budget_s: float) -> Row:
    case = f"{method}, {served.jobset[0]}/{served.jobset[1]} (leader pending)"
    done = await repeat_reads(reader, lambda: why(reader, *served.jobset, Scope("bench")), runs, budget_s)
    if isinstance(done, str):
        return Row(BENCHMARK, served.label, case, "0", "—", "—", done, "< 1 s", "NO")
    sample, diagnosis = done.sample, done.reply.diagnosis
    result = f"{diagnosis.verdict} (leader: {diagnosis.pod_verdict}), {done.cost}"
    return Row.timed(BENCHMARK, served.label, case, sample, result, "< 1 s", sample.p95 < 1.0)
