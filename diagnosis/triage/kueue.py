"""Why Kueue holds a pod gated by `kueue.x-k8s.io/admission`: its Workload's admission conditions.

Kueue creates one Workload per pod (or pod group), owned by the pod, and writes why it is not
admitted into the Workload's `QuotaReserved` condition (reason `Pending` or `Inadmissible`, the
flavor assigner's message: `couldn't assign flavors to pod set main: insufficient unused quota for
nvidia.com/gpu in flavor h100, 8 more needed`); `Admitted` is absent until it was once admitted
(kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`, `pkg/scheduler/flavorassigner`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Any

from diagnosis.model import Command
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
    kind,
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
from diagnosis.quantity import exact
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


def local_queue(pod: Object, queue: str, queues: Iterable[Object]) -> Object | None:
    """The LocalQueue `queue` in the pod's namespace, when it was read."""
    ns = namespace(pod)
    return next(
        (q for q in queues if kind(q) == "LocalQueue" and namespace(q) == ns and name(q) == queue), None
    )


def cluster_queue(pod: Object, queue: str, queues: Iterable[Object]) -> str:
    """The ClusterQueue of the LocalQueue `queue` in the pod's namespace (`spec.clusterQueue`), or ""."""
    local = local_queue(pod, queue, queues)
    return text(spec(local).get("clusterQueue")) if local is not None else ""


@dataclass(frozen=True)
class Short:
    """A resource a ClusterQueue has too little nominal quota of for a Workload, in the first flavor
    that covers it (Kueue's flavor assigner tries them in order: `pkg/scheduler/flavorassigner`)."""

    cluster_queue: str
    resource: str
    flavor: str
    nominal: Decimal
    reserved: Decimal
    asked: Decimal
    path: str
    """The JSON pointer to that flavor's `nominalQuota` in the ClusterQueue's spec."""
    cohort: str

    @property
    def needed(self) -> Decimal:
        return self.reserved + self.asked


def quantity_text(amount: Decimal) -> str:
    """A quantity as Kubernetes writes it: a whole number as it is, a fraction in thousandths."""
    if amount == amount.to_integral_value():
        return str(int(amount))
    return f"{int((amount * 1000).to_integral_value(rounding=ROUND_CEILING))}m"


def short_of_quota(pod: Object, workloads: Iterable[Object], queues: Iterable[Object]) -> tuple[Short, ...]:
    """The resources the pod's Workload asks that no flavor of its ClusterQueue has room for within
    its nominal quota: what is reserved there (`status.flavorsReservation`) plus what the Workload asks
    (`status.resourceRequests`, each pod set's total) exceeds `nominalQuota` in every flavor covering
    the resource. Empty when the ClusterQueue was not read, or the Workload is admitted."""
    found = workload_of(pod, workloads)
    name_ = cluster_queue(pod, labels(pod).get(QUEUE_LABEL, "") or text(spec(found).get("queueName")), queues)
    queue = next((q for q in queues if kind(q) == "ClusterQueue" and name(q) == name_), None)
    if found is None or queue is None or condition_true(found, "QuotaReserved"):
        return ()
    asked: dict[str, Decimal] = {}
    for entry in map(mapping, sequence(status(found).get("resourceRequests"))):
        for resource, amount in mapping(entry.get("resources")).items():
            asked[resource] = asked.get(resource, Decimal(0)) + (exact(amount) or Decimal(0))
    reserved = {
        (text(f.get("name")), text(r.get("name"))): exact(r.get("total")) or Decimal(0)
        for f in map(mapping, sequence(status(queue).get("flavorsReservation")))
        for r in map(mapping, sequence(f.get("resources")))
    }
    shorts = []
    for resource, amount in sorted(asked.items()):
        room = [
            Short(
                name_,
                resource,
                text(flavor.get("name")),
                exact(quota.get("nominalQuota")) or Decimal(0),
                reserved.get((text(flavor.get("name")), resource), Decimal(0)),
                amount,
                f"/spec/resourceGroups/{g}/flavors/{f}/resources/{r}/nominalQuota",
                text(spec(queue).get("cohort")),
            )
            for g, group in enumerate(map(mapping, sequence(spec(queue).get("resourceGroups"))))
            for f, flavor in enumerate(map(mapping, sequence(group.get("flavors"))))
            for r, quota in enumerate(map(mapping, sequence(flavor.get("resources"))))
            if text(quota.get("name")) == resource
        ]
        if room and all(s.needed > s.nominal for s in room):
            shorts.append(room[0])
    return tuple(shorts)


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
    return (
        f"{type_}={text(found.get('status'))}"
        + (f" {reason}" if reason else "")
        + (f': "{message}"' if message else "")
    )


def _flavors(admitted: object) -> str:
    """`main: nvidia.com/gpu in h100, cpu in default` from `status.admission.podSetAssignments`."""
    parts = []
    for assignment in map(mapping, sequence(mapping(admitted).get("podSetAssignments"))):
        flavors = ", ".join(f"{r} in {text(f)}" for r, f in mapping(assignment.get("flavors")).items())
        parts.append(f"{text(assignment.get('name'))}: {flavors or 'no flavors'}")
    return "; ".join(parts) or "no pod set assigned"
