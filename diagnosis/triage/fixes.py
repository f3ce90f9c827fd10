"""Fixes: changes to the objects that would remove a verdict's cause, proposed per funnel step.

A step proposes `Change`s; none is offered on faith. `diagnosis.triage.runner.checked` applies each
one to a copy of the view (`changed`) and runs the same funnel again: the nodes on which the pod then
passes every check are what the fix `opens`, and a change that opens no node is dropped. A change is
a JSON merge patch to the pod (RFC 7386; `kubectl patch --type merge` sends the same), or a change in
the cluster: merge patches to nodes (uncordon, label, a repaired device plugin's allocatable), pods
that end (holders freed, with the ResourceClaims only they were using: kube-controller-manager's
resourceclaim controller deletes a pod's generated claims and deallocates a claim no pod reserves),
ResourceClaims as they would read once recreated with another spec, ResourceSlices as a repaired
driver would publish them. Proposers list their changes best first, each with its harm class
(`Change.harm`); the fixes are offered least harm first (`diagnosis.model.ranked`).

Plugging in a step's fixes: give its `Advice` a `fixes=` tuple of `Change`s built with the helpers
here (`pod_change`, `node_change`, `ending`); the check, the ordering and the rendering are shared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, overload

from diagnosis.commands import collect
from diagnosis.dra_objects import Claim, Dra, Inventory, Slice
from diagnosis.model import Command, Harm
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status
from diagnosis.patch import merge_patch
from diagnosis.quantity import count
from diagnosis.relations import workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.resources import Counted
from diagnosis.triage.scheduling import Taint, node_selector, required_terms
from diagnosis.views import TriageView

CHECKED = 6
"""Changes checked per diagnosis at most: each one runs the funnel again over every node."""

UNCHECKED = "re-check once it is done"
"""What a fix says in place of the nodes it opens when the objects cannot show them beforehand (a new
volume, a repaired device plugin that never said how many devices it has, a gated pod's nodes)."""

POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
)
"""Labels that name a node's pool (GKE, EKS, Karpenter, AKS), the instance type last: how a fix names
the nodes it opens."""


@dataclass(frozen=True)
class Change:
    """A candidate fix: what to say, and what it changes. Empty parts change nothing."""

    summary: str
    pod_patch: Mapping[str, Any] | None = field(default=None, hash=False)
    node_patches: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, hash=False)
    """Node name → a merge patch to that node."""
    ended: frozenset[tuple[str, str]] = frozenset()
    """Pods (namespace, name) that are gone once the change is made."""
    claims: Mapping[tuple[str, str], Claim] = field(default_factory=dict, hash=False)
    """ResourceClaims (namespace, name) as they would read once the change is made (a claim, or the
    one its template makes, recreated with another spec)."""
    slices: Mapping[str, Slice] = field(default_factory=dict, hash=False)
    """ResourceSlices by name as their driver would publish them once repaired."""
    commands: tuple[Command, ...] = ()
    objects: tuple[str, ...] = ()
    """What a cluster-side change touches: `node/NAME`, `pod/NAMESPACE/NAME`, `resourceclaim/NAMESPACE/NAME`,
    `resourceclaimtemplate/NAMESPACE/NAME`, `resourceslice/NAME`."""
    checkable: bool = True
    """False when the objects do not say what the change would bring (a repaired device plugin on a
    node that never said how many devices it has): offered as opening nothing that can be shown."""
    harm: Harm = Harm.KEEPS
    """How far the change reaches beyond the pod (`diagnosis.model.Harm`): the fixes' order."""


def changed(
    view: TriageView, change: Change, positions: Callable[[tuple[str, str]], Iterable[int]] | None = None
) -> TriageView:
    """The view as it would read after the change: copies, the view itself untouched. `positions`:
    where the view's bound pods list a (namespace, name) (`resources.Counted.positions`), when the
    caller has counted them already."""
    pod = merge_patch(view.pod, change.pod_patch) if change.pod_patch is not None else view.pod
    # What the change leaves alone stays the same object: the funnel runs of one classification
    # share what they work out about it (`diagnosis.triage.funnel.Shared`).
    nodes = view.nodes
    if change.node_patches:
        nodes = tuple(
            merge_patch(node, change.node_patches[name(node)]) if name(node) in change.node_patches else node
            for node in view.nodes
        )
    bound, peers, storage, nominated = view.bound_pods, view.peers, view.storage, view.nominated_pods
    if change.ended:
        listed = positions or Counted.of(view.pod, view.bound_pods).positions
        gone = {i for key in change.ended for i in listed(key)}
        if gone:
            bound = Remaining(view.bound_pods, tuple(sorted(gone)))
        if any((namespace(p), name(p)) in change.ended for p in nominated):
            nominated = tuple(p for p in nominated if (namespace(p), name(p)) not in change.ended)
        peers = replace(
            view.peers, pods=tuple(p for p in view.peers.pods if (namespace(p), name(p)) not in change.ended)
        )
        storage = replace(
            view.storage,
            users=tuple(p for p in view.storage.users if (namespace(p), name(p)) not in change.ended),
        )
    dra = view.dra
    if change.claims or change.slices or (change.ended and dra.claims):
        dra = _changed_dra(dra, change)
    return replace(
        view,
        pod=pod,
        nodes=nodes,
        bound_pods=bound,
        nominated_pods=nominated,
        peers=peers,
        storage=storage,
        dra=dra,
    )


