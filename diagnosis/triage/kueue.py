"""Why Kueue holds a pod gated by `kueue.x-k8s.io/admission`: its Workload's admission conditions.

Kueue creates one Workload per pod (or pod group), owned by the pod, and writes why it is not
admitted into the Workload's `QuotaReserved` condition (reason `Pending` or `Inadmissible`, the
flavor assigner's message: `couldn't assign flavors to pod set main: insufficient unused quota for
nvidia.com/gpu in flavor h100, 8 more needed`); `Admitted` is absent until it was once admitted
(kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`, `pkg/scheduler/flavorassigner`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from diagnosis.model import Command
from diagnosis.objects import (
    Object,
    condition,
    labels,
    mapping,
    name,
    namespace,
    sequence,
    spec,
    status,
    text,
    timestamp,
)
from diagnosis.relations import owned_by
from diagnosis.triage import commands as kubectl

ADMISSION_GATE = "kueue.x-k8s.io/admission"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def workload_of(pod: Object, workloads: Iterable[Object]) -> Object | None:
    """The Workload Kueue made for the pod: in its namespace, owned by it."""
    return next((w for w in workloads if namespace(w) == namespace(pod) and owned_by(w, pod)), None)


def admitted_at(pod: Object, workloads: Iterable[Object]) -> datetime | None:
    """When Kueue admitted the pod's Workload (its `Admitted` condition turned True), which is when it
    lifted the pod's admission gate; None when it is not admitted."""
    found = workload_of(pod, workloads)
    admitted = condition(found, "Admitted") if found is not None else None
    if admitted is None or admitted.get("status") != "True":
        return None
    return timestamp(admitted.get("lastTransitionTime"))


def cluster_queue(pod: Object, queue: str, queues: Iterable[Object]) -> str:
    """The ClusterQueue of the LocalQueue `queue` in the pod's namespace (`spec.clusterQueue`), or ""."""
    local = next((q for q in queues if namespace(q) == namespace(pod) and name(q) == queue), None)
    return text(spec(local).get("clusterQueue")) if local is not None else ""


def not_admitted(pod: Object, workloads: Iterable[Object]) -> str:
    """Kueue's own words on why the pod's Workload is not admitted (its QuotaReserved or Admitted
    condition's message, when it is not True), or ""."""
    found = workload_of(pod, workloads)
    for type_ in ("QuotaReserved", "Admitted"):
        said = condition(found, type_) if found is not None else None
        if said is not None and said.get("status") != "True" and text(said.get("message")):
            return text(said.get("message"))
    return ""


def admission(
    pod: Object, workloads: Iterable[Object], queues: Iterable[Object], unread: Iterable[str]
) -> tuple[list[str], tuple[Command | None, ...]]:
    """Evidence lines and commands on why Kueue has not admitted the pod's workload."""
    ns = namespace(pod)
    queue = labels(pod).get(QUEUE_LABEL, "")
    found = workload_of(pod, workloads)
    evidence = [*unread]
    commands: tuple[Command | None, ...] = (kubectl.kueue_workloads(ns),)
    if found is None:
        if not any(unread):
            evidence.append(
                f"no Kueue Workload in {ns} is owned by the pod: Kueue has not made one yet (is its pod "
                "integration enabled and the namespace selected by its managedJobsNamespaceSelector?)"
            )
        return evidence, commands
    workload = name(found)
    queued = text(spec(found).get("queueName")) or queue
    evidence.append(f"Kueue Workload {workload}" + (f" in LocalQueue {queued}" if queued else ""))
    for type_ in ("QuotaReserved", "Admitted"):
        evidence.append(_condition_line(type_, condition(found, type_)))
    admitted = mapping(status(found).get("admission"))
    in_queue = text(admitted.get("clusterQueue"))
    if in_queue:
        evidence.append(f"ClusterQueue {in_queue}: {_flavors(admitted)}")
    elif queued and (in_queue := cluster_queue(pod, queued, queues)):
        evidence.append(
            f"ClusterQueue {in_queue} (LocalQueue {queued}'s spec.clusterQueue): its quota per flavor "
            "is what the message above measures against"
        )
    commands = (kubectl.kueue_workload(ns, workload), kubectl.kueue_cluster_queue(in_queue), *commands)
    return evidence, commands


def _condition_line(type_: str, found: Mapping[str, Any] | None) -> str:
    if found is None:
        if type_ == "Admitted":
            return "Admitted: not set (written once the quota is reserved and every admission check is Ready)"
        return f"{type_}: not set (Kueue has not evaluated the workload yet)"
    reason, message = text(found.get("reason")), text(found.get("message"))
    return f"{type_}={text(found.get('status'))}" + (f" {reason}" if reason else "") + (
        f': "{message}"' if message else ""
    )


def _flavors(admitted: object) -> str:
    """`main: nvidia.com/gpu in h100, cpu in default` from `status.admission.podSetAssignments`."""
    parts = []
    for assignment in map(mapping, sequence(mapping(admitted).get("podSetAssignments"))):
        flavors = ", ".join(f"{r} in {text(f)}" for r, f in mapping(assignment.get("flavors")).items())
        parts.append(f"{text(assignment.get('name'))}: {flavors or 'no flavors'}")
    return "; ".join(parts) or "no pod set assigned"
