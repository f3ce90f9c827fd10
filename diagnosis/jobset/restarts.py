"""Restart loops: whether a JobSet is in one, and what keeps ending its pods.

A JobSet restarts only when a child Job reaches `Failed` (kubernetes-sigs/jobset
`pkg/controllers/jobset_controller.go` and `failure_policy.go`). By the time someone
asks, the pods of the failed attempt are mostly deleted with their Jobs, so the cause is read from what
remains: pods of earlier attempts still terminating, the current attempt's pods and containers, the
nodes they ran on, and the events about them. Signals are weighed in a fixed order — a node that shuts
down or fails ends every container on it, so the node signals come before the containers' exit codes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from diagnosis import events
from diagnosis.jobset.family import Family, completion_index, integer, is_live, stamp
from diagnosis.jobset.keys import JOB_INDEX_LABEL, REPLICATED_JOB_LABEL, RESTART_ATTEMPT_LABEL
from diagnosis.jobset.upstream import RESTARTING_CONDITION
from diagnosis.model import RestartCause
from diagnosis.objects import (
    Object,
    condition,
    labels,
    mapping,
    meta,
    name,
    sequence,
    spec,
    status,
    text,
    timestamp,
)
from diagnosis.relations import node_name

HOST_LABEL = "cloud.google.com/gce-topology-host"
SPOT_LABELS = (
    ("cloud.google.com/gke-spot", "true"),
    ("cloud.google.com/gke-preemptible", "true"),
    ("cloud.google.com/gke-provisioning", "spot"),
    ("cloud.google.com/gke-provisioning", "preemptible"),
    ("eks.amazonaws.com/capacityType", "SPOT"),
    ("karpenter.sh/capacity-type", "spot"),
    ("kubernetes.azure.com/scalesetpriority", "spot"),
)
"""Node labels of capacity the provider may take back at any time."""

NODE_ENDED = {
    "TerminationByKubelet": "the kubelet ended it as its node shut down (Spot reclaim or maintenance)",
    "EvictionByEvictionAPI": "evicted through the Eviction API (a drain: maintenance, scale-down)",
}
NODE_FAILED = {
    "DeletionByTaintManager": "deleted by the taint manager because its node turned NotReady/unreachable",
    "DeletionByPodGC": "deleted by pod GC because its node object is gone",
}
PREEMPTED = {
    "PreemptionByScheduler": "preempted by the scheduler for a higher-priority pod",
    "PreemptionByKubeScheduler": "preempted by the scheduler for a higher-priority pod",
    "Preempting": "preempted by the kubelet to admit a critical pod",
}
_SHUTDOWN_REASONS = ("Terminated", "Shutdown", "NodeShutdown")
"""`status.reason` the kubelet's graceful node shutdown writes on the pods it ends."""
_NODE_FAILED_EVENTS = ("NodeNotReady", "TaintManagerEviction")


@dataclass(frozen=True)
class Loop:
    """Signs that the JobSet is restarting, and when it last did."""

    signs: tuple[str, ...]
    last_restart: datetime | None


@dataclass(frozen=True)
class Finding:
    """The cause of a restart loop and the pods and nodes behind it."""

    cause: RestartCause
    evidence: tuple[str, ...]
    pods: tuple[Object, ...] = ()
    """The pods whose end shows the cause, newest attempt first."""
    repeat_nodes: tuple[str, ...] = ()
    """Nodes that failed pods of two or more attempts (themselves or their physical host)."""
    nodes: tuple[str, ...] = ()
    """For a node failure: the nodes that failed."""


@dataclass(frozen=True)
class Exit:
    """A container whose last run ended badly."""

    pod: Object
    container: str
    code: int
    reason: str
    restarts: int
    running_again: bool
    """The bad end is the previous run (`lastState`): its log needs `--previous`."""
    message: str = ""
    """Its termination message (`terminationMessagePath`, or the log's tail with
    `FallbackToLogsOnError`), on one line and cut."""

    def __str__(self) -> str:
        return (
            f"container `{self.container}` of pod {name(self.pod)} (attempt {attempt(self.pod)}) {self.said}"
        )

    @property
    def said(self) -> str:
        """`exited 1 (Error), restarted 2×: "…"`: the exit without the pod (a cause line's words)."""
        again = f", restarted {self.restarts}×" if self.restarts else ""
        quoted = f': "{self.message}"' if self.message else ""
        return f"exited {self.code} ({self.reason or 'no reason given'}){again}{quoted}"


def attempt(obj: Object) -> str:
    return labels(obj).get(RESTART_ATTEMPT_LABEL, "?")


