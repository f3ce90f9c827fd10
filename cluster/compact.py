"""What kubewhy keeps of a node and of a pod: the fields the diagnosis reads, in the shape of the
object, with what repeats across objects kept once. The cache keeps every node and bound pod this way
(`cluster.cache`), and a direct read keeps the nodes and bound pods it lists this way as each page is
decoded (`cluster.live.nodes`); the diagnosis reads both alike. Each page is decoded into those fields
alone (`NODE`, `BOUND_POD`): the rest of each object is parsed past, never made into objects."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypedDict

import msgspec

from cluster.transport import WHOLE, Kept
from diagnosis.objects import Object, mapping, meta, parts, sequence, spec, status, text
from diagnosis.triage.fit import CPU, pod_requests
from diagnosis.triage.peers import spec_terms
from diagnosis.triage.ports import HostPort, host_ports
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.steps.pod_affinity import ANTI_AFFINITY
from diagnosis.workloads import OWNER_LABELS


def _fields(*names: str, **typed: object) -> Any:
    """A schema to decode an object by (`msgspec`): these fields, any value, or those `typed` as given
    (a schema, or a list of one: `[schema]`); none required, every other field parsed past."""
    types = {k: list.__class_getitem__(v[0]) if isinstance(v, list) else v for k, v in typed.items()}
    return TypedDict("Fields", {**dict.fromkeys(names, Any), **types}, total=False)  # type: ignore[operator]


def _list_of(item: object) -> Any:
    """A schema for a LIST page whose items are decoded by `item`."""
    return _fields("apiVersion", "kind", "metadata", items=[item])


_NODE_FIELDS = {
    "metadata": ("name", "uid", "labels", "creationTimestamp"),
    "spec": ("taints", "unschedulable"),
    "status": ("capacity", "allocatable", "conditions"),
}
"""What the diagnosis reads of a node: labels, taints and the cordon (`diagnosis.triage.scheduling`),
capacity and allocatable (`diagnosis.triage.resources.offer`), conditions (`diagnosis.jobset.restarts`)."""

_POD_META = ("name", "namespace", "uid", "deletionTimestamp", "deletionGracePeriodSeconds")
_OWNER_REF = ("kind", "name", "uid", "controller")
_HELD = ("name", "resources", "allocatedResources")
"""What a container's status says it holds (`fit.pod_requests`: a pod resized in place)."""
_CONDITION = ("type", "status", "reason")

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"

_SHARED = frozenset({"namespace", "nodeName", "phase", "type", "status", "reason", "creationTimestamp"})
"""Fields whose values repeat across objects: a hundred thousand pods share a few namespaces and
phases, and a few thousand node names; a pool's nodes were made in the same few seconds."""


def compact_node(node: Object) -> dict[str, Any]:
    """The node without what the diagnosis never reads (images, managed fields, addresses, …). Nodes
    with the same taints share one spec, and so one list of them (never changed: the diagnosis only
    reads it), which the funnel then reads once for all of them
    (`diagnosis.triage.scheduling.Placement.untolerated`); and so do nodes with the same conditions."""
    kept: dict[str, Any] = {"apiVersion": node.get("apiVersion") or "v1", "kind": "Node"}
    node = _read_parts(node)
    for part, fields in _NODE_FIELDS.items():
        kept[part] = _pick(mapping(node.get(part)), fields)
    node_meta, node_status = kept["metadata"], kept["status"]
    if "name" in node_meta:
        # The one string of the name for the node, its hostname label and its bound pods' nodeName.
        node_meta["name"] = _shared(node_meta["name"])
    if isinstance(found := node_meta.get("labels"), dict):
        # Every node repeats the label keys, and a pool's nodes every value but the hostname.
        node_meta["labels"] = {_shared(k): _shared(v) for k, v in found.items()}
    for resources in ("capacity", "allocatable"):
        if isinstance(found := node_status.get(resources), dict):
            node_status[resources] = _same(found)
    if isinstance(listed := node_status.get("conditions"), list):
        # The kubelet writes lastHeartbeatTime every few minutes; nothing reads it. A pool's healthy
        # nodes then say the same: one list for them all.
        read = [
            {k: v for k, v in c.items() if k != "lastHeartbeatTime"} if isinstance(c, dict) else c
            for c in listed
        ]
        node_status["conditions"] = _same_list(read) if all(isinstance(c, dict) for c in read) else read
    kept["spec"] = _from_text(_SORTED.encode(kept["spec"]))
    return kept


_NODE = _fields(
    "apiVersion",
    metadata=_fields(*_NODE_FIELDS["metadata"]),
    spec=_fields("unschedulable", taints=msgspec.Raw),
    status=_fields("conditions", capacity=msgspec.Raw, allocatable=msgspec.Raw),
)


