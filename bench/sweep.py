"""The sentinel's sweep on a large cluster, in this process: the bot's own `Sentinel` (built by
`bot.app.assemble`, as `kubewhy serve` builds it) over a live reader whose watch cache has synced,
posting to the local Slack (`devtools.slack`).

A sweep reads the channel back, finds the stuck workloads among the cache's pending pods, diagnoses
each (`bot.checks`, a few at once) and posts, follows or resolves the incidents. Measured for each
sweep: the CPU time the process spent on it (the diagnoses run in worker threads, so it is the
process's time, not the loop's; the local Slack answering in this process is counted too) and the
event loop's longest stall during it, as `bot.looplag` sees it (a task asking to wake every
`burst.PROBE_S`). The first sweep opens the incidents; the next ones follow them, as every sweep does
while they last.
"""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp

from bench.apiserver import Served
from bench.burst import PROBE_S, STALL_S
from bench.timing import Row, Sample, fmt_limit, fmt_s
from bot import looplag
from bot.app import assemble, build_client
from bot.clusters import Clusters
from bot.localslack import BOT_ID
from bot.settings import ChannelConfig, ClusterConfig, Config, SentinelConfig
from cluster.live import LiveReader
from devtools.slack import DevSlack

BENCHMARK = "g. sentinel"
CPU_S = 5.0
"""The target: one sweep costs under this much CPU time."""
CHANNEL = "C0BENCHSWEEP"
CLUSTER = "bench"
TOKEN = "xoxb-kubewhy-bench"


async def measure(served: Served, reader: LiveReader, sweeps: int) -> list[Row]:
    """`sweeps` sweeps of one channel watching the served cluster through `reader` (its cache
    synced, keeping the pending pods): a row for the first, one for the rest."""
    cache = reader.cache
    assert cache is not None, "the sweep reads the cache's pending pods"
    config = Config(
        clusters={CLUSTER: ClusterConfig(kubeconfig=Path(served.kubeconfig))},
        channels={CHANNEL: ChannelConfig(cluster=CLUSTER, sentinel=SentinelConfig(enabled=True))},
    )
    pending = len(cache.pending_pods())
    cpu: list[float] = []
    wall: list[float] = []
    stalls: list[float] = []
    with DevSlack(bot_token=TOKEN) as slack:
        async with aiohttp.ClientSession() as session:
            client = build_client(TOKEN, slack.api_url, session)
            sentinel = assemble(config, Clusters({CLUSTER: reader}, config), client).sentinel
            sentinel.bot_id = BOT_ID
            for _ in range(sweeps):
                lags: list[float] = []
                async with looplag.watching(lags.append, PROBE_S):
                    started, used = time.perf_counter(), time.process_time()
                    await sentinel.sweep(lambda: True)
                    cpu.append(time.process_time() - used)
                    wall.append(time.perf_counter() - started)
                stalls.append(max(lags, default=0.0))
        incidents = [m for m in slack.channel_messages(CHANNEL) if m.bot_id and m.thread_ts is None]
    what = f"{pending:,} pending pods asking for devices; {len(incidents)} incidents posted"
    rows = [_row(served, "first sweep (opens the incidents)", cpu[:1], wall[:1], stalls[:1], what)]
    if sweeps > 1:
        rows.append(_row(served, "each next sweep (follows them)", cpu[1:], wall[1:], stalls[1:], what))
    return rows


def _row(
    served: Served, case: str, cpu: list[float], wall: list[float], stalls: list[float], what: str
) -> Row:
    worst = max(stalls)
    result = (
        f"{what}; wall {fmt_s(max(wall))} at most; longest event-loop stall {fmt_s(worst)}"
        f" (a wake-up asked every {fmt_s(PROBE_S)})"
    )
    met = max(cpu) < CPU_S and worst <= STALL_S
    target = f"CPU < {fmt_limit(CPU_S)} a sweep, no stall > {fmt_limit(STALL_S)}"
    return Row.timed(
        BENCHMARK,
        served.label,
        f"kubewhy + cache, sentinel: {case}, CPU time",
        Sample(tuple(cpu)),
        result,
        target,
        met,
    )
