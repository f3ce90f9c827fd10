"""The `taint` step: kube-scheduler's TaintToleration and NodeUnschedulable Filters
(`tainttoleration/taint_toleration.go`, `nodeunschedulable/node_unschedulable.go`): a cordoned node
counts as tainted.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from diagnosis import commands
from diagnosis.commands import collect
from diagnosis.model import Command, PodVerdict
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, mapping, name, sequence, spec
from diagnosis.triage import commands as kubectl
from diagnosis.triage.evidence import CONDITION_TAINTS, tolerations
from diagnosis.triage.fixes import Change, node_change, pod_change, toleration, where
from diagnosis.triage.funnel import Advice, Ask, Drop, Funnel, Step
from diagnosis.triage.scheduling import CORDON, UNSCHEDULABLE, Taint, cordoned, taints, taints_read


def taint(ask: Ask, node: Object) -> str | None:
    found = ask.placement.untolerated(node)
    return ", ".join(map(taint_words, found)) if found else None


def shape(ask: Ask) -> Callable[[Object], Hashable]:
    """What the check reads of a node, for any pod: its taints and whether it is cordoned."""
    return taints_read


def advise(funnel: Funnel) -> Advice:
    found = {name(d.node): funnel.ask.placement.untolerated(d.node) for d in funnel.last.dropped}
    first = next(iter(found))
    blocking, others = found[first], len(found) - 1
    what = "is cordoned" if blocking[0] == CORDON else f"has a taint the pod does not tolerate, {blocking[0]}"
    summary = (
        f"No node left accepts the pod: {first} {what}"
        + (f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else "")
        + (f"; {others} other node{'s refuse' if others > 1 else ' refuses'} it too" if others else "")
    )
    evidence = []
    for host, refused in found.items():
        conditions = ", ".join(str(t) for t in refused if t.key.startswith(CONDITION_TAINTS) and t != CORDON)
        if conditions:
            evidence.append(
                f"{host} carries {conditions}: the node lifecycle controller sets these for a node "
                "condition; fix the node, do not tolerate them"
            )
    commands: list[Command | None] = []
    for drop in _first_per_reason(funnel, 3):
        host, refused = name(drop.node), found[name(drop.node)]
        commands += (
            node_taints(host),
            uncordon(host) if cordoned(drop.node) or CORDON in refused else None,
            kubectl.node_details(host)
            if any(t.key.startswith(CONDITION_TAINTS) and t != CORDON for t in refused)
            else None,
        )
    distinct = tuple(dict.fromkeys(t for taints in found.values() for t in taints))
    return Advice(summary, tuple(evidence), collect(*commands), tolerations(distinct), _fixes(funnel))


def _first_per_reason(funnel: Funnel, limit: int) -> tuple[Drop, ...]:
    """The first node dropped for each distinct reason, at most `limit`: one set of commands a cause."""
    first: dict[str, Drop] = {}
    for drop in funnel.last.dropped:
        first.setdefault(drop.why, drop)
    return tuple(first.values())[:limit]


def _condition(taint: Taint) -> bool:
    return taint.key.startswith(CONDITION_TAINTS) and taint != CORDON


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Tolerate the taints a pool carries for its pods (a pod change); uncordon a cordoned node; bring
    back a node whose condition taints it (the node lifecycle controller lifts them once it is Ready).
    Condition taints and the cordon are never tolerated: that would hide a broken or drained node."""
    pod, placement = funnel.view.pod, funnel.ask.placement
    by_taints: dict[tuple[Taint, ...], list[Object]] = {}
    cordoned, broken = [], []
    for drop in funnel.last.dropped:
        found = placement.untolerated(drop.node)
        tolerable = tuple(t for t in found if t != CORDON and not _condition(t))
        if tolerable:
            by_taints.setdefault(tolerable, []).append(drop.node)
        if CORDON in found:
            cordoned.append(drop.node)
        if any(_condition(t) for t in found):
            broken.append(drop.node)
    changes = []
    existing = [mapping(t) for t in sequence(spec(pod).get("tolerations"))]
    # Fewest tolerations first; among equals, the ones more nodes carry.
    for found, _ in sorted(by_taints.items(), key=lambda kv: (len(kv[0]), -len(kv[1]))):
        added = [toleration(t) for t in found]
        changes.append(
            pod_change(
                f"tolerate {', '.join(map(str, found))} {where(pod)}: opens {{opens}}",
                {"spec": {"tolerations": [*existing, *added]}},
            )
        )
    for node in cordoned[:2]:
        changes.append(
            node_change(
                f"uncordon {name(node)} (once whoever cordoned it is done): opens {{opens}}",
                {name(node): {"spec": {"unschedulable": None, "taints": _without(node, UNSCHEDULABLE)}}},
                collect(uncordon(name(node))),
            )
        )
    for node in broken[:2]:
        shown = ", ".join(str(t) for t in taints(node) if _condition(t))
        changes.append(
            node_change(
                f"bring {name(node)} back to Ready (it carries {shown}; the node controller lifts it): "
                "opens {opens}",
                {name(node): {"spec": {"taints": _without(node, CONDITION_TAINTS)}}},
                collect(kubectl.node_details(name(node))),
            )
        )
    return tuple(changes)


def _without(node: Object, prefix: str) -> list[Any] | None:
    kept = [
        t for t in sequence(spec(node).get("taints")) if not str(mapping(t).get("key", "")).startswith(prefix)
    ]
    return kept or None


def node_taints(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    template = (
        '{"unschedulable: "}{.spec.unschedulable}{"\\n"}'
        '{range .spec.taints[*]}{.key}={.value}:{.effect}{"\\n"}{end}'
    )
    return commands.kubectl(f"{node}: cordon and taints", "get", "node", node, "-o", f"jsonpath={template}")


def uncordon(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return commands.kubectl(
        f"let pods be scheduled on {node} again, once whoever cordoned it is done",
        "uncordon",
        node,
        changes=True,
    )


def taint_words(taint: Taint) -> str:
    return f"cordoned ({CORDON})" if taint == CORDON else f"untolerated taint {taint}"


STEP = Step(
    PodVerdict.TAINT,
    "no untolerated taint, not cordoned",
    taint,
    advise,
    ("NodeUnschedulable", "TaintToleration"),
    shape,
)
