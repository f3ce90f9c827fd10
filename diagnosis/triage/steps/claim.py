"""The `claim` rung: kube-scheduler's DynamicResources PreEnqueue and PreFilter
(`dynamicresources/dynamicresources.go`) refuse a pod whose ResourceClaims are missing or unusable
(`diagnosis.triage.dra.claims`); its fixes let the pod run where its claim is, or free the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.dra_objects import Claim
from diagnosis.model import Command, PodVerdict
from diagnosis.names import is_dns1123_label
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, uid
from diagnosis.triage import commands as kubectl
from diagnosis.triage.dra.claims import ClaimProblem, asks_claims, claim_problem, node_filter, resolve
from diagnosis.triage.evidence import asks_lines, claim_devices, pending_notes, scheduler_lines
from diagnosis.triage.fixes import (
    CHECKED,
    UNCHECKED,
    Change,
    delete_pods,
    ending,
    pod_change,
    selecting,
    toleration,
    where,
)
from diagnosis.triage.funnel import Advice, Answer, Seen, candidates, names
from diagnosis.triage.scheduling import CORDON, Placement
from diagnosis.views import TriageView


def claim(seen: Seen) -> Answer | None:
    view, requests = seen.view, seen.requests
    if not asks_claims(view.pod):
        return None
    problem = claim_problem(view.pod, view.dra, seen.shared.candidates(view.nodes), view.events)
    if problem is None:
        return None
    advice = replace(_advice(view.pod, problem), fixes=_fixes(view, problem, candidates(view.nodes)))
    evidence = (
        *asks_lines(view.pod, requests, claim_devices(view)),
        *advice.evidence,
        *scheduler_lines(view, {}),
        *pending_notes(view.pod),
    )
    return Answer(PodVerdict.CLAIM, advice, evidence)


def _advice(pod: Object, problem: ClaimProblem) -> Advice:
    ns = namespace(pod)
    commands = collect(
        pod_claims(ns, name(pod)),
        claim_template(ns, problem.template) if problem.template else None,
        kubectl.resource_claim(ns, problem.claim) if problem.claim else None,
        resource_claims(ns),
    )
    return Advice(problem.summary, problem.evidence, commands)


def _fixes(view: TriageView, problem: ClaimProblem, nodes: Sequence[Object]) -> tuple[Change, ...]:
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
            f"{what} in pod claim {entry.name} {where(pod)}: {UNCHECKED}",
            commands=collect(resource_claims(ns)),
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


def resource_claims(namespace: str) -> Command | None:
    if not is_dns1123_label(namespace):
        return None
    return commands.kubectl(
        "the namespace's claims and their state (pending, allocated, reserved, deleted)",
        "get",
        "resourceclaims",
        "-n",
        namespace,
    )


def claim_template(namespace: str, template: str) -> Command | None:
    if not valid_names(namespace, template):
        return None
    return commands.kubectl(
        f"template {template}: what the claim made from it asks for",
        "get",
        "resourceclaimtemplate",
        template,
        "-n",
        namespace,
        "-o",
        "yaml",
    )


def pod_claims(namespace: str, pod: str) -> Command | None:
    template = '{.spec.resourceClaims}{"\\n"}{.status.resourceClaimStatuses}{"\\n"}'
    return kubectl.pod_jsonpath(
        namespace, pod, template, "the claims the pod names and the ones made for it from templates"
    )