def _read_parts(node: Object) -> dict[str, Any]:
    """The node as `NODE` decodes it, its taints, capacity and allocatable read from their JSON text:
    one object for every equal text (a pool's nodes carry the same; never changed, the diagnosis only
    reads them), which the funnel then reads once for all of them (`Placement.untolerated`); a node
    decoded whole as it is."""
    for part, fields in (("spec", ("taints",)), ("status", ("capacity", "allocatable"))):
        found = node.get(part)
        if type(found) is dict:
            for field in fields:
                if type(raw := found.get(field)) is msgspec.Raw:
                    found[field] = _from_text(bytes(raw))
    return node if type(node) is dict else dict(node)


@lru_cache(maxsize=4096)
def _from_text(text: bytes) -> Any:
    """One value for every equal JSON text, never changed: the diagnosis only reads it."""
    return msgspec.json.decode(text)


_SORTED = msgspec.json.Encoder(order="sorted")
"""JSON text of a value whose equal values give the same text (`_from_text`)."""


NODE = Kept(_read_parts, msgspec.json.Decoder(_list_of(_NODE)))
"""A LIST of nodes, decoded into only the fields the diagnosis reads (those `compact_node` keeps): a
node's images, addresses, annotations and system information (most of its 6 KB) are parsed past: on
the bench's 10,000-node cluster, by hand, decoding and freeing a node takes 12 µs instead of 24. A
direct read keeps each node as decoded, with its taints, capacity and allocatable shared with the
nodes that carry the same (`_read_parts`: by hand, the bench's 5,000 nodes took 72 ms to decode and
keep with them decoded each, 62 ms so): making it compact would take 32 µs more, for memory only the
cache keeps for long."""


def compact_pod(pod: Object) -> dict[str, Any]:
    """What the diagnosis reads of a bound pod, in the shape of a pod: who it is and who made it (its
    owners and owner labels: holders are grouped by workload, `diagnosis.workloads`), where it is
    bound, its priority and class, its phase, whether it is terminating (its grace period, and why:
    `DisruptionTarget`), and its containers folded into one that asks the pod's requests
    (`fit.pod_requests`, and the extended resources as `resources.effective_requests` reads them)
    and holds its host ports (pods asking the same share that one container: a cluster runs a few
    hundred templates); its required pod anti-affinity (`diagnosis.triage.steps.pod_affinity`) and
    the PVCs of its volumes (`diagnosis.triage.steps.volume`)."""
    pod_meta, pod_spec, pod_status = parts(pod)
    kept_meta = _pick(pod_meta, _POD_META)
    refs = pod_meta.get("ownerReferences")
    if refs and (owners := _owners(refs)):
        kept_meta["ownerReferences"] = owners
    owner_labels = _pick(mapping(pod_meta.get("labels")), OWNER_LABELS)
    if owner_labels:
        kept_meta["labels"] = _same(owner_labels)
    resize_pending, disruption = _read_conditions(pod_status)
    priority = pod_spec.get("priority")
    kept_spec = _spec(
        text(pod_spec.get("nodeName")),
        priority if isinstance(priority, int) else None,
        text(pod_spec.get("priorityClassName")),
        _template(pod_spec, pod_status, resize_pending),
    )
    # The few pods with a required anti-affinity or PVCs get a spec of their own beside the shared one.
    repels = spec_terms(pod, ANTI_AFFINITY)
    claims = [
        _pick(mapping(v), ("name", "persistentVolumeClaim", "ephemeral"))
        for v in sequence(pod_spec.get("volumes"))
        if "persistentVolumeClaim" in mapping(v) or "ephemeral" in mapping(v)
    ]
    if repels or claims:
        kept_spec = dict(kept_spec)
        if repels:
            kept_spec["affinity"] = {ANTI_AFFINITY: {_REQUIRED: list(repels)}}
        if claims:
            kept_spec["volumes"] = [{**c, **({"ephemeral": {}} if "ephemeral" in c else {})} for c in claims]
    kept: dict[str, Any] = {"metadata": kept_meta, "spec": kept_spec}
    if pod_status.get("phase") != "Running" or disruption is not None:
        # A missing phase reads as not terminal, as every kept pod is.
        kept_status = _pick(pod_status, ("phase",))
        if disruption is not None:
            kept_status["conditions"] = [_pick(disruption, _CONDITION)]
        kept["status"] = kept_status
    return kept


