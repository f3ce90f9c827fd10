"""The changes each funnel step proposes when it leaves no node, best (least disruptive) first.

Proposals only: `diagnosis.triage.classify.checked` runs the funnel on each changed view and keeps the
changes that open a node (`diagnosis.triage.fixes`). A summary may hold `{opens}`, filled in with the
pool or nodes the change was found to open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from diagnosis.commands import collect
from diagnosis.objects import Object, labels, mapping, meta, name, namespace, sequence, spec, text
from diagnosis.patch import merge_patch
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import failing, logs
from diagnosis.triage.evidence import CONDITION_TAINTS
from diagnosis.triage.fit import PODS, Shortage, amount, pod_requests, show
from diagnosis.triage.fixes import (
    CHECKED,
    Change,
    delete_pods,
    ending,
    hardware_count,
    node_change,
    patch_text,
    pod_change,
    where,
    with_asks,
)
from diagnosis.triage.funnel import Ask, Funnel, and_
from diagnosis.triage.ports import host_ports, taken
from diagnosis.triage.resources import Holder, offer, reported_resources
from diagnosis.triage.scheduling import CORDON, UNSCHEDULABLE, Taint, node_selector, required_terms, taints
from diagnosis.workloads import may_preempt, priority, priority_class, top_owner

WHOLE_HOST = frozenset({"google.com/tpu"})
"""Resources a pod asks for as a fixed share of a topology, never fewer (GKE TPU slices)."""


def toleration(taint: Taint) -> dict[str, str]:
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def _condition(taint: Taint) -> bool:
    return taint.key.startswith(CONDITION_TAINTS) and taint != CORDON


def for_taint(funnel: Funnel) -> tuple[Change, ...]:
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
                collect(kubectl.uncordon(name(node))),
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


def for_label(funnel: Funnel) -> tuple[Change, ...]:
    """Select a value that exists: per node that offers the devices the pod asks, the selector (and
    the failing `In` requirements of the affinity) rewritten to that node's values. Each distinct
    patch once; which pool it opens is what the check finds."""
    pod, requests = funnel.view.pod, funnel.ask.requests
    nodes = sorted(
        funnel.last.entered,
        key=lambda n: (not all(offer(n, r).allocatable for r in requests), name(n)),
    )
    seen: dict[str, Change] = {}
    for node in nodes:
        patch = selecting(pod, node)
        if patch is None or (key := patch_text(patch)) in seen:
            continue
        shown = _selector_words(patch)
        seen[key] = pod_change(f"select {shown} {where(pod)}: opens {{opens}}", patch)
        if len(seen) >= CHECKED:
            break
    return tuple(seen.values())


def selecting(pod: Object, node: Object) -> dict[str, Any] | None:
    """The pod patch that makes the pod's selector and required affinity match `node`, changing only
    values (a key the node lacks cannot be given a value: None)."""
    have = labels(node)
    patch: dict[str, Any] = {}
    selector = node_selector(pod)
    changed = {
        k: have[k] for k, v in selector.items() if isinstance(k, str) and have.get(k) != v and k in have
    }
    if any(isinstance(k, str) and k not in have for k in selector):
        return None
    if changed:
        patch["nodeSelector"] = changed
    terms = required_terms(pod)
    if terms:
        term = _matching_term(terms, have)
        if term is None:
            return None
        if [term] != list(terms):
            patch["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                }
            }
    return {"spec": patch} if patch else None


def _matching_term(terms: tuple[Mapping[str, Any], ...], have: Mapping[str, str]) -> Mapping[str, Any] | None:
    """The first term whose failing requirements are all `In` on a key the node has, with those
    values replaced by the node's; a term that already matches is returned as it is."""
    for term in terms:
        expressions = [mapping(r) for r in sequence(term.get("matchExpressions"))]
        if not expressions or sequence(term.get("matchFields")):
            continue
        new, fits = [], True
        for requirement in expressions:
            key, operator = str(requirement.get("key", "")), requirement.get("operator")
            values = [v for v in sequence(requirement.get("values")) if isinstance(v, str)]
            if operator == "In" and key in have and have[key] not in values:
                new.append({"key": key, "operator": "In", "values": [have[key]]})
            elif operator == "In" and key not in have:
                fits = False
                break
            else:
                new.append(dict(requirement))
        if fits:
            return {"matchExpressions": new} if new != expressions else term
    return None


