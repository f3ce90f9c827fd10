"""`/jobset why` end to end on the 256-pod TPU JobSet: kubewhy's live reader and handler."""

from __future__ import annotations

import time

from bench.apiserver import Served
from bench.timing import Row, fmt_s, repeat_async
from cluster.errors import ClusterError
from cluster.live import LiveReader
from cluster.transport import ReadStats
from handlers.jobset import why
from handlers.reply import Reply

BENCHMARK = "d. /jobset why"


async def measure(reader: LiveReader, served: Served, method: str, runs: int, budget_s: float) -> Row:
    case = f"{method}, {served.jobset[0]}/{served.jobset[1]} (leader pending)"
    last = ReadStats()

    async def run() -> Reply:
        calls, size = reader.stats.calls, reader.stats.bytes
        reply = await why(reader, *served.jobset)
        last.calls, last.bytes = reader.stats.calls - calls, reader.stats.bytes - size
        return reply

    started = time.perf_counter()
    try:
        sample, reply = await repeat_async(run, runs, budget_s)
    except ClusterError as error:
        failure = f"failed after {fmt_s(time.perf_counter() - started)}: {error.message}"
        return Row(BENCHMARK, served.label, case, "0", "—", "—", failure, "< 1 s", "NO")
    diagnosis = reply.diagnosis
    cost = f"{last.calls} calls, {last.bytes / 1e6:.1f} MB"
    result = f"{diagnosis.verdict} (leader: {diagnosis.pod_verdict}), {cost}"
    return Row.timed(BENCHMARK, served.label, case, sample, result, "< 1 s", sample.p95 < 1.0)
