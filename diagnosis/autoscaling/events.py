"""The autoscalers' events on the pod and on their own objects, parsed (formats as kubernetes/autoscaler's
cluster-autoscaler writes them, `processors/status/eventing_scale_up_processor.go`, and as GKE's and
Karpenter's releases named beside each parser write theirs).

cluster-autoscaler: `TriggeredScaleUp` (`pod triggered scale-up: [{ID CUR->NEW (max: N)} …]`),
`NotTriggerScaleUp` in its three wordings (`pod didn't trigger scale-up: REASONS` since 1.20,
`pod didn't trigger scale-up (it wouldn't fit if a new node is added): REASONS` in 1.12–1.19, the same
without reasons before, and GKE's `Pod didn't trigger scale-up: …`), and GKE's `FailedScaleUp`
(`Node scale up in zones Z associated with this pod failed: WHY. Pod is at risk of not being
scheduled.`). Karpenter: `FailedScheduling` from component `karpenter` (`Failed to schedule pod,
ERR; ERR`) and `Nominated` (`Pod should schedule on: nodeclaim/NAME, node/NAME`).

cluster-autoscaler also writes what becomes of a scale-up on its status ConfigMap, never on the pod
(`clusterstate/clusterstate.go`, `core/scaleup/orchestrator/executor.go`, cluster-autoscaler 1.36.1):
`ScaleUpFailed` (`Failed adding N nodes to group ID due to CLASS.CODE; source errors: …`),
`ScaleUpTimedOut` (`Nodes added to group ID failed to register within 15m0s`) and
`FailedToScaleUpGroup` (`Scale-up failed for group ID: ERR`, a resize refused at once, after which
the pod hears nothing more). The others there (`ScaledUpGroup`, `ScaleDown*`) add nothing for a
pending pod: its `TriggeredScaleUp` already says a node is being added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from diagnosis import events
from diagnosis.autoscaling.said import (
    CLUSTER_AUTOSCALER,
    KARPENTER,
    PROVISION_TIMEOUT,
    Said,
    counted,
    group_name,
)
from diagnosis.model import NodeComing, NodeGroup
from diagnosis.objects import Object, mapping, text
from diagnosis.views import STATUS_CONFIGMAP

_WHO = r"(?:pod|provisioningrequest|capacityrequest)"
_NOT_TRIGGERED = re.compile(
    rf"^{_WHO} didn't trigger scale-up(?: \(it wouldn't fit if a new node is added\))?(?::(?P<reasons>.*))?$",
    re.IGNORECASE | re.DOTALL,
)
_TRIGGERED = re.compile(rf"^{_WHO} triggered scale-up: \[(?P<groups>.*)\]$", re.IGNORECASE | re.DOTALL)
_GROUP = re.compile(r"\{(?P<id>\S+) (?P<size>\d+)->(?P<target>\d+) \(max: (?P<max>\d+)\)\}")
_FAILED_IN_ZONES = re.compile(
    r"^Node scale up in zones (?P<zones>.+?) associated with this pod failed: (?P<why>.+?)\."
    r"(?: Pod is at risk of not being scheduled\.)?$",
    re.DOTALL,
)
_KARPENTER_FAILED = "Failed to schedule pod, "
_NOMINATED = "Pod should schedule on: "

_ON_STATUS = {
    "ScaleUpFailed": (
        re.compile(r"^Failed adding \d+ nodes to group (?P<id>\S+) due to (?P<why>[^;]+)", re.DOTALL),
        "adding nodes to {pool} failed ({why})",
    ),
    "ScaleUpTimedOut": (
        re.compile(r"^Nodes added to group (?P<id>\S+) failed to register within (?P<why>\S+)$"),
        "the nodes added to {pool} did not register within {why}",
    ),
    "FailedToScaleUpGroup": (
        re.compile(r"^Scale-up failed for group (?P<id>\S+): (?P<why>.+)$", re.DOTALL),
        "cluster-autoscaler could not resize {pool}: {why}",
    ),
}
"""cluster-autoscaler's failures on its status ConfigMap: how each is matched and told."""
_WHY_CUT = 100
"""Characters of a cloud error the first-screen line quotes (the evidence quotes it whole)."""

BACKOFF = "in backoff after failed scale-up"
MAX_SIZE = "max node group size reached"

_GKE_FAILURES = {
    "GCE out of resources": "is out of resources (GCE stockout)",
    "GCE quota exceeded": "is over its GCE quota",
    "IP space exhausted": "has no IP addresses left",
}


def component(event: Object) -> str:
    """Who wrote the event: `source.component` (core events) or `reportingController` (events.k8s.io)."""
    return text(mapping(event.get("source")).get("component")) or text(event.get("reportingController"))


def cluster_autoscaler(found: Iterable[Object], pools: Iterable[str], now: datetime) -> Iterator[Said]:
    """cluster-autoscaler's (and GKE's) word on the pod, one `Said` per event it recognises."""
    known = tuple(pools)
    for event in found:
        if component(event) != CLUSTER_AUTOSCALER:
            continue
        said = _ca_event(event, known, now)
        if said is not None:
            yield said


def _ca_event(event: Object, pools: tuple[str, ...], now: datetime) -> Said | None:
    words, when, times = events.message(event), events.last_time(event), events.count(event)
    if events.reason(event) == "FailedScaleUp" and (failed := _FAILED_IN_ZONES.match(words)):
        why = _GKE_FAILURES.get(failed["why"], f"failed: {failed['why']}")
        line = f"Scale-up failed {{ago}}: {failed['zones']} {why}"
        return Said(NodeComing.FAILED, CLUSTER_AUTOSCALER, when, words, line, count=times)
    if triggered := _TRIGGERED.match(words):
        return _triggered(words, triggered["groups"], pools, when, now, times)
    if refused := _NOT_TRIGGERED.match(words):
        return _not_triggered(words, refused["reasons"] or "", when, times)
    return None


