"""Dynamic Resource Allocation objects read into one shape, whichever `resource.k8s.io` version served
them (KEP-4381; `k8s.io/api/resource/{v1,v1beta2,v1beta1}/types.go`).

v1 and v1beta2 put a request's fields under `exactly` (or list `firstAvailable` subrequests) and a
slice device's attributes and capacity on the device; v1beta1 puts the request's fields on the request
itself and the device's under `basic`. Everything below reads all three, and any field may be missing
or malformed (snapshots are written by people too): such a field reads as empty, never raises.

The cluster layer parses objects once (`Dra.of`) when it reads them, so a diagnosis over thousands of
ResourceSlices does not parse them again for every question. What repeats across objects is held once
(`_shared`): the watch cache keeps every slice and claim of a cluster parsed, and a pool's devices
repeat every attribute but their identity, a workload's claims their spec.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property, lru_cache
from typing import Any

from diagnosis import objects
from diagnosis.objects import (
    Object,
    kind,
    mapping,
    meta,
    name,
    namespace,
    sequence,
    spec,
    status,
    text,
    uid,
)
from diagnosis.quantity import exact

GROUP = "resource.k8s.io"
STANDARD_DOMAIN = "resource.kubernetes.io"
"""Attributes every driver may publish (`pciBusID`, `pcieRoot`)."""

RESERVED_FOR_MAX = 256
"""`ResourceClaimReservedForMaxSize`: the most consumers one claim may have."""

POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
"""Annotation the resourceclaim controller puts on a claim it made from a template."""

KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice")


@dataclass(frozen=True)
class Semver:
    """A `version` attribute: kept as written; the CEL environment parses it as Kubernetes does."""

    text: str


AttributeValue = int | bool | str | Semver

SHARED_HELD = 65536
"""Distinct values of each kind (versions, capacities, claim specs, node selectors) held once; past it,
equal values are no longer all one."""


def _shared(value: str) -> str:
    """One string for every equal one: a driver, a pool, a device's name and attribute values repeat
    across thousands of slices and claims."""
    return sys.intern(value)


def _device_id(driver: str, pool: str, device: str) -> str:
    """A device's id, one string for the device and every allocation result that holds it: the cache
    keeps both for every device of a cluster (a slotted instance keeps it without an attribute dict,
    which a cached property would make for each)."""
    return _shared(f"{driver}/{pool}/{device}")


@lru_cache(maxsize=SHARED_HELD)
def _semver(version: str) -> Semver:
    return Semver(_shared(version))


@lru_cache(maxsize=SHARED_HELD)
def _from_json(listed: str) -> Any:
    """One value for every equal one (`listed`: it as JSON), never changed: the diagnosis only reads it."""
    return json.loads(listed)


def _one(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """`_from_json` of a mapping read from an object (a claim's allocated node selector)."""
    return mapping(_from_json(json.dumps(value, sort_keys=True)))


# --- the pod's side -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodClaim:
    """One entry of the pod's `spec.resourceClaims`, with the claim it stands for."""

    name: str
    claim_name: str
    """`resourceClaimName`, or "" for a template entry."""
    template: str
    """`resourceClaimTemplateName`, or "" for a named claim."""
    generated: str | None
    """For a template entry: the claim the controller made for it (`status.resourceClaimStatuses`);
    None while it has made none. "" when it says no claim is needed."""

    @property
    def resolved(self) -> str | None:
        """The name of the claim to read, or None when it is not known yet."""
        return self.claim_name or self.generated or None


def pod_claims(pod: Object) -> tuple[PodClaim, ...]:
    """The pod's `spec.resourceClaims`, in order."""
    made: dict[str, str] = {}
    for item in map(mapping, sequence(status(pod).get("resourceClaimStatuses"))):
        made[text(item.get("name"))] = text(item.get("resourceClaimName"))
    found = []
    for item in map(mapping, sequence(spec(pod).get("resourceClaims"))):
        entry = text(item.get("name"))
        claim_name, template = (
            text(item.get("resourceClaimName")),
            text(item.get("resourceClaimTemplateName")),
        )
        found.append(PodClaim(entry, claim_name, template, made.get(entry) if template else None))
    return tuple(found)


# --- claims ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subrequest:
    """One way to satisfy a request: its `exactly` part, or one `firstAvailable` entry."""

    name: str
    """The request's name, or `request/subrequest` (as allocation results name it)."""
    device_class: str
    selectors: tuple[str, ...]
    """CEL expressions; a device must match all of them and all of its class's."""
    all_devices: bool
    """`allocationMode: All`: every matching device, at least one."""
    count: int
    admin_access: bool
    tolerations: tuple[Mapping[str, Any], ...]
    pointer: str = field(default="", compare=False)
    """Where its fields are in the ResourceClaimSpec, as a JSON pointer (RFC 6901):
    `/devices/requests/0/exactly`, `/devices/requests/0/firstAvailable/1`, `/devices/requests/0`."""

    @cached_property
    def asks_key(self) -> str:
        """What it asks of a device, as one string: its class, selectors and tolerations (a node's
        devices are offered to it by these alone: `diagnosis.triage.dra.devices.Devices.offer`, which looks
        it up for every node, and a string keeps its hash)."""
        asks = [self.device_class, self.selectors, self.tolerations]
        return json.dumps(asks, sort_keys=True, default=str)


@dataclass(frozen=True)
class Request:
    name: str
    alternatives: tuple[Subrequest, ...]
    """One for `exactly`; the `firstAvailable` subrequests in order (the first that fits is used)."""


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...]
    """The requests it binds; empty: all of the claim's."""
    attribute: str
    """`matchAttribute`, fully qualified (`gpu.nvidia.com/productName`)."""


