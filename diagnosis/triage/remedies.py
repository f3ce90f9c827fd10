"""The changes each funnel step proposes when it leaves no node, best (least disruptive) first.

Proposals only: `diagnosis.triage.classify.checked` runs the funnel on each changed view and keeps the
changes that open a node (`diagnosis.triage.fixes`). A summary may hold `{opens}`, filled in with the
pool or nodes the change was found to open.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from diagnosis.commands import collect
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec
from diagnosis.patch import merge_patch
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import failing, logs
from diagnosis.triage.evidence import CONDITION_TAINTS
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
from diagnosis.triage.funnel import Funnel, and_
from diagnosis.triage.resources import Holder, offer, reported_resources
from diagnosis.triage.scheduling import CORDON, UNSCHEDULABLE, Taint, node_selector, required_terms, taints
from diagnosis.workloads import top_owner

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
        name(n): {r: max(offer(n, r).allocatable - ask.used(name(n), r), 0) for r in ask.requests}
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
    chosen: list[Holder] = []
    for holder in held:
        if _enough(requests, free, chosen):
            break
        if any(holder.requests.get(r) for r in requests):
            chosen.append(holder)
    return chosen if chosen and _enough(requests, free, chosen) else []


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
