"""Which workload a pod belongs to, and how it ranks for preemption.

A pod's top owner is read from the pod alone, through its ownerReferences and the labels its
controllers set, so holders can be grouped without reading ReplicaSets or Jobs: a pod of a Job of a
JobSet is the JobSet's (`jobset.sigs.k8s.io/jobset-name`), a pod of a LeaderWorkerSet is the LWS's
(`leaderworkerset.sigs.k8s.io/name`), a pod of a ReplicaSet that a Deployment made is the
Deployment's (the ReplicaSet is named `<deployment>-<pod-template-hash>`).
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.objects import Object, labels, mapping, meta, name, sequence, spec, text
from diagnosis.relations import JOBSET_NAME_LABEL

LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
_TEMPLATE_HASH = "pod-template-hash"
OWNER_LABELS = (JOBSET_NAME_LABEL, LWS_NAME_LABEL, _TEMPLATE_HASH)
"""The labels `top_owner` reads (a copy of a pod that keeps them keeps its owner)."""


@dataclass(frozen=True)
class Owner:
    kind: str
    """`JobSet`, `LeaderWorkerSet`, `Deployment`, `StatefulSet`, `Job`, … or `Pod` for a bare pod."""
    name: str


def top_owner(pod: Object) -> Owner:
    """The workload the pod belongs to (see the module's docstring); the pod itself when it has none."""
    pod_labels = labels(pod)
    if jobset := pod_labels.get(JOBSET_NAME_LABEL):
        return Owner("JobSet", jobset)
    if lws := pod_labels.get(LWS_NAME_LABEL):
        return Owner("LeaderWorkerSet", lws)
    refs = [mapping(r) for r in sequence(meta(pod).get("ownerReferences"))]
    ref = next((r for r in refs if r.get("controller") is True), refs[0] if refs else None)
    if ref is None:
        return Owner("Pod", name(pod))
    kind, owner = text(ref.get("kind")), text(ref.get("name"))
    suffix = f"-{pod_labels.get(_TEMPLATE_HASH, '')}"
    if kind == "ReplicaSet" and len(suffix) > 1 and owner.endswith(suffix):
        return Owner("Deployment", owner.removesuffix(suffix))
    return Owner(kind or "Pod", owner or name(pod))


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
    return spec(pod).get("preemptionPolicy") != "Never" and priority(other) < priority(pod)
