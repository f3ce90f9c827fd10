"""Which workload a pod belongs to, and how it ranks for preemption.

A pod's top owner is read from the pod alone, through its ownerReferences and the labels its
controllers set, so holders can be grouped without reading ReplicaSets or Jobs: a pod of a Job of a
JobSet is the JobSet's (`jobset.sigs.k8s.io/jobset-name`), a pod of a LeaderWorkerSet is the LWS's
(`leaderworkerset.sigs.k8s.io/name`), a pod of a ReplicaSet that a Deployment made is the
Deployment's (the ReplicaSet is named `<deployment>-<pod-template-hash>`).
"""

from __future__ import annotations

from typing import NamedTuple

from diagnosis.objects import Object, meta, spec, text
from diagnosis.relations import JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH, workload

OWNER_LABELS = (JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH)
"""The labels `top_owner` reads (a copy of a pod that keeps them keeps its owner)."""


class Owner(NamedTuple):
    """A workload (a tuple: the fixes work out the owner of thousands of pods, and file them by it)."""

    kind: str
    """`JobSet`, `LeaderWorkerSet`, `Deployment`, `StatefulSet`, `Job`, … or `Pod` for a bare pod."""
    name: str


OwnersSeen = dict[tuple[int, int], Owner]
"""`top_owner` by the identity of the owner references and labels it was read from."""


def top_owner(pod: Object, seen: OwnersSeen | None = None) -> Owner:
    """The workload the pod belongs to (`diagnosis.relations.workload`). `seen`: what was read of the
    owner references and labels met already, by their identity, for pods that share both objects (a
    workload's pods, as `cluster.compact` keeps them); whoever keeps it keeps those objects alive. A
    pod with no owner reference is its own workload: it is never looked up there."""
    if seen is None:
        return Owner(*workload(pod))
    pod_meta = meta(pod)
    refs = pod_meta.get("ownerReferences")
    if type(refs) is not list or not refs:
        return Owner(*workload(pod))
    key = (id(refs), id(pod_meta.get("labels")))
    found = seen.get(key)
    if found is None:
        found = seen[key] = Owner(*workload(pod))
    return found


def priority(pod: Object) -> int:
    """`spec.priority`, which the priority admission plugin fills from the PriorityClass (0 without)."""
    value = spec(pod).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def priority_class(pod: Object) -> str:
    return text(spec(pod).get("priorityClassName"))


def preempts_below(pod: Object) -> int | None:
    """The priority below which the scheduler may evict other pods for this one, or None when its
    preemptionPolicy is `Never` (kube-scheduler `defaultpreemption`: `PodEligibleToPreemptOthers`,
    and victims of strictly lower priority)."""
    return None if spec(pod).get("preemptionPolicy") == "Never" else priority(pod)
