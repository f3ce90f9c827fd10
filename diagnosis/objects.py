"""Kubernetes objects as the API serves them: plain JSON dicts, read through the accessors below.

Objects come from users' snapshots and from live clusters, so any field may be missing or of the
wrong type. The accessors here never raise: a missing or malformed field reads as empty.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

Object = Mapping[str, Any]
"""Any Kubernetes object as decoded JSON."""


def mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one. Decoded JSON is a plain dict, or None where a
    field is missing: both are checked first, as the ABC check costs ten times more and runs for
    every field of every object."""
    return value if type(value) is dict or (value is not None and isinstance(value, Mapping)) else {}


def sequence(value: object) -> Sequence[Any]:
    """`value` if it is a list or tuple, else an empty one."""
    return value if type(value) is list or isinstance(value, list | tuple) else ()


def text(value: object) -> str:
    """`value` if it is a string, else the empty string."""
    return value if isinstance(value, str) else ""


_NOTHING: Mapping[str, Any] = MappingProxyType({})


def _part(key: str) -> Callable[[object], Mapping[str, Any]]:
    """The reader of `obj[key]` as a mapping. Decoded JSON takes the first lines, in the reader's own
    call: the funnel reads a part of each of thousands of nodes and pods at every step, and the
    cache's pods leave out a Running pod's status."""

    def read(obj: object) -> Mapping[str, Any]:
        if type(obj) is dict:
            found = obj.get(key)
            if type(found) is dict:
                return found
            if found is None:
                return _NOTHING
        return mapping(mapping(obj).get(key))

    return read


meta = _part("metadata")
spec = _part("spec")
status = _part("status")


def parts(obj: object) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
    """`meta`, `spec` and `status` of the object in one call, for loops over every pod a reader
    fetched; decoded JSON takes the first lines (a compact pod leaves out a Running pod's status)."""
    if type(obj) is dict:
        found_meta, found_spec, found_status = obj.get("metadata"), obj.get("spec"), obj.get("status")
        if type(found_meta) is dict and type(found_spec) is dict:
            if type(found_status) is dict:
                return found_meta, found_spec, found_status
            if found_status is None:
                return found_meta, found_spec, _NOTHING
    return meta(obj), spec(obj), status(obj)


def _field(key: str) -> Callable[[object], str]:
    """The reader of `metadata[key]` as a string, made as `_part` makes its readers (every step names
    nodes and pods, thousands at each). A call made through another costs as much as the lookups."""

    def read(obj: object) -> str:
        if type(obj) is dict and type(found := obj.get("metadata")) is dict:
            value = found.get(key)
            if type(value) is str:
                return value
        return text(meta(obj).get(key))

    return read


name = _field("name")
namespace = _field("namespace")


def uid(obj: object) -> str:
    return text(meta(obj).get("uid"))


def kind(obj: object) -> str:
    return text(mapping(obj).get("kind"))


def labels(obj: object) -> Mapping[str, str]:
    """The object's labels with string values: its own mapping when every value is one (as the API
    serves them; read for every node of a funnel, so not copied), else a copy without the others."""
    found = mapping(meta(obj).get("labels"))
    try:
        "".join(found.values())  # every value a string: a third of the time of checking each one
    except TypeError:
        return {k: v for k, v in found.items() if isinstance(v, str)}
    return found


def annotations(obj: object) -> Mapping[str, str]:
    return {k: v for k, v in mapping(meta(obj).get("annotations")).items() if isinstance(v, str)}


def conditions(obj: object) -> tuple[Mapping[str, Any], ...]:
    return tuple(mapping(c) for c in sequence(status(obj).get("conditions")) if isinstance(c, Mapping))


def condition(obj: object, type_: str) -> Mapping[str, Any] | None:
    """The status condition of this type, or None. (Read of every pod a reader keeps: the conditions
    are looked through as they are.)"""
    for c in sequence(status(obj).get("conditions")):
        if (type(c) is dict or isinstance(c, Mapping)) and c.get("type") == type_:
            return c
    return None


def condition_true(obj: object, type_: str) -> bool:
    c = condition(obj, type_)
    return c is not None and c.get("status") == "True"


def utc(when: datetime) -> datetime:
    """`when` in UTC; a time without an offset is taken as UTC (as the API means it)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def timestamp(value: object) -> datetime | None:
    """An RFC 3339 timestamp as the API writes it (`2026-11-29T08:50:19Z`), in UTC, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def age(now: datetime, then: datetime | None) -> str:
    """`45s`, `12m`, `3h`, `2d`: how long before `now` `then` was; empty when unknown or later."""
    if then is None:
        return ""
    seconds = int((utc(now) - utc(then)).total_seconds())
    if seconds < 0:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class Ref:
    """What a question is about: `kind` is `pod` or `jobset`."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"
