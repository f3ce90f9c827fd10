"""The `claim` rung's checks: what kube-scheduler's DynamicResources plugin refuses before any node is
looked at (`pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`, PreEnqueue and
PreFilter): a claim missing, not yet made from its template, being deleted, not the pod's, reserved by
as many pods as it may serve, or allocated where the pod cannot go."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis.dra_objects import (
    RESERVED_FOR_MAX,
    Claim,
    Dra,
    PodClaim,
    pod_claims,
)
from diagnosis.events import message, reason
from diagnosis.objects import Object, name, namespace, uid
from diagnosis.triage.scheduling import Placement


def asks_claims(pod: Object) -> bool:
    return bool(pod_claims(pod))


def node_filter(selector: Mapping[str, Any]) -> Placement:
    """A NodeSelector (a claim's allocation, a slice's) as the pod-side matcher of required affinity."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}
    return Placement.of({"spec": {"affinity": affinity}})


@dataclass(frozen=True)
class ClaimProblem:
    """Why the pod's claims hold it before any node is considered."""

    claim: str
    """The claim's name; "" when no claim was made yet."""
    summary: str
    evidence: tuple[str, ...]
    template: str = ""


@dataclass(frozen=True)
class Resolved:
    entry: PodClaim
    claim: Claim | None


def resolve(pod: Object, dra: Dra) -> tuple[Resolved, ...]:
    """The pod's claim entries with the claims they name (None when absent or not made yet)."""
    ns = namespace(pod)
    return tuple(
        Resolved(entry, dra.claim_index.get((ns, entry.resolved)) if entry.resolved else None)
        for entry in pod_claims(pod)
    )


def claim_problem(
    pod: Object, dra: Dra, nodes: Sequence[Object], events: Iterable[Object]
) -> ClaimProblem | None:
    """The first of the pod's claims that holds it, in `spec.resourceClaims` order; None when each is
    there, usable by the pod and, if allocated, allocated where the pod may go."""
    ns, pod_name = namespace(pod), name(pod)
    if not dra.served:
        return ClaimProblem(
            "",
            "The pod names ResourceClaims, but the cluster serves no resource.k8s.io/v1 API: Dynamic "
            "Resource Allocation is off there (or only a beta version is enabled)",
            (
                "the API server answered 404 for resource.k8s.io/v1 "
                "(kubectl api-versions | grep resource.k8s.io lists what it serves)",
            ),
        )
    for item in resolve(pod, dra):
        entry, found = item.entry, item.claim
        if entry.template and entry.generated == "":
            continue  # the controller says no claim is needed for this entry
        if entry.template and entry.generated is None:
            return _not_made(pod, entry, dra, events)
        claim_name = entry.resolved or ""
        if found is None:
            return ClaimProblem(
                claim_name,
                f"ResourceClaim {ns}/{claim_name} does not exist (pod claim {entry.name}): "
                "the scheduler does not try the pod until it does",
                (
                    f"spec.resourceClaims {entry.name}: "
                    + (
                        f"resourceClaimName {entry.claim_name}"
                        if entry.claim_name
                        else f"template {entry.template}, generated claim {claim_name}"
                    ),
                    f'scheduler (PreEnqueue): could not find ResourceClaim "{ns}/{claim_name}"',
                ),
                entry.template,
            )
        if found.deleting:
            return ClaimProblem(
                claim_name,
                f"ResourceClaim {found} is being deleted: the pod cannot use it",
                (
                    f"{found}: metadata.deletionTimestamp is set",
                    f'scheduler: resourceclaim "{claim_name}" is being deleted',
                ),
            )
        if entry.template and found.controller is not None and not _is_pod(found.controller, pod):
            kind_, owner, _ = found.controller
            return ClaimProblem(
                claim_name,
                f"ResourceClaim {found} was made for {kind_.lower()} {owner}, not for this pod",
                (
                    f"scheduler: ResourceClaim {found} was not created for pod {ns}/{pod_name} "
                    "(pod is not owner)",
                ),
            )
        users = [n for n, u in found.reserved_for if n != pod_name and not (u and u == uid(pod))]
        if len(users) >= RESERVED_FOR_MAX:
            return ClaimProblem(
                claim_name,
                f"ResourceClaim {found} is already reserved for {len(users)} pods, the most one claim may "
                "serve",
                (f"{found}: status.reservedFor has {len(users)} entries (limit {RESERVED_FOR_MAX})",),
            )
    return _allocated_elsewhere(pod, dra, nodes)


def _is_pod(controller: tuple[str, str, str], pod: Object) -> bool:
    kind_, owner, owner_uid = controller
    if owner_uid and uid(pod):
        return owner_uid == uid(pod)
    return kind_ == "Pod" and owner == name(pod)


def _not_made(pod: Object, entry: PodClaim, dra: Dra, events: Iterable[Object]) -> ClaimProblem:
    ns = namespace(pod)
    failures = [message(e) for e in events if reason(e) == "FailedResourceClaimCreation"]
    exists = (ns, entry.template) in dra.templates
    evidence = [
        f"spec.resourceClaims {entry.name}: template {entry.template}; status.resourceClaimStatuses names no "
        "claim for it",
        f"ResourceClaimTemplate {ns}/{entry.template} "
        + ("exists" if exists else "does not exist in the objects read"),
        *(f"event FailedResourceClaimCreation: {m}" for m in failures[:3]),
    ]
    why = (
        failures[0]
        if failures
        else ""
        if exists
        else f"ResourceClaimTemplate {ns}/{entry.template} does not exist"
    )
    summary = (
        f"The ResourceClaim for pod claim {entry.name} (template {entry.template}) has not been created"
        + (f": {why}" if why else ": kube-controller-manager's resourceclaim controller has not made it yet")
    )
    return ClaimProblem("", summary, tuple(evidence), entry.template if exists else "")


def _allocated_elsewhere(pod: Object, dra: Dra, nodes: Sequence[Object]) -> ClaimProblem | None:
    """An allocated claim confines the pod to its allocation's nodes: none of them usable (nodeSelector,
    affinity, taints) means the pod waits until the claim is deallocated."""
    allocated = [r.claim for r in resolve(pod, dra) if r.claim is not None and r.claim.allocated]
    pinned = [c for c in allocated if c.node_selector is not None]
    if not pinned:
        return None
    placement = Placement.of(pod)
    usable = [n for n in nodes if placement.mismatch(n) is None and not placement.untolerated(n)]
    for claim in pinned:
        assert claim.node_selector is not None
        where = node_filter(claim.node_selector)
        allowed = [n for n in nodes if where.mismatch(n) is None]
        if any(where.mismatch(n) is None for n in usable):
            continue
        shown = ", ".join(name(n) for n in allowed[:10]) or "no node that exists now"
        users = ", ".join(n for n, _ in claim.reserved_for) or "no pod"
        why = [f"{name(n)}: {_unusable(placement, n)}" for n in allowed[:10]]
        return ClaimProblem(
            claim.name,
            f"ResourceClaim {claim} is allocated on {shown}, where the pod cannot run",
            (
                f"{claim}: status.allocation.nodeSelector allows {shown}; reserved for {users}",
                *why,
                "scheduler: resourceclaim not available on the node",
            ),
        )
    return None


def _unusable(placement: Placement, node: Object) -> str:
    mismatch = placement.mismatch(node)
    if mismatch:
        return f"the pod's nodeSelector/affinity: {mismatch}"
    return "untolerated taint " + ", ".join(str(t) for t in placement.untolerated(node))
