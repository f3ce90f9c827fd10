"""kubewhy's own check beside the autoscaler's word: would a new, empty node of each node group take
the pod? A group is the nodes that share a pool label (GKE, EKS, AKS, Karpenter); its template is one
of its nodes without its pods, as cluster-autoscaler builds it (`simulator/node_info_utils.go`
sanitises a copy of a live node), or a Karpenter NodePool's requirements, labels and taints. The
template goes through the triage funnel alone (`diagnosis.triage.classify.passing`, `funnel_of`):
one funnel run per group. (The classifier calls this module when it builds a Diagnosis, so the
funnel is reached through its module, not its names.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from diagnosis.autoscaling import karpenter
from diagnosis.model import NodeGroup, PodVerdict
from diagnosis.objects import Object, labels, mapping, meta, name, sequence, spec, text
from diagnosis.patch import merge_patch
from diagnosis.triage import classify as triage
from diagnosis.triage.dra.claims import asks_claims
from diagnosis.triage.resources import effective_requests, offer
from diagnosis.triage.scheduling import node_selector
from diagnosis.views import TriageView

if TYPE_CHECKING:
    from diagnosis.triage.findings import Findings

POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    karpenter.NODEPOOL_LABEL,
)
"""The labels that make nodes one node group, as the clouds and Karpenter set them."""

_CONDITION_TAINTS = (
    "node.kubernetes.io/",
    "node.cloudprovider.kubernetes.io/",
    "ToBeDeletedByClusterAutoscaler",
)


def pools(nodes: Iterable[Object]) -> dict[str, Object]:
    """Pool name → the node taken as its template (the first by name). One pass over the nodes."""
    found: dict[str, Object] = {}
    for node in nodes:  # a plain loop, no generator per node: it runs for every node of the cluster
        node_labels = mapping(meta(node).get("labels"))  # read, not copied
        for key in POOL_LABELS:
            group = node_labels.get(key)
            if isinstance(group, str) and group:
                first = found.get(group)
                if first is None or name(node) < name(first):
                    found[group] = node
                break
    return found


def pools_of(view: TriageView, kept: Findings | None = None) -> dict[str, Object]:
    """`pools` of the nodes the node groups are taken from: the view's, and those of the groups the
    pod's nodeSelector leaves out where a reader read them beside it (`Capacity.groups`). Each tuple's
    pools once, where a reader keeps them between questions (`kept`)."""
    found: dict[str, Object] = {}
    for nodes in (view.nodes, view.capacity.groups):
        part = pools(nodes) if kept is None else kept.of_nodes(nodes, "pools", partial(pools, nodes))
        for group, node in part.items():
            first = found.get(group)
            if first is None or name(node) < name(first):
                found[group] = node
    return found


def templates(view: TriageView, pooled: Mapping[str, Object]) -> dict[str, Object]:
    """Each node group's template: a new node like one of its nodes (`pooled`, from `pools`), or as
    a Karpenter NodePool would launch it for the pod."""
    pod = unheld(view.pod)
    asks = effective_requests(pod)
    wants = {k: text(v) for k, v in node_selector(pod).items()}
    found: dict[str, Object] = {group: _fresh(node) for group, node in pooled.items()}
    for pool in view.capacity.nodepools:
        found.setdefault(name(pool), karpenter.template(pool, asks, wants))
    return found


def checked(view: TriageView, pooled: Mapping[str, Object]) -> tuple[NodeGroup, ...]:
    """Each node group with whether a new node of it would take the pod, and if not, why."""
    pod = unheld(view.pod)
    asks = effective_requests(pod)
    limits = {name(p): karpenter.limit_problem(p, asks) for p in view.capacity.nodepools}
    groups = []
    for group, node in sorted(templates(view, pooled).items()):
        fits, why = (False, limits[group]) if limits.get(group) else _check(view, pod, group, node)
        groups.append(NodeGroup(group, fits=fits, why=why))
    return tuple(groups)


def moves(view: TriageView, pooled: Mapping[str, Object]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(group, pod patch) for each other node group (`pooled`: `pools_of`) a pod that pins its pool
    by nodeSelector could move to: the patch names that group instead, and a new node of it takes
    the pod so changed."""
    pod = unheld(view.pod)
    selector = node_selector(pod)
    pinned = [k for k in POOL_LABELS if k in selector]
    for key in pinned:
        for group, node in sorted(pooled.items()):
            if group == selector[key] or labels(node).get(key) != group:
                continue
            patch = {"spec": {"nodeSelector": {key: group}}}
            if _check(view, merge_patch(pod, patch), group, _fresh(node))[0]:
                yield group, patch


def _check(view: TriageView, pod: Object, group: str, node: Object) -> tuple[bool | None, str]:
    if asks_claims(pod):
        return None, "not checked: a new node's devices are published only once its DRA driver runs"
    trial = TriageView(pod, (node,), (), (), view.now, peers=view.peers, storage=view.storage)
    if triage.passing(trial):
        return True, ""
    last = triage.funnel_of(trial).last
    if not last.dropped:
        return False, f"a new {group} node would not take the pod"
    if last.step.verdict is PodVerdict.EXHAUSTED:
        short = [
            f"has {offer(node, r).allocatable} {r}; the pod asks {n}"
            for r, n in effective_requests(pod).items()
            if offer(node, r).allocatable < n
        ]
        if short:
            return False, f"a new {group} node " + ", ".join(short)
    return False, f"a new {group} node: {last.dropped[0].why}"


def unheld(pod: Object) -> Object:
    """The pod as the scheduler will see it once nothing but a node holds it: no gates, no nomination."""
    found: Object = merge_patch(
        pod, {"spec": {"schedulingGates": None}, "status": {"nominatedNodeName": None}}
    )
    return found


def _fresh(node: Object) -> dict[str, Any]:
    """A new node of the node's group: the same labels, capacity and taints, without the taints of
    its condition or its cordon, Ready, with no pod."""
    taints = [
        t for t in sequence(spec(node).get("taints")) if not text(t.get("key")).startswith(_CONDITION_TAINTS)
    ]
    patch: Mapping[str, Any] = {
        "metadata": {"name": f"new-{name(node)}"},
        "spec": {"unschedulable": None, "taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    fresh: dict[str, Any] = merge_patch(node, patch)
    return fresh
