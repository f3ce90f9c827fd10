"""What the autoscaling state adds to an answer: evidence lines (the autoscaler quoted verbatim, the
groups table), the fixes a person tries first (wait; raise a group's max or a NodePool's limit, with
the command; move the pod to a group a new node of which takes it, proven by the template check) and
the commands that read the autoscalers' objects."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime

from diagnosis.autoscaling.groups import moves
from diagnosis.autoscaling.karpenter import NODEPOOL_LABEL
from diagnosis.autoscaling.requests import consumed
from diagnosis.autoscaling.said import PROVISION_TIMEOUT, minutes
from diagnosis.commands import kubectl, valid_names
from diagnosis.events import regarding
from diagnosis.model import Autoscaling, Command, Fix, NodeComing, NodeGroup
from diagnosis.objects import Object, kind, mapping, meta, name, namespace, spec, status, text
from diagnosis.quantity import count
from diagnosis.triage.fixes import UNCHECKED, where
from diagnosis.triage.resources import effective_requests
from diagnosis.views import TriageView

_RAISE = {
    "cloud.google.com/gke-nodepool": (
        'gcloud container node-pools update {pool} --cluster "$CLUSTER" --location "$LOCATION"'
        " --enable-autoscaling --max-nodes {max}"
    ),
    "eks.amazonaws.com/nodegroup": (
        'aws eks update-nodegroup-config --cluster-name "$CLUSTER" --nodegroup-name {pool}'
        " --scaling-config maxSize={max}"
    ),
    "kubernetes.azure.com/agentpool": (
        'az aks nodepool update --resource-group "$RESOURCE_GROUP" --cluster-name "$CLUSTER"'
        " --name {pool} --update-cluster-autoscaler --max-count {max}"
    ),
}
_LINE = 240
"""Characters of an evidence line: an autoscaler's words may run longer (a cloud's error messages)."""


def lines(found: Autoscaling, now: datetime) -> Iterator[str]:
    """The evidence: the state and its line, the autoscaler's words, the groups table."""
    if found.state is NodeComing.NONE:
        return
    when = f", {minutes(found.since, now)}" if found.since else ""
    yield f"Will a node come? {found.state.value}, said by {found.by}{when}"
    if found.quote:
        said = f"{found.by} said: {found.quote}"
        yield said if len(said) <= _LINE else said[: _LINE - 1] + "…"
    for group in found.groups:
        yield group_line(group)


def group_line(group: NodeGroup) -> str:
    """`Node group a3-pool: size 2, target 3, max 4; a new node would take the pod`."""
    sizes = ", ".join(
        f"{word} {value}"
        for word, value in (("size", group.size), ("target", group.target), ("max", group.max))
        if value is not None
    )
    verdict = (
        "a new node would take the pod" if group.fits else group.why or "a new node would not take the pod"
    )
    return f"Node group {group.name}: " + (f"{sizes}; " if sizes else "") + verdict


def fixes(
    found: Autoscaling, view: TriageView, pooled: Callable[[], Mapping[str, Object]]
) -> tuple[Fix, ...]:
    """Wait for a node on its way; else raise the limit that stops one of the groups a new node of
    which would take the pod, or move it to another group (`pooled()`: the node groups' templates,
    `groups.pools_of`)."""
    if found.state in (NodeComing.COMING, NodeComing.QUEUED):
        waited = minutes(found.since, view.now).removesuffix(" ago") or "not long"
        limit = (
            f" of the {int(PROVISION_TIMEOUT.total_seconds() // 60)} min provision timeout"
            if found.state is NodeComing.COMING
            else ""
        )
        summary = f"Wait: {found.by} is bringing a node ({waited} so far{limit}); {UNCHECKED}"
        return (Fix(summary, None, (), objects=(_ref(view.pod),)),)
    if found.state not in (NodeComing.NOT_COMING, NodeComing.FAILED):
        return ()
    return (*_raised_groups(found, view, pooled), *_raised_nodepools(view), *_moved(view, pooled()))


def _ref(obj: Object) -> str:
    """`kind/namespace/name`, or `kind/name` for a cluster-scoped object."""
    where = f"{namespace(obj)}/" if namespace(obj) else ""
    return f"{kind(obj).lower()}/{where}{name(obj)}"


