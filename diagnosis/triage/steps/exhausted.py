"""The `exhausted` step: kube-scheduler's NodeResourcesFit Filter (`noderesources/fit.go`,
`Insufficient <device>`): no node left has the devices free; for claims, the DynamicResources
allocator finds none free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from diagnosis.commands import collect
from diagnosis.dra_objects import Claim, Subrequest
from diagnosis.model import Command, Harm, Holding, PodVerdict
from diagnosis.objects import Object, name, namespace, spec
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import column_title, extended_only, jsonpath_name
from diagnosis.triage.dra import allocator
from diagnosis.triage.dra.allocator import allocate
from diagnosis.triage.dra.changes import choices_of, edit_request, freeable, request_words
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.dra.evidence import claim_commands, node_commands, per_node
from diagnosis.triage.fixes import (
    CHECKED,
    Change,
    ending,
    merged,
    patched,
    pod_change,
    where,
    with_asks,
)
from diagnosis.triage.freeing import ended_until, freeing_change, may_end, who
from diagnosis.triage.funnel import SHOWN, Advice, Ask, Funnel, Room, Step, and_, by_headroom, names, tightest
from diagnosis.triage.resources import Holder, Members, effective_requests, holder_of, offer
from diagnosis.triage.scheduling import Placement, placement_key
from diagnosis.views import TriageView
from diagnosis.workloads import Owner, preempts_below, priority, top_owner


def exhausted(ask: Ask, node: Object) -> str | None:
    short = _short(ask, node)
    if ask.devices is not None and (dra := ask.devices.unallocatable(node)):
        short.append(dra)
    return ", ".join(short) or None


def _short(ask: Ask, node: Object) -> list[str]:
    """The pod's resources the node has too few free of, worked out once per node, its holders and
    the asks: a fix that ends pods or changes the pod leaves most nodes as they were."""
    if not ask.requests:
        return []  # a pod that asks devices only by claims
    node_name = name(node)
    key = (id(node), id(ask.holders.get(node_name, ())), tuple(ask.requests.items()))
    found = ask.shared.short.get(key)
    if found is None:
        found = ask.shared.short[key] = []
        for resource, wanted in ask.requests.items():
            allocatable, used = ask.offer(node, resource).allocatable, ask.used(node_name, resource)
            if allocatable - used < wanted:
                free = (
                    f"none free ({used - allocatable} more than allocatable)"
                    if used > allocatable
                    else f"free {allocatable - used}"
                )
                found.append(f"{resource} allocatable {allocatable}, used {used}, {free} < {wanted} asked")
    return list(found)


def advise(funnel: Funnel) -> Advice:
    if not any(_short(funnel.ask, d.node) for d in funnel.last.dropped):
        return _claims_advice(funnel)
    ask, nodes = funnel.ask, funnel.last.entered
    ranked = by_headroom(ask, nodes)
    best = ranked[0]
    resource, wanted = tightest(ask, best)
    at = list(ask.requests).index(resource)
    largest = max(room.allocatable[at] for room in ask.room(nodes).values())
    free = max(ask.offer(best, resource).allocatable - ask.used(name(best), resource), 0)
    if largest < wanted:
        summary = (
            f"The pod asks {wanted} {resource} but no node left has more than {largest} allocatable: "
            "it cannot fit even on an empty node"
        )
    elif len(nodes) == 1:
        used = ask.used(name(best), resource)
        held = [f"{h.namespace}/{h.name}" for h in ask.holders.get(name(best), ()) if resource in h.requests]
        holders = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        allocatable = offer(best, resource).allocatable
        # Pods may hold more than the node now offers (its allocatable dropped under them, or pods
        # of equal or higher priority are nominated there): "0 free of 1, 2 held" would read as a sum.
        summary = (
            f"{name(best)} has no {resource} free: {used} held by {holders or 'pods nominated there'}, "
            f"more than its {allocatable} allocatable"
            if used > allocatable
            else f"{name(best)} has {free} {resource} free of {allocatable}"
            + (f" ({used} held by {holders})" if used else "")
        ) + f"; the pod asks {wanted}"
    else:
        summary = (
            f"None of the {len(nodes)} nodes left has {wanted} {resource} free "
            f"(most free: {name(best)} with {free})"
        )
    commands: list[Command | None] = []
    for node in ranked[:2]:
        commands += (consumers(name(node), ask.requests), kubectl.node_details(name(node)))
    return Advice(
        summary,
        ask.of_holders(nodes, "held lines", partial(held_lines, ask, ranked, ask.room(nodes))),
        collect(*commands),
        fixes=_fixes(funnel),
        holders=holdings(ask, nodes),
        competing=competing(ask, funnel.view.pending_pods, nodes),
    )


def holdings(ask: Ask, nodes: tuple[Object, ...]) -> tuple[Holding, ...]:
    """Who holds the pod's devices on these nodes, grouped by top owner (`diagnosis.workloads`): the
    pod's own JobSet first, then lowest priority first (the cheapest to move)."""
    own, here = top_owner(ask.pod), namespace(ask.pod)
    found = [
        replace(held, own=True) if held.kind == "JobSet" and owner == own and held.namespace == here else held
        for held, owner in ask.of_holders(nodes, "holdings", partial(_holdings, ask, nodes))
    ]
    return tuple(sorted(found, key=lambda h: (not h.own, h.priority, h.namespace, h.name)))


