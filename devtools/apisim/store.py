"""The simulated cluster's objects, indexed so that selections answer quickly on 5,000 nodes and
500,000 pods: by namespace, by name, by label pair, and by the field selectors callers lean on
(`spec.nodeName` and `status.phase` of pods, `involvedObject.name` of events). As the API server's
watch cache does, a selection is answered from the indexes — `=` as the index's set, `!=` as what
the index excludes — and from a sorted order kept per resource, not by reading every object.

Events are stored once, in the core `v1` form, and converted when served through `events.k8s.io/v1`,
as the API server does: the two APIs are two views of the same objects.

Like etcd, the store has a revision: `put` and `delete` bump it, stamp it as the object's
`resourceVersion`, and record the change, so that watches can be served from any recent revision.
`compact()` forgets the recorded changes (etcd's compaction): a watch from before it gets 410 Gone.
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from typing import Any

from devtools.apisim.resources import NEW_EVENTS, RESOURCES, Resource, by_kind, served_version, storage_of
from devtools.apisim.selectors import FieldRequirement, LabelRequirement

Key = tuple[str, str]
"""(namespace, name); namespace is "" for cluster-scoped objects."""

_INDEXED_FIELDS = {"pods": ("spec.nodeName", "status.phase"), "events": ("involvedObject.name",)}

_SORT_BELOW = 16
"""A selection of fewer than 1/16 of the objects is sorted; a larger one is read in the kept order."""

HISTORY = 10_000
"""Changes kept for watches to resume from; a watch from an older revision gets 410 Gone (the API
server's watch cache keeps a window of recent changes in the same way)."""

# events.k8s.io/v1 field ↔ core v1 field (k8s.io/kubernetes pkg/apis/events/v1/conversion.go)
_EVENT_RENAMES = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)


def core_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its core v1 form (a core event is returned as it is)."""
    if event.get("apiVersion") != NEW_EVENTS.group_version:
        return dict(event)
    converted = {k: v for k, v in event.items() if k not in {new for new, _ in _EVENT_RENAMES}}
    for new, old in _EVENT_RENAMES:
        if new in event:
            converted[old] = event[new]
    converted["apiVersion"] = "v1"
    return converted


def new_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """A core v1 Event as events.k8s.io/v1 serves it."""
    converted = {k: v for k, v in event.items() if k not in {old for _, old in _EVENT_RENAMES}}
    for new, old in _EVENT_RENAMES:
        if event.get(old) not in (None, "", {}):
            converted[new] = event[old]
    converted["apiVersion"] = NEW_EVENTS.group_version
    return converted


def read_field(obj: Mapping[str, Any], path: str) -> str:
    """A field's value as field selectors compare it: absent → "", booleans `true`/`false`."""
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value)


@dataclass
class Entry:
    obj: dict[str, Any]
    _json: dict[str, bytes] = field(default_factory=dict)

    def encoded(self, served_as: Resource, in_list: bool) -> bytes:
        """The object's JSON as served through `served_as`, cached: lists of built-in kinds omit each
        item's apiVersion and kind, as the API server's typed lists do; custom resources keep them."""
        cache_key = f"{served_as.group_version}:{in_list}"
        if cache_key not in self._json:
            body = self.as_served(served_as)
            if in_list and not served_as.custom:
                body = {k: v for k, v in body.items() if k not in ("apiVersion", "kind")}
            self._json[cache_key] = json.dumps(body, separators=(",", ":")).encode()
        return self._json[cache_key]

    def as_served(self, served_as: Resource) -> dict[str, Any]:
        """The object as the API of `served_as` shows it (an event through events.k8s.io is converted)."""
        return new_event(self.obj) if served_as is NEW_EVENTS else self.obj


@dataclass(frozen=True)
class Selection:
    """What a LIST or a WATCH asks for: a namespace ("" = all) and label and field requirements, the
    fields named by their path in the stored object."""

    namespace: str
    labels: tuple[LabelRequirement, ...]
    fields: tuple[FieldRequirement, ...]

    @classmethod
    def of(
        cls,
        namespace: str,
        labels: tuple[LabelRequirement, ...],
        fields: tuple[FieldRequirement, ...],
        aliases: Mapping[str, str],
    ) -> Selection:
        stored = tuple(FieldRequirement(aliases.get(f.field, f.field), f.value, f.equal) for f in fields)
        return cls(namespace, labels, stored)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        return (
            (not self.namespace or meta.get("namespace", "") == self.namespace)
            and all(r.matches(meta.get("labels") or {}) for r in self.labels)
            and all(r.matches(partial(read_field, obj)) for r in self.fields)
        )


@dataclass(frozen=True)
class Change:
    """One write, as a watch replays it: the object before (None: created; when deleted, its last
    state at the deletion's revision) and after (None: deleted)."""

    revision: int
    resource: Resource
    old: dict[str, Any] | None
    new: dict[str, Any] | None


