"""The `gated` rung: kube-scheduler's SchedulingGates PreEnqueue (`schedulinggates/scheduling_gates.go`)
keeps a pod with `spec.schedulingGates` out of the queue; for Kueue's gate, its Workload says why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.model import CAUSE_CHARS, Command, PodVerdict, clipped
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, condition_true, labels, name, namespace
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.evidence import asks_lines, claim_devices, scheduler_lines
from diagnosis.triage.fixes import UNCHECKED, Change
from diagnosis.triage.funnel import Advice, Answer, Seen
from diagnosis.triage.kueue import (
    ADMISSION_GATE,
    QUEUE_LABEL,
    Short,
    admission,
    local_queue,
    not_admitted,
    quantity_text,
    short_of_quota,
    workload_of,
)
from diagnosis.triage.scheduling import gate_names
from diagnosis.views import TriageView


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
    kueues = any("kueue" in g.lower() for g in gates)
    kueue: tuple[Command | None, ...] = ()
    if ADMISSION_GATE in gates:
        said, kueue = admission(pod, view.workloads, view.queues, view.unread)
        evidence += said
    elif queue or kueues:
        kueue = (kubectl.kueue_workloads(ns),)
    commands = collect(pod_gates(ns, pod_name), *kueue)
    fixes = _fixes(view, gates, orphan, kueues)
    return Answer(PodVerdict.GATED, Advice(summary, commands=commands, fixes=fixes), tuple(evidence))


def _fixes(view: TriageView, gates: Sequence[str], orphan: bool, kueues: bool) -> tuple[Change, ...]:
    """Kueue's gate with no Workload: its integration, else the gate removed; with a Workload: its
    queue and quota. Another controller's gate: removed, where that controller is gone. Kueue's
    other gates (topology) are Kueue's to lift."""
    ns, pod_name = namespace(view.pod), name(view.pod)
    if orphan:
        return (_integration(view.pod), *_ungate(ns, pod_name, KUEUE_UNGATED))
    if ADMISSION_GATE in gates:
        return () if any(view.unread) else _queue_fixes(view)
    return () if kueues else _ungate(ns, pod_name, _others_ungated(gates))


KUEUE_CONFIG = ("kueue-system", "kueue-manager-config", "kueue-controller-manager")
"""Kueue's namespace, the ConfigMap of its configuration and its Deployment, as its release manifests
and Helm chart install them (`config/components/manager`)."""


def _integration(pod: Object) -> Change:
    """No Workload for a pod Kueue gated: say which of the two it is. A pod that names its queue is
    not managed by Kueue's controller (its integration for the pod's kind, or its namespace, is left
    out of Kueue's configuration); one that names none is only queued once it does."""
    kind, owner = workload(pod)
    ns, queue = namespace(pod), labels(pod).get(QUEUE_LABEL, "")
    where_ = f"{kind} {owner}'s pod template" if kind != "Pod" else "the pod"
    if not queue:
        summary = f"label {where_} {QUEUE_LABEL} with a LocalQueue of {ns}: Kueue queues only what names one"
        steps, touched = collect(_local_queues(ns)), (f"pod/{ns}/{name(pod)}",)
        return Change(f"{summary}: {UNCHECKED}", commands=steps, objects=touched, checkable=False)
    config_ns, config, manager = KUEUE_CONFIG
    summary = (
        f"enable Kueue's integration for {kind} pods, or select namespace {ns} in its "
        "managedJobsNamespaceSelector; then restart Kueue"
    )
    steps = collect(
        commands.kubectl(
            "Kueue's configuration: integrations.frameworks and managedJobsNamespaceSelector (its default "
            "namespace and name)",
            "get",
            "configmaps",
            "-n",
            config_ns,
            "--field-selector",
            f"metadata.name={config}",
            "-o",
            "yaml",
        ),
        commands.kubectl(
            "restart Kueue once its configuration is changed: it reads it at start",
            "rollout",
            "restart",
            "deployment",
            manager,
            "-n",
            config_ns,
            changes=True,
        ),
    )
    touched = (f"pod/{ns}/{name(pod)}",)
    return Change(f"{summary}: {UNCHECKED}", commands=steps, objects=touched, checkable=False)