@dataclass(frozen=True)
class ClaimSpec:
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]


@dataclass(frozen=True, slots=True)
class Result:
    """One allocated device (`status.allocation.devices.results[]`)."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool
    device_id: str = field(init=False, compare=False, repr=False)
    """The id of the device it holds (`Device.id`): the very string the device has (`_device_id`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "device_id", _device_id(self.driver, self.pool, self.device))


@dataclass(frozen=True, slots=True)
class Claim:
    """A ResourceClaim. Hashed by the fields that hold no mapping (equal claims hash alike), so that
    claims can key the evidence's groupings."""

    namespace: str
    name: str
    uid: str
    deleting: bool
    spec: ClaimSpec = field(hash=False)
    allocated: bool
    results: tuple[Result, ...]
    node_selector: Mapping[str, Any] | None = field(hash=False)
    """`status.allocation.nodeSelector`: where the pod may run; None: any node."""
    reserved_for: tuple[tuple[str, str], ...]
    """The consuming pods: (name, uid)."""
    controller: tuple[str, str, str] | None
    """The controlling owner: (kind, name, uid)."""
    pod_claim_name: str
    """The pod claim entry it was made for (template claims), else ""."""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def _subrequest(item: Mapping[str, Any], shown: str, pointer: str) -> Subrequest:
    mode = text(item.get("allocationMode")) or "ExactCount"
    raw_count = item.get("count")
    count = (
        raw_count if isinstance(raw_count, int) and not isinstance(raw_count, bool) and raw_count > 0 else 1
    )
    return Subrequest(
        name=shown,
        device_class=text(item.get("deviceClassName")),
        selectors=_selectors(item.get("selectors")),
        all_devices=mode == "All",
        count=count,
        admin_access=item.get("adminAccess") is True,
        tolerations=tuple(map(mapping, sequence(item.get("tolerations")))),
        pointer=pointer,
    )


def _selectors(value: object) -> tuple[str, ...]:
    return tuple(
        text(mapping(mapping(s).get("cel")).get("expression"))
        for s in sequence(value)
        if isinstance(s, Mapping)
    )