def _holdings(ask: Ask, nodes: tuple[Object, ...]) -> tuple[tuple[Holding, Owner], ...]:
    """Each workload's holding of the pod's devices on these nodes (none the pod's own yet), with its
    top owner."""
    asked, holders = ask.requests.keys(), ask.holders
    groups: dict[tuple[str, str, str], list[tuple[str, Holder]]] = {}
    for host in ask.room(nodes):  # the nodes by name
        for holder in holders.get(host, ()):
            if not asked.isdisjoint(holder.requests):  # a holder's requests leave out 0s
                key = (holder.owner.kind, holder.namespace, holder.owner.name or holder.name)
                groups.setdefault(key, []).append((host, holder))
    found = []
    for (owner_kind, ns, owner_name), held in groups.items():
        devices: dict[str, int] = {}
        for _, holder in held:
            for resource in asked:
                if resource in holder.requests:
                    devices[resource] = devices.get(resource, 0) + holder.requests[resource]
        first = held[0][1]
        holding = Holding(
            kind=owner_kind,
            namespace=ns,
            name=owner_name,
            pods=tuple(sorted({h.name for _, h in held})),
            nodes=tuple(sorted({n for n, _ in held})),
            devices=devices,
            priority_class=first.priority_class,
            priority=min(h.priority for _, h in held),
            preemptible=all(h.preemptible for _, h in held),
            terminating=sum(h.terminating for _, h in held),
        )
        found.append((holding, first.owner))
    return tuple(found)


def competing(ask: Ask, pending: tuple[Object, ...], nodes: Iterable[Object]) -> tuple[str, ...]:
    """The other pending pods that ask for some of the same devices and may land on these nodes (their
    selector and tolerations admit at least one): `ns/name (priority P, asks 2 nvidia.com/gpu)`, those
    of higher priority first (the scheduler tries them first)."""
    me = (namespace(ask.pod), name(ask.pod))
    nodes = tuple(nodes)
    # By placement: a workload's pending pods are checked against the nodes once. A reader that keeps
    # the nodes and the pending pods keeps these for every question asked while they are unchanged.
    kept = ask.shared.kept
    admits: dict[str, bool] = {} if kept is None else kept.of_nodes(nodes, "admits", dict)
    read = partial(_waiting_pods, pending)
    waiting = read() if kept is None else kept.of_nodes(pending, "waiting", read)
    found = []
    for other, key, placement, asked, rank in waiting:
        asks = {r: n for r, n in asked.items() if r in ask.requests}
        if not asks or key == me:
            continue
        if placement not in admits:
            held = Placement.of(other)
            admits[placement] = any(held.mismatch(n) is None and not held.untolerated(n) for n in nodes)
        if admits[placement]:
            found.append((rank, *key, asks))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return tuple(
        f"{ns}/{pod} (priority {rank}, asks {', '.join(f'{n} {r}' for r, n in asks.items())})"
        for rank, ns, pod, asks in found[:SHOWN]
    )


