"""How objects point at one another: owners, the JobSet label, the node a pod holds.

Snapshot and live readers both pick a question's objects with these, so a snapshot and the cluster it
was taken from put the same objects in a view.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from diagnosis.objects import (
    Object,
    condition_true,
    kind,
    mapping,
    meta,
    name,
    sequence,
    spec,
    status,
    text,
    timestamp,
    uid,
)

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
"""Set by the JobSet controller on its child Jobs and their pods."""


NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
"""The field selector of pods that are not terminal (see `is_terminal`), for the API and for kubectl."""


def node_name(pod: Object) -> str:
    """The node the pod is bound to, or "" while it is not scheduled."""
    return text(spec(pod).get("nodeName"))


def nominated_node(pod: Object) -> str:
    """The node the scheduler nominated for an unbound pod after preempting pods there, or ""."""
    return "" if spec(pod).get("nodeName") else text(status(pod).get("nominatedNodeName"))


ENDED = ("Succeeded", "Failed")
"""The phases of a pod that will not run again and holds no resources on its node."""


def is_terminal(pod: Object) -> bool:
    """Succeeded or Failed (`ENDED`)."""
    return status(pod).get("phase") in ENDED


def holds_node(pod: Object) -> bool:
    """The pod is bound to a node and counts against its allocatable, as the scheduler counts it:
    every phase but Succeeded/Failed, terminating pods included."""
    return bool(node_name(pod)) and not is_terminal(pod)


def owned_by(obj: Object, owner: Object) -> bool:
    """`obj` lists `owner` in its ownerReferences: by uid when both have one, else by kind and name
    (an object created in another snapshot or restored from a backup keeps the names, not the uids)."""
    for ref in map(mapping, sequence(meta(obj).get("ownerReferences"))):
        ref_uid = text(ref.get("uid"))
        if ref_uid and uid(owner):
            if ref_uid == uid(owner):
                return True
        elif text(ref.get("kind")) == kind(owner) and text(ref.get("name")) == name(owner):
            return True
    return False


def is_pending(pod: Object) -> bool:
    """Not bound to a node yet, and not ended: the scheduler still has to place it."""
    return not node_name(pod) and status(pod).get("phase") == "Pending"


def waiting_since(pod: Object, lifted: datetime | None = None) -> datetime | None:
    """Since when the pod has waited to run: None once it runs and is Ready, or has ended; else since
    it was created, or since its scheduling gates were lifted (`lifted`, as the gates' owner records
    it: Kueue's Workload admitted) when that is later and no gate is left. The PodScheduled
    condition's lastTransitionTime is not the start of the wait: the scheduler may write it at any
    attempt. The CLI, Slack and the sentinel all use this."""
    phase = status(pod).get("phase")
    if phase in ("Succeeded", "Failed") or (phase == "Running" and condition_true(pod, "Ready")):
        return None
    created = timestamp(meta(pod).get("creationTimestamp"))
    if lifted is not None and not node_name(pod) and not spec(pod).get("schedulingGates"):
        return max(lifted, created) if created is not None else lifted
    return created


LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
"""Set by the LeaderWorkerSet controller on its pods."""

POD_TEMPLATE_HASH = "pod-template-hash"
"""Set by the Deployment controller on a ReplicaSet's pods; the ReplicaSet is named DEPLOYMENT-HASH."""


def controller_ref(obj: Object) -> Mapping[str, Any] | None:
    """The owner reference of the object's controller, else its first one; None when it has none. (A
    loop: it is read for thousands of pods.)"""
    first = None
    for ref in sequence(meta(obj).get("ownerReferences")):
        found = mapping(ref)
        if found.get("controller") is True:
            return found
        if first is None:
            first = found
    return first


def workload(pod: Object) -> tuple[str, str]:
    """(kind, name) of what runs the pod, as an on-call names it: its JobSet (the label its Jobs'
    pods carry), the Deployment of its ReplicaSet (named from the pod's `pod-template-hash`, without
    reading the ReplicaSet), else its controller (Job, StatefulSet, DaemonSet, …), else the pod. A
    LeaderWorkerSet's pods are its own (`leaderworkerset.sigs.k8s.io/name`)."""
    pod_meta = meta(pod)
    pod_labels = mapping(pod_meta.get("labels"))
    if jobset := text(pod_labels.get(JOBSET_NAME_LABEL)):
        return "JobSet", jobset
    if lws := text(pod_labels.get(LWS_NAME_LABEL)):
        return "LeaderWorkerSet", lws
    owner = controller_ref(pod)
    if owner is None:
        return "Pod", name(pod)
    owner_kind, owner_name = text(owner.get("kind")), text(owner.get("name"))
    suffix = f"-{text(pod_labels.get(POD_TEMPLATE_HASH))}"
    if owner_kind == "ReplicaSet" and len(suffix) > 1 and owner_name.endswith(suffix):
        return "Deployment", owner_name.removesuffix(suffix)
    return owner_kind, owner_name
