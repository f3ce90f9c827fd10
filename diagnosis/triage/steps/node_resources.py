"""The `node-resources` step: kube-scheduler's NodeResourcesFit Filter (`noderesources/fit.go`
`fitsRequest`) for every resource but the devices: cpu, memory, ephemeral-storage, hugepages-*, the
pod count (`diagnosis.triage.fit`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis.commands import collect
from diagnosis.model import Command, Harm, PodVerdict
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec
from diagnosis.patch import merge_patch
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_columns_on_node
from diagnosis.triage.fit import Shortage, amount, pod_requests, pod_words, show
from diagnosis.triage.fixes import CHECKED, Change, merged, patched, pod_change, where
from diagnosis.triage.freeing import ending_on, waiting_on
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step


def node_resources(ask: Ask, node: Object) -> str | None:
    return "; ".join(map(str, ask.shortages(node))) or None


def advise(funnel: Funnel) -> Advice:
    ask, nodes = funnel.ask, funnel.last.entered
    by_name = {name(n): n for n in nodes}
    found = {host: ask.shortages(node) for host, node in by_name.items()}
    tally = Counter(s.resource for short in found.values() for s in short)
    resource = min(tally, key=lambda r: (-tally[r], r))
    short_here = {}
    for host, short in found.items():  # a plain loop: thousands of nodes
        for shortage in short:
            if shortage.resource == resource:
                short_here[host] = shortage
                break
    others = sorted(set(tally) - {resource})
    evidence = [
        "the pod's requests as the scheduler counts them (containers, init containers, overhead): "
        + ", ".join(f"{r} {show(r, v)}" for r, v in ask.fit.items())
    ]
    if others:
        evidence.append(f"also short on some nodes: {', '.join(others)}")
    ranked = sorted(short_here, key=lambda n: (-(short_here[n].allocatable - short_here[n].used), n))
    if resource != "pods":
        evidence += [line for node in ranked[:3] if (line := _takers(ask, node, resource))]
    commands: list[Command | None] = []
    for node in ranked[:2]:
        commands += (kubectl.node_details(node), pod_requests_on_node(node))
    summary = _summary(ask, nodes, resource, short_here)
    return Advice(summary, tuple(evidence), collect(*commands), fixes=_fixes(ask, by_name, found))


def _summary(ask: Ask, nodes: Sequence[Object], resource: str, short_here: Mapping[str, Shortage]) -> str:
    """What is short, where it comes closest to fitting, and the scheduler's word for it."""
    wanted = ask.fit.get(resource, 1)
    largest = max(s.allocatable for s in short_here.values())
    best = max(short_here, key=lambda n: (short_here[n].allocatable - short_here[n].used, n))
    free = short_here[best].allocatable - short_here[best].used
    if resource == "pods":
        return (
            f"Every node left already runs as many pods as it allows (e.g. {best}: "
            f"{short_here[best].used} of {short_here[best].allocatable}): `Too many pods`"
        )
    if all(s.never for s in short_here.values()) and len(short_here) == len(nodes):
        return (
            f"The pod asks {show(resource, wanted)} {resource} but no node left has more than "
            f"{show(resource, largest)} allocatable: it cannot fit even on an empty node"
        )
    if len(nodes) == 1:
        return (
            f"{best} has {show(resource, max(free, 0))} {resource} free "
            f"(allocatable {show(resource, largest)}, used {show(resource, short_here[best].used)}); "
            f"the pod asks {show(resource, wanted)}: `Insufficient {resource}`"
        )
    return (
        f"None of the {len(nodes)} nodes left has {show(resource, wanted)} {resource} free for the pod "
        f"(most free: {best} with {show(resource, max(free, 0))}): `Insufficient {resource}`"
    )


