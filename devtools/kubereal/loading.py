"""Load a snapshot into the real API server with spec and status, as the cluster it was taken from held
it, and take it out again so that the next case finds an empty server.

What the server sets is left to it: `uid`, `resourceVersion`, `creationTimestamp`, `generation` and
`managedFields` are dropped, and every reference to an old uid (owner references, an event's object,
a PV's `claimRef`, a claim's `reservedFor`, a Job's pods' `controller-uid`) is rewritten to the uid the
server gave. A Job's selector is left for the server to make again (it refuses one that names another
uid). Status is written through the `/status` subresource once every object exists. A terminating
object is given a finalizer, then deleted, so that it stays with its `deletionTimestamp`.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from devtools.kubereal.api import Api, ApiError, base

ADMISSION_SECONDS = 30.0
"""How long a refusal for a referenced object not found yet is asked again (`_admitted`)."""
HOLD = "kubewhy.test/hold"
"""The finalizer that keeps a terminating object of the snapshot terminating."""

_ORDER = (
    "PriorityClass", "StorageClass", "RuntimeClass", "CSIDriver", "DeviceClass", "Node", "CSINode",
    "ResourceFlavor", "AdmissionCheck", "ClusterQueue", "LocalQueue", "ResourceQuota", "LimitRange",
    "PersistentVolumeClaim", "PersistentVolume", "CSIStorageCapacity", "ResourceSlice",
    "JobSet", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ResourceClaimTemplate", "Pod",
    "ResourceClaim", "Workload",
)  # fmt: skip
"""Kinds in creation order: an owner before what it owns (a Job's Workload after the Job, a pod's after
the pod), whatever names another by uid after it. Kinds not listed come next, events last."""
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
               "deletionTimestamp", "deletionGracePeriodSeconds")  # fmt: skip
_JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_TIMESTAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$")
_WRITTEN_TIME = re.compile(r"(\d{4}-\d\d-\d\d)([T ])(\d\d:\d\d:\d\d)")
"""A time inside a ConfigMap's text: cluster-autoscaler's status writes Go's `2006-01-02 15:04:05.999999999
-0700 MST` and RFC 3339 (always UTC)."""


@dataclass
class Loaded:
    """What a load created (paths, in creation order), the namespaces it labelled, and what the server
    refused, each as `Kind ns/name (stage): message`."""

    paths: list[str] = field(default_factory=list)
    labelled: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def objects_of(path: Path) -> list[dict[str, Any]]:
    """Every object of a snapshot file (JSON or YAML, one document or many, Lists unpacked), of any kind:
    what the cluster held, not only what kubewhy reads."""
    found: list[dict[str, Any]] = []
    for document in yaml.safe_load_all(path.read_text()):
        found.extend(_unpacked(document))
    return found


def _unpacked(document: Any) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        return []
    if document.get("kind", "").endswith("List") and isinstance(document.get("items"), list):
        return [o for item in document["items"] for o in _unpacked(item)]
    return [document] if document.get("kind") else []


def shifted(objects: Iterable[Mapping[str, Any]], delta: timedelta) -> list[dict[str, Any]]:
    """The objects with every timestamp moved by `delta`: a snapshot taken at T, loaded at T + delta,
    keeps its ages (how long a pod has waited, how old an event is) by the server's clock."""
    return [
        _shift_text(moved, delta) if moved.get("kind") == "ConfigMap" else moved
        for moved in (_shift(copy.deepcopy(dict(o)), delta) for o in objects)
    ]


def _shift_text(configmap: dict[str, Any], delta: timedelta) -> dict[str, Any]:
    """A ConfigMap with the times written inside its annotations and data moved too
    (cluster-autoscaler's status: its `last-updated` annotation, each group's probe and backoff)."""

    def moved(m: re.Match[str]) -> str:
        at = datetime.fromisoformat(f"{m[1]}T{m[3]}+00:00") + delta
        return f"{at:%Y-%m-%d}{m[2]}{at:%H:%M:%S}"

    for holder, key in ((configmap.get("metadata", {}), "annotations"), (configmap, "data")):
        if isinstance(values := holder.get(key), dict):
            holder[key] = {
                k: _WRITTEN_TIME.sub(moved, v) if isinstance(v, str) else v for k, v in values.items()
            }
    return configmap


def _shift(value: Any, delta: timedelta) -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, delta) for v in value]
    if isinstance(value, str) and (m := _TIMESTAMP.match(value)):
        moved = datetime.fromisoformat(f"{m[1]}+00:00").replace(tzinfo=UTC) + delta
        return f"{moved:%Y-%m-%dT%H:%M:%S}{m[2] or ''}Z"
    return value


def load(api: Api, objects: Sequence[Mapping[str, Any]]) -> Loaded:
    """Create the objects (their namespaces first), then their status, then end the terminating ones."""
    loaded = Loaded()
    uids: dict[str, str] = {}
    _namespaces(api, objects, uids, loaded)
    created: list[tuple[Mapping[str, Any], str]] = []
    for obj in sorted((o for o in objects if o.get("kind") != "Namespace"), key=_rank):
        path = _create(api, obj, uids, loaded)
        if path is not None:
            created.append((obj, path))
            loaded.paths.append(path)
    for obj, path in created:
        served = api.resource(obj["apiVersion"], obj["kind"])
        if obj.get("status") and served is not None and served.status:
            latest = api.call("GET", path)
            _attempt(
                api,
                loaded,
                obj,
                "status",
                "PUT",
                f"{path}/status",
                {**latest, "status": _renamed(obj["status"], uids)},
            )
    for obj, path in created:
        deleted = obj.get("metadata", {}).get("deletionTimestamp")
        if deleted:
            query = {"gracePeriodSeconds": str(_grace(deleted))}
            _attempt(api, loaded, obj, "delete", "DELETE", path, query=query)
    return loaded


def _grace(deleted: str) -> int:
    """The grace period that makes the server set this `deletionTimestamp` (it sets now + grace): one
    already past is as near as it gets, now."""
    when = datetime.fromisoformat(deleted.replace("Z", "+00:00"))
    return max(0, round((when - datetime.now(UTC)).total_seconds()))


def unload(api: Api, loaded: Loaded) -> None:
    """Delete what `load` created, finalizers and all (an object whose finalizers are cleared after its
    deletion is gone at once), and check that the server holds none of it."""
    for path in reversed(loaded.paths):
        try:
            api.call("DELETE", path, query={"gracePeriodSeconds": "0", "propagationPolicy": "Background"})
            api.call(
                "PATCH", path, {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json"
            )
        except ApiError as error:
            if error.code != 404:
                raise
    for namespace in loaded.labelled:
        api.call(
            "PATCH",
            f"/api/v1/namespaces/{namespace}",
            {"metadata": {"labels": None, "annotations": None}},
            content_type="application/merge-patch+json",
        )
    left = [path for path in loaded.paths if _exists(api, path)]
    if left:
        raise RuntimeError(f"still on the server after unloading: {left}")


def _exists(api: Api, path: str) -> bool:
    try:
        api.call("GET", path)
    except ApiError as error:
        if error.code == 404:
            return False
        raise
    return True


def _rank(obj: Mapping[str, Any]) -> int:
    kind = obj.get("kind", "")
    if kind == "Event":
        return len(_ORDER) + 1
    return _ORDER.index(kind) if kind in _ORDER else len(_ORDER)


def _namespaces(api: Api, objects: Sequence[Mapping[str, Any]], uids: dict[str, str], loaded: Loaded) -> None:
    declared = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Namespace"}
    named = {o["metadata"]["namespace"] for o in objects if o.get("metadata", {}).get("namespace")}
    for namespace in sorted(named | set(declared)):
        meta = declared.get(namespace, {}).get("metadata", {})
        wanted = {"name": namespace, **{k: meta[k] for k in ("labels", "annotations") if meta.get(k)}}
        try:
            served = api.call(
                "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": wanted}
            )
        except ApiError as error:
            if error.code != 409:
                raise
            served = api.call(
                "PATCH",
                f"/api/v1/namespaces/{namespace}",
                {"metadata": wanted},
                content_type="application/merge-patch+json",
            )
        if len(wanted) > 1:
            loaded.labelled.append(namespace)
        if meta.get("uid"):
            uids[meta["uid"]] = served["metadata"]["uid"]


def _create(api: Api, obj: Mapping[str, Any], uids: Mapping[str, str], loaded: Loaded) -> str | None:
    """Create one object; its path on the server, or None when the server refused it."""
    served = api.resource(obj.get("apiVersion", ""), obj.get("kind", ""))
    if served is None:
        loaded.rejected.append(f"{_label(obj)} (discovery): {obj.get('apiVersion')} is not served")
        return None
    plural, namespaced, _ = served
    body = _prepared(obj, uids)
    namespace = body["metadata"].get("namespace") or "default"
    if not namespaced:
        body["metadata"].pop("namespace", None)
    collection = base(obj["apiVersion"]) + (f"/namespaces/{namespace}" if namespaced else "") + f"/{plural}"
    got = _admitted(api, loaded, obj, collection, body)
    if got is None:
        return None
    old = obj.get("metadata", {}).get("uid")
    if old:
        uids[old] = got["metadata"]["uid"]  # type: ignore[index]
    return f"{collection}/{got['metadata']['name']}"


def _prepared(obj: Mapping[str, Any], uids: Mapping[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = _renamed(copy.deepcopy(dict(obj)), uids)
    meta = body.setdefault("metadata", {})
    for key in _SERVER_SET:
        meta.pop(key, None)
    body.pop("status", None)
    if body.get("kind") == "Job" and not body.get("spec", {}).get("manualSelector"):
        body["spec"].pop("selector", None)
        template_labels = body["spec"].get("template", {}).get("metadata", {}).get("labels", {})
        for label in _JOB_UID_LABELS:
            template_labels.pop(label, None)
    if obj.get("metadata", {}).get("deletionTimestamp"):
        meta["finalizers"] = [*meta.get("finalizers", []), HOLD]
    return body


def _renamed(value: Any, uids: Mapping[str, str]) -> Any:
    """Every string that is an old uid becomes the server's new uid for that object."""
    if isinstance(value, dict):
        return {k: _renamed(v, uids) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, uids) for v in value]
    return uids.get(value, value) if isinstance(value, str) else value


def _admitted(
    api: Api, loaded: Loaded, obj: Mapping[str, Any], collection: str, body: Mapping[str, Any]
) -> Any:
    """Create the object. Admission plugins (Priority, RuntimeClass) look the objects they name up in
    the server's informer caches, which learn of a PriorityClass created a moment ago a moment later:
    a refusal for an object not found yet is asked again until the cache has it (polled: nothing
    tells when)."""
    deadline = time.monotonic() + ADMISSION_SECONDS
    while True:
        try:
            return api.call("POST", collection, body)
        except ApiError as error:
            if error.code != 403 or "not found" not in error.message or time.monotonic() > deadline:
                loaded.rejected.append(f"{_label(obj)} (create): {error.code} {error.message}")
                return None
        time.sleep(0.05)


def _attempt(
    api: Api,
    loaded: Loaded,
    obj: Mapping[str, Any],
    stage: str,
    method: str,
    path: str,
    body: Mapping[str, Any] | None = None,
    query: Mapping[str, str] | None = None,
) -> Any:
    """The server's answer, or None with the refusal noted in `loaded.rejected`."""
    try:
        return api.call(method, path, body, query)
    except ApiError as error:
        loaded.rejected.append(f"{_label(obj)} ({stage}): {error.code} {error.message}")
        return None


def _label(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{obj.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}"
