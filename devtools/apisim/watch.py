"""WATCH, as the API server serves it: one JSON event per line (`{"type": …, "object": …}`), sent as
each change is written, until `timeoutSeconds`.

A watch from a `resourceVersion` replays every recorded change after it, then waits for more; one from
before the store's oldest recorded change gets a single `ERROR` event with a 410 `Expired` Status, as
the API server answers a watch it cannot resume. Without a `resourceVersion` (or with "0") it starts
with the current objects as `ADDED`. Under a label or field selector an object that starts matching
arrives as `ADDED` and one that stops matching as `DELETED`, as the watch cache filters. With
`allowWatchBookmarks`, a `BOOKMARK` carries the current revision every `bookmark_seconds`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from devtools.apisim.resources import Resource, status_object, storage_of
from devtools.apisim.store import Change, Entry, Selection, Store

DEFAULT_SECONDS = 1800.0
"""A watch's length when the client sets no `timeoutSeconds` (the API server's --min-request-timeout)."""

_POLL_SECONDS = 1.0
"""How often an idle watch checks whether its client has hung up (the API server learns it from the
closed connection at once). Each check wakes its thread: a test world of a hundred cached clusters
holds two thousand idle watches, whose checks ten times a second kept both cores busy."""


@dataclass
class Watch:
    """One open watch: what it selects, from which revision, for how long."""

    store: Store
    resource: Resource
    selection: Selection
    since: int | None
    """Replay the changes after this revision; None: start with the current objects as ADDED."""
    seconds: float
    bookmark_seconds: float | None
    """How often to send a BOOKMARK; None: the client did not ask for them."""
    dropped: threading.Event = field(default_factory=threading.Event)
    """Set to end the stream abruptly, as a crashing API server or a cut connection would."""

    def drop(self) -> None:
        self.dropped.set()
        with self.store.changed:
            self.store.changed.notify_all()

    def lines(self, hung_up: Callable[[], bool]) -> Iterator[bytes]:
        """The events as the lines of the response body, until the timeout, a drop, the client
        hanging up or the end of the server. Blocks between changes (it runs in the request's own
        thread)."""
        deadline = time.monotonic() + self.seconds
        with self.store.changed:
            if self.since is not None and self.since < self.store.floor:
                yield self._expired(self.since)
                return
            position = self.store.revision if self.since is None else self.since
            current = [] if self.since is not None else self._current()
        for obj in current:
            yield _line("ADDED", obj)
        next_bookmark = time.monotonic() + (self.bookmark_seconds or self.seconds)
        while not self.dropped.is_set() and not hung_up():
            with self.store.changed:
                if self.store.closed:
                    return
                if self.store.revision == position:
                    until = min(deadline, next_bookmark, time.monotonic() + _POLL_SECONDS)
                    self.store.changed.wait(max(0.0, until - time.monotonic()))
                if position < self.store.floor:  # the recorded window moved past this watch
                    yield self._expired(position)
                    return
                changes = self.store.changes_after(position)
                position = self.store.revision
            for change in changes:
                event = self._event(change)
                if event is not None:
                    yield _line(*event)
            now = time.monotonic()
            if now >= deadline:
                return
            if self.bookmark_seconds is not None and now >= next_bookmark:
                yield self._bookmark(position)
                next_bookmark = now + self.bookmark_seconds

    def _current(self) -> list[dict[str, Any]]:
        entries: list[Entry] = self.store.collection(self.resource).select(self.selection)
        return [e.as_served(self.resource) for e in entries]

    def _event(self, change: Change) -> tuple[str, dict[str, Any]] | None:
        """The change as this watch sees it, or None when it never matched the selection."""
        if change.resource is not storage_of(self.resource):
            return None
        before = change.old is not None and self.selection.matches(change.old)
        after = change.new is not None and self.selection.matches(change.new)
        shown = change.new if change.new is not None else change.old
        assert shown is not None
        obj = Entry(shown).as_served(self.resource)
        if before and after:
            return "MODIFIED", obj
        if after:
            return "ADDED", obj
        if before:
            return "DELETED", obj
        return None

    def _bookmark(self, revision: int) -> bytes:
        return _line(
            "BOOKMARK",
            {
                "kind": self.resource.kind,
                "apiVersion": self.resource.group_version,
                "metadata": {"resourceVersion": str(revision)},
            },
        )

    def _expired(self, revision: int) -> bytes:
        return _line(
            "ERROR", status_object(410, f"too old resource version: {revision} ({self.store.floor})")
        )


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}, separators=(",", ":")).encode() + b"\n"
