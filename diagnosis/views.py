"""What a diagnosis reads: the objects already fetched and the time of the reading.

The cluster layer fills these from a snapshot or a live cluster; the diagnosis is a pure function of
them. Given equal views, a diagnosis returns an equal result.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from diagnosis.objects import Object


@dataclass(frozen=True)
class TriageView:
    """Everything `/triage` needs to decide about one pod."""

    pod: Object
    nodes: tuple[Object, ...]
    """The candidate nodes. All nodes of the cluster, unless `prefiltered`."""
    bound_pods: tuple[Object, ...]
    """Pods bound to candidate nodes (`spec.nodeName` set), in any namespace, whose phase is not
    Succeeded/Failed. They may be limited to the nodes that reach the free-slot check (see
    `diagnosis.triage.classify.usage_candidates`); other pods may be present and must be ignored safely."""
    events: tuple[Object, ...]
    """Events whose involvedObject (v1) or regarding (events.k8s.io/v1) is the pod."""
    now: datetime
    prefiltered: bool = False
    """True when the API server already kept only the nodes matching the pod's nodeSelector
    (a label selector): `nodes` then holds only those, and the funnel says so."""
    notes: tuple[str, ...] = ()
    """What the reading says about itself (e.g. the cluster was read directly while kubewhy's cache
    of it syncs): shown after the evidence; the diagnosis never reads it."""


@dataclass(frozen=True)
class JobSetView:
    """Everything `/jobset why` needs to decide about one JobSet."""

    jobset: Object
    jobs: tuple[Object, ...]
    """Child Jobs: label `jobset.sigs.k8s.io/jobset-name` = the JobSet's name."""
    pods: tuple[Object, ...]
    """Pods with label `jobset.sigs.k8s.io/jobset-name` = the JobSet's name, any phase."""
    events: tuple[Object, ...]
    """Events about the JobSet, its Jobs and its pods."""
    nodes: tuple[Object, ...]
    """The nodes the diagnosis needs: those the pods are bound to, and the candidate nodes of
    its pending pods (so a pending pod can be triaged with `TriageView(pod, nodes, bound_pods…)`)."""
    bound_pods: tuple[Object, ...]
    """As TriageView.bound_pods, for the candidate nodes of the pending pods."""
    workloads: tuple[Object, ...]
    """Kueue Workloads (`kueue.x-k8s.io`) owned by the JobSet."""
    now: datetime
    notes: tuple[str, ...] = ()
    """As TriageView.notes."""