def _read_conditions(pod_status: Object) -> tuple[Object | None, Object | None]:
    """The pod's `PodResizePending` and `DisruptionTarget` conditions (None where it has none), found
    in one pass over its conditions; decoded by `BOUND_POD`, they are JSON text, decoded only when it
    names either (most pods have neither: their five conditions are never made into objects)."""
    listed = pod_status.get("conditions")
    if type(listed) is msgspec.Raw:
        written = bytes(listed)
        if b'"PodResizePending"' not in written and b'"DisruptionTarget"' not in written:
            return None, None
        listed = WHOLE.decode(written)
    resize_pending = disruption = None
    for c in sequence(listed):
        if type(c) is dict or isinstance(c, Mapping):
            found = c.get("type")
            if found == "PodResizePending" and resize_pending is None:
                resize_pending = c
            elif found == "DisruptionTarget" and disruption is None:
                disruption = c
    return resize_pending, disruption


# What a container asks and holds, as JSON text: only `_template` reads it, as text (`_template_of`).
_CONTAINER = _fields("name", "ports", "restartPolicy", resources=msgspec.Raw)
_CONTAINER_STATUS = _fields("name", resources=msgspec.Raw, allocatedResources=msgspec.Raw)
_BOUND_POD = _fields(
    # Of its labels, those that name its owner (a pod carries a dozen); its owner references as text.
    metadata=_fields(*_POD_META, labels=_fields(*OWNER_LABELS) | None, ownerReferences=msgspec.Raw),
    spec=_fields(
        *("nodeName", "priority", "priorityClassName", "hostNetwork", "overhead", "resources"),
        containers=[_CONTAINER],
        initContainers=[_CONTAINER],
        affinity=_fields(ANTI_AFFINITY),
        volumes=[_fields("name", "persistentVolumeClaim", "ephemeral")],
    ),
    status=_fields(
        "phase",
        "resize",
        conditions=msgspec.Raw,
        containerStatuses=[_CONTAINER_STATUS],
        initContainerStatuses=[_CONTAINER_STATUS],
    ),
)
"""What `compact_pod` reads of a bound pod, and `fit.pod_requests`, `resources.effective_requests`,
`ports.host_ports` and `peers.spec_terms` for it."""

BOUND_POD = Kept(compact_pod, msgspec.json.Decoder(_list_of(_BOUND_POD)))
"""A LIST of bound pods, each kept as `compact_pod` keeps it, decoded into only the fields it reads
(`_BOUND_POD`): the rest of a pod (its images, environment, mounts, probes, most of its status: two
thirds of its JSON) is parsed past and never made into objects, which then need not be freed either.
On the bench's 10,000-node cluster, by hand, decoding and freeing a pod takes 7.5 µs instead of 17.5
(`make bench`, a, shows it in the sync row and the direct reads, `bench/RESULTS.md` round 16).
`tests/live/test_cache.py` checks that a pod read this way is kept as the whole pod is."""


_TEMPLATE_SPEC = ("containers", "initContainers", "overhead", "resources", "hostNetwork")
"""What a pod's `_Template` is worked out from in its spec: its containers and what adds to their
requests or ports; in its status, what its containers hold (`_HELD`: a pod resized in place) and
whether the kubelet found the resize infeasible (`resize`, the `PodResizePending` condition)."""

_TEXT = msgspec.json.Encoder()


def _template(pod_spec: Object, pod_status: Object, resize_pending: Object | None) -> _Template:
    """What the pod's containers ask and hold, worked out once per distinct text of what it is worked
    out from (`_TEMPLATE_SPEC`): the pods of one template have the same text (their containers'
    states and times are left out of it). A cluster runs a few hundred templates; writing the text
    takes a fraction of the time of working out what it asks."""
    read_status: dict[str, Any] = {
        field: [_pick(mapping(item), _HELD) for item in sequence(pod_status[field])]
        for field in ("initContainerStatuses", "containerStatuses")
        if field in pod_status
    }
    if "resize" in pod_status:
        read_status["resize"] = pod_status["resize"]
    if resize_pending is not None:
        read_status["conditions"] = [_pick(resize_pending, _CONDITION)]
    read = {"spec": {k: pod_spec[k] for k in _TEMPLATE_SPEC if k in pod_spec}, "status": read_status}
    return _template_of(_TEXT.encode(read))  # the pod was decoded from JSON: so is what it read


@lru_cache(maxsize=4096)
def _template_of(text: bytes) -> _Template:
    pod = WHOLE.decode(text)
    requests, extended = pod_requests(pod), effective_requests(pod)
    return _Template(tuple(requests.items()), tuple(extended.items()), host_ports(pod))


@dataclass(frozen=True)
class _Template:
    """What a compact pod's one container holds: pods of one template share it on every node."""

    requests: tuple[tuple[str, int], ...]
    extended: tuple[tuple[str, int], ...]
    ports: tuple[HostPort, ...]


