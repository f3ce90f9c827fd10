"""Every resource but the devices: kube-scheduler's NodeResourcesFit for cpu, memory,
ephemeral-storage, hugepages-*, `*kubernetes.io/*` names, `attachable-volumes-*` and the pod count
(`noderesources/fit.go` `fitsRequest`; facts §2 in ARCHITECTURE.md's sources).

A pod's request is `resource.PodRequests` (`component-helpers/resource/helpers.go`): per resource, the
larger of the app containers plus the sidecars (restartable init containers) and each plain init
container plus the sidecars started before it; pod-level `spec.resources.requests` replace that for
cpu, memory and hugepages-*; then `spec.overhead` is added. The non-zero defaults of scoring (100m,
200Mi) do not apply to Filter. A node offers `status.allocatable` (the whole capacity when the object
has no allocatable, as the API server defaults it) less what the pods counted there request; the
device resources the pod asks for are the earlier steps' (`diagnosis.triage.resources`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from diagnosis.objects import Object, condition, mapping, name, namespace, parts, sequence, spec, status, text
from diagnosis.quantity import count, milli
from diagnosis.relations import controller_ref
from diagnosis.triage.resources import add_to, combined, is_extended, template_key

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"

_POD_LEVEL = (CPU, MEMORY)
"""Pod-level requests replace the containers' for these and `hugepages-*` (`IsSupportedPodLevelResource`)."""


def is_scalar(resource: str) -> bool:
    """`IsScalarResourceName`: extended, hugepages, prefixed native (`*kubernetes.io/*`) and
    `attachable-volumes-*` names are checked like devices; other names are not tracked at all."""
    return (
        is_extended(resource)
        or resource.startswith(("hugepages-", "attachable-volumes-"))
        or "kubernetes.io/" in resource
    )


@lru_cache(maxsize=1024)
def is_fitted(resource: str) -> bool:
    """The scheduler compares this resource of a pod with the node's free amount."""
    return resource in (CPU, MEMORY, EPHEMERAL) or is_scalar(resource)


def amount(resource: str, value: object) -> int:
    """The quantity as the scheduler counts it: cpu in millicores, everything else `Value()`. Worked
    out once per resource and quantity written as text or a whole number (the nodes of a pool report
    the same; `lru_cache` would take `True` for `1`, and cannot take what is not hashable)."""
    if type(value) is str or type(value) is int:
        return _amount(resource, value)
    return _amount.__wrapped__(resource, value)


@lru_cache(maxsize=4096)
def _amount(resource: str, value: object) -> int:
    return (milli(value) if resource == CPU else count(value)) or 0


def _asks(values: object) -> dict[str, int]:
    return {k: amount(k, v) for k, v in mapping(values).items() if isinstance(k, str) and is_fitted(k)}


def _container(item: object) -> dict[str, int]:
    """One container's requests; a resource with a limit and no request gets the limit (API defaulting)."""
    resources = mapping(mapping(item).get("resources"))
    return {**_asks(resources.get("limits")), **_asks(resources.get("requests"))}


def pod_requests(pod: Object) -> dict[str, int]:
    """Resource → the pod's request as NodeResourcesFit counts it, 0s omitted, keys sorted."""
    pod_spec = spec(pod)
    containers = sequence(pod_spec.get("containers"))
    resized = _resized(status(pod))
    if (
        len(containers) == 1
        and not resized
        and not any(pod_spec.get(k) for k in ("initContainers", "overhead", "resources"))
    ):
        # Most pods: one container and nothing else to add, so its requests are the pod's.
        asks = _container(containers[0])
        return {k: asks[k] for k in sorted(asks) if asks[k] > 0}

    def sidecar(item: object) -> bool:
        return mapping(item).get("restartPolicy") == "Always"

    infeasible = bool(resized) and _infeasible(pod)
    inits = (
        (_held(item, resized, infeasible) if sidecar(item) else _container(item), sidecar(item))
        for item in sequence(pod_spec.get("initContainers"))
    )
    peak = combined(inits, (_held(item, resized, infeasible) for item in containers))
    pod_level = _asks(mapping(mapping(pod_spec.get("resources")).get("requests")))
    for resource, value in pod_level.items():
        if resource in _POD_LEVEL or resource.startswith("hugepages-"):
            peak[resource] = value
    add_to(peak, _asks(pod_spec.get("overhead")))
    return {k: peak[k] for k in sorted(peak) if peak[k] > 0}


def _resized(pod_status: Object) -> dict[str, dict[str, int]]:
    """Container name → what the kubelet reports it holds (the pod's status), for the containers whose
    status carries `resources` (InPlacePodVerticalScaling, on by default since 1.33:
    `determineContainerReqs` in `component-helpers/resource/helpers.go`): the larger of
    `resources.requests` and `allocatedResources`. A container being resized in place holds the
    larger of these and its spec's requests until the kubelet has applied the change; with a resize
    the kubelet found infeasible (`PodResizePending`, reason `Infeasible`), the spec is ignored."""
    found: dict[str, dict[str, int]] = {}
    if not pod_status:  # a compact Running pod that holds what it asks (`cluster.compact`)
        return found
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(pod_status.get(field))):
            if item.get("resources") is None:
                continue
            held = _asks(mapping(item.get("resources")).get("requests"))
            for resource, value in _asks(item.get("allocatedResources")).items():
                held[resource] = max(held.get(resource, 0), value)
            found[text(item.get("name"))] = held
    return found


def _infeasible(pod: Object) -> bool:
    """The kubelet cannot apply the resize (`IsPodResizeInfeasible`): condition, or the older field."""
    pending = condition(pod, "PodResizePending") or {}
    said = pending.get("status") == "True" and pending.get("reason") == "Infeasible"
    return said or status(pod).get("resize") == "Infeasible"