def claim_spec(value: object) -> ClaimSpec:
    """A ResourceClaimSpec (a claim's `spec`, a template's `spec.spec`), in any served version."""
    devices = mapping(mapping(value).get("devices"))
    requests = []
    for index, item in enumerate(map(mapping, sequence(devices.get("requests")))):
        request, at = text(item.get("name")), f"/devices/requests/{index}"
        exactly = item.get("exactly")
        if isinstance(exactly, Mapping):  # v1, v1beta2
            alternatives: tuple[Subrequest, ...] = (_subrequest(exactly, request, f"{at}/exactly"),)
        elif "firstAvailable" in item:
            alternatives = tuple(
                _subrequest(
                    mapping(s), f"{request}/{text(mapping(s).get('name'))}", f"{at}/firstAvailable/{i}"
                )
                for i, s in enumerate(sequence(item.get("firstAvailable")))
            )
        else:  # v1beta1: the fields on the request itself
            alternatives = (_subrequest(item, request, at),)
        requests.append(Request(request, alternatives))
    constraints = tuple(
        Constraint(tuple(text(r) for r in sequence(c.get("requests"))), text(c.get("matchAttribute")))
        for c in map(mapping, sequence(devices.get("constraints")))
        if text(c.get("matchAttribute"))
    )
    return ClaimSpec(tuple(requests), constraints)


@lru_cache(maxsize=SHARED_HELD)
def _claim_spec(listed: str) -> ClaimSpec:
    """One ClaimSpec for the claims of equal specs (`listed`: the spec as JSON): a workload's claims
    are made from one template."""
    return claim_spec(json.loads(listed))


def _controller(obj: Object, same: Mapping[str, str]) -> tuple[str, str, str] | None:
    """The object's controlling owner: (kind, name, uid), the name and uid as `same` holds them."""
    for ref in map(mapping, sequence(meta(obj).get("ownerReferences"))):
        if ref.get("controller") is True:
            owner, owner_uid = text(ref.get("name")), text(ref.get("uid"))
            return _shared(text(ref.get("kind"))), same.get(owner, owner), same.get(owner_uid, owner_uid)
    return None


def claim(obj: Object) -> Claim:
    allocation = status(obj).get("allocation")
    results = tuple(
        Result(
            _shared(text(r.get("request"))),
            _shared(text(r.get("driver"))),
            _shared(text(r.get("pool"))),
            _shared(text(r.get("device"))),
            r.get("adminAccess") is True,
        )
        for r in map(mapping, sequence(mapping(mapping(allocation).get("devices")).get("results")))
    )
    selector = mapping(allocation).get("nodeSelector")
    reserved_for = tuple(
        (text(r.get("name")), text(r.get("uid")))
        for r in map(mapping, sequence(status(obj).get("reservedFor")))
        if text(r.get("resource")) in ("pods", "")
    )
    # A template's claim is reserved for the pod that owns it: its name and uid, held once.
    same = {value: value for consumer in reserved_for for value in consumer}
    controller = _controller(obj, same)
    return Claim(
        namespace=namespace(obj),
        name=name(obj),
        uid=uid(obj),
        deleting=meta(obj).get("deletionTimestamp") is not None,
        spec=_claim_spec(json.dumps(spec(obj), sort_keys=True)),
        allocated=isinstance(allocation, Mapping),
        results=results,
        node_selector=_one(selector) if isinstance(selector, Mapping) else None,
        reserved_for=reserved_for,
        controller=controller,
        pod_claim_name=_shared(text(objects.annotations(obj).get(POD_CLAIM_NAME))),
    )


# --- classes and slices ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]


