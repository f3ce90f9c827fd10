"""What every live read shares: the one transport, the cache when there is one, and the few helpers
each question's reads use."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from cluster.errors import ClusterError, NotFound, unread_line
from cluster.transport import VERSION, Response, Target, Transport
from diagnosis import events
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, name, namespace, text

if TYPE_CHECKING:  # the cache is imported when one is made (`kubewhy serve`), not by every CLI run
    from cluster.cache import ClusterCache

T = TypeVar("T")


@dataclass(frozen=True)
class Source:
    """The transport every call goes through, and the cache that nodes and bound pods come from
    while it is synced (its owner starts it)."""

    api: Transport
    cache: ClusterCache | None = None
    all_pods: bool = False
    """Read directly, list every bound pod of the cluster, so that every existing pod's anti-affinity
    is checked (`kubewhy triage --all-pods`); the cache holds them all anyway."""

    def cached(self) -> ClusterCache | None:
        """The cache, when it is synced. Asked before each read from it: a cache can stop or fall
        behind between two awaits, and the read then goes to the API server."""
        return self.cache if self.cache is not None and self.cache.synced else None

    def notes(self) -> tuple[str, ...]:
        """Said with the answer when this reader has a cache that cannot answer now, so that nodes
        and bound pods are read from the API server (slower on a large cluster, but current)."""
        if self.cache is None or self.cache.synced:
            return ()
        return (
            f"Nodes and bound pods read directly from the API server: kubewhy's cache of this cluster"
            f" is {self.cache.condition} ({self.cache.state}).",
        )

    async def ping(self) -> None:
        await self.api.get(Target("get", VERSION))

    async def get_or_none(self, target: Target) -> dict[str, Any] | None:
        try:
            return (await self.api.get(target)).body
        except NotFound:
            return None

    async def by_name(
        self, names: Iterable[str], resource: str, kind: str, namespace: str | None = None, group: str = ""
    ) -> list[Object]:
        """The objects of these names that exist, read concurrently (a name the API would refuse is
        not asked)."""
        wanted = sorted({n for n in names if is_dns1123_subdomain(n)})
        found = await asyncio.gather(
            *(self.get_or_none(Target("get", resource, namespace, group, name=n, kind=kind)) for n in wanted)
        )
        return [o for o in found if o is not None]


def now(response: Response) -> datetime:
    """The time of the reading by the API server's clock (its objects' timestamps are written by
    the same clock), or ours when it sent no Date."""
    return response.date or datetime.now(UTC)


def about(found: Iterable[Object], *objects: Object) -> tuple[Object, ...]:
    """The events about any of `objects` (same namespace, name, and kind/uid where both say)."""
    by_name: dict[tuple[str, str], list[Object]] = {}
    for obj in objects:
        by_name.setdefault((namespace(obj), name(obj)), []).append(obj)
    chosen = []
    for event in found:
        ref = events.regarding(event)
        candidates = by_name.get((text(ref.get("namespace")), text(ref.get("name"))), [])
        if any(events.is_about(event, obj) for obj in candidates):
            chosen.append(event)
    return tuple(chosen)


def optional(what: str, read: Awaitable[list[T]], notes: list[str]) -> Awaitable[list[T]]:
    """A read that only enriches the answer: its failure becomes a line in `notes` (shown after the
    evidence) and no objects, instead of a failed answer. A read the verdict needs is never passed
    here: its failure must stop the answer. The read is scheduled at once, so that it runs even when
    a sibling's failure ends the `gather` it is part of before this one starts (its coroutine would
    otherwise never be awaited)."""
    started = asyncio.ensure_future(read)
    # Its failure is reported by `guarded`; if `guarded` never runs, nobody is left to hear of it.
    started.add_done_callback(lambda task: task.cancelled() or task.exception())

    async def guarded() -> list[T]:
        try:
            return await started
        except (ClusterError, NotFound) as error:
            notes.append(unread_line(what, error))
            return []

    return guarded()


def unwrap(result: T | BaseException) -> T:
    """A result of `gather(…, return_exceptions=True)`, or its exception raised."""
    if isinstance(result, BaseException):
        raise result
    return result
