"""Which workload a pod belongs to, and how it ranks for preemption.

A pod's top owner is read from the pod alone, through its ownerReferences and the labels its
controllers set, so holders can be grouped without reading ReplicaSets or Jobs: a pod of a Job of a
JobSet is the JobSet's (`jobset.sigs.k8s.io/jobset-name`), a pod of a LeaderWorkerSet is the LWS's
(`leaderworkerset.sigs.k8s.io/name`), a pod of a ReplicaSet that a Deployment made is the
Deployment's (the ReplicaSet is named `<deployment>-<pod-template-hash>`).
"""

from __future__ import annotations

from typing import NamedTuple

from diagnosis.objects import Object, spec, text
from diagnosis.relations import JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH, workload

OWNER_LABELS = (JOBSET_NAME_LABEL, LWS_NAME_LABEL, POD_TEMPLATE_HASH)
"""The labels `top_owner` reads (a copy of a pod that keeps them keeps its owner)."""


class Owner(NamedTuple):
    """A workload (a tuple: the fixes work out the owner of thousands of pods, and file them by it)."""

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


def preempts_below(pod: Object) -> int | None:
    """The priority below which the scheduler may evict other pods for this one, or None when its
    preemptionPolicy is `Never` (kube-scheduler `defaultpreemption`: `PodEligibleToPreemptOthers`,
    and victims of strictly lower priority)."""
    return None if spec(pod).get("preemptionPolicy") == "Never" else priority(pod)
