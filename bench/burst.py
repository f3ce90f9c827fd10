"""A burst of concurrent `/triage` slash commands through `kubewhy serve` in HTTP mode.

The bot runs as a real subprocess; its Web API calls go to the local Slack (`devtools.slack`) and its
cluster is an API simulator. All commands are signed as Slack signs them and sent at once, each in its
own channel. Measured from outside the bot:

- ack: the HTTP answer to each command (Slack wants it within 3 s);
- answer: from sending the command to the verdict message arriving at the local Slack;
- event loop: `/healthz` is probed every `PROBE_S` during the burst; the handler does no work, so a
  slow answer means the bot's event loop was busy. The longest probe bounds the longest stall from
  below to within one probe interval (a stall is seen only while a probe waits on it).

And from inside: the bot's own event-loop lag histogram (`kubewhy_event_loop_lag_seconds`, sampled
every `bot.looplag.INTERVAL_S`), scraped from /metrics before and after the burst: it sees every
stall, probed or not, to within its buckets.
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench.apiserver import Key, Served
from bench.timing import Row, Sample, fmt_s
from bench.triage import CACHE_MAX_OBJECTS
from bot import looplag
from bot.localslack import FORM, Message, command_body, signed_headers
from devtools.botenv import KUBEWHY, SECRET, bot_env, free_port
from devtools.slack import DevSlack

ONCALL = "U0ONCALL"
PROBE_S = 0.01
LATE_GAP_S = 0.25
BENCHMARK = "c. burst"
LAG = "kubewhy_event_loop_lag_seconds"
STALL_S = 0.1
"""The target: no event-loop stall longer than this."""


@contextmanager
def running_bot(served: Served, slack: DevSlack, cached: bool) -> Iterator[str]:
    """`kubewhy serve` reading `served` (through its watch-backed cache, as it does by default, if
    `cached`; else with the cache turned off); yields its base URL once /readyz says it is ready (the
    cache synced)."""
    cache = {"max_objects": CACHE_MAX_OBJECTS} if cached else {"enabled": False}
    with serving(
        slack, served.kubeconfig, {"clusters": {"bench": {"kubeconfig": served.kubeconfig, "cache": cache}}}
    ) as bot:
        yield bot.url


@dataclass(frozen=True)
class Serving:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    """Everything it wrote (stdout and stderr)."""


@contextmanager
def serving(slack: DevSlack, kubeconfig: str, config: Mapping[str, object]) -> Iterator[Serving]:
    """`kubewhy serve` on a free port with `config` as its KUBEWHY_CONFIG, posting to `slack`, once
    /readyz says it is ready. Stopped with SIGTERM (its own clean shutdown) when the block ends."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="kubewhy-serve-") as folder:
        config_file = Path(folder) / "kubewhy.yaml"
        config_file.write_text(json.dumps(config))
        env = bot_env(slack, port, config_file, KUBECONFIG=kubeconfig)
        log = Path(folder) / "serve.log"
        with log.open("wb") as out:
            bot = subprocess.Popen([str(KUBEWHY), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, bot, log)
            yield Serving(url, bot, log)
        finally:
            bot.send_signal(signal.SIGTERM)
            try:
                bot.wait(30)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()


def _wait_ready(url: str, bot: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if bot.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"kubewhy serve did not get ready:\n{log.read_text()}")
        time.sleep(0.1)


@dataclass(frozen=True)
class Lag:
    """The bot's event-loop lag histogram: for each bucket's upper bound, ascending (+Inf last), the
    samples at or below it."""

    buckets: tuple[tuple[float, float], ...]

    @classmethod
    def scraped(cls, exposition: str) -> Lag:
        """From the text of /metrics."""
        return cls(
            tuple(
                (float(sample.labels["le"]), sample.value)
                for family in text_string_to_metric_families(exposition)
                if family.name == LAG
                for sample in family.samples
                if sample.name == f"{LAG}_bucket"
            )
        )

    def since(self, before: Lag) -> Lag:
        """The samples taken after `before` was scraped."""
        return Lag(
            tuple((le, n - then) for (le, n), (_, then) in zip(self.buckets, before.buckets, strict=True))
        )

    @property
    def samples(self) -> int:
        return int(self.buckets[-1][1]) if self.buckets else 0

    def above(self, seconds: float) -> int:
        """Samples later than `seconds` (a bucket bound)."""
        return self.samples - int(next(n for le, n in self.buckets if le == seconds))

    def bucket(self, rank: int) -> tuple[float, float]:
        """The bounds (lower, upper] of the bucket holding the `rank`-th smallest sample (1-based)."""
        lower = 0.0
        for upper, n in self.buckets:
            if n >= rank:
                return lower, upper
            lower = upper
        raise ValueError(f"rank {rank} of {self.samples} samples")

    def quantile(self, q: float) -> str:
        """The nearest-rank quantile, as the bucket bound it is within ("≤ 5.0 ms", "> 5.00 s")."""
        if not self.samples:
            return "—"
        lower, upper = self.bucket(max(1, math.ceil(q * self.samples)))
        return f"> {fmt_s(lower)}" if math.isinf(upper) else f"≤ {fmt_s(upper)}"

    @property
    def worst(self) -> str:
        if not self.samples:
            return "—"
        lower, upper = self.bucket(self.samples)
        return f"> {fmt_s(lower)}" if math.isinf(upper) else f"({fmt_s(lower)}, {fmt_s(upper)}]"


@dataclass(frozen=True)
class Burst:
    acks: Sample
    """The commands sent at once."""
    late_acks: Sample
    """Commands sent one by one while the bot works on the burst."""
    statuses: Counter[int]
    answers: Sample
    """Seconds from sending each command to its verdict message; only the commands answered."""
    verdicts: Counter[str]
    probes: Sample
    lag: Lag
    """The bot's own lag samples from just before the commands until every answer arrived."""
    sent: int


def watch_answers(
    slack: DevSlack,
    channels: list[str],
    arrived: dict[str, float],
    wait_s: float,
    privately: Mapping[str, str] | None = None,
) -> None:
    """In a thread: note when each channel's first bot message arrives (woken at every Slack call),
    or the answer its command's response URL got (`privately`: channel → response URL), as a
    not-found answer goes to the asker alone."""
    pending = set(channels)
    deadline = time.monotonic() + wait_s
    urls = dict(privately or {})

    def answered(channel: str) -> bool:
        if any(m.bot_id for m in slack.channel_messages(channel)):
            return True
        return channel in urls and any(r["_response_url"] == urls[channel] for r in slack.responses)

    def newly() -> list[str] | None:
        return [c for c in pending if answered(c)] or None

    while pending:
        try:
            found = slack.wait_for(newly, timeout=max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            return
        now = time.monotonic()
        for channel in found:
            arrived[channel] = now
            pending.discard(channel)


async def burst(url: str, slack: DevSlack, targets: list[Key], late: list[Key], wait_s: float) -> Burst:
    """Send `targets` at once, then `late` one every `LATE_GAP_S`, probing /healthz throughout, and
    wait for every verdict message."""
    channels = [f"C0BURST{i:04d}" for i in range(len(targets) + len(late))]
    arrived: dict[str, float] = {}
    watcher = threading.Thread(target=watch_answers, args=(slack, channels, arrived, wait_s), daemon=True)
    watcher.start()
    probes: list[float] = []
    stop = asyncio.Event()
    async with aiohttp.ClientSession() as session:

        async def probe() -> None:
            while not stop.is_set():
                started = time.monotonic()
                async with session.get(f"{url}/healthz") as answer:
                    await answer.read()
                probes.append(time.monotonic() - started)
                await asyncio.sleep(PROBE_S)

        async def command(channel: str, target: Key) -> tuple[float, float, int]:
            text = f"{target[0]} {target[1]}"
            body = command_body(
                "/triage", text, channel=channel, user=ONCALL, response_url=slack.response_url()
            )
            headers = signed_headers(SECRET, body, FORM)
            started = time.monotonic()
            async with session.post(f"{url}/slack/events", data=body, headers=headers) as answer:
                await answer.read()
                return started, time.monotonic() - started, answer.status

        async def trickle() -> list[tuple[float, float, int]]:
            done = []
            for channel, target in zip(channels[len(targets) :], late, strict=True):
                await asyncio.sleep(LATE_GAP_S)
                done.append(await command(channel, target))
            return done

        async def lag() -> Lag:
            async with session.get(f"{url}/metrics") as answer:
                return Lag.scraped(await answer.text())

        prober = asyncio.create_task(probe())
        await asyncio.sleep(0.2)  # a few probes of the idle bot first
        before = await lag()
        at_once = await asyncio.gather(*(command(c, t) for c, t in zip(channels, targets, strict=False)))
        one_by_one = await trickle()
        await asyncio.to_thread(watcher.join, wait_s + 1)
        during = (await lag()).since(before)
        stop.set()
        await prober
    sent = at_once + one_by_one
    answers = [arrived[c] - s for c, (s, _, _) in zip(channels, sent, strict=True) if c in arrived]
    verdicts = Counter(verdict_of(m) for c in channels for m in slack.channel_messages(c)[:1] if m.bot_id)
    return Burst(
        acks=Sample(tuple(a for _, a, _ in at_once)),
        late_acks=Sample(tuple(a for _, a, _ in one_by_one)),
        statuses=Counter(status for _, _, status in sent),
        answers=Sample(tuple(answers)),
        verdicts=verdicts,
        probes=Sample(tuple(probes)),
        lag=during,
        sent=len(sent),
    )


def verdict_of(message: Message) -> str:
    payload = (message.metadata or {}).get("event_payload") or {}
    return str(payload.get("verdict", "?"))


async def measure(served: Served, count: int, late: int, cached: bool, wait_s: float = 180.0) -> list[Row]:
    """`count` commands at once and `late` more while the bot works, over `served.samples`."""
    pods = [served.samples[i % len(served.samples)] for i in range(count + late)]
    with DevSlack() as slack, running_bot(served, slack, cached) as url:
        found = await burst(url, slack, pods[:count], pods[count:], wait_s)
    bot = "kubewhy serve (cache on: the default)" if cached else "kubewhy serve, cache off"

    def row(case: str, sample: Sample, result: str, target: str = "", met: bool | None = None) -> Row:
        return Row.timed(BENCHMARK, served.label, f"{bot}, {case}", sample, result, target, met)

    statuses = ", ".join(f"{n} × HTTP {s}" for s, n in sorted(found.statuses.items()))
    verdicts = ", ".join(f"{n} {v}" for v, n in found.verdicts.most_common())
    all_ok = set(found.statuses) == {200}
    first, then = max(found.acks.seconds), max(found.late_acks.seconds)
    longest = max(found.probes.seconds)
    slowest_answer = max(found.answers.seconds, default=0)
    lag, stalls, no_stall = found.lag, found.lag.above(STALL_S), f"no stall > {fmt_s(STALL_S)}"
    return [
        row(f"{count} × /triage at once: ack", found.acks, f"max {fmt_s(first)}; {statuses} (all)",
            "every ack < 1 s", all_ok and first < 1),
        row(f"{late} more, 1 per {fmt_s(LATE_GAP_S)}, during it: ack", found.late_acks, f"max {fmt_s(then)}",
            "every ack < 1 s", then < 1),
        row("every command: verdict posted", found.answers,
            f"max {fmt_s(slowest_answer)}; {found.answers.runs}/{found.sent} answered; {verdicts}"),
        row(f"/healthz probed every {fmt_s(PROBE_S)}", found.probes,
            f"longest {fmt_s(longest)} (≈ longest event-loop stall)", no_stall, longest <= STALL_S),
        Row(BENCHMARK, served.label, f"{bot}, event-loop lag inside, every {fmt_s(looplag.INTERVAL_S)}",
            str(lag.samples), lag.quantile(0.5), lag.quantile(0.95),
            f"{stalls} samples > {fmt_s(STALL_S)}; worst in {lag.worst}", no_stall,
            "yes" if stalls == 0 else "NO"),
    ]  # fmt: skip
