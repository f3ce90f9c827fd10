"""What the DRA steps' fixes share: a change that recreates a claim (or its template) with some of its
requests changed, and which nodes' claims a fix may free.

A request lives in a ResourceClaim, or in the ResourceClaimTemplate the pod's claim is made from;
neither spec can be updated in place, so a change to a request recreates the object
(`commands.recreate`), and for a template also the pod, so that its claim is made again from the new
template. The changed view holds the pod's claim as it would then read (`Change.claims`). Proposals
only: the runner checks each one (`diagnosis.triage.runner.checked`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from diagnosis.dra_objects import Claim, Subrequest
from diagnosis.model import Harm
from diagnosis.objects import Object, name, namespace
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.dra.allocator import Ask, Choice
from diagnosis.triage.dra.claims import resolve
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.fixes import CHECKED, Change, delete_pods
from diagnosis.views import TriageView


def edit_request(
    view: TriageView,
    claim: Claim,
    edits: Sequence[tuple[Subrequest, Subrequest, list[dict[str, Any]]]],
    what: str,
    harm: Harm = Harm.KEEPS,
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
        harm=harm,
    )


def request_words(ask: Ask) -> str:
    return f"request {ask.request}"


def choices_of(devices: Devices, ask: Ask, node: Object) -> tuple[Choice, ...]:
    return next(c for a, c in zip(devices.asks, devices.choices(node), strict=True) if a is ask)


def freeable(devices: Devices, nodes: Sequence[Object]) -> tuple[str, ...]:
    """The nodes whose claims the `exhausted` step's fixes may propose to free, in their order: closest
    to fitting first. A reader fetches their pods when no node has free devices (`usage_candidates`),
    so that each proposal can be checked."""
    return tuple(name(n) for n in devices.ranked(nodes)[:CHECKED])
