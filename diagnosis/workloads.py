"""Which workload a pod belongs to, and how it ranks for preemption.

A pod's top owner is read from the pod alone, through its ownerReferences and the labels its
controllers set, so holders can be grouped without reading ReplicaSets or Jobs: a pod of a Job of a
JobSet is the JobSet's (`jobset.sigs.k8s.io/jobset-name`), a pod of a LeaderWorkerSet is the LWS's
(`leaderworkerset.sigs.k8s.io/name`), a pod of a ReplicaSet that a Deployment made is the
Deployment's (the ReplicaSet is named `<deployment>-<pod-template-hash>`).
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.objects import Object, spec, text
from diagnosis.relations import JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH, workload

OWNER_LABELS = (JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH)
"""The labels `top_owner` reads (a copy of a pod that keeps them keeps its owner)."""


@dataclass(frozen=True)
class Owner:
    kind: str
    """`JobSet`, `LeaderWorkerSet`, `Deployment`, `StatefulSet`, `Job`, … or `Pod` for a bare pod."""
    name: str


def top_owner(pod: Object) -> Owner:
    """The workload the pod belongs to (`diagnosis.relations.workload`)."""
    return Owner(*workload(pod))


def priority(pod: Object) -> int:
    """`spec.priority`, which the priority admission plugin fills from the PriorityClass (0 without)."""
    value = spec(pod).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def priority_class(pod: Object) -> str:
    return text(spec(pod).get("priorityClassName"))


def may_preempt(pod: Object, other: Object) -> bool:
    """The scheduler may evict `other` for `pod`: `other` has lower priority and `pod`'s
    preemptionPolicy is not `Never` (kube-scheduler `defaultpreemption`: `PodEligibleToPreemptOthers`
    and victims of strictly lower priority)."""
    below = preempts_below(pod)
    return below is not None and priority(other) < below


def preempts_below(pod: Object) -> int | None:
    """All that `may_preempt` reads of the preempting pod: the priority below which it may evict
    others, or None when its preemptionPolicy is `Never`."""
    return None if spec(pod).get("preemptionPolicy") == "Never" else priority(pod)
