"""Freeing a node: the pods a fix may end, how it names them, and the fewest of them whose end lets the
pod fit. Shared by the steps whose fixes end pods (`exhausted`, `node-resources`, `host-port`,
`volume`, and the DRA claims' holders); the fixes are checked like any other (`fixes.Change.ended`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from diagnosis.commands import collect
from diagnosis.model import Harm
from diagnosis.objects import Object, name, namespace
from diagnosis.triage import commands as kubectl
from diagnosis.triage.fit import PODS, Shortage, pod_requests
from diagnosis.triage.fixes import Change, delete_pods, ending
from diagnosis.triage.funnel import Ask
from diagnosis.triage.resources import Holder, Members, holder_of
from diagnosis.workloads import Owner, preempts_below, top_owner


def who(held: list[Holder]) -> str:
    """`ns/a (JobSet x, priority 0, preemptible)`: who, whose, and how they rank against the pod."""
    parts = []
    for h in held:
        owner = f"{h.owner.kind} {h.owner.name}, " if h.owner.kind != "Pod" else ""
        parts.append(f"{h.namespace}/{h.name} ({owner}{_rank(h)})")
    return _names(parts)


def may_end(pod: Object, holder: Holder) -> bool:
    """A pod whose end a fix may propose: bound and not already going; not one its controller puts back
    on the very node (a DaemonSet's, a static pod's); not one of the pod's own workload (ending a
    sibling frees nothing the workload keeps)."""
    own = top_owner(pod)
    return (
        not holder.terminating
        and not holder.nominated
        and holder.owner.kind not in _NODE_BOUND
        and not (holder.owner == own and holder.namespace == namespace(pod) and own.kind != "Pod")
    )


_NODE_BOUND = frozenset({"DaemonSet", "Node"})
"""Owners that run a pod on one given node: ending it brings it back there."""


def ended_until(held: list[Holder], enough: Callable[[list[Holder]], bool]) -> list[Holder]:
    """The first of `held` (in the order given) whose end is `enough`; [] when all of them are not."""
    chosen: list[Holder] = []
    for holder in held:
        if enough(chosen):
            break
        chosen.append(holder)
    return chosen if chosen and enough(chosen) else []


_SCALED = frozenset({"Deployment", "ReplicaSet"})
"""Owners whose pods a fix ends by scaling them down: ended alone, a pod of theirs is made again at once;
scaled down, the ReplicaSet ends the pod marked with the lowest deletion cost first. A StatefulSet is
scaled down too when the pods are its last ones (it ends its highest ordinals first)."""

_REMADE = {
    "StatefulSet": "which makes it again at once, under the same name",
    "Job": "which counts it failed and starts another pod",
    "JobSet": "which may restart all its Jobs (its failurePolicy)",
    "LeaderWorkerSet": "which makes its group again",
}
"""What ending a pod means to its workload, by the workload's kind."""


def freeing_change(summary: str, chosen: list[Holder], seen: Members | None = None) -> Change:
    """End the `chosen` pods, each named by its workload with what its end means there: a Deployment's
    (or ReplicaSet's) by scaling it down, since it would make a pod ended alone again at once, from as
    many replicas as `seen` (the pods read) holds of it; any other's by deleting it."""
    seen = seen if seen is not None else Members({})
    workloads: dict[tuple[str, Owner], list[Holder]] = {}
    for holder in chosen:
        workloads.setdefault((holder.namespace, holder.owner), []).append(holder)
    words, commands = [], []
    for (ns, owner), held in workloads.items():
        listed = [(h.namespace, h.name) for h in held]
        if owner.kind in _SCALED:
            replicas = max(len(held), len(seen.of(ns, owner)))
            words.append(_scaled(ns, owner, held))
            commands += [kubectl.deletion_cost(ns, h.name, f"{owner.kind} {ns}/{owner.name}") for h in held]
            commands.append(kubectl.scale_down(owner.kind, ns, owner.name, replicas, len(held)))
        elif owner.kind == "StatefulSet" and (last := _last_ordinals(owner, held, seen)) is not None:
            words.append(_scaled(ns, owner, held))
            commands.append(kubectl.scale_down(owner.kind, ns, owner.name, last + 1, len(held)))
        else:
            words.append(_ended(owner, held))
            commands += delete_pods(listed)
    pods = [(h.namespace, h.name) for h in chosen]
    return ending(f"{summary}: {'; '.join(words)}: opens {{opens}}", pods, collect(*commands))


def _last_ordinals(owner: Owner, held: list[Holder], seen: Members) -> int | None:
    """The highest ordinal of a StatefulSet's pods `held`, when they are its last pods of those `seen`
    and their ordinals follow each other: a scale-down from one above it ends exactly them (kubectl
    refuses it if the set has more replicas than that)."""

    def ordinal(pod: str) -> int | None:
        n = pod.removeprefix(f"{owner.name}-")
        return int(n) if n != pod and n.isdigit() else None

    ordinals = sorted(o for h in held if (o := ordinal(h.name)) is not None)
    if len(ordinals) != len(held) or ordinals != list(range(ordinals[0], ordinals[0] + len(held))):
        return None
    others = (ordinal(name(p)) for p in seen.of(held[0].namespace, owner))
    return None if any(o is not None and o > ordinals[-1] for o in others) else ordinals[-1]