class Remaining(Sequence[Object]):
    """Pods without those at some positions, as a change that ends them leaves a view's bound pods:
    read in place rather than copied (the pods of thousands of nodes, for each fix checked)."""

    def __init__(self, pods: Sequence[Object], gone: tuple[int, ...]) -> None:
        """`gone`: the positions taken out, sorted, each within `pods`."""
        self._pods, self._gone = pods, gone

    def __len__(self) -> int:
        return len(self._pods) - len(self._gone)

    def __iter__(self) -> Iterator[Object]:
        pods, at = iter(self._pods), 0
        for cut in self._gone:
            yield from islice(pods, cut - at)
            next(pods)
            at = cut + 1
        yield from pods

    @overload
    def __getitem__(self, index: int) -> Object: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Object]: ...
    def __getitem__(self, index: int | slice) -> Object | Sequence[Object]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        position = index % len(self)
        for cut in self._gone:
            if cut > position:
                break
            position += 1
        return self._pods[position]


def _changed_dra(dra: Dra, change: Change) -> Dra:
    """The DRA objects after the change: claims replaced; those reserved only for pods that end
    freed (a claim made for an ended pod is deleted, another one deallocated); slices replaced. What
    is unchanged stays the same object (the device inventory, whose offers are remembered)."""
    replaced: dict[tuple[str, str], Claim | None] = dict(change.claims)
    # Thousands of claims, few of them reserved for the pods that end: only those are looked into.
    reserved = {(c.namespace, c.name): c for pod in change.ended for c in dra.reserving.get(pod, ())}
    for key, claim in {**reserved, **change.claims}.items():
        if claim.reserved_for and all((claim.namespace, n) in change.ended for n, _ in claim.reserved_for):
            gone = claim.controller is not None and claim.controller[0] == "Pod"
            replaced[key] = None if gone else replace(
                claim, allocated=False, results=(), node_selector=None, reserved_for=()
            )
    devices = dra.devices
    if change.slices:
        devices = Inventory(devices.classes, tuple(change.slices.get(s.name, s) for s in devices.slices))
    return dra.with_claims(replaced, devices)


def pod_change(summary: str, patch: Mapping[str, Any], harm: Harm = Harm.KEEPS) -> Change:
    return Change(summary, pod_patch=patch, harm=harm)


def node_change(
    summary: str,
    patches: Mapping[str, Mapping[str, Any]],
    commands: Iterable[Command] = (),
    also: Iterable[str] = (),
) -> Change:
    """A change to these nodes (`also`: the other objects it touches, e.g. a device plugin pod)."""
    return Change(
        summary,
        node_patches=patches,
        commands=tuple(commands),
        objects=(*(f"node/{n}" for n in patches), *also),
    )


def ending(
    summary: str,
    pods: Sequence[tuple[str, str]],
    commands: Iterable[Command] = (),
    harm: Harm = Harm.OTHERS,
) -> Change:
    """Pods that end: by a command given (other workloads' pods), or by themselves (`Harm.KEEPS`:
    waiting for pods already terminating)."""
    return Change(
        summary,
        ended=frozenset(pods),
        commands=tuple(commands),
        objects=tuple(f"pod/{ns}/{n}" for ns, n in pods),
        harm=harm,
    )


def patch_text(patch: Mapping[str, Any]) -> str:
    """A merge patch as one line of JSON, keys in a stable order."""
    return json.dumps(patch, separators=(",", ":"), sort_keys=True)


def where(pod: Object) -> str:
    """Where a pod change must be made: the pod's own spec cannot take most of them once it exists,
    so a pod a controller made is changed through its template."""
    owner, _ = workload(pod)
    return f"in the {owner}'s pod template" if owner != "Pod" else "in the pod spec (recreate the pod)"


def pool_of(nodes: Iterable[Object]) -> str:
    """`pool l4-pool` / `pools a, b` / `nodes x, y`: how to name the nodes a fix opens."""
    listed = list(nodes)
    for key in POOL_LABELS:
        values = sorted({labels(n).get(key, "") for n in listed})
        if all(values):
            kind = "instance type" if key == "node.kubernetes.io/instance-type" else "pool"
            return f"{kind}{'s' if len(values) > 1 else ''} {', '.join(values[:3])}"
    shown = sorted(name(n) for n in listed)
    return f"node{'s' if len(shown) > 1 else ''} {', '.join(shown[:3])}" + (
        f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    )


def node_pool(node: Object) -> tuple[str, str] | None:
    """(label, value) of the first of `POOL_LABELS` the node carries: its pool."""
    node_labels = labels(node)
    return next(((k, v) for k in POOL_LABELS if isinstance(v := node_labels.get(k), str) and v), None)


