"""Evidence lines and snippets of `/triage` that read the pod or a node, not the funnel.

Each function turns fields into a sentence a person can check against `kubectl get -o yaml`; none of
them decides a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from diagnosis.model import PodState, Snippet
from diagnosis.names import is_label_key, is_label_value
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
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
from diagnosis.quantity import count
from diagnosis.triage.dra import evidence as dra_evidence
from diagnosis.triage.dra.claims import asks_claims
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.funnel import Ask, candidates, names
from diagnosis.triage.resources import containers, is_extended
from diagnosis.triage.scheduler_message import last_said, notes, quoted
from diagnosis.triage.scheduling import CORDON, Taint
from diagnosis.views import TriageView

CONDITION_TAINTS = "node.kubernetes.io/"
"""Taints the node lifecycle controller sets for a condition (not-ready, unreachable, pressure) and
for a cordon: the fix is the node, not a toleration."""

_DEFAULT_SCHEDULER = "default-scheduler"

_HARDWARE_LABELS = (
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.present",
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-tpu-accelerator",
)
"""Labels that describe the hardware, not what is allocatable (GPU Feature Discovery, the GPU
Operator, GKE): set beside allocatable 0 they say the devices exist but are not served."""


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
    if len(parts) <= 1:
        return f"the pod asks {asks}"
    how = (
        "the larger of its app containers plus sidecars, and each init container plus the sidecars "
        "before it" if inits else "the sum of its containers"
    )
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


def waiting_since(pod: Object) -> datetime | None:
    """Since when the pod has waited: for a pod not scheduled, since its PodScheduled condition turned
    False (else since it was created); for a placed pod not yet Running and Ready, since it was
    created; None for a pod that runs and is Ready, or has finished."""
    phase = status(pod).get("phase")
    if phase in ("Succeeded", "Failed") or (phase == "Running" and condition_true(pod, "Ready")):
        return None
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        since = timestamp(scheduled.get("lastTransitionTime"))
        if since is not None:
            return since
    return timestamp(meta(pod).get("creationTimestamp"))


def pod_state(pod: Object) -> PodState:
    phase = status(pod).get("phase")
    if phase == "Succeeded":
        return PodState.SUCCEEDED
    if phase == "Failed":
        return PodState.FAILED
    if phase == "Running" and condition_true(pod, "Ready"):
        return PodState.RUNNING
    return PodState.STARTING


def container_states(pod: Object) -> list[str]:
    """Each container's state as the kubelet reports it: `container cuda: running, ready, 3 restarts`,
    `init container warmup: waiting (ContainerCreating)`, `container main: terminated (Error, exit 1)`."""
    found = []
    for field, kind in (("initContainerStatuses", "init container"), ("containerStatuses", "container")):
        for item in map(mapping, sequence(status(pod).get(field))):
            state = mapping(item.get("state"))
            words = []
            if running := mapping(state.get("running")):
                since = text(running.get("startedAt"))
                words.append(f"running since {since}" if since else "running")
            elif waiting := mapping(state.get("waiting")):
                words.append(f"waiting ({text(waiting.get('reason')) or 'no reason given'})")
            elif terminated := mapping(state.get("terminated")):
                code = terminated.get("exitCode")
                words.append(f"terminated ({text(terminated.get('reason')) or 'no reason'}, exit {code})")
            else:
                words.append("no state reported yet")
            if kind == "container":
                words.append("ready" if item.get("ready") is True else "not ready")
            restarts = item.get("restartCount")
            if isinstance(restarts, int) and restarts:
                words.append(f"{restarts} restart{'s' if restarts > 1 else ''}")
            found.append(f"{kind} {text(item.get('name'))}: {', '.join(words)}")
    return found


def pod_problems(pod: Object) -> list[str]:
    """What holds a placed pod: a kubelet rejection (`UnexpectedAdmissionError`, `OutOfnvidia.com/gpu`)
    or a container that cannot start."""
    found = []
    pod_status = status(pod)
    reason, message = text(pod_status.get("reason")), text(pod_status.get("message"))
    if reason or message:
        found.append(f"{reason}: {message}" if reason and message else reason or message)
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(pod_status.get(field))):
            waiting = mapping(mapping(item.get("state")).get("waiting"))
            why = text(waiting.get("reason"))
            if why and why not in ("ContainerCreating", "PodInitializing"):
                said = text(waiting.get("message"))
                detail = f": {said}" if said else ""
                found.append(f"container {text(item.get('name'))} waiting: {why}{detail}")
    return found


def zero_asks(pod: Object) -> list[str]:
    """Extended resources written with 0: they read like a request and are none."""
    found = []
    for field in ("initContainers", "containers"):
        for item in map(mapping, sequence(spec(pod).get(field))):
            resources = mapping(item.get("resources"))
            for kind in ("limits", "requests"):
                for resource, value in mapping(resources.get(kind)).items():
                    if isinstance(resource, str) and is_extended(resource) and count(value) == 0:
                        found.append(f"container {text(item.get('name'))} sets {kind} {resource}: {value}")
    return found


def visible_devices(pod: Object) -> list[str]:
    """NVIDIA_VISIBLE_DEVICES in a pod that asks for no GPU: with the nvidia runtime as the default
    it can see GPUs the scheduler counts as free for others."""
    found = []
    for item in map(mapping, sequence(spec(pod).get("containers"))):
        for env in map(mapping, sequence(item.get("env"))):
            if env.get("name") == "NVIDIA_VISIBLE_DEVICES":
                found.append(
                    f"container {text(item.get('name'))} sets "
                    f"NVIDIA_VISIBLE_DEVICES={text(env.get('value'))}: "
                    "it may see GPUs the scheduler gives to other pods"
                )
    return found


def label_inventory(key: str, nodes: Sequence[Object]) -> str:
    """`label K on the 9 nodes: a ×3, (absent) ×3, b ×2`: what the nodes have for a selected key."""
    counts: dict[str, int] = {}
    for node in nodes:
        value = labels(node).get(key)
        shown = "(absent)" if value is None else value or '""'
        counts[shown] = counts.get(shown, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"{value} ×{n}" for value, n in ranked[:6])
    more = f", and {len(ranked) - 6} other values" if len(ranked) > 6 else ""
    return f"label {key} on the {len(nodes)} node{'' if len(nodes) == 1 else 's'}: {listed}{more}"


def hardware_labels(node: Object) -> str:
    """The node's hardware labels, against its allocatable 0; empty when it has none."""
    said = {k: v for k, v in labels(node).items() if k in _HARDWARE_LABELS}
    if not said:
        return ""
    shown = ", ".join(f"{k}={v}" for k, v in sorted(said.items()))
    return f"{name(node)} labels say the hardware is there: {shown}"