def _scaled(ns: str, owner: Owner, held: list[Holder]) -> str:
    pods = _names([h.name for h in held])
    them = "it" if len(held) == 1 else "them"
    return (
        f"scale {owner.kind} {ns}/{owner.name} down by {len(held)} ({_rank(held[0])}; ending {pods} alone "
        f"does nothing: the {owner.kind} makes {them} again at once)"
    )


def _ended(owner: Owner, held: list[Holder]) -> str:
    pods = ", ".join(f"{h.namespace}/{h.name} ({_rank(h)})" for h in held[:3])
    pods += f" and {len(held) - 3} more" if len(held) > 3 else ""
    if owner.kind == "Pod":
        return f"end {pods}"
    means = _REMADE.get(owner.kind, "which may make it again")
    return f"end {pods} of {owner.kind} {owner.name}, {means}"


def _rank(h: Holder) -> str:
    rank = f"priority {h.priority}" + (f" ({h.priority_class})" if h.priority_class else "")
    return rank + (", preemptible by this pod" if h.preemptible else "")


def _names(shown: list[str]) -> str:
    return ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")


def _fits(found: Sequence[Shortage], chosen: list[Holder]) -> bool:
    """Every shortage on a node gone once the `chosen` pods end."""
    for short in found:
        if short.resource == PODS:
            freed = len(chosen)
        else:
            freed = sum(h.requests.get(short.resource, 0) for h in chosen)
        if short.used - freed + short.asked > short.allocatable:
            return False
    return True


def _room(ask: Ask, node: Object) -> tuple[Callable[[list[Holder]], bool], tuple[str, ...]] | None:
    """Whether the pod's devices and its other requests fit on the node once some of its pods end,
    and what is short there (`pods` for the pod count); None when no end of pods could make them fit
    (the pod is larger than the node)."""
    short = ask.shortages(node)
    if any(s.never for s in short):
        return None
    host = name(node)
    devices = {
        r: n for r, n in ask.requests.items() if ask.offer(node, r).allocatable - ask.used(host, r) < n
    }
    if any(ask.offer(node, r).allocatable < n for r, n in devices.items()):
        return None

    def enough(chosen: list[Holder]) -> bool:
        gone = {r: sum(h.requests.get(r, 0) for h in chosen) for r in devices}
        room = all(
            ask.offer(node, r).allocatable - ask.used(host, r) + gone[r] >= n for r, n in devices.items()
        )
        return room and _fits(short, chosen)

    return enough, (*(s.resource for s in short), *devices)


def _others(ask: Ask, node: Object) -> list[Holder]:
    """The pods counted on the node, with all they request (`pod_requests` counts the extended
    resources too: one reading serves the devices and the rest)."""
    rank = preempts_below(ask.pod)
    return [holder_of(other, pod_requests(other), rank) for other in ask.pods.get(name(node), ())]


def waiting_on(ask: Ask, node: Object) -> Change | None:
    """Wait for the pods already terminating on the node, when their end is enough."""
    room = _room(ask, node)
    going = [h for h in _others(ask, node) if h.terminating and not h.nominated]
    if room is None or not going or not room[0](going):
        return None
    return ending(
        f"wait: {who(going)} {'is' if len(going) == 1 else 'are'} terminating on {name(node)}; once gone, "
        "opens {opens}",
        [(h.namespace, h.name) for h in going],
        harm=Harm.KEEPS,
    )


def ending_on(ask: Ask, node: Object) -> Change | None:
    """The fewest pods on the node, lowest priority first (those the pod may preempt before the others
    of a priority, the larger first), whose end lets the pod's devices and its other requests fit
    there; None when no such set of pods exists (or the pod is larger than the node)."""
    room = _room(ask, node)
    if room is None:
        return None
    enough, short = room
    endable = [
        h
        for h in _others(ask, node)
        if may_end(ask.pod, h) and any(r == PODS or h.requests.get(r) for r in short)
    ]
    first = next((r for r in short if r != PODS), PODS)
    endable.sort(key=lambda h: (h.priority, not h.preemptible, -h.requests.get(first, 0), h.name))
    chosen = ended_until(endable, enough)
    return freeing_change(f"free {name(node)}", chosen, ask.members) if chosen else None


def fewest_ended(
    pod: Object, others: Sequence[Object], enough: Callable[[frozenset[tuple[str, str]]], bool], what: str
) -> Change | None:
    """`what: end …`: the fewest of `others` (lowest priority first, those the pod may preempt before
    the others of a priority) whose end is `enough` (given their namespaces and names); None when
    ending them all would not be. Pods a fix never ends are left out (`_endable`)."""
    rank = preempts_below(pod)
    held = sorted(
        (h for other in others if may_end(pod, h := holder_of(other, {}, rank))),
        key=lambda h: (h.priority, not h.preemptible, h.namespace, h.name),
    )
    chosen = ended_until(held, lambda c: enough(frozenset((h.namespace, h.name) for h in c)))
    return freeing_change(what, chosen, Members({"": others})) if chosen else None
