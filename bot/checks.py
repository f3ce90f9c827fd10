"""One check of one target: the handler's Reply, or why there is none (not found, cluster unreadable).

A check is the unit the bot posts, re-checks and watches. Not-found and cluster failures are answers
too (the person needs the similar names, or what was refused and how to fix it), so they travel as
outcomes rather than as exceptions.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.clusters import Clusters
from bot.metrics import Metrics
from cluster.errors import ClusterError, NotFound
from cluster.reader import KIND_WORDS, Reader
from diagnosis.model import JobSetVerdict, PodState, PodVerdict
from handlers import jobset, triage, why
from handlers.reply import Reply, Scope
from handlers.requests import Target

Outcome = Reply | NotFound | ClusterError

NOT_FOUND = "not-found"
ERROR = "error"
"""Verdict words of the two outcomes without a diagnosis, as they appear in metadata and metrics."""

SETTLED = frozenset(
    {PodVerdict.OK, JobSetVerdict.RUNNING, JobSetVerdict.COMPLETED, JobSetVerdict.FAILED, NOT_FOUND}
)
"""Verdicts after which watching is pointless: placed, running, finished, or gone."""


@dataclass(frozen=True)
class Check:
    target: Target | None
    """What was checked, with the cluster it was read from; None for an explained pasted message."""
    outcome: Outcome
    at: datetime

    @property
    def verdict(self) -> str:
        if isinstance(self.outcome, Reply):
            return str(self.outcome.diagnosis.verdict)
        return NOT_FOUND if isinstance(self.outcome, NotFound) else ERROR

    @property
    def summary(self) -> str:
        if isinstance(self.outcome, Reply):
            return self.outcome.diagnosis.summary
        return str(self.outcome) if isinstance(self.outcome, NotFound) else self.outcome.message

    @property
    def settled(self) -> bool:
        """Watching is pointless: a placed pod that runs (or has ended), a JobSet done or running, a
        target gone. A placed pod still starting is watched on: it may yet fail."""
        if isinstance(self.outcome, Reply) and self.outcome.diagnosis.pod_state is PodState.STARTING:
            return False
        return self.verdict in SETTLED


async def run(reader: Reader, target: Target, scope: Scope) -> Check:
    """Diagnose `target` (its names already validated) with the handler for its kind."""
    outcome: Outcome
    try:
        if target.kind == "pod":
            outcome = await triage.triage(reader, target.namespace, target.name, scope)
        elif target.kind == "jobset":
            outcome = await jobset.why(reader, target.namespace, target.name, scope)
        else:
            kind = KIND_WORDS.get(target.kind)  # None for `any`: whatever bears the name
            outcome = await why.why(reader, target.namespace, target.name, kind, scope)
    except (NotFound, ClusterError) as error:
        outcome = error
    return Check(target, outcome, datetime.now(UTC))


def explain(message: str) -> Check:
    """Explain a pasted admission error, offline."""
    return Check(None, jobset.explain_message(message), datetime.now(UTC))


class Checker:
    """Checks a resolved target on its cluster, counting the cluster's errors by kind.

    At most `limit` checks run at once; the others wait their turn. Callers acknowledge first, so a
    burst of commands is acked at once and queues its reads and diagnoses, instead of starting them
    all together: fifty classifications and their JSON decoding competing for one GIL would slow
    every one of them, and the event loop with them."""

    def __init__(self, clusters: Clusters, metrics: Metrics, limit: int) -> None:
        self._clusters = clusters
        self._metrics = metrics
        self._slots = asyncio.Semaphore(limit)

    async def __call__(self, target: Target) -> Check:
        async with self._slots:
            check = await run(self._clusters.reader(target), target, self._clusters.scope(target))
        if isinstance(check.outcome, ClusterError):
            self._metrics.api_error(type(check.outcome).__name__)
        return check