def _queue_fixes(view: TriageView) -> tuple[Change, ...]:
    """Kueue has the pod's Workload and does not admit it: the LocalQueue its label names does not
    exist, or its ClusterQueue's nominal quota is short of what is reserved plus what it asks."""
    pod = view.pod
    ns, queue = namespace(pod), labels(pod).get(QUEUE_LABEL, "")
    found = workload_of(pod, view.workloads)
    if found is None or condition_true(found, "QuotaReserved"):
        return ()
    if queue and local_queue(pod, queue, view.queues) is None:
        summary = f"create LocalQueue {queue} in {ns} for a ClusterQueue, or name an existing one instead"
        steps = collect(_local_queues(ns), _cluster_queues())
        touched = (f"workload/{ns}/{name(found)}",)
        return (Change(f"{summary}: {UNCHECKED}", commands=steps, objects=touched, checkable=False),)
    return tuple(_raise_quota(short) for short in short_of_quota(pod, view.workloads, view.queues)[:1])


def _raise_quota(short: Short) -> Change:
    """Raise the ClusterQueue's nominal quota to what is reserved plus what the Workload asks."""
    new = quantity_text(short.needed)
    borrow = f"or let it borrow from cohort {short.cohort}" if short.cohort else "or borrow in a cohort"
    summary = (
        f"raise ClusterQueue {short.cluster_queue}'s nominalQuota of {short.resource} in flavor "
        f"{short.flavor} from {quantity_text(short.nominal)} to {new}, {borrow}"
    )
    patch = json.dumps([{"op": "replace", "path": short.path, "value": new}], separators=(",", ":"))
    steps = collect(
        kubectl.kueue_cluster_queue(short.cluster_queue),
        commands.kubectl(
            f"give ClusterQueue {short.cluster_queue} {new} {short.resource} in flavor {short.flavor}",
            "patch",
            "clusterqueue",
            short.cluster_queue,
            "--type=json",
            "-p",
            patch,
            changes=True,
        )
        if is_dns1123_subdomain(short.cluster_queue)
        else None,
    )
    touched = (f"clusterqueue/{short.cluster_queue}",)
    return Change(f"{summary}: {UNCHECKED}", commands=steps, objects=touched, checkable=False)


def _local_queues(namespace: str) -> Command | None:
    if not valid_names(namespace):
        return None
    return commands.kubectl(
        f"the LocalQueues of {namespace} and the ClusterQueue each points to",
        "get",
        "localqueues.kueue.x-k8s.io",
        "-n",
        namespace,
    )


def _cluster_queues() -> Command:
    return commands.kubectl(
        "the ClusterQueues a LocalQueue may point to", "get", "clusterqueues.kueue.x-k8s.io"
    )


def _no_workload(pod: Object) -> str:
    kind, owner = workload(pod)
    return (
        f"Kueue made no Workload for it: its integration for {kind} {owner} is off, or it does not manage "
        f"namespace {namespace(pod)}"
    )


KUEUE_UNGATED = (
    "remove Kueue's gate to schedule it outside Kueue's quota",
    "remove Kueue's gate from {pod}: the scheduler then places it, outside Kueue's quota",
)
"""Without a Workload nothing lifts Kueue's gate: removing it schedules the pod outside Kueue."""


def _others_ungated(gates: Sequence[str]) -> tuple[str, str]:
    """A gate of another controller is lifted by that controller once what the pod waits for is ready;
    removed by hand, the pod starts without it: only where the controller is gone or stuck."""
    them = f"gate{'s' if len(gates) > 1 else ''} {', '.join(gates)}"
    return (
        f"remove {them} only if the controller that lifts {'them' if len(gates) > 1 else 'it'} is gone or "
        "stuck (the pod then starts without what it waits for)",
        f"remove {them} from {{pod}}: the scheduler then places it, whatever the gate waited for",
    )


def _ungate(namespace: str, pod: str, said: tuple[str, str]) -> tuple[Change, ...]:
    """Every scheduling gate removed from the pod (the one change the API allows to them): `said`, the
    fix's summary and its command's comment (`{pod}` in it, the pod)."""
    if not valid_names(namespace, pod):
        return ()
    summary, comment = said
    remove = commands.kubectl(
        comment.format(pod=f"{namespace}/{pod}"),
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
            f"{summary}: {UNCHECKED}",
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