def loop(family: Family) -> Loop | None:
    """Whether the JobSet is in a restart loop: restarts counted, and a restart in progress or seen
    recently (the condition, the controller's restart events, or earlier attempts still present)."""
    if family.restarts <= 0:
        return None
    signs: list[str] = []
    restarting = condition(family.jobset, "RestartingJobSet")
    in_progress = restarting is not None and restarting.get("status") == "True"
    if restarting is not None and in_progress:
        signs.append(
            f"Condition RestartingJobSet=True ({text(restarting.get('reason'))}) since "
            f"{text(restarting.get('lastTransitionTime')) or 'unknown'}: `{text(restarting.get('message'))}`."
        )
    restart_events = [e for e in family.jobset_events if _is_restart_event(e)]
    signs.extend(f"Event {events.reason(e)}: `{events.message(e)}` {stamp(e)}." for e in restart_events[:2])
    leftovers = (*family.earlier_jobs, *family.earlier_pods)
    if leftovers:
        shown = ", ".join(f"{name(o)} (attempt {attempt(o)})" for o in leftovers[:4])
        signs.append(
            f"{len(family.earlier_jobs)} Jobs and {len(family.earlier_pods)} pods of earlier attempts "
            f"(label `{RESTART_ATTEMPT_LABEL}` < {family.restarts}) are still being deleted: {shown}."
        )
    if not signs:
        return None
    if restarting is None:
        signs.append(
            "No RestartingJobSet condition: restarts show in status.restarts, the restart-attempt label and "
            "*FailurePolicyAction events. " + RESTARTING_CONDITION.note
        )
    began = (
        timestamp(restarting.get("lastTransitionTime")) if restarting is not None and in_progress else None
    )
    return Loop(
        (f"status.restarts is {family.restarts}.", *signs), began or _last_seen(family, restart_events)
    )


def _is_restart_event(event: Object) -> bool:
    reason = events.reason(event)
    return reason.startswith("Restart") and reason.endswith("FailurePolicyAction")


def _last_seen(family: Family, restart_events: list[Object]) -> datetime | None:
    """When the last restart happened without the condition: the newest restart event, else the
    newest child Job (a restart recreates them)."""
    if restart_events:
        return events.last_time(restart_events[0])
    created = (timestamp(meta(c.job).get("creationTimestamp")) for c in family.children)
    return max((t for t in created if t is not None), default=None)


_SAID = 240
"""Characters of a termination message quoted (the kubelet keeps up to 4096)."""


def exits(pod: Object) -> tuple[Exit, ...]:
    """The containers of `pod` whose last end was a non-zero exit or an OOM kill."""
    found = []
    pod_status = status(pod)
    entries = (
        *sequence(pod_status.get("initContainerStatuses")),
        *sequence(pod_status.get("containerStatuses")),
    )
    for entry in map(mapping, entries):
        state, last = mapping(entry.get("state")), mapping(entry.get("lastState"))
        ended = mapping(state.get("terminated")) or mapping(last.get("terminated"))
        code = integer(ended.get("exitCode")) or 0
        reason = text(ended.get("reason"))
        if code != 0 or reason == "OOMKilled":
            restarts = integer(entry.get("restartCount")) or 0
            again = not state.get("terminated")
            found.append(Exit(pod, text(entry.get("name")), code, reason, restarts, again, _said(ended)))
    return tuple(found)


def _said(terminated: Mapping[str, Any]) -> str:
    """A termination message on one line: its last line when it has several (a traceback's error, a
    log's last words), cut to `_SAID` characters."""
    lines = [line.strip() for line in text(terminated.get("message")).splitlines() if line.strip()]
    said = ("…" if len(lines) > 1 else "") + " ".join(lines[-1:])
    return said if len(said) <= _SAID else said[:_SAID] + "…"


def disruption(pod: Object) -> str:
    """Why something other than the pod's own program ended it: the reason of its DisruptionTarget
    condition, `TerminationByKubelet` for a node shutdown, `Preempting` for kubelet preemption, or ""."""
    target = condition(pod, "DisruptionTarget")
    if target is not None and target.get("status") == "True":
        return text(target.get("reason"))
    reason = text(status(pod).get("reason"))
    if reason in _SHUTDOWN_REASONS:
        return "TerminationByKubelet"
    return reason if reason in PREEMPTED else ""


def is_spot(node: Object) -> bool:
    node_labels = labels(node)
    return any(node_labels.get(key) == value for key, value in SPOT_LABELS)


def not_ready(node: Object) -> bool:
    ready = condition(node, "Ready")
    return ready is not None and ready.get("status") != "True"