class Collection:
    """The objects of one resource, with their indexes."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.entries: dict[Key, Entry] = {}
        self.by_namespace: dict[str, set[Key]] = defaultdict(set)
        self.by_name: dict[str, set[Key]] = defaultdict(set)
        self.by_label: dict[tuple[str, str], set[Key]] = defaultdict(set)
        self.by_label_key: dict[str, set[Key]] = defaultdict(set)
        self.by_field: dict[str, dict[str, set[Key]]] = {
            f: defaultdict(set) for f in _INDEXED_FIELDS.get(resource.plural, ())
        }
        self._order: tuple[list[Key], list[Entry]] | None = None
        """Every key and its entry, sorted; None after a write, until the next selection sorts again."""

    def key_of(self, obj: Mapping[str, Any]) -> Key:
        meta = obj.get("metadata") or {}
        return (meta.get("namespace", "") if self.resource.namespaced else "", meta.get("name", ""))

    def add(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = self.key_of(obj)
        if key in self.entries:
            self.remove(key)
        self.entries[key] = Entry(obj)
        self._order = None
        self.by_namespace[key[0]].add(key)
        self.by_name[key[1]].add(key)
        for label, value in (meta.get("labels") or {}).items():
            self.by_label[(label, value)].add(key)
            self.by_label_key[label].add(key)
        for path, index in self.by_field.items():
            index[read_field(obj, path)].add(key)

    def remove(self, key: Key) -> None:
        entry = self.entries.pop(key)
        self._order = None
        meta = entry.obj.get("metadata") or {}
        self.by_namespace[key[0]].discard(key)
        self.by_name[key[1]].discard(key)
        for label, value in (meta.get("labels") or {}).items():
            self.by_label[(label, value)].discard(key)
            self.by_label_key[label].discard(key)
        for path, index in self.by_field.items():
            index[read_field(entry.obj, path)].discard(key)

    def select(self, selection: Selection) -> list[Entry]:
        """The entries matching the selection, sorted as the API sorts (by namespace, then name).
        The indexes answer every requirement they can; only the others are matched object by object."""
        within, excluded, rest = self._indexed(selection)
        entries = self._in_order(within, excluded)
        if not (rest.labels or rest.fields):
            return entries
        return [entry for entry in entries if rest.matches(entry.obj)]

    def _indexed(self, selection: Selection) -> tuple[list[set[Key]], list[set[Key]], Selection]:
        """The key sets the selection must be within, the key sets it excludes, and what no index
        answers (to match on the objects). Each index holds exactly the objects with that value, so
        `=` is its set and `!=` excludes it."""
        within: list[set[Key]] = (
            [self.by_namespace.get(selection.namespace, set())] if selection.namespace else []
        )
        excluded: list[set[Key]] = []
        fields: list[FieldRequirement] = []
        for f in selection.fields:
            index = self._field_index(f.field)
            if index is None:
                fields.append(f)
            elif f.equal:
                within.append(index.get(f.value, set()))
            else:
                excluded.append(index.get(f.value, set()))
        labels: list[LabelRequirement] = []
        for r in selection.labels:
            if r.operator in ("=", "in"):
                within.append(set().union(*(self.by_label.get((r.key, v), set()) for v in r.values)))
            elif r.operator == "exists":
                within.append(self.by_label_key.get(r.key, set()))
            else:
                labels.append(r)
        return within, excluded, Selection("", tuple(labels), tuple(fields))

    def _field_index(self, path: str) -> Mapping[str, set[Key]] | None:
        """The index of a field's values, if the field has one."""
        if path == "metadata.name":
            return self.by_name
        if path == "metadata.namespace" and self.resource.namespaced:
            return self.by_namespace
        return self.by_field.get(path)

    def _in_order(self, within: list[set[Key]], excluded: list[set[Key]]) -> list[Entry]:
        """The entries in every key set of `within` (all when it is empty) and in none of `excluded`,
        in order: a few are sorted, many are read in the kept order instead of sorted again. Within
        a few keys (a node's pods), each excluded set is looked into for those keys, never copied:
        as the API server's watch cache answers `spec.nodeName=NODE,status.phase!=Succeeded`, the
        cost is the node's pods, not the cluster's finished ones."""
        if not within:
            return self._all_but(set().union(*excluded))
        smallest, *others = sorted(within, key=len)
        keys = smallest.intersection(*others)
        for gone in excluded:
            keys = keys - gone  # a set difference walks the smaller side
        if len(keys) * _SORT_BELOW < len(self.entries):
            return [self.entries[key] for key in sorted(keys)]
        ordered_keys, ordered = self._sorted()
        return [entry for key, entry in zip(ordered_keys, ordered, strict=True) if key in keys]

    def _all_but(self, excluded: set[Key]) -> list[Entry]:
        """Every entry in order but the excluded ones (keys of this collection, as every index holds):
        the slices between them, found by bisection, so the cost is a copy of the kept order."""
        ordered_keys, ordered = self._sorted()
        kept: list[Entry] = []
        start = 0
        for at in sorted(bisect_left(ordered_keys, key) for key in excluded):
            kept += ordered[start:at]
            start = at + 1
        kept += ordered[start:]
        return kept

    def _sorted(self) -> tuple[list[Key], list[Entry]]:
        """Every key, and its entry at the same place, in order; sorted again only after a write.
        The entries are kept beside the keys: looking 500,000 keys up in `entries` costs more than
        the sort."""
        if self._order is None:
            pairs = sorted(self.entries.items(), key=itemgetter(0))
            self._order = ([key for key, _ in pairs], [entry for _, entry in pairs])
        return self._order


