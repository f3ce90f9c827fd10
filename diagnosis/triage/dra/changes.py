"""The changes proposed when a pod's ResourceClaims are what holds it: the `claim` rung, and the
funnel's DRA checks (no matching device, devices tainted out, devices all allocated).

Proposals only, like `diagnosis.triage.remedies`: `classify.checked` runs the funnel on each changed
view and keeps the changes that open a node. A request lives in a ResourceClaim, or in the
ResourceClaimTemplate the pod's claim is made from; neither spec can be updated in place, so a change
to a request recreates the object (`commands.recreate`), and for a template also the pod, so that its
claim is made again from the new template. The changed view holds the pod's claim as it would then
read (`Change.claims`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from diagnosis.commands import collect
from diagnosis.dra_objects import Claim, Device, Slice, Subrequest
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, uid
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import failing, logs
from diagnosis.triage.dra.allocator import Ask, Choice, allocate
from diagnosis.triage.dra.claims import ClaimProblem, node_filter, resolve
from diagnosis.triage.dra.devices import Devices, blocking_taints
from diagnosis.triage.fixes import CHECKED, Change, delete_pods, ending, pod_change, where
from diagnosis.triage.funnel import Funnel, and_, names
from diagnosis.triage.remedies import holder_of, may_end, selecting, toleration, who
from diagnosis.triage.resources import Holder
from diagnosis.triage.scheduling import CORDON, Placement, Taint
from diagnosis.views import TriageView

ALTERNATIVES = 3
"""Other device classes or selector values proposed for one request: each costs a funnel run."""

FREED = 1
"""Nodes proposed to free. Checking one reruns the DRA steps over every node (the allocations change),
about 40 ms on 5,000 nodes: the node closest to fitting, its cheapest holders, is the one offered."""

_EQUALS = re.compile(
    r"""device\.attributes\[(?P<q>['"])(?P<domain>[^'"]+)(?P=q)\]\.(?P<attribute>[A-Za-z_][A-Za-z0-9_]*)"""
    r"""\s*==\s*(?P<v>['"])(?P<value>[^'"]*)(?P=v)"""
)
"""A selector that compares one string attribute with a literal, as a request writes it
(`device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'`): the one form whose value can
be swapped for a value that exists. The match is evaluated by the CEL library like any other."""


# --- a change to what a claim requests ----------------------------------------------------------


def _edit(
    view: TriageView,
    claim: Claim,
    edits: Sequence[tuple[Subrequest, Subrequest, list[dict[str, Any]]]],
    what: str,
) -> Change | None:
    """The change that recreates the claim (or its template, then the pod) with the subrequests
    replaced: `edits` holds (old, new, JSON patch ops relative to the subrequest's pointer)."""
    pod = view.pod
    entry = next((r.entry for r in resolve(pod, view.dra) if r.claim is claim), None)
    if entry is None:
        return None
    replaced = {id(old): new for old, new, _ in edits}
    requests = tuple(
        replace(r, alternatives=tuple(replaced.get(id(s), s) for s in r.alternatives))
        for r in claim.spec.requests
    )
    after = replace(claim, spec=replace(claim.spec, requests=requests))
    ns = claim.namespace
    objects: tuple[str, ...]
    if entry.template:
        ops = [{**op, "path": f"/spec/spec{old.pointer}{op['path']}"} for old, _, o in edits for op in o]
        owner, _ = workload(pod)
        recreated = (
            f"delete pod {name(pod)} so that its {owner} recreates it with a claim made from the new template"
            if owner != "Pod"
            else f"recreate pod {name(pod)} so that its claim is made from the new template"
        )
        summary = f"{what} in ResourceClaimTemplate {ns}/{entry.template} (recreate it), then {recreated}"
        commands = (
            *kubectl.recreate("resourceclaimtemplate", ns, entry.template, ops),
            *(delete_pods([(namespace(pod), name(pod))]) if owner != "Pod" else ()),
        )
        objects = (f"resourceclaimtemplate/{ns}/{entry.template}", f"pod/{namespace(pod)}/{name(pod)}")
    else:
        ops = [{**op, "path": f"/spec{old.pointer}{op['path']}"} for old, _, o in edits for op in o]
        summary = f"{what} in ResourceClaim {claim} (recreate it: its spec cannot be changed in place)"
        commands = kubectl.recreate("resourceclaim", ns, claim.name, ops)
        objects = (f"resourceclaim/{claim}",)
    if not commands:
        return None
    return Change(
        f"{summary}: opens {{opens}}",
        claims={(ns, claim.name): after},
        commands=commands,
        objects=objects,
    )


def _request(ask: Ask) -> str:
    return f"request {ask.request}"


# --- no-gpu-node: no device matches -------------------------------------------------------------


def for_no_device(funnel: Funnel) -> tuple[Change, ...]:
    """Ask a DeviceClass that exists, or a selector value that exists: for each request no node's
    device matches, the classes (or the values of the attribute its selector compares) that some
    device the nodes reach has, most common first."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    changes: list[Change] = []
    for ask in devices.asks:
        if any(c.matching for node in nodes for c in _choices(devices, ask, node)):
            continue
        sub = ask.alternatives[0] if ask.alternatives else None
        if sub is None:
            continue
        if sub.device_class not in devices.dra.class_index:
            for other in _classes(devices, sub, nodes):
                new = replace(sub, device_class=other)
                op = {"op": "replace", "path": "/deviceClassName", "value": other}
                change = _edit(view, ask.claim, [(sub, new, [op])], f"ask class {other} in {_request(ask)}")
                if change is not None:
                    changes.append(change)
            continue
        for index, expression in enumerate(sub.selectors):
            for value, new_expression in _values(devices, sub, index, expression, nodes):
                new = replace(
                    sub,
                    selectors=tuple(new_expression if i == index else s for i, s in enumerate(sub.selectors)),
                )
                op = {"op": "replace", "path": f"/selectors/{index}/cel/expression", "value": new_expression}
                change = _edit(view, ask.claim, [(sub, new, [op])], f"select {value!r} in {_request(ask)}")
                if change is not None:
                    changes.append(change)
    return tuple(changes[:CHECKED])


def _choices(devices: Devices, ask: Ask, node: Object) -> tuple[Choice, ...]:
    return next(c for a, c in zip(devices.asks, devices.choices(node), strict=True) if a is ask)


def _classes(devices: Devices, sub: Subrequest, nodes: Sequence[Object]) -> list[str]:
    """The existing classes some device on the nodes matches, with the request's own selectors; the
    names closest to the one asked first (a misspelt name is the likely cause)."""
    found = []
    for device_class in sorted(
        devices.dra.class_index, key=lambda c: (-SequenceMatcher(None, c, sub.device_class).ratio(), c)
    ):
        candidate = replace(sub, device_class=device_class)
        if any(devices.offer(candidate, node).matching for node in nodes):
            found.append(device_class)
            if len(found) >= ALTERNATIVES:
                break
    return found


def _values(
    devices: Devices, sub: Subrequest, index: int, expression: str, nodes: Sequence[Object]
) -> list[tuple[str, str]]:
    """For a selector `device.attributes['D'].A == 'V'`: the values of D/A among the devices on the
    nodes that match every other selector, by how many nodes have one (most first), each with the
    selector rewritten to it."""
    found = _EQUALS.fullmatch(expression.strip())
    if found is None:
        return []
    others = replace(sub, selectors=tuple(s for i, s in enumerate(sub.selectors) if i != index))
    qualified = f"{found['domain']}/{found['attribute']}"
    counts: dict[str, int] = {}
    for node in nodes:
        values = {
            v for d in devices.offer(others, node).matching if isinstance(v := d.attribute(qualified), str)
        }
        for value in values:
            counts[value] = counts.get(value, 0) + 1
    ranked = sorted(counts, key=lambda v: (-counts[v], v))[:ALTERNATIVES]
    quote = found["v"]
    start, end = found.span("value")
    stripped = expression.strip()
    return [(v, stripped[:start] + v + stripped[end:]) for v in ranked if quote not in v and "\\" not in v]


# --- allocatable-zero: every matching device tainted out ----------------------------------------


def for_tainted(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the driver, so that it publishes the devices untainted; else tolerate the devices'
    NoSchedule taints in the request (the device is then used as it is: only where the workload can)."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    tainted: dict[str, set[str]] = {}
    taints: dict[int, tuple[Ask, Subrequest, dict[Taint, None]]] = {}
    for node in nodes:
        for ask, options in zip(devices.asks, devices.choices(node), strict=True):
            if any(c.untainted for c in options):
                continue
            for choice in options:
                for device in choice.matching:
                    found = blocking_taints(choice.sub, device)
                    tainted.setdefault(name(node), set()).add(device.id)
                    if found and all(t.effect == "NoSchedule" for t in found):
                        _, _, seen = taints.setdefault(id(choice.sub), (ask, choice.sub, {}))
                        seen.update(dict.fromkeys(found))
    changes = []
    repaired = _repaired(devices, nodes, tainted)
    if repaired:
        changes.append(_repair(view, repaired, tainted))
    by_claim: dict[int, list[tuple[Ask, Subrequest, dict[Taint, None]]]] = {}
    for ask, sub, seen in taints.values():
        by_claim.setdefault(id(ask.claim), []).append((ask, sub, seen))
    for group in by_claim.values():
        edits = []
        for _, sub, seen in group:
            added = [toleration(t) for t in seen]
            new = replace(sub, tolerations=(*sub.tolerations, *added))
            edits.append(
                (
                    sub,
                    new,
                    [{"op": "add", "path": "/tolerations", "value": [*map(dict, sub.tolerations), *added]}],
                )
            )
        shown = and_(dict.fromkeys(str(t) for _, _, seen in group for t in seen))
        asks = and_(_request(a) for a, _, _ in group)
        change = _edit(
            view, group[0][0].claim, edits, f"tolerate {shown} in {asks} (the devices are used as they are)"
        )
        if change is not None:
            changes.append(change)
    return tuple(changes)


def _repaired(devices: Devices, nodes: Sequence[Object], tainted: Mapping[str, set[str]]) -> dict[str, Slice]:
    """The slices reaching the nodes with the tainted devices published untainted."""
    found: dict[str, Slice] = {}
    for node in nodes:
        ids = tainted.get(name(node), set())
        for _, item in devices.pools(node):
            if item.name in found or not any(d.id in ids for d in item.devices):
                continue
            found[item.name] = replace(
                item, devices=tuple(_untainted(d) if d.id in ids else d for d in item.devices)
            )
    return found


def _untainted(device: Device) -> Device:
    return replace(device, taints=())


def _repair(view: TriageView, slices: Mapping[str, Slice], tainted: Mapping[str, set[str]]) -> Change:
    hosts = sorted(tainted)
    listed = ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
    drivers = and_(sorted({s.driver for s in slices.values()}))
    broken = [d for host in hosts if (d := failing(view, host))]
    commands = collect(
        *(logs(d) for d in broken[:1]),
        *(kubectl.resource_slices(host) for host in hosts[:2]),
    )
    return Change(
        f"repair the devices the {drivers} driver taints on {listed} (it publishes them again untainted once "
        "they are healthy): opens {opens}",
        slices=slices,
        commands=commands,
        objects=(
            *(f"resourceslice/{s}" for s in sorted(slices)),
            *(f"pod/{namespace(d.pod)}/{name(d.pod)}" for d in broken),
        ),
    )


# --- exhausted: matching devices all allocated --------------------------------------------------


def for_exhausted(funnel: Funnel) -> tuple[Change, ...]:
    """Ask fewer devices, as many as a node has free; free devices: per node, closest to fitting
    first, the claims holding matching devices there ended with their pods (lowest priority first,
    the ones this pod may preempt named so), as few as free enough."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    changes: list[Change] = []
    by_claim: dict[int, list[tuple[Ask, Subrequest, Subrequest, list[dict[str, Any]]]]] = {}
    for ask in devices.asks:
        sub = ask.alternatives[0] if ask.alternatives else None
        if sub is None or sub.all_devices or len(ask.alternatives) > 1:
            continue
        most = max((len(c.free) for node in nodes for c in _choices(devices, ask, node)), default=0)
        if 0 < most < sub.count:
            by_claim.setdefault(id(ask.claim), []).append(
                (ask, sub, replace(sub, count=most), [{"op": "add", "path": "/count", "value": most}])
            )
    for group in by_claim.values():
        what = "ask " + and_(
            f"{new.count} device{'s' if new.count > 1 else ''} instead of {old.count} in {_request(a)}"
            for a, old, new, _ in group
        )
        change = _edit(view, group[0][0].claim, [(old, new, ops) for _, old, new, ops in group], what)
        if change is not None:
            changes.append(change)
    pods = {(namespace(p), name(p)): p for p in view.bound_pods}
    by_name = {name(n): n for n in nodes}
    freeing = 0
    for node in (by_name[n] for n in freeable(devices, nodes)):
        if freeing >= FREED:
            break
        candidates = []
        for claim in dict.fromkeys(claim for claim, _, _ in devices.holders_on(node)):
            users = [pods.get((claim.namespace, n)) for n, _ in claim.reserved_for]
            if not users or any(u is None for u in users):
                continue  # reserved for no pod, or for pods not read: nothing known to end
            held = [holder_of(view.pod, u, {}) for u in users if u is not None]
            if not all(may_end(view.pod, h) for h in held):
                continue
            candidates.append(
                (min(h.priority for h in held), not all(h.preemptible for h in held), str(claim), claim, held)
            )
        candidates.sort(key=lambda c: c[:3])
        chosen: list[tuple[Claim, list[Holder]]] = []
        for *_, claim, held in candidates:
            if _enough(devices, node, [c for c, _ in chosen]):
                break
            chosen.append((claim, held))
        if chosen and _enough(devices, node, [c for c, _ in chosen]):
            holders = [h for _, held in chosen for h in held]
            ended = list(dict.fromkeys((h.namespace, h.name) for h in holders))
            claims = names(str(c) for c, _ in chosen)
            freeing += 1
            changes.append(
                ending(
                    f"free {name(node)}: end {who(holders)}, whose claim{'s' if len(chosen) > 1 else ''} "
                    f"{claims} hold{'' if len(chosen) > 1 else 's'} its devices: opens {{opens}}",
                    ended,
                    delete_pods(ended),
                )
            )
    return tuple(changes)


def freeable(devices: Devices, nodes: Sequence[Object]) -> tuple[str, ...]:
    """The nodes whose claims `for_exhausted` may propose to free, in its order: closest to fitting
    first. A reader fetches their pods when no node has free devices (`classify.usage_candidates`),
    so that each proposal can be checked."""
    return tuple(name(n) for n in devices.ranked(nodes)[:CHECKED])


def _enough(devices: Devices, node: Object, freed: Iterable[Claim]) -> bool:
    """Whether, with the claims' devices freed, the allocator finds devices on the node for every
    request at once (constraints included)."""
    gone = {r.device_id for c in freed for r in c.results}
    options = [
        [c._replace(free=(*c.free, *(d for d in c.untainted if d.id in gone))) for c in choices]
        for choices in devices.choices(node)
    ]
    return allocate(devices.asks, options) is not None


# --- the claim rung ------------------------------------------------------------------------------


def for_claim(view: TriageView, problem: ClaimProblem, nodes: Sequence[Object]) -> tuple[Change, ...]:
    """For a claim allocated where the pod cannot run: the pod patch that lets it run on one of the
    allocation's nodes (select that node's label values, tolerate its taints); else end the other pods
    the claim is reserved for, so that it is deallocated and allocated again for this pod. For a claim
    not made or missing: what to create, whose effect no object can show."""
    pod = view.pod
    found = view.dra.claim_index.get((namespace(pod), problem.claim)) if problem.claim else None
    if found is not None and found.allocated and found.node_selector is not None:
        return _allocated_elsewhere(view, found, nodes)
    entry = next((r.entry for r in resolve(pod, view.dra) if r.claim is None), None)
    ns = namespace(pod)
    if entry is None:
        return ()
    if entry.template and entry.generated is None and (ns, entry.template) not in view.dra.templates:
        what = f"create ResourceClaimTemplate {ns}/{entry.template}, or name one that exists"
    elif entry.claim_name:
        what = f"create ResourceClaim {ns}/{entry.claim_name}, or name one that exists"
    else:
        return ()  # the controller failed to make the claim, or lost it: its events say why
    return (
        Change(
            f"{what} in pod claim {entry.name} {where(pod)}: what it then opens cannot be shown (no object "
            "says what the claim should ask)",
            commands=collect(kubectl.resource_claims(ns)),
            objects=(f"pod/{ns}/{name(pod)}",),
            checkable=False,
        ),
    )


def _allocated_elsewhere(view: TriageView, claim: Claim, nodes: Sequence[Object]) -> tuple[Change, ...]:
    pod = view.pod
    assert claim.node_selector is not None
    allowed = [n for n in nodes if node_filter(claim.node_selector).mismatch(n) is None]
    placement = Placement.of(pod)
    seen: dict[str, Change] = {}
    for node in allowed[:CHECKED]:
        patch: dict[str, Any] = dict(selecting(pod, node) or {"spec": {}})
        if placement.mismatch(node) is not None and not patch["spec"]:
            continue
        untolerated = [t for t in placement.untolerated(node) if t != CORDON]
        if untolerated:
            existing = [dict(mapping(t)) for t in sequence(spec(pod).get("tolerations"))]
            patch["spec"] = {**patch["spec"], "tolerations": [*existing, *map(toleration, untolerated)]}
        if not patch["spec"]:
            continue
        key = repr(sorted(patch["spec"].items(), key=lambda kv: kv[0]))
        seen.setdefault(
            key,
            pod_change(
                f"let the pod run where claim {claim} is allocated ({name(node)}) {where(pod)}: "
                "opens {opens}",
                patch,
            ),
        )
    changes = list(seen.values())[: CHECKED - 1]
    others = [
        (claim.namespace, n) for n, u in claim.reserved_for if n != name(pod) and not (u and u == uid(pod))
    ]
    if others:
        listed = names(f"{ns}/{n}" for ns, n in others)
        changes.append(
            ending(
                f"end {listed}, for which claim {claim} is reserved: once no pod uses it the claim is "
                "deallocated, and allocated again for this pod: opens {opens}",
                others,
                delete_pods(others),
            )
        )
    return tuple(changes)