def coordinator(family: Family) -> Object | None:
    """The coordinator pod named by `spec.coordinator`, of the current attempt, if present."""
    wanted = mapping(spec(family.jobset).get("coordinator"))
    if not wanted:
        return None
    keys = {
        REPLICATED_JOB_LABEL: text(wanted.get("replicatedJob")),
        JOB_INDEX_LABEL: str(integer(wanted.get("jobIndex")) or 0),
    }
    pod_index = str(integer(wanted.get("podIndex")) or 0)
    candidates = [
        p
        for p in family.current_pods
        if all(labels(p).get(k) == v for k, v in keys.items()) and completion_index(p) == pod_index
    ]
    return next((p for p in candidates if is_live(p)), candidates[0] if candidates else None)


Ended = list[tuple[Object, str]]
"""Pods with the reason each one ended."""


def _ended_by(pods: Iterable[Object], reasons: Mapping[str, str]) -> Ended:
    return [(p, f"{disruption(p)}, {reasons[disruption(p)]}") for p in pods if disruption(p) in reasons]


def _add(ended: Ended, pod: Object, why: str) -> None:
    if all(pod is not p for p, _ in ended):
        ended.append((pod, why))


def _describe(family: Family, pod: Object, why: str) -> str:
    node = node_name(pod)
    gone = " (no longer in the cluster)" if node and family.node(node) is None else ""
    where = f" on node {node}{gone}" if node else ""
    message = text(mapping(condition(pod, "DisruptionTarget")).get("message")) or text(
        status(pod).get("message")
    )
    return (
        f"Pod {name(pod)} (attempt {attempt(pod)}){where}: {why}"
        + (f" — `{message}`" if message else "")
        + "."
    )


def _node_preemption(family: Family, pods: tuple[Object, ...]) -> Finding | None:
    ended = _ended_by(pods, NODE_ENDED)
    if not ended:
        return None
    evidence = [_describe(family, p, why) for p, why in ended[:4]]
    evidence.extend(_spot_lines(family, (node_name(p) for p in pods)))
    return Finding(RestartCause.NODE_PREEMPTION, tuple(evidence), tuple(p for p, _ in ended))


def _node_failure(family: Family, pods: tuple[Object, ...]) -> Finding | None:
    ended = _ended_by(pods, NODE_FAILED)
    for pod in pods:
        node = family.node(node_name(pod))
        if node is not None and not_ready(node):
            _add(ended, pod, f"its node is NotReady ({_ready(node)})")
        noted = [e for e in family.events_about(pod) if events.reason(e) in _NODE_FAILED_EVENTS]
        if noted:
            _add(ended, pod, f"event {events.reason(noted[0])}: `{events.message(noted[0])}`")
    if not ended:
        return None
    failed_nodes = tuple(dict.fromkeys(n for p, _ in ended if (n := node_name(p))))
    repeats = _repeats(family, (p for p, _ in ended))
    evidence = [_describe(family, p, why) for p, why in ended[:5]]
    evidence += [_node_line(family, n) for n in failed_nodes[:3]]
    evidence += [_stuck_line(p) for p, _ in ended if _stuck(family, p)][:2]
    evidence += [
        f"{where} failed pods of attempts {', '.join(sorted(attempts))}: the same host fails again and again."
        for where, (attempts, _) in repeats.items()
    ]
    again = tuple(dict.fromkeys(n for _, on in repeats.values() for n in on))
    return Finding(
        RestartCause.NODE_FAILURE, tuple(evidence), tuple(p for p, _ in ended), again, failed_nodes
    )


def _node_line(family: Family, node_name_: str) -> str:
    node = family.node(node_name_)
    if node is None:
        return f"Node {node_name_} no longer exists."
    host = labels(node).get(HOST_LABEL)
    return f"Node {node_name_}{f' (physical host {host})' if host else ''}: {_ready(node)}."


def _stuck(family: Family, pod: Object) -> bool:
    """Terminating on a node that cannot confirm it: the pod's Job, and so the restart, waits."""
    node = family.node(node_name(pod))
    return bool(meta(pod).get("deletionTimestamp")) and node is not None and not_ready(node)


def _stuck_line(pod: Object) -> str:
    return (
        f"Pod {name(pod)} is stuck Terminating on {node_name(pod)}, whose kubelet cannot confirm the "
        "deletion: "
        "its Job is deleted in the foreground, so it is not gone and the restart waits for it (jobset#576) "
        "until the node returns or its Node object is deleted."
    )


