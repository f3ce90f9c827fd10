"""Freeing a node: the pods a fix may end, how it names them, and the fewest of them whose end lets the
pod fit. Shared by the steps whose fixes end pods (`exhausted`, `node-resources`, `host-port`,
`volume`, and the DRA claims' holders); the fixes are checked like any other (`fixes.Change.ended`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from diagnosis.objects import Object, meta, name, namespace, spec
from diagnosis.triage.fit import PODS, Shortage, pod_requests
from diagnosis.triage.fixes import Change, delete_pods, ending
from diagnosis.triage.funnel import Ask
from diagnosis.triage.resources import Holder
from diagnosis.workloads import may_preempt, priority, priority_class, top_owner


def who(held: list[Holder]) -> str:
    """`ns/a (JobSet x, priority 0, preemptible)`: who, whose, and how they rank against the pod."""
    parts = []
    for h in held[:3]:
        owner = f"{h.owner.kind} {h.owner.name}, " if h.owner.kind != "Pod" else ""
        rank = f"priority {h.priority}" + (f" ({h.priority_class})" if h.priority_class else "")
        parts.append(
            f"{h.namespace}/{h.name} ({owner}{rank}{', preemptible by this pod' if h.preemptible else ''})"
        )
    more = f" and {len(held) - 3} more" if len(held) > 3 else ""
    return ", ".join(parts) + more


def holder_of(pod: Object, other: Object, requests: Mapping[str, int]) -> Holder:
    """Another pod on a node, as the fixes name it (`who`): whose, its priority, whether `pod` may
    preempt it."""
    return Holder(
        namespace(other),
        name(other),
        requests,
        meta(other).get("deletionTimestamp") is not None,
        top_owner(other),
        priority(other),
        priority_class(other),
        may_preempt(pod, other),
        nominated=not spec(other).get("nodeName"),
    )


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


def freeing_change(summary: str, chosen: list[Holder]) -> Change:
    pods = [(h.namespace, h.name) for h in chosen]
    return ending(f"{summary}: end {who(chosen)}: opens {{opens}}", pods, delete_pods(pods))


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
    host = name(node)
    short = ask.shortages(node)
    devices = {
        r: n for r, n in ask.requests.items() if ask.offer(node, r).allocatable - ask.used(host, r) < n
    }
    if any(s.never for s in short) or any(ask.offer(node, r).allocatable < n for r, n in devices.items()):
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
    return [holder_of(ask.pod, other, pod_requests(other)) for other in ask.pods.get(name(node), ())]


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
    return freeing_change(f"free {name(node)}", chosen) if chosen else None


def fewest_ended(
    pod: Object, others: Sequence[Object], enough: Callable[[frozenset[tuple[str, str]]], bool], what: str
) -> Change | None:
    """`what: end …`: the fewest of `others` (lowest priority first, those the pod may preempt before
    the others of a priority) whose end is `enough` (given their namespaces and names); None when
    ending them all would not be. Pods a fix never ends are left out (`_endable`)."""
    held = sorted(
        (h for other in others if may_end(pod, h := holder_of(pod, other, {}))),
        key=lambda h: (h.priority, not h.preemptible, h.namespace, h.name),
    )
    chosen = ended_until(held, lambda c: enough(frozenset((h.namespace, h.name) for h in c)))
    return freeing_change(what, chosen) if chosen else None
