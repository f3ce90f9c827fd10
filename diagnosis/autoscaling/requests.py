"""Capacity asked for ahead of the pod: the ProvisioningRequest its annotation names
(`autoscaling.x-k8s.io/v1`; conditions `Accepted`, `Provisioned`, `Failed`, `BookingExpired`,
`CapacityRevoked`), and the admission checks of its Kueue Workload (`Pending`, `Retry`, `Ready`,
`Rejected`; kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`). cluster-autoscaler never scales up
for a pod that consumes a ProvisioningRequest: the request decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from diagnosis import objects
from diagnosis.autoscaling.said import KUEUE, PROVISIONING_REQUEST, Said
from diagnosis.model import NodeComing
from diagnosis.objects import (
    Object,
    condition,
    name,
    namespace,
    sequence,
    status,
    text,
    timestamp,
)
from diagnosis.triage.kueue import workload_of

CONSUMES = (
    "autoscaling.x-k8s.io/consume-provisioning-request",
    "cluster-autoscaler.kubernetes.io/consume-provisioning-request",
)
"""The pod annotation naming the ProvisioningRequest it consumes (the second deprecated, still read)."""

_ENDED = ("Failed", "CapacityRevoked", "BookingExpired")


def consumed(pod: Object) -> str:
    """The name of the ProvisioningRequest the pod consumes, or ""."""
    return next((objects.annotations(pod)[key] for key in CONSUMES if objects.annotations(pod).get(key)), "")


def provisioning(pod: Object, found: Iterable[Object]) -> Said | None:
    """The consumed ProvisioningRequest's word, or None when the pod names none."""
    wanted = consumed(pod)
    if not wanted:
        return None
    ref = f"ProvisioningRequest {namespace(pod)}/{wanted}"
    request = next((r for r in found if name(r) == wanted and namespace(r) == namespace(pod)), None)
    if request is None:
        line = f"No node will come: the pod consumes {ref}, which does not exist"
        return Said(NodeComing.NOT_COMING, PROVISIONING_REQUEST, None, "", line)
    for type_ in _ENDED:
        said = condition(request, type_)
        if said is not None and said.get("status") == "True":
            return _said(NodeComing.FAILED, said, f"{ref} is {type_}", "Scale-up failed {ago}: ")
    provisioned, accepted = condition(request, "Provisioned"), condition(request, "Accepted")
    if provisioned is not None and provisioned.get("status") == "True":
        return _said(NodeComing.COMING, provisioned, f"{ref} is Provisioned", "Node: coming — ", ", {ago}")
    if accepted is not None and accepted.get("status") == "True":
        waits = provisioned if provisioned is not None else accepted
        return _said(
            NodeComing.QUEUED,
            waits,
            f"{ref} is accepted and waits for capacity",
            "Node: queued — ",
            ", {ago}",
        )
    line = f"Node: unknown — {ref} is not accepted yet"
    return Said(NodeComing.UNKNOWN, PROVISIONING_REQUEST, None, "", line)


def _said(state: NodeComing, said: Mapping[str, Any], what: str, before: str, after: str = "") -> Said:
    reason, words = text(said.get("reason")), text(said.get("message"))
    quote = f"{reason}: {words}" if reason and words else reason or words
    line = (
        f"{before}{what}"
        + (f" ({words.rstrip('.')})" if words and state is not NodeComing.COMING else "")
        + after
    )
    return Said(state, PROVISIONING_REQUEST, timestamp(said.get("lastTransitionTime")), quote, line)


def admission_checks(pod: Object, workloads: Iterable[Object]) -> Iterator[Said]:
    """The pod's Kueue Workload's admission checks that hold it: Pending or Retry (queued),
    Rejected (failed)."""
    workload = workload_of(pod, workloads)
    if workload is None:
        return
    for check in sequence(status(workload).get("admissionChecks")):
        state, words = text(check.get("state")), text(check.get("message"))
        since = timestamp(check.get("lastTransitionTime"))
        what = f"Kueue admission check {text(check.get('name'))} is {state}"
        quote = f"{what}: {words.rstrip('.')}" if words else what
        if state in ("Pending", "Retry"):
            yield Said(NodeComing.QUEUED, KUEUE, since, quote, f"Node: queued — {quote}, {{ago}}")
        elif state == "Rejected":
            yield Said(NodeComing.FAILED, KUEUE, since, quote, f"Scale-up failed {{ago}}: {quote}")
