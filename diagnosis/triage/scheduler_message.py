"""What the scheduler last said about a pod, quoted as evidence beside kubewhy's own reasoning.

The verdict never rests on this text: it shows only the first failing filter per node, it is sorted
by text, its wording changes between patch releases, and it may be minutes older than the objects
(`handleSchedulingFailure` in kube-scheduler's `schedule_one.go`, `FitError.Error()` in
`pkg/scheduler/framework/types.go`). It is quoted so a person can see both, with a note where the
text misleads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from diagnosis.events import count, is_about, last_time, message, newest_first, reason
from diagnosis.objects import Object, age, condition, text, timestamp

_QUOTE_LIMIT = 700
"""Characters quoted; the scheduler's text is one line per distinct reason and rarely longer."""

_NODE_COUNT = re.compile(r"^0/(\d+) nodes are available")


@dataclass(frozen=True)
class Said:
    source: str
    """Where the text was read, with its age: `PodScheduled=False, Unschedulable, for 12m`."""
    text: str


def last_said(pod: Object, events: Iterable[Object], now: datetime) -> Said | None:
    """The PodScheduled condition's message (full, never truncated) when it is False with one; else
    the newest FailedScheduling event about this pod (the event text is cut at 1024 bytes)."""
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False" and text(scheduled.get("message")):
        since = age(now, timestamp(scheduled.get("lastTransitionTime")))
        why = text(scheduled.get("reason"))
        return Said(
            f"PodScheduled=False{f', {why}' if why else ''}{f', for {since}' if since else ''}",
            text(scheduled.get("message")),
        )
    failed = [
        e for e in events if isinstance(e, Mapping) and reason(e) == "FailedScheduling" and is_about(e, pod)
    ]
    if not failed:
        return None
    newest = newest_first(failed)[0]
    ago = age(now, last_time(newest))
    times = count(newest)
    return Said(
        "newest FailedScheduling event"
        + (f", {times} times" if times > 1 else "")
        + (f", last {ago} ago" if ago else ""),
        message(newest),
    )


def quoted(said: Said) -> str:
    shown = said.text if len(said.text) <= _QUOTE_LIMIT else said.text[:_QUOTE_LIMIT] + "…"
    return f'scheduler said ({said.source}): "{shown}"'


def notes(said: Said, requests: Mapping[str, int], nodes_seen: int | None) -> tuple[str, ...]:
    """Where the text reads differently from what it means. `nodes_seen` is None when the nodes were
    filtered before they were read, so their number cannot be compared."""
    found = []
    insufficient = [r for r in requests if f"Insufficient {r}" in said.text]
    if insufficient:
        found.append(
            f"note: `Insufficient {insufficient[0]}` reads the same whether a node does not report the "
            "resource, reports it with allocatable 0, or has no free device left; the funnel above "
            "tells them apart from the node objects"
        )
    if "untolerated taint(s)" in said.text:
        found.append(
            "note: since Kubernetes 1.34.7 the scheduler no longer names the taint; the funnel above does"
        )
    counted = _NODE_COUNT.match(said.text)
    if counted and nodes_seen is not None and int(counted[1]) != nodes_seen:
        found.append(
            f"note: the scheduler counted {counted[1]} nodes and the cluster has {nodes_seen} now: "
            "the message predates a change (it is rewritten only at the next attempt)"
        )
    return tuple(found)


