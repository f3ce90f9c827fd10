"""The simulated cluster's objects, indexed so that selections answer quickly on 5,000 nodes and
100,000 pods: by namespace, by name, by label pair, and by the field selectors callers lean on
(`spec.nodeName` of pods, `involvedObject.name` of events).

Events are stored once, in the core `v1` form, and converted when served through `events.k8s.io/v1`,
as the API server does: the two APIs are two views of the same objects.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from tests.apisim.resources import NEW_EVENTS, RESOURCES, Resource, by_kind, storage_of
from tests.apisim.selectors import FieldRequirement, LabelRequirement

Key = tuple[str, str]
"""(namespace, name); namespace is "" for cluster-scoped objects."""

_INDEXED_FIELDS = {"pods": ("spec.nodeName",), "events": ("involvedObject.name",)}

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

    def add(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", "") if self.resource.namespaced else "", meta.get("name", ""))
        if key in self.entries:
            self.remove(key)
        self.entries[key] = Entry(obj)
        self.by_namespace[key[0]].add(key)
        self.by_name[key[1]].add(key)
        for label, value in (meta.get("labels") or {}).items():
            self.by_label[(label, value)].add(key)
            self.by_label_key[label].add(key)
        for path, index in self.by_field.items():
            index[read_field(obj, path)].add(key)

    def remove(self, key: Key) -> None:
        entry = self.entries.pop(key)
        meta = entry.obj.get("metadata") or {}
        self.by_namespace[key[0]].discard(key)
        self.by_name[key[1]].discard(key)
        for label, value in (meta.get("labels") or {}).items():
            self.by_label[(label, value)].discard(key)
            self.by_label_key[label].discard(key)
        for path, index in self.by_field.items():
            index[read_field(entry.obj, path)].discard(key)

    def select(
        self,
        namespace: str,
        labels: tuple[LabelRequirement, ...],
        fields: tuple[FieldRequirement, ...],
        aliases: Mapping[str, str],
    ) -> list[Entry]:
        """The entries in `namespace` ("" = all) matching every requirement, sorted as the API sorts
        (by namespace, then name). Starts from the narrowest index a requirement allows."""
        stored = [FieldRequirement(aliases.get(f.field, f.field), f.value, f.equal) for f in fields]
        keys = self._narrowest(namespace, labels, stored)
        chosen = []
        for key in sorted(keys):
            entry = self.entries[key]
            obj_labels = (entry.obj.get("metadata") or {}).get("labels") or {}
            if (
                (not namespace or key[0] == namespace)
                and all(r.matches(obj_labels) for r in labels)
                and all(r.matches(partial(read_field, entry.obj)) for r in stored)
            ):
                chosen.append(entry)
        return chosen

    def _narrowest(
        self, namespace: str, labels: tuple[LabelRequirement, ...], fields: list[FieldRequirement]
    ) -> Iterable[Key]:
        options: list[set[Key]] = [self.by_namespace.get(namespace, set())] if namespace else []
        for f in fields:
            if not f.equal:
                continue
            if f.field == "metadata.name":
                options.append(self.by_name.get(f.value, set()))
            elif f.field in self.by_field:
                options.append(self.by_field[f.field].get(f.value, set()))
        for r in labels:
            if r.operator in ("=", "in"):
                options.append(set().union(*(self.by_label.get((r.key, v), set()) for v in r.values)))
            elif r.operator in ("exists", "gt", "lt"):
                options.append(self.by_label_key.get(r.key, set()))
        if not options:
            return self.entries.keys()
        return min(options, key=len)


class Store:
    """Every object of the simulated cluster, by resource."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.collections = {
            resource: Collection(resource) for resource in RESOURCES if storage_of(resource) is resource
        }
        for obj in objects:
            self.add(obj)
        self._add_namespaces()

    def add(self, obj: Mapping[str, Any]) -> None:
        resource = by_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if resource is None:  # a kind this simulator does not serve
            return
        self.collections[resource].add(core_event(obj) if resource.plural == "events" else dict(obj))

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