def _held(item: object, resized: Mapping[str, Mapping[str, int]], infeasible: bool) -> dict[str, int]:
    """An app container's (or a sidecar's) requests as the scheduler counts them on a bound pod."""
    held = resized.get(text(mapping(item).get("name")))
    if held is None:
        return _container(item)
    if infeasible:
        return dict(held)
    asks = _container(item)
    for resource, value in held.items():
        asks[resource] = max(asks.get(resource, 0), value)
    return asks


def native_asks(pod: Object) -> tuple[str, ...]:
    """The prefixed native resources (`*kubernetes.io/*`) the pod asks: no device, but, like one, a
    node that lacks them never takes the pod (`fit_test.go` "kubernetes.io resource capacity
    enforced"), so such a pod goes through the funnel even when it asks for no device."""
    return tuple(r for r in pod_requests(pod) if "kubernetes.io/" in r)


def offered_of(node: Object) -> Mapping[str, Any]:
    """The node's allocatable, or its capacity when it has no allocatable."""
    node_status = status(node)
    offered = node_status.get("allocatable")
    if offered is None:
        offered = node_status.get("capacity")
    return mapping(offered)


class Shortage(NamedTuple):
    """One resource that does not fit on a node (a tuple: the step makes one for each of thousands)."""

    resource: str
    allocatable: int
    used: int
    asked: int

    @property
    def message(self) -> str:
        """The scheduler's own reason for it."""
        return "Too many pods" if self.resource == PODS else f"Insufficient {self.resource}"

    @property
    def never(self) -> bool:
        """The pod asks more than the node has at all: no eviction makes room (Unresolvable, 1.34+)."""
        return self.asked > self.allocatable

    def __str__(self) -> str:
        resource, allocatable, used, asked = self
        held = f"allocatable {show(resource, allocatable)}, used {show(resource, used)}"
        return f"{resource} {held}, asked {show(resource, asked)}: {self.message}"


class Usage(NamedTuple):
    """What the pods counted on one node request together, and how many they are (a tuple: one per
    node reached)."""

    requested: Mapping[str, int]
    pods: int


def usage(
    pods: Sequence[Object],
    seen: dict[int, Mapping[str, int]] | None = None,
    keys: Sequence[int | None] | None = None,
) -> Usage:
    """What `pods` request together. `seen`: the requests already worked out, by
    `resources.template_key`; `keys`: each pod's template key as read already, None where the pod
    is to be read (its status may say it holds what is not its template's): the pods are then not
    read again (`resources.Counted.templates`)."""
    memo: dict[int, Mapping[str, int]] = {} if seen is None else seen
    total: dict[str, int] = {}
    for pod, key in zip(pods, (None,) * len(pods) if keys is None else keys, strict=True):
        if key is None:
            _, pod_spec, pod_status = parts(pod)
            if pod_status and _resized(pod_status):
                # What the kubelet holds for it is the pod's own, not its template's.
                add_to(total, pod_requests(pod))
                continue
            key = template_key(pod_spec)
        asks = memo.get(key)
        if asks is None:
            asks = memo[key] = pod_requests(pod)
        for resource, asked in asks.items():  # `add_to`, inline: once per pod of every node reached
            total[resource] = total.get(resource, 0) + asked
    return Usage(total, len(pods))


def shortages(asked: Iterable[tuple[str, int]], offered: Mapping[str, int], used: Usage) -> list[Shortage]:
    """The resources `asked` (`checked_asks`) that do not fit on a node that offers `offered` of
    them and of pods (`amount` of what `offered_of` reads), whose pods use `used`: the pod count
    first."""
    found = []
    pods_allowed, requested = offered[PODS], used.requested
    if used.pods + 1 > pods_allowed:
        found.append(Shortage(PODS, pods_allowed, used.pods, 1))
    for resource, wanted in asked:
        have, held = offered[resource], requested.get(resource, 0)
        if wanted > have - held:
            found.append(Shortage(resource, have, held, wanted))
    return found


def checked_asks(asked: Mapping[str, int], devices: Collection[str]) -> tuple[tuple[str, int], ...]:
    """The pod's requests `shortages` compares, in the scheduler's order (pods, cpu, memory,
    ephemeral-storage, then the scalar resources), leaving out those of 0 and the `devices` the
    earlier steps judge."""
    order = sorted(asked, key=lambda r: (_ORDER.get(r, len(_ORDER)), r))
    return tuple((r, asked[r]) for r in order if r not in devices and asked[r] > 0)


_ORDER = {CPU: 0, MEMORY: 1, EPHEMERAL: 2}


@lru_cache(maxsize=4096)
def show(resource: str, value: int) -> str:
    """A request as a person reads it: cpu in cores (`95.5`), bytes in binary units (`1.5Gi`)."""
    if resource == CPU:
        return f"{value / 1000:g}"
    if resource in (MEMORY, EPHEMERAL) or resource.startswith("hugepages-"):
        return binary_size(value)
    return str(value)


def binary_size(value: int) -> str:
    """Bytes in binary units: `1.5Gi`, `2Ti`."""
    for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value >= size:
            scaled = value / size
            return f"{scaled:.4g}{suffix}" if value % size else f"{value // size}{suffix}"
    return str(value)


def owner(pod: Object) -> str:
    """`Kind/name` of the pod's controller (or first owner), or "" for a bare pod."""
    chosen = controller_ref(pod)
    if chosen is None:
        return ""
    return f"{text(chosen.get('kind'))}/{text(chosen.get('name'))}"


def pod_words(pod: Object) -> str:
    """`ns/name (Kind/owner)`: a pod as the evidence names it."""
    made_by = owner(pod)
    return f"{namespace(pod)}/{name(pod)}" + (f" ({made_by})" if made_by else "")
