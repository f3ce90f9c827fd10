"""Events read the same way whichever API served them.

The core `v1` API and `events.k8s.io/v1` describe one event with different fields: the object it is
about is `involvedObject` or `regarding`, its text `message` or `note`, its repetitions `count`,
`deprecatedCount` or `series.count`, its last occurrence `lastTimestamp`, `deprecatedLastTimestamp`,
`series.lastObservedTime` or `eventTime` (new-style recorders leave the legacy fields null). Snapshots
hold either form, so every reader of events goes through these accessors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from diagnosis.objects import Object, kind, mapping, name, namespace, text, timestamp, uid


def regarding(event: Object) -> Mapping[str, Any]:
    """The reference to the object the event is about (kind, namespace, name, uid)."""
    return mapping(event.get("involvedObject") or event.get("regarding"))


def message(event: Object) -> str:
    return text(event.get("message")) or text(event.get("note"))


def reason(event: Object) -> str:
    return text(event.get("reason"))


def event_type(event: Object) -> str:
    """`Normal` or `Warning`."""
    return text(event.get("type"))


def count(event: Object) -> int:
    """How many times the event occurred (at least 1)."""
    for value in (
        mapping(event.get("series")).get("count"),
        event.get("count"),
        event.get("deprecatedCount"),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 1


def last_time(event: Object) -> datetime | None:
    """When the event last occurred, from the most precise field either API filled in (in UTC when
    the text carries no offset, so any two times compare)."""
    for value in (
        mapping(event.get("series")).get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("deprecatedLastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        event.get("deprecatedFirstTimestamp"),
        mapping(event.get("metadata")).get("creationTimestamp"),
    ):
        when = timestamp(value)
        if when is not None:
            return when
    return None


def is_about(event: Object, obj: Object) -> bool:
    """True when the event is about `obj`: same namespace and name, and the same kind and uid
    wherever both sides carry one (a JobSet and its headless Service share a name; a recreated pod
    keeps its name but not its uid)."""
    ref = regarding(event)
    if text(ref.get("name")) != name(obj) or text(ref.get("namespace")) != namespace(obj):
        return False
    return all(
        not mine or not theirs or mine == theirs
        for mine, theirs in ((text(ref.get("kind")), kind(obj)), (text(ref.get("uid")), uid(obj)))
    )


_UNDATED = datetime.min.replace(tzinfo=UTC)


def newest_first(events: Iterable[Object]) -> list[Object]:
    """The events sorted by when they last occurred, newest first (stable: equal times keep their
    order); undated ones last."""
    return sorted(events, key=lambda e: last_time(e) or _UNDATED, reverse=True)
