"""The event loop's lag, measured from inside: a task sleeps a short interval, again and again, and
records how much later than asked it woke. Anything that holds the loop (a slow computation on it, a
worker thread holding the GIL) delays that wake-up by as much, so the histogram on /metrics shows
every stall, as seen by every request waiting on the loop at the time, acks included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

INTERVAL_S = 0.025
"""Short enough to catch a stall of a few tens of milliseconds, long enough to cost nothing."""


@asynccontextmanager
async def watching(observe: Callable[[float], None], interval: float = INTERVAL_S) -> AsyncIterator[None]:
    """Measure the running loop's lag into `observe` (seconds late, one call per wake-up) while the
    block runs; the measuring task is ended, and awaited, when it ends."""
    task = asyncio.create_task(_measure(observe, interval), name="kubewhy-loop-lag")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait([task])  # the task's own cancellation stays in it; ours still propagates


async def _measure(observe: Callable[[float], None], interval: float) -> None:
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time() + interval
        await asyncio.sleep(interval)
        observe(max(0.0, loop.time() - asked))  # the loop may run a timer up to its clock resolution early