def held_lines(ask: Ask, nodes: Sequence[Object]) -> tuple[str, ...]:
    """What the holders of the devices (`funnel.holdings`, grouped by workload) do not say: the pods
    nominated on a node, which the scheduler counts there before they are bound, and the nodes whose
    pods hold more than is allocatable, grouped."""
    nominated = [
        f"{h.namespace}/{h.name} on {name(n)} ("
        + ", ".join(f"{r} ×{v}" for r, v in h.requests.items() if r in ask.requests)
        + ")"
        for n in nodes
        for h in ask.holders.get(name(n), ())
        if h.nominated and any(h.requests.get(r) for r in ask.requests)
    ]
    lines = []
    if nominated:
        lines.append(
            "nominated there, not bound yet, of this pod's priority or more (the scheduler counts them "
            f"first): {names(nominated)}"
        )
    over: dict[tuple[str, int, int], list[str]] = {}
    for node in nodes:
        for resource in ask.requests:
            used, allocatable = ask.used(name(node), resource), ask.offer(node, resource).allocatable
            if used > allocatable:
                over.setdefault((resource, used, allocatable), []).append(name(node))
    lines += [
        f"{names(on)}: {'its pods hold' if len(on) == 1 else 'the pods on each hold'} {used} {resource} "
        f"but only {allocatable} is allocatable: devices went unhealthy while held, and still count "
        "until those pods end"
        for (resource, used, allocatable), on in over.items()
    ]
    return tuple(lines)


def taint_words(taint: Taint) -> str:
    return f"cordoned ({CORDON})" if taint == CORDON else f"untolerated taint {taint}"


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


def request_snippet(resource: str) -> Snippet:
    return Snippet(
        title=f"To get a device, ask for it in the limits of each container that needs it ({resource} here)",
        language="yaml",
        text=f"resources:\n  limits:\n    {resource}: 1\n",
    )


def claim_devices(view: TriageView) -> Devices | None:
    return Devices(view.pod, view.dra) if asks_claims(view.pod) else None


def asks_lines(pod: Object, requests: Mapping[str, int], devices: Devices | None) -> tuple[str, ...]:
    """What the pod asks: its extended resources, and what its claims request."""
    lines = (request_line(pod, requests),) if requests else ()
    return lines + (dra_evidence.request_lines(devices) if devices is not None else ())


def phase(pod: Object) -> str:
    return text(status(pod).get("phase")) or "without a phase"
