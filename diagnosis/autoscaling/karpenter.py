"""Karpenter v1: the NodeClaim nominated for the pod, and each NodePool as a node group (its
requirements, labels and taints make the template node; `spec.limits` against `status.resources`
says whether it may grow).

A NodeClaim is Ready once `Launched`, `Registered` and `Initialized` are True; a launch that fails
leaves `Launched` not True with the cloud's reason (`InsufficientCapacity`…), and insufficient
capacity deletes the NodeClaim (kubernetes-sigs/karpenter v1.14.1 `pkg/apis/v1/nodeclaim_status.go`,
`nodeclaim/lifecycle/launch.go`): then only Karpenter's event on it says why, in namespace `default`
as every event on a cluster-scoped object (`InsufficientCapacityError`: `NodeClaim NAME event:
insufficient capacity, …`; `NodeClassNotReady`: `NodeClaim NAME event: NodeClassRef not ready, …`;
`pkg/controllers/nodeclaim/lifecycle/events.go`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from diagnosis import events, quantity
from diagnosis.autoscaling.events import nominations
from diagnosis.autoscaling.said import KARPENTER, PROVISION_TIMEOUT, Said
from diagnosis.model import NodeComing
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

NODEPOOL_LABEL = "karpenter.sh/nodepool"
_STEPS = ("Launched", "Registered", "Initialized")
_ON_CLAIM = {
    "InsufficientCapacityError": "the cloud has no capacity for NodeClaim {claim} ({why})",
    "NodeClassNotReady": "NodeClaim {claim} cannot launch: its NodeClass is not ready ({why})",
}
"""Karpenter's events on a NodeClaim that say its launch failed, and how each is told."""
_FLEET = "with fleet error(s), "
_WHY_CUT = 100


def nominated(
    found: Iterable[Object], claims: Iterable[Object], claim_events: Iterable[Object], now: datetime
) -> Iterator[Said]:
    """What the NodeClaims Karpenter nominated for the pod (`found`: its events) say, and its events
    on them: on their way or failed. A NodeClaim that is gone (consolidated once up, or deleted on a
    failed launch: its event says) says nothing itself."""
    by_name = {name(c): c for c in claims}
    named = {claim_name for claim_name, _ in nominations(found)}
    for claim_name, event in nominations(found):
        claim = by_name.get(claim_name)
        said = _claim_said(claim, event, now) if claim is not None else None
        if said is not None:
            yield said
    for event in claim_events:
        ref = events.regarding(event)
        told = _ON_CLAIM.get(events.reason(event))
        claim_name = text(ref.get("name"))
        if text(ref.get("kind")) == "NodeClaim" and claim_name in named and told is not None:
            words = events.message(event)
            why = _why(words.removeprefix(f"NodeClaim {claim_name} event: "))
            line = "Scale-up failed {ago}: " + told.format(claim=claim_name, why=why)
            yield Said(
                NodeComing.FAILED, KARPENTER, events.last_time(event), words, line, count=events.count(event)
            )


def nominates_claims(found: Iterable[Object]) -> bool:
    """Whether Karpenter nominated a NodeClaim for the pod (`found`: its events): its events on the
    NodeClaim say whether the launch failed (`nominated`)."""
    return any(True for _ in nominations(found))


def _why(error: str) -> str:
    """The cloud's words, short: the fleet's error codes (`InsufficientInstanceCapacity`), else the
    error after Karpenter's prefix."""
    error = " ".join(error.split())
    error = error.removeprefix("insufficient capacity, ").removeprefix("NodeClassRef not ready, ")
    if error.startswith(_FLEET):
        codes = (part.split(":")[0].strip() for part in error.removeprefix(_FLEET).split("; "))
        return ", ".join(dict.fromkeys(codes))
    return error if len(error) <= _WHY_CUT else error[:_WHY_CUT] + "…"