def pool_domain(nodes: Iterable[Object], node: Object, key: str) -> str:
    """The value of topology label `key` for a node without it: the one the other nodes of its pool
    (of `nodes`) have, else its pool's name, else its own name (a domain of one node)."""
    pool = node_pool(node)
    if pool is None:
        return name(node)
    kin = (labels(n)[key] for n in nodes if labels(n).get(pool[0]) == pool[1] and key in labels(n))
    return next(kin, pool[1])


def with_asks(pod: Object, resource: str, budget: int) -> Mapping[str, Any] | None:
    """A merge patch that lowers the pod's ask for `resource` to at most `budget`: app containers
    (and sidecars) share the budget, first come first served; each plain init container is capped at
    it. Lists are replaced whole (RFC 7386), so the patch carries every container. None when nothing
    would change."""
    patch: dict[str, Any] = {}
    left = budget
    for field_name in ("initContainers", "containers"):
        items = [mapping(c) for c in sequence(spec(pod).get(field_name))]
        if not items:
            continue
        new, touched = [], False
        for item in items:
            resources = mapping(item.get("resources"))
            asked = max(
                count(mapping(resources.get(kind)).get(resource)) or 0 for kind in ("limits", "requests")
            )
            plain_init = field_name == "initContainers" and item.get("restartPolicy") != "Always"
            allowed = min(asked, budget) if plain_init else min(asked, max(left, 0))
            if not plain_init:
                left -= allowed
            if asked and allowed != asked:
                touched = True
                item = merge_patch(item, {"resources": _asks(resources, resource, allowed)})
            new.append(item)
        if touched:
            patch[field_name] = new
    return {"spec": patch} if patch else None


def _asks(resources: Mapping[str, Any], resource: str, amount: int) -> dict[str, Any]:
    """The resources patch that sets `resource` to `amount` wherever it is written (0: removed)."""
    value = str(amount) if amount else None
    return {
        kind: {resource: value} for kind in ("limits", "requests") if resource in mapping(resources.get(kind))
    }


def hardware_count(node: Object, resource: str, nodes: Iterable[Object]) -> int:
    """How many of `resource` the node's hardware has, as its objects say it: its own capacity; the
    GPU Feature Discovery or GKE count label for an NVIDIA GPU; else what nodes of the same instance
    type report. 0 when nothing says."""
    own = count(mapping(status(node).get("capacity")).get(resource)) or 0
    if own:
        return own
    if resource == "nvidia.com/gpu":
        for key in ("nvidia.com/gpu.count", "cloud.google.com/gke-accelerator-count"):
            said = count(labels(node).get(key)) or 0
            if said:
                return said
    kind = labels(node).get("node.kubernetes.io/instance-type")
    if kind:
        for other in nodes:
            if labels(other).get("node.kubernetes.io/instance-type") == kind:
                said = count(mapping(status(other).get("capacity")).get(resource)) or 0
                if said:
                    return said
    return 0


def delete_pods(pods: Sequence[tuple[str, str]]) -> tuple[Command, ...]:
    return collect(*(kubectl.delete_pod(ns, pod) for ns, pod in pods))


def toleration(taint: Taint) -> dict[str, str]:
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def selecting(pod: Object, node: Object) -> dict[str, Any] | None:
    """The pod patch that makes the pod's selector and required affinity match `node`, changing only
    values (a key the node lacks cannot be given a value: None)."""
    have = labels(node)
    patch: dict[str, Any] = {}
    selector = node_selector(pod)
    changed = {
        k: have[k] for k, v in selector.items() if isinstance(k, str) and have.get(k) != v and k in have
    }
    if any(isinstance(k, str) and k not in have for k in selector):
        return None
    if changed:
        patch["nodeSelector"] = changed
    terms = required_terms(pod)
    if terms:
        term = _matching_term(terms, have)
        if term is None:
            return None
        if [term] != list(terms):
            patch["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                }
            }
    return {"spec": patch} if patch else None


def _matching_term(terms: tuple[Mapping[str, Any], ...], have: Mapping[str, str]) -> Mapping[str, Any] | None:
    """The first term whose failing requirements are all `In` on a key the node has, with those
    values replaced by the node's; a term that already matches is returned as it is."""
    for term in terms:
        expressions = [mapping(r) for r in sequence(term.get("matchExpressions"))]
        if not expressions or sequence(term.get("matchFields")):
            continue
        new, fits = [], True
        for requirement in expressions:
            key, operator = str(requirement.get("key", "")), requirement.get("operator")
            values = [v for v in sequence(requirement.get("values")) if isinstance(v, str)]
            if operator == "In" and key in have and have[key] not in values:
                new.append({"key": key, "operator": "In", "values": [have[key]]})
            elif operator == "In" and key not in have:
                fits = False
                break
            else:
                new.append(dict(requirement))
        if fits:
            return {"matchExpressions": new} if new != expressions else term
    return None


def patched(pod: Object, patch: Mapping[str, Any] | None) -> Object:
    return pod if patch is None else merge_patch(pod, patch)


def merged(left: Mapping[str, Any] | None, right: Mapping[str, Any]) -> Mapping[str, Any]:
    """Two pod patches as one (the second was made on the pod with the first applied)."""
    return right if left is None else merge_patch(left, right)
