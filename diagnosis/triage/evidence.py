"""Evidence lines and snippets of `/triage` that several rungs and steps share, reading the pod or a
node, not the funnel (a step's own words live in its module).

Each function turns fields into a sentence a person can check against `kubectl get -o yaml`; none of
them decides a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from diagnosis.model import PodState, Snippet
from diagnosis.names import is_label_key, is_label_value
from diagnosis.objects import Object, condition_true, meta, spec, status, text
from diagnosis.triage.dra import evidence as dra_evidence
from diagnosis.triage.dra.claims import asks_claims
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.funnel import candidates
from diagnosis.triage.resources import containers, extended_overhead
from diagnosis.triage.scheduler_message import last_said, notes, quoted
from diagnosis.triage.scheduling import Taint
from diagnosis.views import TriageView

CONDITION_TAINTS = "node.kubernetes.io/"
"""Taints the node lifecycle controller sets for a condition (not-ready, unreachable, pressure) and
for a cordon: the fix is the node, not a toleration."""

_DEFAULT_SCHEDULER = "default-scheduler"


def request_line(pod: Object, requests: Mapping[str, int]) -> str:
    """The effective request, and where it comes from when more than one container asks."""
    asks = ", ".join(f"{r}={n}" for r, n in requests.items())
    parts, inits = [], False
    for field, kind in (("initContainers", "init"), ("containers", "")):
        for container in containers(pod, field):
            if container.requests:
                role = "sidecar" if container.sidecar else kind
                inits = inits or role == "init"
                own = ", ".join(f"{r}={n}" for r, n in container.requests.items())
                parts.append(f"{role + ' ' if role else ''}{container.name or '?'} {own}")
    overhead = {r: n for r, n in extended_overhead(pod).items() if r in requests}
    if overhead:
        parts.append("spec.overhead " + ", ".join(f"{r}={n}" for r, n in overhead.items()))
    if len(parts) <= 1:
        return f"the pod asks {asks}"
    how = (
        "the larger of its app containers plus sidecars, and each init container plus the sidecars "
        "before it" if inits else "the sum of its containers"
    ) + (", plus the pod overhead" if overhead else "")
    return f"the pod asks {asks}: {how} ({'; '.join(parts)})"


def scheduler_lines(
    view: TriageView, requests: Mapping[str, int], nodes: Sequence[Object] | None = None
) -> tuple[str, ...]:
    """The scheduler's last word on the pod, quoted, with notes where it misleads. `nodes`: the
    view's `candidates`, when the caller has them already (a large cluster takes a while to list)."""
    said = last_said(view.pod, view.events, view.now)
    if said is None:
        return ("scheduler said: nothing yet (no PodScheduled=False condition, no FailedScheduling event)",)
    seen = None if view.prefiltered else len(candidates(view.nodes) if nodes is None else nodes)
    return (quoted(said), *notes(said, requests, seen))


def pending_notes(pod: Object) -> tuple[str, ...]:
    """What else about a pending pod changes how to read the funnel."""
    found = []
    scheduler = text(spec(pod).get("schedulerName"))
    if scheduler and scheduler != _DEFAULT_SCHEDULER:
        found.append(
            f"the pod names schedulerName {scheduler}: kubewhy applies the default scheduler's rules, "
            f"and {scheduler} may add its own (queues, gangs, quotas)"
        )
    if meta(pod).get("deletionTimestamp") is not None:
        found.append("the pod is being deleted (metadata.deletionTimestamp is set)")
    return tuple(found)


def pod_state(pod: Object) -> PodState:
    phase = status(pod).get("phase")
    if phase == "Succeeded":
        return PodState.SUCCEEDED
    if phase == "Failed":
        return PodState.FAILED
    if phase == "Running" and condition_true(pod, "Ready"):
        return PodState.RUNNING
    return PodState.STARTING


def tolerations(taints: Sequence[Taint]) -> tuple[Snippet, ...]:
    """The tolerations that match these taints exactly, as YAML for the pod (template) spec. Condition
    taints and the cordon are left out: tolerating them hides a broken or drained node."""
    items = []
    for taint in taints:
        if taint.key.startswith(CONDITION_TAINTS) or not is_label_key(taint.key):
            continue
        if not is_label_value(taint.value):
            continue
        lines = [f"- key: {taint.key}"]
        if taint.value:
            lines += ["  operator: Equal", f"  value: {json.dumps(taint.value)}"]
        else:
            lines.append("  operator: Exists")
        lines.append(f"  effect: {taint.effect}")
        items.append("\n".join(lines))
    if not items:
        return ()
    return (
        Snippet(
            title="Tolerations to add under spec.tolerations of the pod (or of its Job/Deployment template)",
            language="yaml",
            text="tolerations:\n" + "\n".join(items) + "\n",
        ),
    )


def claim_devices(view: TriageView) -> Devices | None:
    return Devices(view.pod, view.dra) if asks_claims(view.pod) else None


def asks_lines(pod: Object, requests: Mapping[str, int], devices: Devices | None) -> tuple[str, ...]:
    """What the pod asks: its extended resources, and what its claims request."""
    lines = (request_line(pod, requests),) if requests else ()
    return lines + (dra_evidence.request_lines(devices) if devices is not None else ())


def phase(pod: Object) -> str:
    return text(status(pod).get("phase")) or "without a phase"