def device_class(obj: Object) -> DeviceClass:
    return DeviceClass(name(obj), _selectors(spec(obj).get("selectors")))


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Device:
    """One device of a slice, hashed by its identity and taints (its mappings are compared, not
    hashed)."""

    driver: str
    pool: str
    name: str
    attributes: Mapping[str, Mapping[str, AttributeValue]] = field(hash=False)
    """Domain → attribute name → value; a name written without a domain is the driver's."""
    capacity: Mapping[str, Mapping[str, Decimal]] = field(hash=False)
    taints: tuple[DeviceTaint, ...]
    id: str = field(init=False, compare=False, repr=False)
    """`driver/pool/name` (`_device_id`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", _device_id(self.driver, self.pool, self.name))

    def attribute(self, qualified: str) -> AttributeValue | None:
        """A fully qualified attribute (`gpu.nvidia.com/productName`), or None when it lacks it."""
        domain, _, ident = qualified.rpartition("/")
        return self.attributes.get(domain, {}).get(ident)


@dataclass(frozen=True, slots=True)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    node_selector: Mapping[str, Any] | None = field(hash=False)
    all_nodes: bool
    devices: tuple[Device, ...]


def _qualified(driver: str, key: str) -> tuple[str, str]:
    domain, _, ident = key.rpartition("/")
    return _shared(domain or driver), _shared(ident)


def _attribute(value: Mapping[str, Any]) -> AttributeValue | None:
    for field_name, kind_ in (("int", int), ("bool", bool), ("string", str)):
        found = value.get(field_name)
        if isinstance(found, kind_) and (kind_ is bool or not isinstance(found, bool)):
            return found
    version = value.get("version")
    return _semver(version) if isinstance(version, str) else None


class _Row(Mapping[str, Any]):
    """A map that keeps its values alone, never changed: its keys, and where each value is, are one
    map for every row of the same keys (`_layout`). A pool's devices have the same attributes, each
    in a domain: at 65,000 nodes, the bench's 175,000 devices kept two dicts each."""

    __slots__ = ("_at", "_values")

    def __init__(self, found: Mapping[str, Any]) -> None:
        self._at = _layout(tuple(found))
        self._values = tuple(found.values())

    def __getitem__(self, key: str) -> Any:
        return self._values[self._at[key]]

    def get(self, key: str, default: Any = None) -> Any:
        at = self._at.get(key)
        return default if at is None else self._values[at]

    def __contains__(self, key: object) -> bool:
        return key in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(dict(self))


@lru_cache(maxsize=SHARED_HELD)
def _layout(keys: tuple[str, ...]) -> Mapping[str, int]:
    return {key: at for at, key in enumerate(keys)}


def _device(driver: str, pool: str, item: Mapping[str, Any]) -> Device:
    basic = mapping(item.get("basic"))
    body = basic or item  # v1beta1 nests the device's fields under `basic`
    attributes: defaultdict[str, dict[str, AttributeValue]] = defaultdict(dict)
    for key, value in mapping(body.get("attributes")).items():
        parsed = _attribute(mapping(value))
        if isinstance(key, str) and parsed is not None:
            domain, ident = _qualified(driver, key)
            attributes[domain][ident] = _shared(parsed) if isinstance(parsed, str) else parsed
    capacity: defaultdict[str, dict[str, Decimal]] = defaultdict(dict)
    for key, value in mapping(body.get("capacity")).items():
        amount = exact(mapping(value).get("value") if isinstance(value, Mapping) else value)
        if isinstance(key, str) and amount is not None:
            domain, ident = _qualified(driver, key)
            capacity[domain][ident] = amount
    taints = tuple(
        DeviceTaint(text(t.get("key")), text(t.get("value")), text(t.get("effect")))
        for t in map(mapping, sequence(body.get("taints")))
    )
    kept = _Row(
        {
            domain: _standard(tuple(found.items())) if domain == STANDARD_DOMAIN else _Row(found)
            for domain, found in attributes.items()
        }
    )
    return Device(driver, pool, _shared(text(item.get("name"))), kept, _capacity(_frozen(capacity)), taints)


@lru_cache(maxsize=SHARED_HELD)
def _standard(items: tuple[tuple[str, AttributeValue], ...]) -> Mapping[str, AttributeValue]:
    """One map of the standard attributes (`pciBusID`, `pcieRoot`: where a device sits in its machine)
    for the devices that sit alike: the same slot of every machine of a kind."""
    return _Row(dict(items))


Frozen = tuple[tuple[str, tuple[tuple[str, Decimal], ...]], ...]
"""A device's capacity as a key: domain → name → amount, as tuples."""


def _frozen(capacity: Mapping[str, Mapping[str, Decimal]]) -> Frozen:
    return tuple((domain, tuple(amounts.items())) for domain, amounts in capacity.items())