def _pod_preemption(family: Family, pods: tuple[Object, ...]) -> Finding | None:
    ended = _ended_by(pods, PREEMPTED)
    for pod in pods:
        preempted = [e for e in family.events_about(pod) if events.reason(e) == "Preempted"]
        if preempted:
            _add(ended, pod, f"event Preempted: `{events.message(preempted[0])}`")
    if not ended:
        return None
    evidence = [_describe(family, p, why) for p, why in ended[:4]]
    evidence.append(
        "Higher-priority pods took the nodes: compare PriorityClasses, or give this JobSet capacity of "
        "its own (a Kueue ClusterQueue, a reservation)."
    )
    return Finding(RestartCause.POD_PREEMPTION, tuple(evidence), tuple(p for p, _ in ended))


def _app_failure(family: Family, pods: tuple[Object, ...]) -> Finding | None:
    failures = [e for p in pods if not disruption(p) for e in exits(p)]
    if not failures:
        return None
    evidence = [f"The program failed: {failure}." for failure in failures[:4]]
    lead = coordinator(family)
    if lead is not None:
        evidence.append(
            f"Coordinator (spec.coordinator): pod {name(lead)} — read its log first; its first error "
            "usually explains the others (collective timeouts follow one failed worker)."
        )
    return Finding(RestartCause.APP_FAILURE, tuple(evidence), _distinct(f.pod for f in failures))


def _spot_capacity(family: Family, pods: tuple[Object, ...]) -> Finding | None:
    lines = _spot_lines(family, (node_name(p) for p in pods))
    if not lines:
        return None
    evidence = (
        *lines,
        "No pod left shows how the failed attempt ended, but Spot/preemptible capacity is the usual "
        "reason such a JobSet keeps restarting: confirm it with the node-pool interruptions.",
    )
    return Finding(RestartCause.NODE_PREEMPTION, evidence)


CAUSES: tuple[Callable[[Family, tuple[Object, ...]], Finding | None], ...] = (
    # A node that shuts down ends every container on it: the exit codes are its doing.
    _node_preemption,
    # A node that fails does the same, without the graceful shutdown.
    _node_failure,
    # Preempted pods were ended on purpose by the scheduler, not by their program.
    _pod_preemption,
    # Only then are non-zero exits the program's own failures.
    _app_failure,
    # With no pod left to tell, Spot capacity is the likeliest cause, and the weakest evidence.
    _spot_capacity,
)


def cause(family: Family) -> Finding:
    """What keeps ending the JobSet's pods, from the strongest signal found."""
    pods = tuple(
        sorted(
            (*family.current_pods, *family.earlier_pods),
            key=lambda p: -(integer(labels(p).get(RESTART_ATTEMPT_LABEL)) or 0),
        )
    )
    for check in CAUSES:
        found = check(family, pods)
        if found is not None:
            return found
    return Finding(
        RestartCause.UNKNOWN,
        (
            "No pod left shows how the failed attempt ended (its pods were deleted with their Jobs); "
            "the restart event names the first failed Job, and the queries below find the rest.",
        ),
    )


def _distinct(pods: Iterable[Object]) -> tuple[Object, ...]:
    """The pods in order, each once (objects are dicts: compared by identity)."""
    seen: dict[int, Object] = {}
    for pod in pods:
        seen.setdefault(id(pod), pod)
    return tuple(seen.values())


def _ready(node: Object) -> str:
    ready: Mapping[str, Any] = condition(node, "Ready") or {}
    return f"Ready={text(ready.get('status')) or '?'} {text(ready.get('reason'))}".strip()


def _spot_lines(family: Family, nodes: Iterable[str]) -> list[str]:
    spot = sorted({n for n in nodes if (node := family.node(n)) is not None and is_spot(node)})
    if not spot:
        return []
    found = sorted({f"{k}={v}" for n in spot for k, v in SPOT_LABELS if labels(family.node(n)).get(k) == v})
    more = f" and {len(spot) - 6} more" if len(spot) > 6 else ""
    return [f"The pods ran on Spot/preemptible nodes ({', '.join(found)}): {', '.join(spot[:6])}{more}."]


def _repeats(family: Family, pods: Iterable[Object]) -> dict[str, tuple[set[str], list[str]]]:
    """Nodes — or physical hosts, when nodes carry `gce-topology-host` — that failed pods of two or
    more restart attempts: where → (attempts, node names)."""
    seen: dict[str, tuple[set[str], list[str]]] = {}
    for pod in pods:
        node = node_name(pod)
        if not node:
            continue
        host = labels(family.node(node)).get(HOST_LABEL)
        attempts, nodes = seen.setdefault(f"Host {host}" if host else f"Node {node}", (set(), []))
        attempts.add(attempt(pod))
        if node not in nodes:
            nodes.append(node)
    return {where: found for where, found in sorted(seen.items()) if len(found[0]) >= 2}