def _waiting_pods(
    pending: Iterable[Object],
) -> tuple[tuple[Object, tuple[str, str], str, Mapping[str, int], int], ...]:
    """The pending pods not held by a scheduling gate that ask for an extended resource, each with its
    (namespace, name), placement key, extended asks and priority (`competing`)."""
    return tuple(
        (pod, (namespace(pod), name(pod)), placement_key(pod), asked, priority(pod))
        for pod in pending
        if not spec(pod).get("schedulingGates") and (asked := effective_requests(pod))
    )


WHOLE_HOST = frozenset({"google.com/tpu"})
"""Resources a pod asks for as a fixed share of a topology, never fewer (GKE TPU slices)."""


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Wait for terminating holders; ask fewer devices, as many as a node has free; free devices by
    ending the holders whose end opens a node, lowest priority first (the ones this pod may preempt
    named so)."""
    ask, nodes = funnel.ask, funnel.last.entered
    most, free, ranked = ask.of_holders(nodes, "most free", partial(_most_free, ask, nodes))
    lowered = _fewer(ask, most)
    return (
        *(wait for node in ranked if (wait := _waiting(ask, free[name(node)], node)) is not None),
        *((lowered,) if lowered is not None else ()),
        *(change for node in ranked if (change := _freeing(ask, free[name(node)], node)) is not None),
    )


def _most_free(
    ask: Ask, nodes: tuple[Object, ...]
) -> tuple[dict[str, int], dict[str, dict[str, int]], tuple[Object, ...]]:
    """Resource asked → the most any node has free of it; and the `CHECKED` nodes with the most free,
    each (by name) with what it has free of each resource asked."""
    rooms, asked = ask.room(nodes), tuple(ask.requests)
    free = {host: room.spare() for host, room in rooms.items()}
    most = {resource: max((f[at] for f in free.values()), default=0) for at, resource in enumerate(asked)}
    ranked = sorted(free, key=lambda h: (-sum(free[h]), h))[:CHECKED]
    each = {host: dict(zip(asked, free[host], strict=True)) for host in ranked}
    return most, each, tuple(rooms[host].node for host in ranked)


def _waiting(ask: Ask, free: Mapping[str, int], node: Object) -> Change | None:
    """Wait for the holders terminating on the node, when their end frees enough."""
    terminating = [h for h in ask.holders.get(name(node), ()) if h.terminating]
    if not terminating or not _enough(ask.requests, free, terminating):
        return None
    return ending(
        f"wait: {who(terminating)} {'is' if len(terminating) == 1 else 'are'} terminating on "
        f"{name(node)}; once gone, opens {{opens}}",
        [(h.namespace, h.name) for h in terminating],
        harm=Harm.KEEPS,
    )


def _fewer(ask: Ask, most_free: Mapping[str, int]) -> Change | None:
    """Ask as many devices as the roomiest node has free, of each resource short everywhere."""
    patch: Mapping[str, Any] | None = None
    pod = ask.pod
    budget_words = []
    for resource, wanted in ask.requests.items():
        most = most_free[resource]
        # A TPU pod asks its host's whole share of the slice topology: fewer chips is another slice.
        if 0 < most < wanted and resource not in WHOLE_HOST:
            lowered = with_asks(patched(pod, patch), resource, most)
            if lowered is not None:
                patch = merged(patch, lowered)
                budget_words.append(f"{most} {resource} instead of {wanted}")
    if patch is None:
        return None
    return pod_change(f"ask {', '.join(budget_words)} {where(pod)}: opens {{opens}}", patch, Harm.SHRINKS)


def _freeing(ask: Ask, free: Mapping[str, int], node: Object) -> Change | None:
    """End the fewest holders on the node, lowest priority first, whose end frees enough."""
    pod = ask.pod
    # The pod's own JobSet's pods are never offered: ending them restarts the very JobSet.
    own = top_owner(pod)
    ranked_holders = sorted(
        (
            h
            for h in ask.holders.get(name(node), ())
            if not h.terminating
            # A pod nominated there is not placed yet: it has the pod's priority or more, and
            # deleting a pending pod to jump the queue is no fix.
            and not h.nominated
            and not (own.kind == "JobSet" and h.owner == own and h.namespace == namespace(pod))
        ),
        key=lambda h: (h.priority, not h.preemptible, h.namespace, h.name),
    )
    chosen = _fewest(ask.requests, free, ranked_holders, node)
    if not chosen:
        return None
    return freeing_change(f"free {name(node)}", chosen, ask.members)


def _enough(requests: Mapping[str, int], free: Mapping[str, int], gone: list[Holder]) -> bool:
    return all(free[r] + sum(h.requests.get(r, 0) for h in gone) >= n for r, n in requests.items())


def _fewest(
    requests: Mapping[str, int], free: Mapping[str, int], held: list[Holder], node: Object
) -> list[Holder]:
    """The first holders in `held` (lowest priority first) whose end frees enough; [] when ending all
    of them would not (the pod asks more than the node has)."""
    if not all(offer(node, r).allocatable >= n for r, n in requests.items()):
        return []
    holding = [h for h in held if any(h.requests.get(r) for r in requests)]
    return ended_until(holding, lambda chosen: _enough(requests, free, chosen))


def _claims_advice(funnel: Funnel) -> Advice:
    devices, nodes = funnel.ask.devices, funnel.last.entered
    assert devices is not None
    ranked = devices.ranked(nodes)
    holders = [(n, h) for n in ranked[:SHOWN] for h in devices.holders_on(n)]
    best = ranked[0]
    summary = (
        f"{name(best)}: {funnel.last.dropped[0].why}"
        if len(nodes) == 1
        else f"None of the {len(nodes)} nodes left has free devices for all the pod's claims "
        f"(most free: {name(best)} with {devices.free(best)})"
    )
    if holders:
        claims = list(dict.fromkeys(h[0] for _, h in holders))
        summary += f"; held by {_claims_of(claims, funnel.view.bound_pods)}"
    evidence = per_node(devices, ranked)
    grouped: dict[tuple[str, Claim, str], list[str]] = {}
    for n, (claim, request, device) in holders:
        grouped.setdefault((name(n), claim, request), []).append(device)
    evidence += [
        f"{host}: {names(held)} held by claim {claim} (request {request}; {_users(claim)})"
        for (host, claim, request), held in list(grouped.items())[:SHOWN]
    ]
    if len(grouped) > SHOWN:
        evidence.append(f"and {len(grouped) - SHOWN} more claims holding devices")
    commands = claim_commands(devices)
    commands += [
        kubectl.resource_claim(claim.namespace, claim.name)
        for claim in list(dict.fromkeys(h[0] for _, h in holders))[:3]
    ]
    commands += node_commands(ranked)
    return Advice(summary, tuple(evidence), collect(*commands), fixes=_claims_fixes(funnel))


FREED = 1
"""Nodes proposed to free. Checking one reruns the DRA steps over every node (the allocations change),
about 40 ms on 5,000 nodes: the node closest to fitting, its cheapest holders, is the one offered."""


def _claims_fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Ask fewer devices, as many as a node has free; free devices: per node, closest to fitting
    first, the claims holding matching devices there ended with their pods (lowest priority first,
    the ones this pod may preempt named so), as few as free enough."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    return (*_fewer_devices(view, devices, nodes), *_freeing_claims(view, devices, nodes))


def _fewer_devices(view: TriageView, devices: Devices, nodes: Sequence[Object]) -> list[Change]:
    """Per claim, its requests asked as many devices as the roomiest node has free."""
    changes: list[Change] = []
    by_claim: dict[int, list[tuple[allocator.Ask, Subrequest, Subrequest, list[dict[str, Any]]]]] = {}
    for ask in devices.asks:
        sub = ask.alternatives[0] if ask.alternatives else None
        if sub is None or sub.all_devices or len(ask.alternatives) > 1:
            continue
        most = max((len(c.free) for node in nodes for c in choices_of(devices, ask, node)), default=0)
        if 0 < most < sub.count:
            by_claim.setdefault(id(ask.claim), []).append(
                (ask, sub, replace(sub, count=most), [{"op": "add", "path": "/count", "value": most}])
            )
    for group in by_claim.values():
        what = "ask " + and_(
            f"{new.count} device{'s' if new.count > 1 else ''} instead of {old.count} in {request_words(a)}"
            for a, old, new, _ in group
        )
        edits = [(old, new, ops) for _, old, new, ops in group]
        change = edit_request(view, group[0][0].claim, edits, what, Harm.SHRINKS)
        if change is not None:
            changes.append(change)
    return changes


def _freeing_claims(view: TriageView, devices: Devices, nodes: Sequence[Object]) -> list[Change]:
    """The first `FREED` nodes, closest to fitting first, whose claims' holders' end frees enough."""
    changes: list[Change] = []
    pods = {(namespace(p), name(p)): p for p in view.bound_pods}
    by_name = {name(n): n for n in nodes}
    for node in (by_name[n] for n in freeable(devices, nodes)):
        if len(changes) >= FREED:
            break
        chosen: list[tuple[Claim, list[Holder]]] = []
        for *_, claim, held in _claim_holders(view, pods, devices, node):
            if _claims_enough(devices, node, [c for c, _ in chosen]):
                break
            chosen.append((claim, held))
        if chosen and _claims_enough(devices, node, [c for c, _ in chosen]):
            holders = list({(h.namespace, h.name): h for _, held in chosen for h in held}.values())
            claims = names(str(c) for c, _ in chosen)
            changes.append(
                freeing_change(
                    f"free {name(node)} (claim{'s' if len(chosen) > 1 else ''} {claims} "
                    f"hold{'' if len(chosen) > 1 else 's'} its devices)",
                    holders,
                    Members({"": tuple(pods.values())}),
                )
            )
    return changes


def _claim_holders(
    view: TriageView, pods: Mapping[tuple[str, str], Object], devices: Devices, node: Object
) -> list[tuple[int, bool, str, Claim, list[Holder]]]:
    """The claims holding devices on the node whose pods a fix may end, with those pods, lowest
    priority first."""
    candidates, rank = [], preempts_below(view.pod)
    for claim in dict.fromkeys(claim for claim, _, _ in devices.holders_on(node)):
        users = [pods.get((claim.namespace, n)) for n, _ in claim.reserved_for]
        if not users or any(u is None for u in users):
            continue  # reserved for no pod, or for pods not read: nothing known to end
        held = [holder_of(u, {}, rank) for u in users if u is not None]
        if not all(may_end(view.pod, h) for h in held):
            continue
        candidates.append(
            (min(h.priority for h in held), not all(h.preemptible for h in held), str(claim), claim, held)
        )
    candidates.sort(key=lambda c: c[:3])
    return candidates


def _claims_enough(devices: Devices, node: Object, freed: Iterable[Claim]) -> bool:
    """Whether, with the claims' devices freed, the allocator finds devices on the node for every
    request at once (constraints included)."""
    gone = {r.device_id for c in freed for r in c.results}
    options = [
        [c._replace(free=(*c.free, *(d for d in c.untainted if d.id in gone))) for c in choices]
        for choices in devices.choices(node)
    ]
    return allocate(devices.asks, options) is not None


def _users(claim: Claim) -> str:
    pods = [n for n, _ in claim.reserved_for]
    return (
        f"reserved for pod {', '.join(pods)}"
        if pods
        else "reserved for no pod: allocated, waiting to be freed"
    )


def _claims_of(claims: Sequence[Claim], pods: Iterable[Object]) -> str:
    """`4 claims of JobSet ml/llm-finetune, 2 claims of pods ml/a, ml/b`: the claims counted by the
    workload of the pods they are reserved for (the claims themselves are in the evidence)."""
    by_name = {(namespace(p), name(p)): p for p in pods}
    held: dict[str, list[str]] = {}
    for claim in claims:
        user = next((by_name.get((claim.namespace, n)) for n, _ in claim.reserved_for), None)
        kind, owner = workload(user) if user is not None else ("", "")
        what = "pods" if kind == "Pod" else f"{kind} {claim.namespace}/{owner}" if kind else f"claim {claim}"
        held.setdefault(what, []).append(owner)
    shown = []
    for what, users in held.items():
        claimed = f"{len(users)} claim{'s' if len(users) > 1 else ''}"
        if what == "pods":
            pod_names = ", ".join(users[:2]) + (f" and {len(users) - 2} more" if len(users) > 2 else "")
            shown.append(f"{claimed} of pod{'s' if len(users) > 1 else ''} {pod_names}")
        else:
            shown.append(what if what.startswith("claim ") else f"{claimed} of {what}")
    return ", ".join(shown[:2]) + (f" and {len(shown) - 2} more" if len(shown) > 2 else "")


def consumers(node: str, resources: Iterable[str]) -> Command | None:
    """The pods holding the resources on a node, as the scheduler counts them."""
    names = extended_only(resources)
    if not names:
        return None
    columns = ["PHASE:.status.phase", "DELETING:.metadata.deletionTimestamp"]
    columns += [f"{column_title(r)}:.spec.containers[*].resources.limits.{jsonpath_name(r)}" for r in names]
    purpose = f"the pods that count against {node}'s allocatable (terminating ones too)"
    return kubectl.pod_columns_on_node(node, columns, purpose)


def held_lines(ask: Ask, nodes: Sequence[Object], rooms: Mapping[str, Room]) -> tuple[str, ...]:
    """What the holders of the devices (`holdings`, grouped by workload) do not say: the pods
    nominated on a node, which the scheduler counts there before they are bound, and the nodes whose
    pods hold more than is allocatable, grouped."""
    on = [name(n) for n in nodes]
    nominated = [
        f"{h.namespace}/{h.name} on {host} ("
        + ", ".join(f"{r} ×{v}" for r, v in h.requests.items() if r in ask.requests)
        + ")"
        for host in on
        for h in ask.holders.get(host, ())
        if h.nominated and any(h.requests.get(r) for r in ask.requests)
    ]
    lines = []
    if nominated:
        lines.append(
            "nominated there, not bound yet, of this pod's priority or more (the scheduler counts them "
            f"first): {names(nominated)}"
        )
    over: dict[tuple[str, int, int], list[str]] = {}
    for host in on:
        room = rooms[host]
        for resource, allocatable, used in zip(ask.requests, room.allocatable, room.used, strict=True):
            if used > allocatable:
                over.setdefault((resource, used, allocatable), []).append(host)
    lines += [
        f"{names(on)}: {'its pods hold' if len(on) == 1 else 'the pods on each hold'} {used} {resource} "
        f"but only {allocatable} is allocatable: devices went unhealthy while held, and still count "
        "until those pods end"
        for (resource, used, allocatable), on in over.items()
    ]
    return tuple(lines)


STEP = Step(
    PodVerdict.EXHAUSTED,
    "has {asks} free",
    exhausted,
    advise,
    ("NodeResourcesFit", "DynamicResources"),
)