def _raised_groups(
    found: Autoscaling, view: TriageView, pooled: Callable[[], Mapping[str, Object]]
) -> Iterator[Fix]:
    full = [
        group
        for group in found.groups
        if group.max is not None
        and max(group.size or 0, group.target or 0) >= group.max
        and group.fits is not False
    ]
    keys = _pool_keys(pooled().values(), {group.name for group in full}) if full else {}
    for group in full:
        key = keys.get(group.name, "")
        if key not in _RAISE or group.max is None:
            continue
        command = _RAISE[key].format(pool=shlex.quote(group.name), max=group.max + 1)
        yield Fix(
            f"Raise node group {group.name}'s max size from {group.max} to {group.max + 1}: a new"
            f" {group.name} node takes the pod ({UNCHECKED})",
            None,
            (),
            (Command(command, f"raise {group.name}'s autoscaling max size", changes=True),),
            (_ref(view.capacity.status) if view.capacity.status is not None else _ref(view.pod),),
        )


def _raised_nodepools(view: TriageView) -> Iterator[Fix]:
    asks = effective_requests(view.pod)
    for pool in view.capacity.nodepools:
        limits, used = spec(pool).get("limits") or {}, status(pool).get("resources") or {}
        raised = {
            resource: str((count(used.get(resource, 0)) or 0) + wanted)
            for resource, wanted in asks.items()
            if resource in limits
            and (count(used.get(resource, 0)) or 0) + wanted > (count(limits[resource]) or 0)
        }
        if not raised or not valid_names("default", name(pool)):
            continue
        patch = json.dumps({"spec": {"limits": raised}}, separators=(",", ":"))
        yield Fix(
            f"Raise NodePool {name(pool)}'s limits to "
            + ", ".join(f"{r} {n}" for r, n in raised.items())
            + f" ({UNCHECKED})",
            None,
            (),
            (
                kubectl(
                    f"raise NodePool {name(pool)}'s limits",
                    "patch",
                    "nodepool",
                    name(pool),
                    "--type",
                    "merge",
                    "-p",
                    patch,
                    changes=True,
                ),
            ),
            (_ref(pool),),
        )


def _moved(view: TriageView, pooled: Mapping[str, Object]) -> Iterator[Fix]:
    for group, patch in moves(view, pooled):
        ((key, value),) = patch["spec"]["nodeSelector"].items()
        yield Fix(
            f"Move the pod to node group {group}: nodeSelector {key}={value} {where(view.pod)};"
            f" a new {group} node takes it ({UNCHECKED})",
            patch,
            (),
        )


_POOL_KEYS = (*_RAISE, NODEPOOL_LABEL, "agentpool")


def _pool_keys(nodes: Iterable[Object], wanted: set[str]) -> dict[str, str]:
    """The label that names each `wanted` pool (the cloud's, or Karpenter's), read off the pools'
    template nodes."""
    found: dict[str, str] = {}
    for node in nodes:
        node_labels = mapping(meta(node).get("labels"))
        for key in _POOL_KEYS:
            value = node_labels.get(key)
            if isinstance(value, str) and value in wanted and value not in found:
                found[value] = "kubernetes.azure.com/agentpool" if key == "agentpool" else key
        if len(found) == len(wanted):
            break
    return found


def read_commands(view: TriageView) -> Iterator[Command]:
    """The commands that show what the autoscalers say, for the objects that were read."""
    if view.capacity.status is not None:
        yield kubectl(
            "cluster-autoscaler's status: each node group's size, target, max and backoff",
            "get",
            "configmap",
            "cluster-autoscaler-status",
            "-n",
            "kube-system",
            "-o",
            "yaml",
        )
    if view.capacity.nodepools:
        yield kubectl("Karpenter's NodePools and NodeClaims", "get", "nodepools,nodeclaims")
    told = {text(regarding(e).get("kind")) for e in view.capacity.events}
    if "NodeClaim" in told:
        yield kubectl(
            "Karpenter's events on its NodeClaims (written in namespace default)",
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "involvedObject.kind=NodeClaim",
        )
    if "ConfigMap" in told:
        yield kubectl(
            "cluster-autoscaler's events on its status: what became of each scale-up",
            "get",
            "events",
            "-n",
            "kube-system",
            "--field-selector",
            "involvedObject.name=cluster-autoscaler-status",
        )
    wanted = consumed(view.pod)
    if wanted and valid_names(namespace(view.pod), wanted) and view.capacity.requests:
        yield kubectl(
            "the ProvisioningRequest the pod consumes, with its conditions",
            "get",
            "provisioningrequests.autoscaling.x-k8s.io",
            wanted,
            "-n",
            namespace(view.pod),
            "-o",
            "yaml",
        )
