"""Extended resources: what a pod asks for, what a node offers, what the pods bound there hold.

The arithmetic is the scheduler's (`resource.PodRequests` in `component-helpers/resource/helpers.go`, and
`NodeInfo.Requested` in `pkg/scheduler/framework/types.go`, over the pods that are not terminal), so a
node kubewhy calls full is one the scheduler calls full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from diagnosis.names import is_label_key
from diagnosis.objects import Object, mapping, meta, name, namespace, sequence, spec, status, text, uid
from diagnosis.quantity import count
from diagnosis.relations import is_terminal
from diagnosis.workloads import Owner, may_preempt, priority, priority_class, top_owner


@lru_cache(maxsize=1024)
def is_extended(resource: str) -> bool:
    """`IsExtendedResourceName`: a qualified name with a `/`, outside `kubernetes.io/`, that is not
    itself a quota key (`requests.…`). `cpu`, `hugepages-2Mi` and `foo.kubernetes.io/bar` are not."""
    return (
        "/" in resource
        and "kubernetes.io/" not in resource
        and not resource.startswith("requests.")
        and is_label_key(f"requests.{resource}")
    )


@dataclass(frozen=True)
class Container:
    """One container's asks, as the scheduler sees them."""

    name: str
    requests: Mapping[str, int]
    sidecar: bool
    """A restartable init container (`restartPolicy: Always`): it runs beside the app containers."""


def containers(pod: Object, field: str) -> tuple[Container, ...]:
    """The pod's `containers` or `initContainers`, each with its extended-resource asks: limits,
    falling back to requests (the API copies a lone limit into requests; only limits are reliable in
    hand-written objects), 0 omitted."""
    found = []
    for item in sequence(spec(pod).get(field)):
        container = mapping(item)
        resources = mapping(container.get("resources"))
        asks = {**_extended(resources.get("requests")), **_extended(resources.get("limits"))}
        found.append(
            Container(
                name=text(container.get("name")),
                requests={k: v for k, v in asks.items() if v > 0},
                sidecar=field == "initContainers" and container.get("restartPolicy") == "Always",
            )
        )
    return tuple(found)


def effective_requests(pod: Object) -> dict[str, int]:
    """Extended resource → the pod's effective request, 0s omitted, keys sorted.

    Per resource: the larger of the app containers plus the sidecars (they all run at once) and each
    plain init container plus the sidecars started before it (init containers run one at a time).
    Extended resources are never pod-level and never part of the RuntimeClass overhead.
    """
    running: dict[str, int] = {}
    peak: dict[str, int] = {}
    for container in containers(pod, "initContainers"):
        if container.sidecar:
            _add(running, container.requests)
        else:
            _raise_to(peak, _plus(running, container.requests))
    for container in containers(pod, "containers"):
        _add(running, container.requests)
    _raise_to(peak, running)
    return {k: peak[k] for k in sorted(peak) if peak[k] > 0}


@dataclass(frozen=True)
class Offer:
    """What a node reports for one resource. `capacity` None: the key is absent."""

    capacity: int | None
    allocatable: int

    @property
    def reported(self) -> bool:
        """Key absent and `"0"` both mean no device plugin serves it now: the kubelet sets capacity 0
        when a plugin's resource is removed (`GetCapacity`, `pkg/kubelet/cm/devicemanager/manager.go`)."""
        return bool(self.capacity)


def offer(node: Object, resource: str) -> Offer:
    """The node's capacity and allocatable for `resource`; a missing allocatable key reads as 0, as
    the scheduler reads it."""
    node_status = status(node)
    capacity = mapping(node_status.get("capacity")).get(resource)
    return Offer(
        capacity=None if capacity is None else count(capacity) or 0,
        allocatable=count(mapping(node_status.get("allocatable")).get(resource)) or 0,
    )


def reported_resources(node: Object) -> tuple[str, ...]:
    """The extended resources the node reports with a capacity above 0, sorted."""
    capacity = mapping(status(node).get("capacity"))
    return tuple(sorted(k for k, v in capacity.items() if is_extended(k) and count(v)))


_NO_OWNER = Owner("Pod", "")


@dataclass(frozen=True)
class Holder:
    """A pod that holds extended resources on a node."""

    namespace: str
    name: str
    requests: Mapping[str, int]
    terminating: bool
    owner: Owner = _NO_OWNER
    priority: int = 0
    priority_class: str = ""
    preemptible: bool = False
    """The pod asked about may preempt this one (`diagnosis.workloads.may_preempt`)."""


def holders(
    pod: Object, bound_pods: Iterable[Object], node_names: Iterable[str]
) -> dict[str, tuple[Holder, ...]]:
    """Node name → the pods that count against it: bound there, not Succeeded/Failed (terminating pods
    still count until the object is gone), any namespace, holding some extended resource. The pod
    itself never counts; a pod listed twice counts once. Nodes not named are ignored, so the result
    does not depend on how many other pods the reader happened to fetch."""
    wanted = set(node_names)
    me, my_uid = (namespace(pod), name(pod)), uid(pod)
    seen: set[tuple[str, str]] = set()
    found: dict[str, list[Holder]] = {}
    for other in bound_pods:
        # Most bound pods ask for no extended resource: a glance at their keys spares the rest.
        other_spec = spec(other)
        node = text(other_spec.get("nodeName"))
        if node not in wanted or not _names_extended(other_spec) or is_terminal(other):
            continue
        other_meta = meta(other)
        key = (text(other_meta.get("namespace")), text(other_meta.get("name")))
        if key == me or (my_uid and text(other_meta.get("uid")) == my_uid) or key in seen:
            continue
        seen.add(key)
        asks = effective_requests(other)
        if asks:
            terminating = other_meta.get("deletionTimestamp") is not None
            found.setdefault(node, []).append(
                Holder(
                    key[0],
                    key[1],
                    asks,
                    terminating,
                    top_owner(other),
                    priority(other),
                    priority_class(other),
                    may_preempt(pod, other),
                )
            )
    return {node: tuple(sorted(pods, key=lambda h: (h.namespace, h.name))) for node, pods in found.items()}


def _names_extended(pod_spec: Object) -> bool:
    """Whether some container of the pod (its spec) names a resource with a `/` in its limits or
    requests: every extended resource has one, and most pods name only cpu and memory."""
    for field in ("initContainers", "containers"):
        for container in sequence(pod_spec.get(field)):
            resources = mapping(mapping(container).get("resources"))
            for asks in (resources.get("limits"), resources.get("requests")):
                for resource in mapping(asks):
                    if isinstance(resource, str) and "/" in resource:
                        return True
    return False


def _extended(values: object) -> dict[str, int]:
    return {k: count(v) or 0 for k, v in mapping(values).items() if isinstance(k, str) and is_extended(k)}


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for resource, amount in more.items():
        total[resource] = total.get(resource, 0) + amount


def _plus(left: Mapping[str, int], right: Mapping[str, int]) -> dict[str, int]:
    total = dict(left)
    _add(total, right)
    return total


def _raise_to(peak: dict[str, int], values: Mapping[str, int]) -> None:
    for resource, amount in values.items():
        peak[resource] = max(peak.get(resource, 0), amount)