@lru_cache(maxsize=SHARED_HELD)
def _capacity(frozen: Frozen) -> Mapping[str, Mapping[str, Decimal]]:
    """One capacity for the devices of equal capacity (a pool's GPUs all have the same memory)."""
    return {domain: dict(amounts) for domain, amounts in frozen}


def resource_slice(obj: Object) -> Slice:
    body = spec(obj)
    driver = _shared(text(body.get("driver")))
    pool = mapping(body.get("pool"))
    pool_name = _shared(text(pool.get("name")))
    generation, count = pool.get("generation"), pool.get("resourceSliceCount")
    selector = body.get("nodeSelector")
    return Slice(
        name=name(obj),
        driver=driver,
        pool=pool_name,
        generation=generation if isinstance(generation, int) else 0,
        slice_count=count if isinstance(count, int) else 1,
        node_name=_shared(text(body.get("nodeName"))),  # the node's own name (`cluster.compact`)
        node_selector=selector if isinstance(selector, Mapping) else None,
        all_nodes=body.get("allNodes") is True,
        devices=tuple(_device(driver, pool_name, mapping(d)) for d in sequence(body.get("devices"))),
    )


@dataclass(frozen=True, slots=True)
class Pool:
    """The slices of one driver's pool at its newest generation (older ones are being replaced)."""

    driver: str
    name: str
    generation: int
    slices: tuple[Slice, ...]

    @property
    def complete(self) -> bool:
        """All `resourceSliceCount` slices of the generation are there: the allocator uses no device
        of an incomplete pool."""
        return len(self.slices) == self.slices[0].slice_count


def pools(slices: Iterable[Slice]) -> tuple[Pool, ...]:
    grouped: defaultdict[tuple[str, str], list[Slice]] = defaultdict(list)
    for item in slices:
        grouped[(item.driver, item.pool)].append(item)
    found = []
    for (driver, pool), members in sorted(grouped.items()):
        newest = max(s.generation for s in members)
        found.append(Pool(driver, pool, newest, tuple(s for s in members if s.generation == newest)))
    return tuple(found)


# --- everything a diagnosis reads -----------------------------------------------------------------


_SERIALS = itertools.count(1)


@dataclass(frozen=True)
class Inventory:
    """The cluster's devices: its DeviceClasses and ResourceSlices. They change far less often than
    claims (every pod start writes one), so a reader keeps one Inventory while they are unchanged, and
    what the diagnosis works out about its devices (`memo`) is worked out once."""

    classes: tuple[DeviceClass, ...] = ()
    slices: tuple[Slice, ...] = ()
    memo: dict[object, object] = field(default_factory=dict, repr=False, compare=False, hash=False)
    """Results of pure functions of these devices, by their arguments (`diagnosis.triage.dra.devices`)."""
    serial: int = field(default_factory=lambda: next(_SERIALS), init=False, compare=False, repr=False)
    """A number for this very Inventory among all made in the process, never reused as an id is once
    its object is gone: what questions find of its devices on each node is kept under it between
    questions (`diagnosis.triage.findings.Findings`)."""

    @cached_property
    def class_index(self) -> Mapping[str, DeviceClass]:
        return {c.name: c for c in self.classes}

    @cached_property
    def pools(self) -> tuple[Pool, ...]:
        return pools(self.slices)

    @cached_property
    def by_node(self) -> Mapping[str, tuple[Pool, ...]]:
        """Node name → the pools with a slice pinned to it by `nodeName`."""
        found: defaultdict[str, list[Pool]] = defaultdict(list)
        for pool in self.pools:
            for node in dict.fromkeys(s.node_name for s in pool.slices if s.node_name):
                found[node].append(pool)
        return {k: tuple(v) for k, v in found.items()}

    @cached_property
    def unpinned(self) -> tuple[Pool, ...]:
        """Pools with a slice for all nodes or for a node selector."""
        return tuple(
            p for p in self.pools if any(s.all_nodes or s.node_selector is not None for s in p.slices)
        )


