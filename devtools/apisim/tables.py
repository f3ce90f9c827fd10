"""Server-side printing: the `meta.k8s.io/v1` Table kubectl asks for (`as=Table`) when it prints
objects for people. Columns follow the API server's printers for the kinds kubewhy's commands show;
other kinds get Name and Age, as a custom resource without printer columns does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from devtools.apisim.resources import Resource

Obj = Mapping[str, Any]
Column = tuple[str, str, int, Callable[[Obj, datetime], Any]]
"""(name, type, priority, cell): priority 1 columns show only with `-o wide`."""


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return obj


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """apimachinery `duration.HumanDuration`, as kubectl shows ages."""
    s = int(max(seconds, 0))
    if s < 120:
        return f"{s}s"
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if hours < 3:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d"


def _age(value: Any, now: datetime) -> str:
    when = _when(value)
    return human_duration((now - when).total_seconds()) if when else "<unknown>"


def _name(obj: Obj, now: datetime) -> str:
    return str(_get(obj, "metadata", "name") or "")


def _created(obj: Obj, now: datetime) -> str:
    return _age(_get(obj, "metadata", "creationTimestamp"), now)


def _pod_status(pod: Obj, now: datetime) -> str:
    if _get(pod, "metadata", "deletionTimestamp"):
        return "Terminating"
    reason = _get(pod, "status", "reason") or _get(pod, "status", "phase") or "Unknown"
    for container in _get(pod, "status", "containerStatuses") or []:
        state = _get(container, "state") or {}
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated:
            reason = terminated.get("reason") or f"ExitCode:{terminated.get('exitCode', 0)}"
    if _get(pod, "spec", "schedulingGates") and not _get(pod, "spec", "nodeName"):
        reason = "SchedulingGated"
    return str(reason)


def _pod_ready(pod: Obj, now: datetime) -> str:
    statuses = _get(pod, "status", "containerStatuses") or []
    total = len(_get(pod, "spec", "containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _pod_restarts(pod: Obj, now: datetime) -> str:
    return str(sum(int(c.get("restartCount") or 0) for c in _get(pod, "status", "containerStatuses") or []))


def _node_status(node: Obj, now: datetime) -> str:
    ready = next((c for c in _get(node, "status", "conditions") or [] if c.get("type") == "Ready"), None)
    words = [
        "Unknown"
        if ready is None
        else {"True": "Ready", "False": "NotReady"}.get(ready.get("status"), "Unknown")
    ]
    if _get(node, "spec", "unschedulable"):
        words.append("SchedulingDisabled")
    return ",".join(words)


def _node_roles(node: Obj, now: datetime) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix) :] for k in _get(node, "metadata", "labels") or {} if k.startswith(prefix))
    return ",".join(r for r in roles if r) or "<none>"


def _node_address(kind: str) -> Callable[[Obj, datetime], str]:
    def cell(node: Obj, now: datetime) -> str:
        found = [
            a.get("address", "") for a in _get(node, "status", "addresses") or [] if a.get("type") == kind
        ]
        return found[0] if found else "<none>"

    return cell


def _event_object(event: Obj, now: datetime) -> str:
    ref = _get(event, "involvedObject") or _get(event, "regarding") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _event_last_seen(event: Obj, now: datetime) -> str:
    for value in (
        _get(event, "series", "lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        _get(event, "metadata", "creationTimestamp"),
    ):
        if _when(value):
            return _age(value, now)
    return "<unknown>"


def _job_completions(job: Obj, now: datetime) -> str:
    return f"{_get(job, 'status', 'succeeded') or 0}/{_get(job, 'spec', 'completions') or 1}"


def _job_status(job: Obj, now: datetime) -> str:
    for condition in _get(job, "status", "conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed", "Suspended"):
            return str(condition["type"])
    return "Running"


def _field(*path: str, default: str = "<none>") -> Callable[[Obj, datetime], str]:
    return lambda obj, now: str(_get(obj, *path) or default)


_NAME: Column = ("Name", "string", 0, _name)
_AGE: Column = ("Age", "string", 0, _created)

COLUMNS: dict[str, tuple[Column, ...]] = {
    "Pod": (
        _NAME,
        ("Ready", "string", 0, _pod_ready),
        ("Status", "string", 0, _pod_status),
        ("Restarts", "string", 0, _pod_restarts),
        _AGE,
        ("IP", "string", 1, _field("status", "podIP")),
        ("Node", "string", 1, _field("spec", "nodeName")),
        ("Nominated Node", "string", 1, _field("status", "nominatedNodeName")),
        ("Readiness Gates", "string", 1, lambda obj, now: "<none>"),
    ),
    "Node": (
        _NAME,
        ("Status", "string", 0, _node_status),
        ("Roles", "string", 0, _node_roles),
        _AGE,
        ("Version", "string", 0, _field("status", "nodeInfo", "kubeletVersion", default="")),
        ("Internal-IP", "string", 1, _node_address("InternalIP")),
        ("External-IP", "string", 1, _node_address("ExternalIP")),
        ("OS-Image", "string", 1, _field("status", "nodeInfo", "osImage", default="<unknown>")),
        ("Kernel-Version", "string", 1, _field("status", "nodeInfo", "kernelVersion", default="<unknown>")),
        (
            "Container-Runtime",
            "string",
            1,
            _field("status", "nodeInfo", "containerRuntimeVersion", default="<unknown>"),
        ),
    ),
    "Event": (
        ("Last Seen", "string", 0, _event_last_seen),
        ("Type", "string", 0, _field("type", default="")),
        ("Reason", "string", 0, _field("reason", default="")),
        ("Object", "string", 0, _event_object),
        ("Subobject", "string", 1, _field("involvedObject", "fieldPath", default="")),
        ("Source", "string", 1, _field("source", "component", default="")),
        ("Message", "string", 0, lambda obj, now: str(obj.get("message") or obj.get("note") or "")),
        ("Count", "integer", 1, lambda obj, now: int(obj.get("count") or 1)),
        _NAME,
    ),
    "PersistentVolumeClaim": (
        _NAME,
        ("Status", "string", 0, _field("status", "phase", default="")),
        ("Volume", "string", 0, _field("spec", "volumeName", default="")),
        ("Capacity", "string", 0, _field("status", "capacity", "storage", default="")),
        ("Access Modes", "string", 0, lambda obj, now: ",".join(_get(obj, "status", "accessModes") or [])),
        ("StorageClass", "string", 0, _field("spec", "storageClassName", default="")),
        _AGE,
        ("VolumeMode", "string", 1, _field("spec", "volumeMode", default="")),
    ),
    "PersistentVolume": (
        _NAME,
        ("Capacity", "string", 0, _field("spec", "capacity", "storage", default="")),
        ("Reclaim Policy", "string", 0, _field("spec", "persistentVolumeReclaimPolicy", default="")),
        ("Status", "string", 0, _field("status", "phase", default="")),
        ("Claim", "string", 0, lambda obj, now: "/".join(
            str(_get(obj, "spec", "claimRef", k) or "") for k in ("namespace", "name")).strip("/")),
        ("StorageClass", "string", 0, _field("spec", "storageClassName", default="")),
        _AGE,
    ),
    "StorageClass": (
        _NAME,
        ("Provisioner", "string", 0, _field("provisioner", default="")),
        ("ReclaimPolicy", "string", 0, _field("reclaimPolicy", default="Delete")),
        ("VolumeBindingMode", "string", 0, _field("volumeBindingMode", default="Immediate")),
        _AGE,
    ),
    "CSINode": (
        _NAME,
        ("Drivers", "integer", 0, lambda obj, now: len(_get(obj, "spec", "drivers") or [])),
        _AGE,
    ),
    "Job": (
        _NAME,
        ("Status", "string", 0, _job_status),
        ("Completions", "string", 0, _job_completions),
        ("Duration", "string", 0, lambda obj, now: ""),
        _AGE,
    ),
}


def _claim_state(claim: Obj, now: datetime) -> str:
    """kubectl's STATE of a ResourceClaim: `deleted`, `pending` or `allocated`, and `reserved`."""
    states = []
    if _get(claim, "metadata", "deletionTimestamp"):
        states.append("deleted")
    states.append("allocated" if _get(claim, "status", "allocation") else "pending")
    if _get(claim, "status", "reservedFor"):
        states.append("reserved")
    return ",".join(states)


COLUMNS["ResourceClaim"] = (_NAME, ("State", "string", 0, _claim_state), _AGE)
COLUMNS["ResourceSlice"] = (
    _NAME,
    ("Node", "string", 0, _field("spec", "nodeName")),
    ("Driver", "string", 0, _field("spec", "driver")),
    ("Pool", "string", 0, _field("spec", "pool", "name")),
    _AGE,
)


def table(resource: Resource, objects: list[Obj], include: str, now: datetime) -> dict[str, Any]:
    """A Table of `objects`; each row carries the object as `include` says (`Metadata` — the
    default —, `Object` or `None`), which kubectl reads for `-L`, `--show-labels` and `-A`."""
    columns = COLUMNS.get(resource.kind, (_NAME, _AGE))
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [cell(obj, now) for _, _, _, cell in columns]}
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata", {}),
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "1"},
        "columnDefinitions": [
            {
                "name": name,
                "type": type_,
                "format": "name" if name == "Name" else "",
                "description": name,
                "priority": priority,
            }
            for name, type_, priority, _ in columns
        ],
        "rows": rows,
    }