class Store:
    """Every object of the simulated cluster, by resource, at a revision."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.collections = {
            resource: Collection(resource) for resource in RESOURCES if storage_of(resource) is resource
        }
        self.revision = 1
        """The revision of the last write (a list's `resourceVersion`)."""
        self.floor = 1
        """The oldest revision a watch may start from: the changes after it are all recorded."""
        self.changed = threading.Condition()
        """Held while reading or writing; notified on every write (watches wait on it)."""
        self._history: deque[Change] = deque()
        self.closed = False
        for obj in objects:
            self.add(obj)
        self._add_namespaces()
        self.floor = self.revision

    def add(self, obj: Mapping[str, Any]) -> None:
        """Load an object as it is, unrecorded (a snapshot's objects, before anyone watches)."""
        obj = served_version(obj)
        resource = by_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if resource is None:  # a kind this simulator does not serve
            return
        self.collections[resource].add(core_event(obj) if resource.plural == "events" else dict(obj))
        self.revision = max(self.revision, _revision_of(obj))

    def put(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create or replace an object, as a write through the API does: at a new revision, recorded
        for watches. Returns the object as stored."""
        obj = served_version(obj)
        resource = by_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if resource is None:
            raise ValueError(f"the simulator does not serve {obj.get('apiVersion')} {obj.get('kind')}")
        stored = core_event(obj) if resource.plural == "events" else dict(obj)
        collection = self.collections[resource]
        with self.changed:
            revision = self.revision + 1
            stored["metadata"] = {**(stored.get("metadata") or {}), "resourceVersion": str(revision)}
            key = collection.key_of(stored)
            old = collection.entries[key].obj if key in collection.entries else None
            collection.add(stored)
            self._record(Change(revision, resource, old, stored))
        return stored

    def delete(self, kind: str, namespace: str, name: str, api_version: str = "v1") -> dict[str, Any]:
        """Delete an object (KeyError if there is none); watches see it last as it was, at the
        deletion's revision."""
        resource = by_kind(api_version, kind)
        if resource is None:
            raise ValueError(f"the simulator does not serve {api_version} {kind}")
        collection = self.collections[resource]
        with self.changed:
            key = (namespace if resource.namespaced else "", name)
            old = collection.entries[key].obj
            collection.remove(key)
            revision = self.revision + 1
            gone = {**old, "metadata": {**(old.get("metadata") or {}), "resourceVersion": str(revision)}}
            self._record(Change(revision, resource, gone, None))
        return gone

    def compact(self) -> None:
        """Forget every recorded change, as etcd's compaction does: a watch must start from now."""
        with self.changed:
            self._history.clear()
            self.floor = self.revision

    def changes_after(self, revision: int) -> list[Change]:
        """The recorded changes after `revision` (which must not be below `floor`), oldest first.
        Call it holding `changed`."""
        return [c for c in self._history if c.revision > revision]

    def close(self) -> None:
        """Wake every watch, for the server to stop."""
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def _record(self, change: Change) -> None:
        self.revision = change.revision
        self._history.append(change)
        while len(self._history) > HISTORY:
            self.floor = self._history.popleft().revision
        self.changed.notify_all()

    def collection(self, resource: Resource) -> Collection:
        return self.collections[storage_of(resource)]

    def _add_namespaces(self) -> None:
        """Every namespace an object lives in exists, as it must on a real cluster."""
        namespaces = self.collections[RESOURCES[0]]
        seen = {"default", "kube-system", "kube-public", "kube-node-lease"}
        for collection in self.collections.values():
            seen.update(ns for ns, keys in collection.by_namespace.items() if ns and keys)
        for ns in sorted(seen - {name for _, name in namespaces.entries}):
            namespaces.add(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": ns,
                        "uid": f"sim-ns-{ns}",
                        "labels": {"kubernetes.io/metadata.name": ns},
                        "creationTimestamp": "2026-01-05T10:00:00Z",
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                }
            )


def _revision_of(obj: Mapping[str, Any]) -> int:
    """An object's `resourceVersion` as a number (0 when it has none or not a number)."""
    value = str((obj.get("metadata") or {}).get("resourceVersion", ""))
    return int(value) if value.isdigit() else 0