def _claim_said(claim: Object, event: Object, now: datetime) -> Said | None:
    when, claim_name = events.last_time(event), name(claim)
    failed = _failed_step(claim)
    if failed is not None:
        what = f"{text(failed.get('type'))}: {text(failed.get('reason'))}"
        said = f"NodeClaim {claim_name} {what}: {text(failed.get('message'))}"
        since = timestamp(failed.get("lastTransitionTime")) or when
        return Said(NodeComing.FAILED, KARPENTER, since, said, f"Scale-up failed {{ago}}: {said}")
    if all(_is(claim, step, "True") for step in _STEPS):
        return None  # its node is up: the funnel says why the pod is still not on it
    pool = labels(claim).get(NODEPOOL_LABEL, "")
    created = timestamp(meta(claim).get("creationTimestamp")) or when
    if created is not None and now - created > PROVISION_TIMEOUT:
        line = f"Scale-up timed out: NodeClaim {claim_name} ({pool}) was made {{ago}}, no node is ready"
        return Said(NodeComing.FAILED, KARPENTER, when, events.message(event), line)
    where = f" from NodePool {pool}" if pool else ""
    line = f"Node: coming — Karpenter is launching NodeClaim {claim_name}{where}, {{ago}}"
    return Said(NodeComing.COMING, KARPENTER, when, events.message(event), line)


def _failed_step(claim: Object) -> Mapping[str, Any] | None:
    """The condition of a step that failed: one that is False, or a launch not True for a reason
    other than still launching (`LaunchFailed`, a cloud `CreateError`)."""
    failed = next((condition(claim, t) for t in _STEPS if _is(claim, t, "False")), None)
    launched = condition(claim, "Launched")
    if failed is None and launched is not None and launched.get("status") != "True":
        return launched if text(launched.get("reason")) not in ("", "Launching") else None
    return failed


def _is(claim: Object, step: str, value: str) -> bool:
    found = condition(claim, step)
    return found is not None and found.get("status") == value


def limit_problem(pool: Object, asks: Mapping[str, int]) -> str:
    """Why the NodePool may not grow for the pod's asks (`spec.limits` against `status.resources`),
    or ""."""
    limits, used = mapping(spec(pool).get("limits")), mapping(status(pool).get("resources"))
    if "nodes" in limits and (quantity.count(status(pool).get("nodes")) or 0) >= (
        quantity.count(limits["nodes"]) or 0
    ):
        return f"NodePool {name(pool)} has reached its limit of {limits['nodes']} nodes"
    for resource, wanted in sorted(asks.items()):
        if resource not in limits:
            continue
        limit, taken = quantity.count(limits[resource]) or 0, quantity.count(used.get(resource, 0)) or 0
        if taken + wanted > limit:
            return (
                f"NodePool {name(pool)}'s {resource} limit is {limit}, {taken} in use; the pod asks {wanted}"
            )
    return ""


def template(pool: Object, asks: Mapping[str, int], wants: Mapping[str, str]) -> dict[str, Any]:
    """A node as the NodePool would launch it for the pod: its template's labels, the values its
    requirements allow (the pod's own where allowed), its taints, and room for what the pod asks
    (Karpenter picks an instance type that has it; limits are checked apart, `limit_problem`)."""
    shape = mapping(spec(pool).get("template"))
    node_labels = {**mapping(mapping(shape.get("metadata")).get("labels")), NODEPOOL_LABEL: name(pool)}
    for requirement in sequence(mapping(shape.get("spec")).get("requirements")):
        key, operator = text(requirement.get("key")), text(requirement.get("operator"))
        values = [text(v) for v in sequence(requirement.get("values"))]
        if operator == "In" and values:
            node_labels[key] = wants[key] if wants.get(key) in values else values[0]
        elif operator == "Exists":
            node_labels[key] = wants.get(key, "true")
    room = {"cpu": "1000", "memory": "10000Gi", "pods": "110", "ephemeral-storage": "10000Gi"}
    room |= {resource: str(amount) for resource, amount in asks.items()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"new-{name(pool)}-node", "labels": node_labels},
        "spec": {"taints": list(sequence(mapping(shape.get("spec")).get("taints")))},
        "status": {
            "capacity": room,
            "allocatable": room,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