def _triggered(
    words: str, listed: str, pools: tuple[str, ...], when: datetime | None, now: datetime, times: int
) -> Said:
    groups = tuple(
        NodeGroup(group_name(g["id"], pools), int(g["size"]), int(g["target"]), int(g["max"]))
        for g in _GROUP.finditer(listed)
    )
    where = ", ".join(f"{g.name} ({g.size}→{g.target} of max {g.max})" for g in groups) or "a node group"
    added = sum((g.target or 0) - (g.size or 0) for g in groups)
    nodes = f"{added} node{'s' if added != 1 else ''}" if added > 0 else "nodes"
    # No node after the provision timeout: cluster-autoscaler reverts the target size and backs off.
    if when is not None and now - when > PROVISION_TIMEOUT:
        line = (
            f"Scale-up timed out: cluster-autoscaler began adding {nodes} to {where} {{ago}},"
            " none came within 15 min"
        )
        return Said(NodeComing.FAILED, CLUSTER_AUTOSCALER, when, words, line, groups=groups, count=times)
    line = f"Node: coming — cluster-autoscaler is adding {nodes} to {where}, {{ago}}"
    return Said(NodeComing.COMING, CLUSTER_AUTOSCALER, when, words, line, groups=groups, count=times)


def _not_triggered(words: str, listed: str, when: datetime | None, times: int) -> Said:
    reasons = counted(listed)
    said = {reason for reason, _ in reasons}
    if BACKOFF in said:
        line = (
            "Scale-up failed: every node group that could take the pod is in backoff after a failed scale-up"
        )
        return Said(NodeComing.FAILED, CLUSTER_AUTOSCALER, when, words, line, reasons, count=times)
    if not reasons:
        line = "No node will come: cluster-autoscaler considered no node group that could take the pod"
    else:
        line = "No node will come: cluster-autoscaler says " + ", ".join(f"{n} {r}" for r, n in reasons)
    return Said(NodeComing.NOT_COMING, CLUSTER_AUTOSCALER, when, words, line, reasons, count=times)


def triggered(found: Iterable[Object]) -> bool:
    """Whether cluster-autoscaler triggered a scale-up for the pod (`found`: its events): what became
    of it is told on the status ConfigMap (`on_status`)."""
    return any(
        component(e) == CLUSTER_AUTOSCALER and _TRIGGERED.match(events.message(e)) is not None for e in found
    )


def on_status(found: Iterable[Object], scale_ups: Sequence[Said], pools: Iterable[str]) -> Iterator[Said]:
    """cluster-autoscaler's events on its status ConfigMap about a node group one of the pod's
    scale-ups (`scale_ups`) went to: the scale-up failed, timed out, or the resize was refused."""
    known = tuple(pools)
    wanted = {g.name for s in scale_ups for g in s.groups}
    for event in found:
        ref = events.regarding(event)
        where = (text(ref.get("namespace")), text(ref.get("name")))
        known_reason = _ON_STATUS.get(events.reason(event))
        if component(event) != CLUSTER_AUTOSCALER or where != STATUS_CONFIGMAP or known_reason is None:
            continue
        pattern, told = known_reason
        words = events.message(event)
        said = pattern.match(words)
        if said is None or (pool := group_name(said["id"], known)) not in wanted:
            continue
        why = " ".join(said["why"].split())
        why = why if len(why) <= _WHY_CUT else why[:_WHY_CUT] + "…"
        line = "Scale-up failed {ago}: " + told.format(pool=pool, why=why)
        yield Said(
            NodeComing.FAILED,
            CLUSTER_AUTOSCALER,
            events.last_time(event),
            words,
            line,
            count=events.count(event),
        )


def karpenter(found: Iterable[Object]) -> Iterator[Said]:
    """Karpenter's `FailedScheduling` on the pod; its `Nominated` is read with the NodeClaims
    (`diagnosis.autoscaling.karpenter`)."""
    for event in found:
        words = events.message(event)
        if component(event) != KARPENTER or not words.startswith(_KARPENTER_FAILED):
            continue
        errors = tuple(e.strip() for e in words.removeprefix(_KARPENTER_FAILED).split("; ") if e.strip())
        reasons = tuple((e, 1) for e in errors)
        when, times = events.last_time(event), events.count(event)
        if any("insufficient capacity" in e for e in errors):
            line = f"Scale-up failed {{ago}}: {errors[0]}"
            yield Said(NodeComing.FAILED, KARPENTER, when, words, line, reasons, count=times)
        else:
            line = (
                f"No node will come: Karpenter says {errors[0] if errors else 'no NodePool can take the pod'}"
            )
            yield Said(NodeComing.NOT_COMING, KARPENTER, when, words, line, reasons, count=times)


def nominations(found: Iterable[Object]) -> Iterator[tuple[str, Object]]:
    """(NodeClaim name, event) for each NodeClaim Karpenter's `Nominated` events name."""
    for event in found:
        words = events.message(event)
        if component(event) != KARPENTER or not words.startswith(_NOMINATED):
            continue
        for item in words.removeprefix(_NOMINATED).split(", "):
            kind, _, name = item.strip().partition("/")
            if kind == "nodeclaim" and name:
                yield name, event