@lru_cache(maxsize=65536)
def _spec(node: str, priority: int | None, priority_class: str, template: _Template) -> dict[str, Any]:
    """A compact pod's spec (shared by the pods of one template on one node, never changed: the
    diagnosis only reads it): its node, priority and its template's containers (`_containers`). The
    cache keeps its arguments, not an object of them: at 10,000 nodes, by hand, a frozen dataclass
    for each of the 65,536 kept took 10 MiB."""
    kept: dict[str, Any] = {"nodeName": _shared(node), "containers": _containers(template)}
    if priority is not None:
        kept["priority"] = priority
    if priority_class:
        kept["priorityClassName"] = priority_class
    return kept


@lru_cache(maxsize=4096)
def _containers(template: _Template) -> list[dict[str, Any]]:
    """One container that asks the pod's requests and holds its host ports (shared, never changed:
    the diagnosis works out what a pod asks once per containers list, `resources.template_key`).
    cpu is written in millicores; extended resources go in the limits too, which
    `effective_requests` reads first."""
    asks = {r: f"{v}m" if r == CPU else v for r, v in template.requests}
    resources = {"requests": asks, "limits": dict(template.extended)}
    container: dict[str, Any] = {"name": "", "resources": resources}
    if template.ports:
        container["ports"] = [
            {"hostPort": p.number, "containerPort": p.number, "protocol": p.protocol, "hostIP": p.ip}
            for p in template.ports
        ]
    return [container]


def compact_pending(pod: Object) -> dict[str, Any]:
    """What the sentinel reads of a pod waiting for a node: who it is and who owns it (labels and
    ownerReferences: its workload), since when it waits (creation, the PodScheduled condition), and
    whether it asks for a device (extended resources, ResourceClaims); and what `/triage` reads of a
    pod that competes for the same nodes: where it may go (nodeSelector, node affinity,
    tolerations) and whether the scheduler tries it yet (scheduling gates)."""
    kept = compact_pod(pod)
    # New dicts: a compact pod's spec is shared with the pods of its template (`_spec`).
    kept["metadata"] = kept["metadata"] | _pick(meta(pod), ("labels", "ownerReferences", "creationTimestamp"))
    placement = _pick(spec(pod), ("resourceClaims", "nodeSelector", "tolerations", "schedulingGates"))
    node_affinity = mapping(mapping(spec(pod).get("affinity")).get("nodeAffinity"))
    if node_affinity:
        placement["affinity"] = {"nodeAffinity": node_affinity}
    kept["spec"] = kept["spec"] | placement
    kept["status"] = kept.get("status", {}) | _pick(status(pod), ("phase", "conditions"))
    return kept


def _pick(source: Object, fields: Iterable[str]) -> dict[str, Any]:
    """The fields that are there, the values that repeat across objects kept once."""
    return {f: _shared(source[f]) if f in _SHARED else source[f] for f in fields if f in source}


def _shared(value: object) -> object:
    return sys.intern(value) if isinstance(value, str) else value


def _same(found: dict[str, Any]) -> dict[str, Any]:
    """One dict for every equal one of flat, hashable values (a workload's owner labels, a pool's
    capacity, a common node condition), never changed: the diagnosis only reads it; any other dict as
    it is. Held by a bounded cache: past `SAME_HELD` kinds, equal dicts are no longer all one."""
    try:
        return _one_dict(tuple(found.items()))
    except TypeError:  # a value that is not hashable (a list): not one the API writes in these fields
        return found


def _same_list(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`_same` for a list of such dicts (a node's conditions)."""
    try:
        return _one_list(tuple(tuple(d.items()) for d in found))
    except TypeError:
        return found


def _owners(refs: object) -> list[dict[str, Any]]:
    """What is kept of a pod's owner references (`_OWNER_REF`): one list for a workload's pods.
    Decoded by `BOUND_POD`, they are JSON text, read once per distinct text (`_owners_of_text`)."""
    if type(refs) is msgspec.Raw:
        return _owners_of_text(bytes(refs))
    refs = sequence(refs)
    try:
        return _one_list(tuple(tuple((f, r[f]) for f in _OWNER_REF if f in r) for r in map(mapping, refs)))
    except TypeError:  # a value that is not hashable: not one the API writes in these fields
        return [_pick(mapping(r), _OWNER_REF) for r in refs]


SAME_HELD = 65536


@lru_cache(maxsize=SAME_HELD)
def _owners_of_text(text: bytes) -> list[dict[str, Any]]:
    """`_owners` of the references in this JSON text: a workload's pods carry the same text."""
    return _owners(WHOLE.decode(text))


@lru_cache(maxsize=SAME_HELD)
def _one_dict(items: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    return dict(items)


@lru_cache(maxsize=SAME_HELD)
def _one_list(items: tuple[tuple[tuple[str, Any], ...], ...]) -> list[dict[str, Any]]:
    return [_one_dict(d) for d in items]
