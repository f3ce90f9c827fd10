"""cluster-autoscaler's status ConfigMap `kube-system/cluster-autoscaler-status`, in both formats.

`data.status` is plain text up to 1.29 (`Cluster-autoscaler status at TIME:` then `Cluster-wide:` and
`NodeGroups:` with `Name:`, `Health: … cloudProviderTarget=N (minSize=N, maxSize=N)`, `ScaleUp: STATUS
(…)` blocks) and YAML from 1.30 (`nodeGroups[].health.{cloudProviderTarget,maxSize,nodeCounts}`,
`scaleUp.{status,backoffInfo}`). The annotation `cluster-autoscaler.kubernetes.io/last-updated`
(`2006-01-02 15:04:05.999999999 -0700 MST`) says when it was written: every loop (10 s), so an old one
means cluster-autoscaler is not running. The YAML is read with a parser of the few lines it needs:
the diagnosis core imports no YAML library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from diagnosis import objects
from diagnosis.objects import Object, mapping, text

LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"
STALE = timedelta(minutes=3)
"""The FAQ: the annotation "should be no more than 3 min (usually 10 sec old)"."""


@dataclass(frozen=True)
class GroupStatus:
    """One node group's line in the status."""

    id: str
    registered: int | None = None
    target: int | None = None
    max: int | None = None
    scale_up: str = ""
    """`InProgress`, `NoActivity`, `Backoff` or `Unhealthy`."""
    error_code: str = ""
    error_message: str = ""
    since: datetime | None = None
    """The scale-up condition's lastTransitionTime."""


@dataclass(frozen=True)
class Status:
    updated: datetime | None
    groups: tuple[GroupStatus, ...]
    format: str
    """`yaml` (1.30 on) or `text` (up to 1.29)."""


_UPDATED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? ([+-]\d{4})")
_KEY = re.compile(r"^(?P<indent> *)(?:- )?(?P<key>[A-Za-z]+):(?: (?P<value>.*))?$")


def parse(configmap: Object | None) -> Status | None:
    """The status, or None when there is no ConfigMap (no cluster-autoscaler, or not this one)."""
    if configmap is None:
        return None
    body = text(mapping(configmap.get("data")).get("status"))
    updated = _time(objects.annotations(configmap).get(LAST_UPDATED, ""))
    if body.startswith("Cluster-autoscaler status at"):
        return Status(updated, _text_groups(body), "text")
    return Status(updated, _yaml_groups(body), "yaml")


def _time(value: str) -> datetime | None:
    found = _UPDATED.match(value.strip())
    if not found:
        return None
    return datetime.strptime(f"{found[1]} {found[2]}", "%Y-%m-%d %H:%M:%S %z").astimezone(UTC)


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().strip('"').isdigit() else None


def _unquoted(raw: str) -> str:
    """A YAML scalar's text: single quotes double a quote inside, double quotes escape it."""
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1].replace('\\"', '"')
    return raw


def _yaml_groups(body: str) -> tuple[GroupStatus, ...]:
    """The `nodeGroups` list of the YAML status: each item's name, health counts and scale-up."""
    groups: list[dict[str, str]] = []
    path: list[tuple[int, str]] = []
    inside = False
    last = ""
    for line in body.splitlines():
        found = _KEY.match(line)
        if not found:
            if last and groups and line.strip():  # a long scalar folded onto the next lines
                groups[-1][last] += f" {line.strip()}"
            continue
        last = ""
        indent, key, value = len(found["indent"]), found["key"], found["value"]
        item = line.lstrip().startswith("- ")
        if indent == 0 and not item:
            inside = key == "nodeGroups"
            continue
        if not inside:
            continue
        if item:  # a new group; its keys sit two columns right of the dash (go-yaml does not indent lists)
            groups.append({})
            indent += 2
        while path and path[-1][0] >= indent:
            path.pop()
        path.append((indent, key))
        if value is not None and groups:
            last = ".".join(k for _, k in path)
            groups[-1][last] = value.strip()
    return tuple(_group({k: _unquoted(v) for k, v in g.items()}) for g in groups)


def _group(fields: dict[str, str]) -> GroupStatus:
    return GroupStatus(
        id=fields.get("name", ""),
        registered=_number(fields.get("health.nodeCounts.registered.total")),
        target=_number(fields.get("health.cloudProviderTarget")),
        max=_number(fields.get("health.maxSize")),
        scale_up=fields.get("scaleUp.status", ""),
        error_code=fields.get("scaleUp.backoffInfo.errorCode", ""),
        error_message=fields.get("scaleUp.backoffInfo.errorMessage", ""),
        since=_rfc3339(fields.get("scaleUp.lastTransitionTime", "")),
    )


def _rfc3339(value: str) -> datetime | None:
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


_TEXT_NAME = re.compile(r"^\s+Name:\s+(\S+)")
_TEXT_HEALTH = re.compile(r"registered=(\d+).*cloudProviderTarget=(\d+) \(minSize=\d+, maxSize=(\d+)\)")
_TEXT_SCALE_UP = re.compile(r"^\s+ScaleUp:\s+(\w+)")
_TEXT_TRANSITION = re.compile(r"^\s+LastTransitionTime:\s+(.*)")


def _text_groups(body: str) -> tuple[GroupStatus, ...]:
    """The `NodeGroups:` blocks of the plain-text status (up to 1.29)."""
    _, _, listed = body.partition("\nNodeGroups:\n")
    groups: list[GroupStatus] = []
    last = ""
    for line in listed.splitlines():
        if named := _TEXT_NAME.match(line):
            groups.append(GroupStatus(named[1]))
        elif not groups:
            continue
        elif health := _TEXT_HEALTH.search(line):
            g = groups[-1]
            groups[-1] = GroupStatus(g.id, int(health[1]), int(health[2]), int(health[3]))
        elif scale_up := _TEXT_SCALE_UP.match(line):
            g = groups[-1]
            groups[-1] = GroupStatus(g.id, g.registered, g.target, g.max, scale_up[1])
            last = "scaleUp"
        elif last == "scaleUp" and (moved := _TEXT_TRANSITION.match(line)):
            g = groups[-1]
            groups[-1] = GroupStatus(g.id, g.registered, g.target, g.max, g.scale_up, since=_time(moved[1]))
            last = ""
    return tuple(groups)
