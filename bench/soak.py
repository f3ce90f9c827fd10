"""A bounded soak: slash commands through `kubewhy serve` while its cluster fails in every way in turn,
and what the bot holds before and after.

The bot reads the GPU lab (bot/demo/gpu-lab.json) from an API simulator with a 1 s timeout. Commands
go in waves of `WAVE`, all at once, each in its own channel; each wave runs under the next fault of
`FAULTS` (cleared between waves) and waits for every answer. Most ask `/triage` about a lab pod, one
in ten about a pod that does not exist, one in ten `/jobset why` a pasted admission error. Measured
from outside the bot, after a warm-up wave and after the last wave: its resident memory (VmRSS, and
its peak VmHWM), its open file descriptors and threads (from /proc), and what it wrote to its log.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.apiserver import ROOT
from bench.burst import ONCALL, Serving, serving, verdict_of, watch_answers
from bench.timing import Row, Sample, table
from bot.localslack import FORM, command_body, signed_headers
from cluster.transport import WORKERS
from devtools.apisim import Faults, serve
from devtools.botenv import SECRET
from devtools.slack import DevSlack

BENCHMARK = "f. soak"
LAB = ROOT / "bot" / "demo" / "gpu-lab.json"
PODS = (
    "case-alloc0",
    "case-exhaust",
    "case-label",
    "case-nogpunode",
    "case-norequest",
    "case-ok",
    "case-taint",
)
PASTED = 'admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
WAVE = 25
TIMEOUT_S = 1.0


def _latency(faults: Faults) -> None:
    faults.latency = 1.5 * TIMEOUT_S


FAULTS: tuple[tuple[str, Callable[[Faults], None]], ...] = (
    ("none", lambda f: None),
    ("403 on events", lambda f: f.forbid("events")),
    ("403 on listing nodes", lambda f: f.forbid("nodes", verb="list")),
    ("500 twice, then mended", lambda f: f.fail(500, times=2)),
    ("429 once, Retry-After 1 s", lambda f: f.throttle(times=1, retry_after=1)),
    ("a dropped connection", lambda f: f.drop(times=1)),
    ("500 on every call", lambda f: f.fail(500, times=None)),
    ("every answer 1.5 s late (timeout 1 s)", _latency),
    ("404 on every path", lambda f: f.fail(404, times=None)),
)


def _target(fd: Path) -> str:
    """What an open file descriptor refers to ("" if it closed meanwhile)."""
    try:
        return os.readlink(fd)
    except OSError:
        return ""


@dataclass(frozen=True)
class Held:
    """What the bot process holds at one moment."""

    rss_mib: float
    peak_mib: float
    open_files: int
    sockets: int
    """Of the open files: the connections, which the bot's pools open as needed and keep (up to
    `WORKERS` to the API server per reader, the cache's watches, the Slack client's)."""
    threads: int
    log_bytes: int
    log_lines: int

    @classmethod
    def of(cls, bot: Serving) -> Held:
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{bot.process.pid}/status").read_text().splitlines()
        )
        text = bot.log.read_bytes()
        files = [_target(fd) for fd in Path(f"/proc/{bot.process.pid}/fd").iterdir()]
        return cls(
            rss_mib=int(status["VmRSS"].split()[0]) / 1024,
            peak_mib=int(status["VmHWM"].split()[0]) / 1024,
            open_files=len(files),
            sockets=sum(target.startswith("socket:") for target in files),
            threads=int(status["Threads"]),
            log_bytes=len(text),
            log_lines=text.count(b"\n"),
        )


def _command(number: int) -> tuple[str, str]:
    if number % 10 == 9:
        return "/jobset", f"why {PASTED}"
    if number % 10 == 8:
        return "/triage", "gpu-triage case-gone"
    return "/triage", f"gpu-triage {PODS[number % len(PODS)]}"


async def _wave(url: str, slack: DevSlack, first: int, count: int) -> tuple[list[float], Counter[int]]:
    """`count` commands at once, numbered from `first`; the seconds to each answer, and the HTTP statuses."""
    channels = [f"C0SOAK{first + i:05d}" for i in range(count)]
    urls = {c: slack.response_url() for c in channels}
    arrived: dict[str, float] = {}
    watcher = threading.Thread(
        target=watch_answers, args=(slack, channels, arrived, 120.0, urls), daemon=True
    )
    watcher.start()
    async with aiohttp.ClientSession() as session:

        async def send(channel: str, number: int) -> tuple[float, int]:
            name, text = _command(number)
            body = command_body(name, text, channel=channel, user=ONCALL, response_url=urls[channel])
            started = time.monotonic()
            async with session.post(
                f"{url}/slack/events", data=body, headers=signed_headers(SECRET, body, FORM)
            ) as answer:
                await answer.read()
                return started, answer.status

        sent = await asyncio.gather(*(send(c, first + i) for i, c in enumerate(channels)))
    await asyncio.to_thread(watcher.join, 121)
    seconds = [arrived[c] - started for c, (started, _) in zip(channels, sent, strict=True) if c in arrived]
    return seconds, Counter(status for _, status in sent)


async def measure(commands: int) -> list[Row]:
    """`commands` commands (after a warm-up wave), faults in turn; the rows of the table."""
    with DevSlack() as slack, serve(LAB) as sim:
        config = {"clusters": {"lab": {"kubeconfig": sim.kubeconfig, "timeout": TIMEOUT_S}}}
        with serving(slack, sim.kubeconfig, config) as bot:
            await _wave(bot.url, slack, -WAVE, WAVE)
            before = Held.of(bot)
            answers: list[float] = []
            statuses: Counter[int] = Counter()
            for wave, first in enumerate(range(0, commands, WAVE)):
                sim.faults.clear()
                FAULTS[wave % len(FAULTS)][1](sim.faults)
                seconds, codes = await _wave(bot.url, slack, first, min(WAVE, commands - first))
                answers += seconds
                statuses += codes
            sim.faults.clear()
            after = Held.of(bot)
            logged = bot.log.read_text()
        channels = [f"C0SOAK{n:05d}" for n in range(commands)]
        verdicts = Counter(verdict_of(m) for c in channels for m in slack.channel_messages(c)[:1] if m.bot_id)
    label = f"GPU lab, {len(FAULTS)} faults in turn"
    per_command = (after.log_bytes - before.log_bytes) / commands
    tracebacks = logged.count("Traceback")
    grew = after.rss_mib - before.rss_mib
    kinds = ", ".join(f"{n} {v}" for v, n in verdicts.most_common())
    http = ", ".join(f"{n} × HTTP {s}" for s, n in sorted(statuses.items()))

    def row(case: str, result: str, target: str = "", met: bool | None = None) -> Row:
        return Row(
            BENCHMARK,
            label,
            case,
            "1",
            "—",
            "—",
            result,
            target,
            "" if met is None else "yes" if met else "NO",
        )

    return [
        Row.timed(
            BENCHMARK,
            label,
            f"{commands} commands in waves of {WAVE}: verdict posted",
            Sample(tuple(answers)),
            f"{len(answers)}/{commands} answered ({http}); {kinds}",
            "every command answered",
            len(answers) == commands and set(statuses) == {200},
        ),
        row(
            "bot's resident memory (VmRSS) before → after",
            f"{before.rss_mib:.0f} → {after.rss_mib:.0f} MiB ({grew:+.0f}); peak {after.peak_mib:.0f} MiB",
            "grows < 50 MiB",
            grew < 50,
        ),
        row(
            "bot's open files and threads before → after",
            f"files {before.open_files} → {after.open_files} (connections {before.sockets} → "
            f"{after.sockets}); threads {before.threads} → {after.threads}",
            f"no files leaked; connections within the pools (+{WORKERS})",
            after.open_files - after.sockets <= before.open_files - before.sockets
            and after.sockets <= before.sockets + WORKERS,
        ),
        row(
            "bot's log before → after",
            f"{before.log_bytes:,} → {after.log_bytes:,} bytes, {before.log_lines} → {after.log_lines} lines"
            f" ({per_command:.0f} bytes a command); {tracebacks} tracebacks",
            "no traceback",
            tracebacks == 0,
        ),
    ]


if __name__ == "__main__":
    # `python -m bench.soak [COMMANDS]`: the soak alone (`make bench` runs it with the others).
    print(table(asyncio.run(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))))
