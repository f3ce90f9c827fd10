"""`preempting`: the scheduler chose a node for the pod by preempting lower-priority pods there, and
waits for them to terminate (`defaultpreemption/default_preemption.go`; `status.nominatedNodeName`).

The victims are the pods bound to the nominated node, of lower priority than the pod, that are being
deleted: the scheduler deleted them (with condition `DisruptionTarget`, reason `PreemptionByScheduler`)
and keeps the pod waiting while one is still terminating (`preemption: not eligible due to a
terminating pod on the nominated node.`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from diagnosis.commands import collect
from diagnosis.model import Harm
from diagnosis.objects import Object, age, condition, meta, name, namespace, sequence, text, timestamp
from diagnosis.relations import is_terminal, node_name, nominated_node
from diagnosis.triage import commands as kubectl
from diagnosis.triage.fit import owner
from diagnosis.triage.fixes import Change, ending
from diagnosis.triage.funnel import SHOWN, Advice
from diagnosis.workloads import priority


@dataclass(frozen=True)
class Victim:
    pod: Object
    since: datetime | None
    """When its grace period ends: the API server sets `deletionTimestamp` to the time of the delete
    plus the grace period, so it is in the future while the pod terminates."""
    by_scheduler: bool
    """Condition DisruptionTarget=True, reason PreemptionByScheduler: the scheduler evicted it."""

    @property
    def asked(self) -> datetime | None:
        """When its deletion was asked: `deletionTimestamp` − `deletionGracePeriodSeconds`."""
        grace = meta(self.pod).get("deletionGracePeriodSeconds")
        if self.since is None or not isinstance(grace, int) or isinstance(grace, bool):
            return None
        return self.since - timedelta(seconds=grace)

    def when(self, now: datetime, who: str = "") -> str:
        """`deleted 2m ago, its grace period ends in 28s` (or `ended 3m ago`), or, when the grace period
        is unknown, `its grace period ends in 28s`; `who`: the victim named first (`the first`)."""
        if self.since is None:
            return ""
        ahead = age(self.since, now) if self.since > now else ""
        ended = age(now, self.since) or "0s"
        period = f"grace period ends in {ahead}" if ahead else f"grace period ended {ended} ago"
        if self.asked is not None and age(now, self.asked):
            return f"{who + ' ' if who else ''}deleted {age(now, self.asked)} ago, its {period}"
        return f"{who} one's {period}" if who else f"its {period}"


def victims(pod: Object, bound_pods: Iterable[Object]) -> list[Victim]:
    """The pods still terminating on the pod's nominated node whose priority is lower than its own."""
    node, mine = nominated_node(pod), priority(pod)
    found = []
    for other in bound_pods:
        deleting = meta(other).get("deletionTimestamp")
        if node_name(other) != node or deleting is None or is_terminal(other) or priority(other) >= mine:
            continue
        target = condition(other, "DisruptionTarget") or {}
        by_scheduler = target.get("status") == "True" and target.get("reason") == "PreemptionByScheduler"
        found.append(Victim(other, timestamp(deleting), by_scheduler))
    return sorted(found, key=lambda v: (namespace(v.pod), name(v.pod)))


def preempting(pod: Object, nodes: Iterable[Object], bound_pods: Iterable[Object], now: datetime) -> Advice:
    node, mine = nominated_node(pod), priority(pod)
    waiting = victims(pod, bound_pods)
    known = any(name(n) == node for n in nodes)
    if waiting:
        first = min(waiting, key=lambda v: v.asked or v.since or now)
        since = f", {first.when(now, 'the first')}" if first.since else ""
        summary = (
            f"The scheduler preempted pods on {node} for this pod (priority {mine}) and waits for "
            f"{len(waiting)} of them to terminate{since}"
        )
    elif known:
        summary = (
            f"The scheduler nominated {node} for this pod (priority {mine}) and its victims are gone: it "
            "binds the pod at its next attempt, unless the node filled up again"
        )
    else:
        summary = (
            f"The scheduler nominated {node} for this pod (priority {mine}), but that node is gone: the "
            "scheduler looks for another at its next attempt"
        )
    evidence = [f"status.nominatedNodeName: {node} (the pod is not bound yet)"]
    for victim in waiting[:SHOWN]:
        made_by = owner(victim.pod)
        when = f" ({victim.when(now)})" if victim.since else ""
        how = ", evicted by the scheduler (DisruptionTarget PreemptionByScheduler)" * victim.by_scheduler
        evidence.append(
            f"victim {namespace(victim.pod)}/{name(victim.pod)}"
            + (f" ({made_by})" if made_by else "")
            + f", priority {priority(victim.pod)}, terminating{when}{how}"
        )
    if len(waiting) > SHOWN:
        evidence.append(f"and {len(waiting) - SHOWN} more victims terminating on {node}")
    if waiting:
        evidence.append(
            "a victim that takes long to go is in its termination grace period or held by a finalizer; "
            "the pod is bound once they are all gone"
        )
    if known and not waiting:
        evidence.append(
            "from Kubernetes 1.35 the scheduler also sets nominatedNodeName while it binds a pod whose "
            "volumes or claims are being prepared: with no victim terminating, that is the wait"
        )
    commands = collect(kubectl.victims_on_node(node), kubectl.preempted_events())
    return Advice(summary, tuple(evidence), commands, fixes=_fixes(node, waiting, now))


def wait_for(pods: Sequence[Object], now: datetime) -> tuple[Change, ...]:
    """The fix for pods terminating on one node that hold what the pod needs (`_fixes`)."""
    going = [Victim(p, timestamp(text(meta(p).get("deletionTimestamp"))), by_scheduler=False) for p in pods]
    return _fixes(node_name(pods[0]), going, now)


def _fixes(node: str, waiting: list[Victim], now: datetime) -> tuple[Change, ...]:
    """Nothing in the pod is to change: the victims going is what it waits for. Once past its grace
    period (`deletionTimestamp` is when it ends) a victim is held by a finalizer or by a kubelet that
    does not report: a forced delete is offered for those without finalizers (it removes the object,
    not the containers, so only once they are known to be stopped)."""
    if not waiting:
        return ()
    pods = [(namespace(v.pod), name(v.pod)) for v in waiting]
    shown = ", ".join(f"{ns}/{pod}" for ns, pod in pods[:3]) + (
        f" and {len(pods) - 3} more" if len(pods) > 3 else ""
    )
    overdue = [v for v in waiting if v.since is not None and v.since < now]
    if not overdue:
        return (
            ending(
                f"wait: {shown} {'is' if len(pods) == 1 else 'are'} terminating on {node}; once gone, "
                "the scheduler binds the pod: opens {opens}",
                pods,
                harm=Harm.KEEPS,
            ),
        )
    held = sorted({text(f) for v in overdue for f in sequence(meta(v.pod).get("finalizers"))})
    first = min(v.since for v in overdue if v.since)
    their = "its" if len(overdue) == 1 else "their"
    late = f"{age(now, first)} past {their} grace period"
    why = f"finalizers {', '.join(held)}" if held else "a container that will not stop, or a silent kubelet"
    forced = [] if held else [kubectl.force_delete_pod(namespace(v.pod), name(v.pod)) for v in overdue]
    return (
        ending(
            f"clear {shown} from {node}: {late} (held by {why}); once gone, the scheduler binds the pod: "
            "opens {opens}",
            pods,
            collect(kubectl.node_details(node), *forced),
        ),
    )
