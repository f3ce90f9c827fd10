"""The `gated` rung: kube-scheduler's SchedulingGates PreEnqueue (`schedulinggates/scheduling_gates.go`)
keeps a pod with `spec.schedulingGates` out of the queue; for Kueue's gate, its Workload says why.
"""

from __future__ import annotations

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.model import CAUSE_CHARS, Command, PodVerdict, clipped
from diagnosis.objects import Object, labels, name, namespace
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.evidence import asks_lines, claim_devices, scheduler_lines
from diagnosis.triage.fixes import UNCHECKED, Change
from diagnosis.triage.funnel import Advice, Answer, Seen
from diagnosis.triage.kueue import ADMISSION_GATE, QUEUE_LABEL, admission, not_admitted, workload_of
from diagnosis.triage.scheduling import gate_names


def gated(seen: Seen) -> Answer | None:
    view, requests = seen.view, seen.requests
    pod = view.pod
    gates = gate_names(pod)
    if not gates:
        return None
    kueue_says = not_admitted(pod, view.workloads) if ADMISSION_GATE in gates else ""
    # Kueue gates the pod at its creation (its webhook) and lifts the gate once its Workload is
    # admitted: with no Workload at all, no quota or queue is the cause, its integration is.
    orphan = ADMISSION_GATE in gates and workload_of(pod, view.workloads) is None and not any(view.unread)
    cause = (
        f"Kueue has not admitted its workload: {kueue_says}"
        if kueue_says
        else _no_workload(pod)
        if orphan
        else _gate_meaning(gates[0])
    )
    held = f"The pod is held by scheduling gate{'s' if len(gates) > 1 else ''} {', '.join(gates)}: {cause}"
    summary = clipped(held, CAUSE_CHARS)
    evidence = [
        *([held] if summary != held else []),
        *asks_lines(pod, requests, claim_devices(view)),
        f"spec.schedulingGates: {', '.join(gates)} (the scheduler skips the pod until the list is empty)",
        *(f"{g}: {_gate_meaning(g)}" for g in gates),
        *scheduler_lines(view, {}),
    ]
    ns, pod_name = namespace(pod), name(pod)
    queue = labels(pod).get(QUEUE_LABEL, "")
    if queue:
        evidence.append(f"Kueue queue: {queue} (label {QUEUE_LABEL})")
    kueue: tuple[Command | None, ...] = ()
    if ADMISSION_GATE in gates:
        said, kueue = admission(pod, view.workloads, view.queues, view.unread)
        evidence += said
    elif queue or any("kueue" in g.lower() for g in gates):
        kueue = (kubectl.kueue_workloads(ns),)
    commands = collect(pod_gates(ns, pod_name), *kueue)
    fixes = _ungate(ns, pod_name) if orphan else ()
    return Answer(PodVerdict.GATED, Advice(summary, commands=commands, fixes=fixes), tuple(evidence))


def _no_workload(pod: Object) -> str:
    kind, owner = workload(pod)
    return (
        f"Kueue made no Workload for it: its integration for {kind} {owner} is off, or it does not manage "
        f"namespace {namespace(pod)}"
    )


def _ungate(namespace: str, pod: str) -> tuple[Change, ...]:
    """Without a Workload nothing lifts Kueue's gate: removing it schedules the pod outside Kueue."""
    if not valid_names(namespace, pod):
        return ()
    remove = commands.kubectl(
        f"remove Kueue's gate from {namespace}/{pod}: the scheduler then places it, outside Kueue's quota",
        "patch",
        "pod",
        pod,
        "-n",
        namespace,
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/spec/schedulingGates"}]',
        changes=True,
    )
    return (
        Change(
            "enable Kueue's integration for the pod's kind and namespace, or remove its gate to schedule "
            f"it without Kueue: {UNCHECKED}",
            commands=(remove,),
            objects=(f"pod/{namespace}/{pod}",),
            checkable=False,
        ),
    )


def _gate_meaning(gate: str) -> str:
    if gate == ADMISSION_GATE:
        return "Kueue has not admitted the pod's workload yet (quota in its ClusterQueue, or queue order)"
    if gate == "kueue.x-k8s.io/topology":
        return "Kueue admitted the workload and has not yet assigned this pod its topology domain"
    if "kueue" in gate.lower():
        return "set by Kueue; its Workload's conditions say what it waits for"
    return "the controller that created the pod removes it when it is ready; the scheduler waits until then"


def pod_gates(namespace: str, pod: str) -> Command | None:
    return pod_jsonpath(namespace, pod, "{.spec.schedulingGates}", "the scheduling gates still on the pod")