def _selector_words(patch: Mapping[str, Any]) -> str:
    body = mapping(patch.get("spec"))
    parts = [f"nodeSelector {k}={v}" for k, v in sorted(mapping(body.get("nodeSelector")).items())]
    affinity = mapping(mapping(body.get("affinity")).get("nodeAffinity"))
    required = mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in map(mapping, sequence(required.get("nodeSelectorTerms"))):
        for r in map(mapping, sequence(term.get("matchExpressions"))):
            if r.get("operator") == "In":
                parts.append(f"affinity {r.get('key')} In [{', '.join(map(str, sequence(r.get('values'))))}]")
    return "; ".join(parts) or "the selector"


def for_no_device(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the device plugin (or driver) on the nodes whose hardware says the device is there but
    which report none: once repaired they report the count their hardware labels (or the same instance
    type elsewhere) say. A node that exposes MIG slices is left out: its `nvidia.com/gpu` reads 0 by
    design."""
    requests, nodes = funnel.ask.requests, funnel.view.nodes
    patches: dict[str, dict[str, Any]] = {}
    unknown: list[Object] = []
    for drop in funnel.last.dropped:
        reported = reported_resources(drop.node)
        fields: dict[str, Any] = {}
        for resource in requests:
            if offer(drop.node, resource).reported:
                continue
            if resource == "nvidia.com/gpu" and any(r.startswith("nvidia.com/mig-") for r in reported):
                fields = {}
                break
            amount = hardware_count(drop.node, resource, nodes)
            if not amount:
                if failing(funnel.view, name(drop.node)):
                    unknown.append(drop.node)
                fields = {}
                break
            fields.setdefault("capacity", {})[resource] = str(amount)
            fields.setdefault("allocatable", {})[resource] = str(amount)
        if fields:
            patches[name(drop.node)] = {"status": fields}
    found = [_repair(funnel, patches, f"report no {and_(requests)}")] if patches else []
    for node in unknown[:1]:
        repair = _repair(funnel, {name(node): {}}, f"reports no {and_(requests)}")
        found.append(
            replace(
                repair,
                summary=repair.summary.replace(
                    "opens {opens}",
                    "what it then opens cannot be shown (no object says how many devices it has)",
                ),
                node_patches={},
                checkable=False,
            )
        )
    return tuple(found)


def for_allocatable_zero(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the device plugin (or the devices' health) on the nodes that report the devices with
    allocatable 0: once healthy, allocatable equals capacity again."""
    requests = funnel.ask.requests
    patches: dict[str, dict[str, Any]] = {}
    for drop in funnel.last.dropped:
        zero = {r: offer(drop.node, r) for r in requests if offer(drop.node, r).allocatable == 0}
        if zero and all(o.capacity for o in zero.values()):
            patches[name(drop.node)] = {
                "status": {"allocatable": {r: str(o.capacity) for r, o in zero.items()}}
            }
    if not patches:
        return ()
    return (_repair(funnel, patches, f"report {and_(requests)} allocatable 0"),)


def _repair(funnel: Funnel, patches: Mapping[str, Mapping[str, Any]], why: str) -> Change:
    """Repair what serves the devices on these nodes: the failing device pod where one is found (its
    last words first), else the device plugin in general."""
    shown = sorted(patches)
    listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
    broken = [d for node in shown if (d := failing(funnel.view, node))]
    if broken:
        first = broken[0]
        what = f"{first.role.title} {namespace(first.pod)}/{name(first.pod)}"
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        commands = collect(logs(first), kubectl.device_plugin_pods(shown[0]))
        summary = f"repair the {what}{more} on {listed} ({first.trouble}): opens {{opens}}"
        return node_change(
            summary, patches, commands, (f"pod/{namespace(d.pod)}/{name(d.pod)}" for d in broken)
        )
    commands = collect(
        *(kubectl.device_plugin_pods(node) for node in shown[:2]),
        kubectl.device_plugin_logs(funnel.ask.requests),
    )
    return node_change(
        f"repair the device plugin or driver on {listed} (they {why}): opens {{opens}}", patches, commands
    )


def for_exhausted(funnel: Funnel) -> tuple[Change, ...]:
    """Wait for terminating holders; ask fewer devices, as many as a node has free; free devices by
    ending the holders whose end opens a node, lowest priority first (the ones this pod may preempt
    named so)."""
    ask, nodes = funnel.ask, funnel.last.entered
    changes: list[Change] = []
    free = {
        name(n): {r: max(ask.offer(n, r).allocatable - ask.used(name(n), r), 0) for r in ask.requests}
        for n in nodes
    }
    by_node = {name(n): n for n in nodes}
    ranked = sorted(nodes, key=lambda n: (-sum(free[name(n)].values()), name(n)))
    for node in ranked[:CHECKED]:
        held = ask.holders.get(name(node), ())
        terminating = [h for h in held if h.terminating]
        if terminating and _enough(ask.requests, free[name(node)], terminating):
            pods = [(h.namespace, h.name) for h in terminating]
            changes.append(
                ending(
                    f"wait: {who(terminating)} {'is' if len(terminating) == 1 else 'are'} terminating on "
                    f"{name(node)}; once gone, opens {{opens}}",
                    pods,
                )
            )
    patch: Mapping[str, Any] | None = None
    pod = ask.pod
    budget_words = []
    for resource, wanted in ask.requests.items():
        most = max((free[n][resource] for n in free), default=0)
        # A TPU pod asks its host's whole share of the slice topology: fewer chips is another slice.
        if 0 < most < wanted and resource not in WHOLE_HOST:
            lowered = with_asks(_patched(pod, patch), resource, most)
            if lowered is not None:
                patch = _merged(patch, lowered)
                budget_words.append(f"{most} {resource} instead of {wanted}")
    if patch is not None:
        changes.append(pod_change(f"ask {', '.join(budget_words)} {where(pod)}: opens {{opens}}", patch))
    # The pod's own JobSet's pods are never offered: ending them restarts the very JobSet.
    own = top_owner(pod)
    for node in ranked[:CHECKED]:
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
        chosen = _fewest(ask.requests, free[name(node)], ranked_holders, by_node[name(node)])
        if chosen:
            pods = [(h.namespace, h.name) for h in chosen]
            changes.append(
                ending(
                    f"free {name(node)}: end {who(chosen)}: opens {{opens}}",
                    pods,
                    delete_pods(pods),
                )
            )
    return tuple(changes)


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
    return _ended_until(holding, lambda chosen: _enough(requests, free, chosen))


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


def _patched(pod: Object, patch: Mapping[str, Any] | None) -> Object:
    return pod if patch is None else merge_patch(pod, patch)


def _merged(left: Mapping[str, Any] | None, right: Mapping[str, Any]) -> Mapping[str, Any]:
    """Two pod patches as one (the second was made on the pod with the first applied)."""
    return right if left is None else merge_patch(left, right)


# --- node-resources, host-port, and freeing a node for the later steps ---------------------------


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


def _ended_until(held: list[Holder], enough: Callable[[list[Holder]], bool]) -> list[Holder]:
    """The first of `held` (in the order given) whose end is `enough`; [] when all of them are not."""
    chosen: list[Holder] = []
    for holder in held:
        if enough(chosen):
            break
        chosen.append(holder)
    return chosen if chosen and enough(chosen) else []


def _freeing(summary: str, chosen: list[Holder]) -> Change:
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
    chosen = _ended_until(endable, enough)
    return _freeing(f"free {name(node)}", chosen) if chosen else None


def for_node_resources(funnel: Funnel) -> tuple[Change, ...]:
    """Wait for pods already terminating where their end is enough; ask less of what is short (cpu,
    memory, ephemeral-storage), as much as the roomiest node has free, saying that it holds only if
    the app can run with that; then free a node: end its lowest-priority pods that hold what is
    short (`ending_on`). A pod larger than any node gets only the smaller request; the pod count and
    hugepages are never asked less of (a pod is one pod, and hugepages are what the app maps)."""
    ask, nodes = funnel.ask, funnel.last.entered
    found = {name(n): ask.shortages(n) for n in nodes}
    ranked = sorted(nodes, key=lambda n: (len(found[name(n)]), name(n)))
    waits = [w for node in ranked[:CHECKED] if (w := waiting_on(ask, node)) is not None][:1]
    lowered = _smaller_request(ask, nodes, found)
    changes: list[Change] = [*waits, *([lowered] if lowered is not None else [])]
    for node in ranked:
        if len(changes) >= 3:
            break
        if (freeing := ending_on(ask, node)) is not None:
            changes.append(freeing)
    return tuple(changes)


_LOWERABLE = ("cpu", "memory", "ephemeral-storage")


def _smaller_request(ask: Ask, nodes: Sequence[Object], found: Mapping[str, list[Shortage]]) -> Change | None:
    """One pod patch: the short resources asked at what the node that needs the least cut has free."""
    best: tuple[float, Mapping[str, int]] | None = None
    for node in nodes:
        short = found[name(node)]
        if not short or any(s.resource not in _LOWERABLE for s in short):
            continue
        free = {s.resource: s.allocatable - s.used for s in short}
        if any(v <= 0 for v in free.values()):
            continue
        kept = min(free[s.resource] / s.asked for s in short)
        if best is None or kept > best[0]:
            best = (kept, free)
    if best is None:
        return None
    pod, patch, words = ask.pod, None, []
    for resource, budget in sorted(best[1].items()):
        smaller = _with_request(_patched(ask.pod, patch), resource, budget)
        if smaller is None:
            return None
        patch = _merged(patch, smaller)
        words.append(f"{show(resource, budget)} {resource} instead of {show(resource, ask.fit[resource])}")
    assert patch is not None
    # Under memory pressure the kubelet evicts first the pods that use more memory than they request.
    memory = " (above its memory request a pod is evicted first)" * ("memory" in best[1])
    return pod_change(
        f"ask {', '.join(words)} {where(pod)}, only if the app can run with that{memory}: opens {{opens}}",
        patch,
    )


def _with_request(pod: Object, resource: str, budget: int) -> Mapping[str, Any] | None:
    """A merge patch that brings the pod's request of `resource` (as `fit.pod_requests` counts it, the
    overhead included) to at most `budget`: pod-level requests set, or every container's request
    scaled down alike (so the larger of the init and app containers' sums scales too). Limits are left
    as they are (a request below its limit is valid). None when the overhead alone is more."""
    pod_spec = spec(pod)
    room = budget - amount(resource, mapping(pod_spec.get("overhead")).get(resource))
    if room <= 0:
        return None
    level = mapping(mapping(pod_spec.get("resources")).get("requests"))
    if resource in level and resource in ("cpu", "memory"):
        return {"spec": {"resources": {"requests": {resource: _quantity(resource, room)}}}}
    total = pod_requests(pod).get(resource, 0) - (budget - room)
    if total <= room:
        return None
    patch: dict[str, Any] = {}
    for field_name in ("initContainers", "containers"):
        items = [dict(mapping(c)) for c in sequence(pod_spec.get(field_name))]
        touched = False
        for item in items:
            resources = mapping(item.get("resources"))
            asked = amount(resource, mapping(resources.get("requests")).get(resource)) or amount(
                resource, mapping(resources.get("limits")).get(resource)
            )
            if asked:
                item["resources"] = merge_patch(
                    resources, {"requests": {resource: _quantity(resource, asked * room // total)}}
                )
                touched = True
        if touched:
            patch[field_name] = items
    return {"spec": patch} if patch else None


def _quantity(resource: str, value: int) -> str:
    """A request as a quantity, rounded down: cpu in millicores, bytes in whole Mi (or Gi)."""
    if resource == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if value >= 2**30 and value % 2**30 == 0:
        return f"{value // 2**30}Gi"
    return f"{value // 2**20}Mi" if value >= 2**20 else str(value)


def for_host_port(funnel: Funnel) -> tuple[Change, ...]:
    """Another host port, one no pod on the nodes left holds; the host port dropped (the pod reached
    through a Service instead; not for a hostNetwork pod, whose container ports are its host ports);
    then the pod holding the port ended, unless a DaemonSet runs it (it comes back on every node)."""
    ask, nodes = funnel.ask, funnel.last.entered
    pod = ask.pod
    found = {name(n): taken(ask.ports, ask.pods.get(name(n), ())) for n in nodes}
    clashing = sorted({t.wanted for held in found.values() for t in held})
    if not clashing:
        return ()
    in_use = {
        (p.protocol, p.number)
        for n in nodes
        for other in ask.pods.get(name(n), ())
        for p in host_ports(other)
    }
    in_use |= {(p.protocol, p.number) for p in ask.ports}
    host_network = spec(pod).get("hostNetwork") is True
    moves = {}
    for port in clashing:
        free = next(
            (
                n
                for n in range(port.number + 1, min(port.number + 100, 65536))
                if (port.protocol, n) not in in_use
            ),
            0,
        )
        if free:
            moves[port] = free
            in_use.add((port.protocol, free))
    changes = []
    if moves and len(moves) == len(clashing):
        shown = ", ".join(f"{new} instead of {old.number}" for old, new in moves.items())
        listen = (
            " (with hostNetwork the app listens on the host port itself: point it there)"
            if host_network
            else ""
        )
        changes.append(
            pod_change(
                f"use host port {shown} {where(pod)}{listen}: opens {{opens}}",
                _ports_patch(pod, {(p.protocol, p.number): n for p, n in moves.items()}, host_network),
            )
        )
    if not host_network:
        shown = ", ".join(str(p) for p in clashing)
        changes.append(
            pod_change(
                f"drop hostPort {shown} {where(pod)} and reach the pod through a Service: opens {{opens}}",
                _ports_patch(pod, {(p.protocol, p.number): 0 for p in clashing}, host_network),
            )
        )
    for node in nodes:
        if len(changes) >= 4:
            break
        held = found[name(node)]
        holders = list({id(t.holder): holder_of(pod, t.holder, {}) for t in held}.values())
        if held and all(may_end(pod, h) for h in holders):
            ports = ", ".join(dict.fromkeys(str(t.held) for t in held))
            changes.append(_freeing(f"free {ports} on {name(node)}", holders))
    return tuple(changes)


def _ports_patch(pod: Object, moves: Mapping[tuple[str, int], int], host_network: bool) -> Mapping[str, Any]:
    """The containers (and sidecars) with the host ports in `moves` changed to their new number (0:
    dropped); with hostNetwork the container port moves along. Lists are replaced whole."""
    patch: dict[str, Any] = {}
    for field_name in ("initContainers", "containers"):
        items = [dict(mapping(c)) for c in sequence(spec(pod).get(field_name))]
        touched = False
        for item in items:
            ports = []
            for raw in map(mapping, sequence(item.get("ports"))):
                port = dict(raw)
                protocol = text(port.get("protocol")) or "TCP"
                number = port.get("hostPort") or (port.get("containerPort") if host_network else None)
                new = moves.get((protocol, number)) if isinstance(number, int) else None
                if new is not None:
                    touched = True
                    if new == 0:
                        port.pop("hostPort", None)
                        port.pop("hostIP", None)
                    else:
                        port["hostPort"] = new
                        if host_network:
                            port["containerPort"] = new
                ports.append(port)
            if ports:
                item["ports"] = ports
        if touched:
            patch[field_name] = items
    return {"spec": patch}


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
    chosen = _ended_until(held, lambda c: enough(frozenset((h.namespace, h.name) for h in c)))
    return _freeing(what, chosen) if chosen else None