def _takers(ask: Ask, node: str, resource: str) -> str:
    """`node: cpu requested by ns/a 4, ns/b 2 and 3 more`: the pods there that hold the most of it."""
    takers = sorted(
        ((pod_requests(p).get(resource, 0), p) for p in ask.pods.get(node, ())),
        key=lambda held: (-held[0], namespace(held[1]), name(held[1])),
    )
    shown = [f"{pod_words(p)} {show(resource, v)}" for v, p in takers if v][:5]
    if not shown:
        return ""
    more = len([1 for v, _ in takers if v]) - len(shown)
    return f"{node}: {resource} requested by " + ", ".join(shown) + (f" and {more} more" if more else "")


def _fixes(
    ask: Ask, by_name: Mapping[str, Object], found: Mapping[str, list[Shortage]]
) -> tuple[Change, ...]:
    """Wait for pods already terminating where their end is enough; ask less of what is short (cpu,
    memory, ephemeral-storage), as much as the roomiest node has free, saying that it holds only if
    the app can run with that; then free a node: end its lowest-priority pods that hold what is
    short (`ending_on`). A pod larger than any node gets only the smaller request; the pod count and
    hugepages are never asked less of (a pod is one pod, and hugepages are what the app maps).
    `by_name`: the nodes left, by name; `found`: what is short on each (`Ask.shortages`)."""
    ranked = [by_name[host] for host in sorted(found, key=lambda h: (len(found[h]), h))]
    waits = [w for node in ranked[:CHECKED] if (w := waiting_on(ask, node)) is not None][:1]
    lowered = _smaller_request(ask, found)
    changes: list[Change] = [*waits, *([lowered] if lowered is not None else [])]
    for node in ranked:
        if len(changes) >= 3:
            break
        if (freeing := ending_on(ask, node)) is not None:
            changes.append(freeing)
    return tuple(changes)


_LOWERABLE = ("cpu", "memory", "ephemeral-storage")


def _smaller_request(ask: Ask, found: Mapping[str, list[Shortage]]) -> Change | None:
    """One pod patch: the short resources asked at what the node that needs the least cut has free
    (`found`: node name → what is short there, in the nodes' order)."""
    best: tuple[float, Mapping[str, int]] | None = None
    for shortages in found.values():  # a plain loop: it runs for each of thousands of nodes
        free: dict[str, int] = {}
        kept = math.inf
        for short in shortages:
            spare = short.allocatable - short.used
            if short.resource not in _LOWERABLE or spare <= 0:
                break
            free[short.resource], kept = spare, min(kept, spare / short.asked)
        else:
            if free and (best is None or kept > best[0]):
                best = (kept, free)
    if best is None:
        return None
    pod, patch, words = ask.pod, None, []
    for resource, budget in sorted(best[1].items()):
        smaller = _with_request(patched(ask.pod, patch), resource, budget)
        if smaller is None:
            return None
        patch = merged(patch, smaller)
        words.append(f"{show(resource, budget)} {resource} instead of {show(resource, ask.fit[resource])}")
    assert patch is not None
    # Under memory pressure the kubelet evicts first the pods that use more memory than they request.
    memory = " (above its memory request a pod is evicted first)" * ("memory" in best[1])
    return pod_change(
        f"ask {', '.join(words)} {where(pod)}, only if the app can run with that{memory}: opens {{opens}}",
        patch,
        Harm.SHRINKS,
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


def pod_requests_on_node(node: str) -> Command | None:
    """What each pod on the node requests of cpu, memory and ephemeral storage."""
    return pod_columns_on_node(
        node,
        (
            "CPU:.spec.containers[*].resources.requests.cpu",
            "MEMORY:.spec.containers[*].resources.requests.memory",
            "EPHEMERAL:.spec.containers[*].resources.requests.ephemeral-storage",
            "INIT_CPU:.spec.initContainers[*].resources.requests.cpu",
            "INIT_MEMORY:.spec.initContainers[*].resources.requests.memory",
        ),
        f"what each pod counted on {node} requests (the node's allocatable is in describe node)",
    )


STEP = Step(
    PodVerdict.NODE_RESOURCES,
    "has room for the pod's other requests and one more pod",
    node_resources,
    advise,
    ("NodeResourcesFit",),
)
