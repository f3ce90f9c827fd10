"""Why a named pod or JobSet is not there: the names that exist close to it, and the creations the API
refused in its namespace.

A pod refused at admission (quota, a missing RuntimeClass, a webhook) never exists; the only trace is
a FailedCreate event on the controller that tried to create it. So "not found" is often the answer to
"why is it not running", and these are what the person needs to see beside it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from diagnosis import objects
from diagnosis.events import message, newest_first, reason, regarding
from diagnosis.objects import Object, text

_GENERATED_SUFFIX = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$")
"""The five characters the API server appends to a `generateName` (its alphabet has no vowels)."""

_LOOK_ALIKE = 0.6
"""difflib's usual cutoff: below it names share too little to be a typo of one another."""

_REJECTION_REASONS = frozenset({"FailedCreate", "JobCreationFailed"})
"""Job, ReplicaSet, StatefulSet and DaemonSet controllers record FailedCreate on themselves; the
JobSet controller records JobCreationFailed when a child Job is refused (its pods never exist)."""

_QUOTED_POD = re.compile(r'pods "[^"]*"')


def similar_names(name: str, names: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """The existing names closest to `name`, closest first.

    Names of the same family come first: `name` but for the suffix the API appends to generated
    names (`trainer-0` → `trainer-0-x7k2p`; a stale `trainer-0-x7k2p` → `trainer-0-q9zfw`), then names
    that extend it, or that it extends, at a dash (`trainer` → `trainer-workers-0-0-b8mzq`). Then
    names that merely look alike, for typos (`traner-0` → `trainer-0`).
    """
    others = [n for n in dict.fromkeys(names) if n != name]
    stem = _stem(name)
    family = sorted(
        (n for n in others if _stem(n) == stem or n.startswith(f"{name}-") or name.startswith(f"{n}-")),
        key=lambda n: (_stem(n) != stem, abs(len(n) - len(name)), n),
    )
    alike = difflib.get_close_matches(name, others, n=limit, cutoff=_LOOK_ALIKE)
    return tuple(dict.fromkeys([*family, *alike]))[:limit]


def creation_rejections(events: Iterable[Object], namespace: str, limit: int = 5) -> tuple[str, ...]:
    """The distinct reasons the API refused to create objects in the namespace, newest first, each
    naming the controller that tried: `Job trainer-0: Error creating: pods "trainer-0-" is forbidden:
    exceeded quota: …`. Refusals that differ only in the generated pod name count once."""
    refused = (e for e in events if objects.namespace(e) == namespace and reason(e) in _REJECTION_REASONS)
    distinct: dict[str, str] = {}
    for event in newest_first(refused):
        said = message(event)
        ref = regarding(event)
        who = f"{text(ref.get('kind'))} {text(ref.get('name'))}"
        distinct.setdefault(_QUOTED_POD.sub('pods "…"', said), f"{who}: {said}")
    return tuple(distinct.values())[:limit]


def _stem(name: str) -> str:
    return _GENERATED_SUFFIX.sub("", name)