def inventory(objects: Iterable[Object]) -> Inventory:
    """The DeviceClasses and ResourceSlices among `objects`."""
    found: defaultdict[str, list[Object]] = defaultdict(list)
    for obj in objects:
        if kind(obj) in ("DeviceClass", "ResourceSlice") and text(obj.get("apiVersion")).startswith(
            f"{GROUP}/"
        ):
            found[kind(obj)].append(obj)
    return Inventory(
        tuple(map(device_class, found["DeviceClass"])), tuple(map(resource_slice, found["ResourceSlice"]))
    )


@dataclass(frozen=True)
class Dra:
    """The cluster's DRA objects, parsed. `claims` holds the pod's claims and every allocated claim
    (their devices are in use); `templates` the pod's namespace's templates."""

    claims: tuple[Claim, ...] = ()
    templates: tuple[tuple[str, str], ...] = ()
    """(namespace, name) of the ResourceClaimTemplates."""
    devices: Inventory = field(default_factory=Inventory)
    served: bool = True
    """False when the cluster serves no `resource.k8s.io` (DRA is not enabled there)."""
    derived: Derived | None = field(default=None, compare=False, repr=False)
    """What is already known of these claims: who holds each device, and the claims by name
    (`with_claims`, `holding`)."""
    @classmethod
    def of(cls, objects: Iterable[Object], served: bool = True) -> Dra:
        found = [o for o in objects if kind(o) in KINDS and text(o.get("apiVersion")).startswith(f"{GROUP}/")]
        return cls(
            claims=tuple(claim(o) for o in found if kind(o) == "ResourceClaim"),
            templates=tuple((namespace(o), name(o)) for o in found if kind(o) == "ResourceClaimTemplate"),
            devices=inventory(found),
            served=served,
        )

    @cached_property
    def claim_index(self) -> Mapping[tuple[str, str], Claim]:
        known = self._known
        if known is not None and known.index is not None:
            return known.index
        return {(c.namespace, c.name): c for c in self.claims}

    @cached_property
    def _positions(self) -> Mapping[tuple[str, str], int]:
        """Where each claim is in `claims`, by (namespace, name): the keys of `claim_index`, which are
        in the order of `claims` where no two claims share a name (46,216 claims at 65,000 nodes)."""
        index = self.claim_index
        if len(index) == len(self.claims):
            return {key: at for at, key in enumerate(index)}
        return {(c.namespace, c.name): at for at, c in enumerate(self.claims)}

    @cached_property
    def reserving(self) -> Mapping[tuple[str, str], tuple[Claim, ...]]:
        """(namespace, pod name) → the claims reserved for that pod."""
        found: defaultdict[tuple[str, str], list[Claim]] = defaultdict(list)
        for c in self.claims:
            for pod_name, _ in c.reserved_for:
                found[(c.namespace, pod_name)].append(c)
        return {k: tuple(v) for k, v in found.items()}

    def pinning(self, pod: Object) -> tuple[str, ...]:
        """The nodes the pod's allocated claims name (`status.allocation.nodeSelector` with
        `metadata.name In [...]`, as the allocator pins a node-local device's claim): a pod confined
        there must have them in its view, even where its own nodeSelector excludes them."""
        pinned: list[str] = []
        for entry in pod_claims(pod):
            found = self.claim_index.get((namespace(pod), entry.resolved or ""))
            selector = found.node_selector if found is not None and found.allocated else None
            for term in map(mapping, sequence(mapping(selector).get("nodeSelectorTerms"))):
                for match in map(mapping, sequence(term.get("matchFields"))):
                    if match.get("key") == "metadata.name" and match.get("operator") == "In":
                        pinned.extend(map(text, sequence(match.get("values"))))
        return tuple(dict.fromkeys(pinned))

    @property
    def class_index(self) -> Mapping[str, DeviceClass]:
        return self.devices.class_index

    @property
    def holders(self) -> Mapping[str, tuple[Claim, str]]:
        """Device id → the claim whose allocation holds it and the result's request. Results with
        admin access do not hold their device (others may still allocate it)."""
        return self._holdings[0]

    @cached_property
    def _holdings(self) -> tuple[Mapping[str, tuple[Claim, str]], bool]:
        """`holders`, and whether two claims hold one device (the later named, as the scheduler's
        allocated-device tracker would overwrite it)."""
        known = self._known
        if known is not None and known.holders is not None:
            return known.holders, False
        found: dict[str, tuple[Claim, str]] = {}
        clash = False
        for claim in self.claims:
            clash = _hold(found, claim) or clash
        return found, clash

    @property
    def _known(self) -> Derived | None:
        """`derived`, when it is about these very claims (a `replace` of the claims drops it)."""
        known = self.derived
        return known if known is not None and known.claims is self.claims else None

    @property
    def base(self) -> Dra | None:
        """The Dra these claims are a change of (`with_claims`), on the same devices."""
        base = self._known.base if self._known is not None else None
        return base if base is not None and base.devices is self.devices else None

    @property
    def touched(self) -> frozenset[tuple[str, str]]:
        """The pools (driver, name) some of whose devices `base` holds otherwise: only the nodes that
        reach them see other holders."""
        known = self._known
        return known.touched if known is not None else frozenset()

    def holding(self) -> Dra:
        """This Dra, with its holders worked out, to be kept by a copy (`replace`) of other fields."""
        return replace(self, derived=Derived(self.claims, self.holders))

    def with_claims(self, replaced: Mapping[tuple[str, str], Claim | None], inventory: Inventory) -> Dra:
        """These DRA objects with some claims replaced ((namespace, name) → the claim now; None: it is
        gone; a claim this one does not hold is left out), on `inventory`. A fix changes a few claims
        of thousands: the claims by name and what they hold are worked out from this one's, for the
        claims that differ, whatever the inventory."""
        index, positions = self.claim_index, self._positions
        now = {key: claim for key, claim in replaced.items() if key in index}
        listed, named, dropped = list(self.claims), dict(index), []
        for key, claim in now.items():
            if claim is None:
                dropped.append(positions[key])
                del named[key]
            else:
                listed[positions[key]] = named[key] = claim
        for at in sorted(dropped, reverse=True):
            del listed[at]
        claims = tuple(listed)
        before = [index[key] for key in now]
        after = [c for c in now.values() if c is not None]
        touched = frozenset((r.driver, r.pool) for c in (*before, *after) for r in c.results)
        # Who holds a device is read of the claims alone; on another inventory `base` is None.
        derived = Derived(claims, None, self, touched, named)
        changed = replace(self, claims=claims, devices=inventory, derived=derived)
        found, clash = self._holdings
        if clash:
            return changed
        found = dict(found)
        for claim in before:
            for result in claim.results:
                if found.get(result.device_id, (None,))[0] is claim:
                    del found[result.device_id]
        for claim in after:
            if _hold(found, claim):
                return changed
        return replace(changed, derived=Derived(claims, found, self, touched, named))


@dataclass(frozen=True)
class Derived:
    """What is known of a Dra's claims from elsewhere (`Dra.derived`)."""

    claims: tuple[Claim, ...]
    """The claims it is about: it holds only while the Dra's claims are these very ones."""
    holders: Mapping[str, tuple[Claim, str]] | None
    """`Dra.holders`; None: to be worked out."""
    base: Dra | None = None
    touched: frozenset[tuple[str, str]] = frozenset()
    index: Mapping[tuple[str, str], Claim] | None = None
    """`Dra.claim_index`; None: to be worked out."""


def _hold(holders: dict[str, tuple[Claim, str]], claim: Claim) -> bool:
    """Note the devices the claim's allocation holds (not those it has admin access to); True when
    another claim already held one of them."""
    clash = False
    if claim.allocated:
        held: dict[str, tuple[Claim, str]] = {}  # one pair per request: a claim holds 8 GPUs for one
        for result in claim.results:
            if not result.admin_access:
                clash = clash or result.device_id in holders
                holders[result.device_id] = held.setdefault(result.request, (claim, result.request))
    return clash


NO_DRA = Dra()
