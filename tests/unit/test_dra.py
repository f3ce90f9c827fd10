"""Dynamic Resource Allocation: the object shapes of every served version, the CEL environment on the
NVIDIA driver's own DeviceClass expressions, and kube-scheduler's DynamicResources Filter rows.

The Filter rows are ported from `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go`
and the structured allocator's `allocator_test.go` (`k8s.io/dynamic-resource-allocation/structured`),
each expressed as a snapshot (nodes, slices, classes, claims, the pod) and the verdict that row's
outcome means here. Rows a snapshot cannot express are listed at the end, with why.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from itertools import pairwise
from typing import Any

import pytest

from cluster.cache import deep_size
from devtools import dra
from devtools.dra import A100_40, H100, L4, Mig
from devtools.dra_lab import FILES, ROOT
from diagnosis.dra_objects import STANDARD_DOMAIN, Device, Dra, Semver, claim, claim_spec, resource_slice
from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify
from diagnosis.triage.dra.cel import Outcome, evaluate, parse_semver
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.findings import Findings
from diagnosis.triage.prepared import Prepared
from diagnosis.views import TriageView

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
NS = "ml"


def _devices(version: str = "v1", **more: Any) -> list[Device]:
    found = dra.gpu_devices(
        "node-a", H100, range(2), migs={0: [Mig("1g.10gb", 19, 0, 1, "9984Mi", 16)]}, version=version, **more
    )
    return list(resource_slice(dra.resource_slice("node-a", found, version)).devices)


# --- shapes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_every_version_reads_as_v1(version: str) -> None:
    requests = [dra.request("gpu", count=2, selectors=["device.attributes['gpu.nvidia.com'].type == 'gpu'"])]
    constraints = [{"matchAttribute": "gpu.nvidia.com/parentUUID"}]
    assert claim_spec(dra.claim_spec(requests, constraints, version)) == claim_spec(
        dra.claim_spec(requests, constraints)
    )
    mine, v1 = _devices(version), _devices("v1")
    assert [(d.name, d.attributes, d.capacity) for d in mine] == [
        (d.name, d.attributes, d.capacity) for d in v1
    ]


def test_v1beta1_request_fields_sit_on_the_request() -> None:
    raw = {
        "devices": {
            "requests": [
                {
                    "name": "gpus",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 4,
                    "allocationMode": "ExactCount",
                }
            ]
        }
    }
    (request,) = claim_spec(raw).requests
    (sub,) = request.alternatives
    assert (sub.name, sub.device_class, sub.count, sub.all_devices) == ("gpus", "gpu.nvidia.com", 4, False)


def test_first_available_names_subrequests_as_results_do() -> None:
    spec = dra.claim_spec(
        [
            dra.request(
                "gpu",
                first_available=[
                    dra.subrequest("large", "gpu.nvidia.com", count=2),
                    dra.subrequest("small", "mig.nvidia.com"),
                ],
            )
        ]
    )
    (request,) = claim_spec(spec).requests
    assert [s.name for s in request.alternatives] == ["gpu/large", "gpu/small"]


def test_attributes_are_qualified_by_the_driver_and_typed() -> None:
    gpu = next(d for d in _devices() if d.name == "gpu-1")
    assert gpu.attributes["gpu.nvidia.com"]["type"] == "gpu"
    assert gpu.attributes["gpu.nvidia.com"]["driverVersion"] == Semver("580.95.5")
    assert gpu.attributes["resource.kubernetes.io"]["pciBusID"] == "0000:20:00.0"
    assert gpu.capacity["gpu.nvidia.com"]["memory"] == Decimal(80 * 2**30)
    assert gpu.attribute("gpu.nvidia.com/productName") == "NVIDIA H100 80GB HBM3"


def test_what_repeats_across_slices_and_claims_is_held_once() -> None:
    """The cache keeps every slice and claim parsed: equal capacities, versions and specs are one
    object, equal strings one string; what differs stays apart, and reads as parsed alone."""
    encoded = [json.dumps(dra.resource_slice(node, dra.gpu_devices(node, H100, range(2)))) for node in "ab"]
    first, second = (resource_slice(json.loads(text)) for text in encoded)
    a, b = first.devices[0], second.devices[1]
    assert a.capacity is b.capacity
    assert a.attributes["gpu.nvidia.com"]["driverVersion"] is b.attributes["gpu.nvidia.com"]["driverVersion"]
    assert a.attributes["gpu.nvidia.com"]["productName"] is b.attributes["gpu.nvidia.com"]["productName"]
    assert a.attributes["gpu.nvidia.com"]["uuid"] != b.attributes["gpu.nvidia.com"]["uuid"]
    assert [*a.attributes["gpu.nvidia.com"]][1] is [*b.attributes["gpu.nvidia.com"]][1]  # "uuid"
    assert first.driver is second.driver
    # Where a device sits (the standard domain's PCI attributes) repeats in every machine of a kind.
    same_slot, other_slot = second.devices[0], second.devices[1]
    assert a.attributes[STANDARD_DOMAIN] is same_slot.attributes[STANDARD_DOMAIN]
    assert a.attributes[STANDARD_DOMAIN] != other_slot.attributes[STANDARD_DOMAIN]
    small = resource_slice(dra.resource_slice("c", dra.gpu_devices("c", A100_40, range(1))))
    assert small.devices[0].capacity == {"gpu.nvidia.com": {"memory": Decimal(40 * 2**30)}}

    spec = dra.claim_spec([dra.request("gpus", count=8)])
    on = {"x": "a", "y": "a", "z": "b"}  # claim → the node it is allocated on
    gpu0 = [("gpus", "gpu-0")]
    served = (dra.resource_claim(NS, n, spec, dra.allocation(at, gpu0)) for n, at in on.items())
    x, y, z = (claim(json.loads(json.dumps(obj))) for obj in served)
    assert x.spec is y.spec is z.spec
    assert x.node_selector is y.node_selector
    assert x.node_selector != z.node_selector
    assert x.results[0].driver is z.results[0].driver
    # A result and the device it holds share one id string.
    assert x.results[0].device_id == a.id == f"{a.driver}/{a.pool}/gpu-0"
    assert x.results[0].device_id is a.id
    # A template's claim names the pod that owns it twice (its owner, its consumer): one name, one uid.
    owned = dra.resource_claim(
        NS, "t", spec, dra.allocation("a", gpu0), reserved_for=["p"], owner_pod="p", pod_claim="gpus"
    )
    made = claim(json.loads(json.dumps(owned)))
    assert made.controller is not None
    assert made.controller[1:] == made.reserved_for[0]
    assert made.controller[1] is made.reserved_for[0][0]
    assert made.controller[2] is made.reserved_for[0][1]
    other = claim(dra.resource_claim(NS, "w", dra.claim_spec([dra.request("gpus", count=4)])))
    assert other.spec is not x.spec
    assert [r.alternatives[0].count for r in other.spec.requests] == [4]


def test_a_pools_devices_keep_their_attribute_names_once() -> None:
    """A device's attributes read as a map of maps (what CEL and the evidence read); the names of a
    pool's devices' attributes, and where each value sits, are one map for them all: each device
    keeps its values alone."""
    first, second = resource_slice(dra.resource_slice("a", dra.gpu_devices("a", H100, range(2)))).devices
    assert dict(first.attributes) == {
        domain: dict(first.attributes[domain]) for domain in ("gpu.nvidia.com", STANDARD_DOMAIN)
    }
    driver = first.attributes["gpu.nvidia.com"]
    assert driver == dict(driver)
    assert driver.get("type") == "gpu"
    assert driver.get("missing", "none") == "none"
    assert "uuid" in driver
    assert "missing" not in driver
    assert first.attribute("gpu.nvidia.com/nothing") is None
    plain = [{d: dict(m) for d, m in device.attributes.items()} for device in (first, second)]
    assert second.attributes == plain[1]
    # What the second device adds to the first's: its values, not the names again (nor two dicts).
    own = deep_size([first.attributes, second.attributes]) - deep_size([first.attributes])
    assert own < (deep_size(plain) - deep_size(plain[:1])) * 0.7


def test_the_deep_size_counts_what_slotted_objects_hold() -> None:
    """Devices and allocation results keep their fields in slots (no attribute dict each): the cache's
    deep size reads them there, each string once."""
    allocated = dra.allocation("a", [("gpus", "gpu-0")])
    result = claim(dra.resource_claim(NS, "x", dra.claim_spec([dra.request("gpus")]), allocated)).results[0]
    held = {id(v): v for v in (result.request, result.driver, result.pool, result.device, result.device_id)}
    assert not hasattr(result, "__dict__")
    sizes = [sys.getsizeof(result), *map(sys.getsizeof, held.values()), sys.getsizeof(result.admin_access)]
    assert deep_size([result]) == sum(sizes)


def test_malformed_objects_read_as_empty() -> None:
    broken = claim(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "x"},
            "spec": {"devices": {"requests": [7, {"name": "r", "exactly": "no"}]}},
            "status": {"allocation": {"devices": {"results": "no"}}},
        }
    )
    assert broken.allocated
    assert broken.results == ()
    assert [r.name for r in broken.spec.requests] == ["", "r"]


# --- CEL: the NVIDIA driver's DeviceClasses ------------------------------------------------------------


def _channel(kind: str, ident: int) -> Device:
    return Device(
        "compute-domain.nvidia.com",
        "n",
        f"{kind}-{ident}",
        {"compute-domain.nvidia.com": {"type": kind, "id": ident}},
        {},
        (),
    )


def _vfio() -> Device:
    return Device("gpu.nvidia.com", "n", "gpu-vfio-0", {"gpu.nvidia.com": {"type": "vfio"}}, {}, ())


@pytest.mark.parametrize(
    ("device_class", "matches"),
    [
        ("gpu.nvidia.com", {"gpu-1"}),
        ("mig.nvidia.com", {"gpu-0-mig-1g10gb-19-0"}),
        ("vfio.gpu.nvidia.com", {"gpu-vfio-0"}),
        ("compute-domain-daemon.nvidia.com", {"daemon-0"}),
        ("compute-domain-default-channel.nvidia.com", {"channel-0"}),
    ],
)
def test_nvidia_device_classes_select_their_devices(device_class: str, matches: set[str]) -> None:
    devices = [*_devices(), _vfio(), _channel("daemon", 0), _channel("channel", 0), _channel("channel", 1)]
    expression = dra.NVIDIA_CLASSES[device_class]
    found = {d.name for d in devices if evaluate(expression, d).outcome is Outcome.MATCH}
    assert found == matches


@pytest.mark.parametrize(
    ("expression", "outcome"),
    [
        # NVIDIA's demo selectors (demo/specs/…): lowerAscii and matches, productName, memory as a quantity.
        ("device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$')", Outcome.MATCH),
        ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", Outcome.MATCH),
        ("device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('80Gi'))", Outcome.NO_MATCH),
        ("device.capacity['gpu.nvidia.com'].memory.asInteger() == 85899345920", Outcome.MATCH),
        (
            "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.9.0'))",
            Outcome.MATCH,
        ),
        ("device.attributes['gpu.nvidia.com'].driverVersion.major() == 580", Outcome.MATCH),
        (
            "device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('v580', true)) > 0",
            Outcome.MATCH,
        ),
        ("device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:20')", Outcome.MATCH),
        # An unknown domain is an empty map; an unknown attribute of a known one a runtime error.
        ("device.attributes['amd.com'].size() == 0", Outcome.MATCH),
        ("device.attributes['gpu.nvidia.com'].index == 0", Outcome.ERROR),
        ("has(device.attributes['gpu.nvidia.com'].index)", Outcome.NO_MATCH),
        ("'uuid' in device.attributes['gpu.nvidia.com']", Outcome.MATCH),
        ("device.attributes['gpu.nvidia.com'].productName", Outcome.ERROR),
        # What the library lacks is named, never guessed.
        ("cel.bind(t, device.attributes['gpu.nvidia.com'].type, t == 'gpu')", Outcome.UNKNOWN),
        ("device.driver ==", Outcome.UNKNOWN),
    ],
)
def test_cel_environment(expression: str, outcome: Outcome) -> None:
    gpu = next(d for d in _devices() if d.name == "gpu-1")
    assert evaluate(expression, gpu).outcome is outcome


def test_results_depend_only_on_what_the_selector_reads() -> None:
    """Devices differing only in their uuid share a result; a different productName does not."""
    expression = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"
    l4 = resource_slice(dra.resource_slice("n", dra.gpu_devices("n", L4, range(3)))).devices
    a100 = resource_slice(dra.resource_slice("m", dra.gpu_devices("m", A100_40, range(1)))).devices
    assert [evaluate(expression, d).outcome for d in (*l4, *a100)] == [Outcome.MATCH] * 3 + [Outcome.NO_MATCH]


def test_semver_precedence() -> None:
    parsed = [parse_semver(v) for v in ("1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-rc.1", "1.0.0")]
    assert all(p is not None for p in parsed)
    assert all(a.compare(b) < 0 for a, b in pairwise(parsed) if a and b)
    assert parse_semver("580.95.05") is None
    assert parse_semver("v580", normalize=True) == parse_semver("580.0.0")


# --- kube-scheduler's Filter rows, as snapshots --------------------------------------------------------


def test_a_pods_devices_keep_only_what_each_node_with_devices_offers() -> None:
    """The pod's choices are kept for the nodes that reach devices alone (most nodes of a cluster
    reach none, and share one answer); where no device is tainted or held, what matches, what is
    untainted and what is free are one tuple; nodes that say the same say it with one string."""
    nodes = [dra.node(n, H100, 1) for n in ("node-a", "node-b", "node-c", "cpu-a", "cpu-b")]
    both_gpus = [("gpu", "gpu-0"), ("gpu", "gpu-1")]
    held = claim(_claim("held", count=2, alloc=dra.allocation("node-a", both_gpus)))
    both = claim(_claim("both", count=2, alloc=dra.allocation("node-b", both_gpus)))
    objects = [_gpus(n, 2) for n in ("node-a", "node-b", "node-c")]
    found = replace(Dra.of([*objects, *dra.device_classes()]), claims=(claim(_claim(count=2)), held, both))
    devices = Devices.of(dra.pod(NS, "my-pod", MINE), found, None, {})
    said = [devices.unallocatable(n) for n in nodes]
    assert said[0] == "request gpu of claim my-claim: 0 free of 2 matching (2 held), 2 asked"
    assert said[0] is said[1]
    assert said[2] is None
    assert said[3] == "request gpu of claim my-claim: 0 free of 0 matching, 2 asked"
    assert said[3] is said[4]
    assert [devices.no_device(n) for n in nodes[:3]] == [None, None, None]
    assert devices.choices(nodes[3]) is devices.choices(nodes[4])
    assert {id(n) for n, _ in devices._per_node.values()} == {id(n) for n in nodes[:3]}
    ((free_c,),) = devices.choices(nodes[2])
    assert free_c.free is free_c.untainted is free_c.matching
    ((full_a,),) = devices.choices(nodes[0])
    assert full_a.untainted is full_a.matching
    assert full_a.free == ()


def test_a_change_of_claims_puts_each_where_it_stood() -> None:
    """`Dra.with_claims` (a fix's claims): a changed claim takes its place, a gone one leaves, and the
    claims by name follow, change after change; of two claims of one name (a snapshot may hold them),
    the later, the one read by its name, is changed."""
    x, y, z = (claim(_claim(n)) for n in "xyz")
    base = Dra(claims=(x, y, z))
    y2 = replace(y, deleting=True)
    changed = base.with_claims({(NS, "y"): y2, (NS, "z"): None}, base.devices)
    assert changed.claims == (x, y2)
    assert changed.claim_index == {(NS, "x"): x, (NS, "y"): y2}
    again = changed.with_claims({(NS, "x"): None, (NS, "y"): y}, base.devices)
    assert again.claims == (y,)
    later = replace(x, uid="later")
    twice = Dra(claims=(x, y, later))
    x2 = replace(later, deleting=True)
    assert twice.with_claims({(NS, "x"): x2}, base.devices).claims == (x, y, x2)


def _world(
    slices: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    pod_claims: list[dict[str, Any]],
    nodes: tuple[str, ...] = ("node-a", "node-b"),
    statuses: list[dict[str, Any]] | None = None,
    classes: bool = True,
    node_selector: dict[str, str] | None = None,
) -> PodVerdict | str:
    objects = [dra.node(n, H100, 1) for n in nodes]
    objects += [*slices, *claims, *(dra.device_classes() if classes else [])]
    pod = dra.pod(NS, "my-pod", pod_claims, statuses, node_selector=node_selector)
    view = TriageView(pod, tuple(o for o in objects if o["kind"] == "Node"), (), (), NOW, dra=Dra.of(objects))
    return classify(view).verdict


def _gpus(node: str, count: int = 1, **more: Any) -> dict[str, Any]:
    return dra.resource_slice(node, dra.gpu_devices(node, H100, range(count), **more))


def _claim(name: str = "my-claim", count: int = 1, **more: Any) -> dict[str, Any]:
    return dra.resource_claim(NS, name, dra.claim_spec([dra.request("gpu", count=count)]), **more)


MINE = [{"name": "gpu", "resourceClaimName": "my-claim"}]
ALLOCATED_A = dra.allocation("node-a", [("gpu", "gpu-0")])
SELECT_GPU = "device.attributes['gpu.nvidia.com'].type == 'gpu'"

def test_what_questions_find_of_a_pods_claims_on_the_nodes_is_kept_with_the_devices() -> None:
    """A reader that keeps the nodes keeps what the steps before the free slots found of a pod's claims
    on each node, under the devices and the claims: the pod asked about again, its claim read again
    unchanged, takes it and is answered as checking every node answers; another claim, or devices
    that changed, are checked again."""
    nodes = tuple(dra.node(n, H100, 1) for n in ("node-a", "node-b", "node-c"))
    # The reader keeps one inventory while the devices are unchanged.
    devices = Dra.of([_gpus("node-a"), _gpus("node-b"), *dra.device_classes()]).devices
    findings = Findings()

    def asked(pod: str, own: str, on: Dra) -> list[int]:
        mine = dra.pod(NS, pod, [{"name": "gpu", "resourceClaimName": own}])
        view = TriageView(mine, nodes, (), (), NOW, dra=replace(on, claims=(claim(_claim(own)),)))
        assert classify(view, Prepared(findings=findings)) == classify(view)
        return sorted(len(found) for found in findings.kept())

    assert asked("my-pod", "my-claim", Dra(devices=devices)) == [1, 1, 1]
    assert asked("my-pod", "my-claim", Dra(devices=devices)) == [1, 1, 1]
    assert asked("my-pod-2", "my-pod-2-gpu", Dra(devices=devices)) == [2, 2, 2]
    fewer = Dra.of([_gpus("node-a"), *dra.device_classes()])
    assert asked("my-pod", "my-claim", fewer) == [3, 3, 3]


def test_a_pods_devices_are_kept_with_the_dra_objects_a_reader_keeps() -> None:
    """On the same DRA objects (a reader hands over the same while no claim changes, and keeps what
    pods' claims found on them with its findings), a pod whose claims are the very same claims takes
    the Devices worked out before, and what it found on each node; another claim, or other DRA
    objects, are worked out afresh."""
    nodes = [dra.node(n, H100, 1) for n in ("node-a", "node-b")]
    held = claim(_claim("held", alloc=dra.allocation("node-a", [("gpu", "gpu-0")])))
    kept = Dra.of([_gpus("node-a"), _gpus("node-b"), *dra.device_classes()])
    kept = replace(kept, claims=(claim(_claim()), claim(_claim("other")), held))
    mine = dra.pod(NS, "my-pod", MINE)
    findings = Findings()
    devices = Devices.of(mine, kept, None, findings.devices_of(kept))
    full = "request gpu of claim my-claim: 0 free of 1 matching (1 held), 1 asked"
    assert [devices.unallocatable(n) for n in nodes] == [full, None]
    assert Devices.of(dra.pod(NS, "my-pod", MINE), kept, None, findings.devices_of(kept)) is devices
    other = dra.pod(NS, "my-pod-2", [{"name": "gpu", "resourceClaimName": "other"}])
    assert Devices.of(other, kept, None, findings.devices_of(kept)) is not devices
    changed = replace(kept)
    assert Devices.of(mine, changed, None, findings.devices_of(changed)) is not devices


ROWS: list[tuple[str, Any]] = [
    # dynamicresources_test.go
    ("claim-reference (no claim object)", lambda: _world([_gpus("node-a")], [], MINE)),
    (
        "claim-template, not created yet",
        lambda: _world([_gpus("node-a")], [], [{"name": "gpu", "resourceClaimTemplateName": "t"}]),
    ),
    (
        "claim-template, claim not owned by the pod",
        lambda: _world(
            [_gpus("node-a")],
            [_claim("my-pod-gpu-x", owner_pod="other-pod", pod_claim="gpu")],
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            statuses=[{"name": "gpu", "resourceClaimName": "my-pod-gpu-x"}],
        ),
    ),
    ("deleted claim", lambda: _world([_gpus("node-a")], [_claim(deleting=True)], MINE)),
    ("structured no resources", lambda: _world([], [_claim()], MINE)),
    ("structured with resources", lambda: _world([_gpus("node-a")], [_claim()], MINE)),
    ("structured, missing class", lambda: _world([_gpus("node-a")], [_claim()], MINE, classes=False)),
    ("allocated claim, node matches", lambda: _world([_gpus("node-a")], [_claim(alloc=ALLOCATED_A)], MINE)),
    (
        "allocated claim, not available on the node",
        lambda: _world(
            [_gpus("node-a")],
            [_claim(alloc=ALLOCATED_A)],
            MINE,
            node_selector={"kubernetes.io/hostname": "node-b"},
        ),
    ),
    (
        "structured ignore allocated device (in use by another claim)",
        lambda: _world(
            [_gpus("node-a")],
            [_claim(), _claim("other", alloc=ALLOCATED_A, reserved_for=["other-pod"])],
            MINE,
        ),
    ),
    (
        "claim reserved for the most pods it may serve",
        lambda: _world(
            [_gpus("node-a")], [_claim(alloc=ALLOCATED_A, reserved_for=[f"p-{i}" for i in range(256)])], MINE
        ),
    ),
    # allocator_test.go
    ("simple", lambda: _world([_gpus("node-a", 1)], [_claim()], MINE)),
    (
        "other-node: the device is on another node than the one selected",
        lambda: _world(
            [_gpus("node-b")], [_claim()], MINE, node_selector={"kubernetes.io/hostname": "node-a"}
        ),
    ),
    (
        "too-many-devices for one node",
        lambda: _world([_gpus("node-a", 2), _gpus("node-b", 2)], [_claim(count=3)], MINE),
    ),
    (
        "all-devices",
        lambda: _world(
            [_gpus("node-a", 2)],
            [dra.resource_claim(NS, "my-claim", dra.claim_spec([dra.request("gpu", all_devices=True)]))],
            MINE,
        ),
    ),
    (
        "all-devices-some-allocated",
        lambda: _world(
            [_gpus("node-a", 2)],
            [
                dra.resource_claim(NS, "my-claim", dra.claim_spec([dra.request("gpu", all_devices=True)])),
                _claim("other", alloc=ALLOCATED_A),
            ],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "all-devices-of-the-incomplete-pool",
        lambda: _world(
            [dra.resource_slice("node-a", dra.gpu_devices("node-a", H100, range(2)), slice_count=2)],
            [dra.resource_claim(NS, "my-claim", dra.claim_spec([dra.request("gpu", all_devices=True)]))],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "old generation of a pool is ignored",
        lambda: _world(
            [
                dra.resource_slice("node-a", dra.gpu_devices("node-a", H100, range(2)), generation=1),
                dra.resource_slice("node-a", [], generation=2),
            ],
            [_claim()],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "network-attached device (allNodes slice)",
        lambda: _world(
            [{**_gpus("pool-x"), "spec": {**_gpus("pool-x")["spec"], "nodeName": None, "allNodes": True}}],
            [_claim()],
            MINE,
        ),
    ),
    (
        "small-and-large: two requests with selectors",
        lambda: _world(
            [_gpus("node-a", 2, migs={0: [Mig("1g.10gb", 19, 0, 1, "9984Mi", 16)]})],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [dra.request("small", "mig.nvidia.com"), dra.request("large", selectors=[SELECT_GPU])]
                    ),
                )
            ],
            MINE,
        ),
    ),
    (
        "with-constraint (matchAttribute) satisfiable",
        lambda: _world(
            [_gpus("node-a", 2)],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [dra.request("gpu", count=2)], [{"matchAttribute": "gpu.nvidia.com/productName"}]
                    ),
                )
            ],
            MINE,
        ),
    ),
    (
        "with-constraint not satisfiable (each GPU has its own uuid)",
        lambda: _world(
            [_gpus("node-a", 2)],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [dra.request("gpu", count=2)], [{"matchAttribute": "gpu.nvidia.com/uuid"}]
                    ),
                )
            ],
            MINE,
        ),
    ),
    (
        "prioritized-list: first subrequest fails, second fits",
        lambda: _world(
            [_gpus("node-a", 1)],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [
                            dra.request(
                                "gpu",
                                first_available=[
                                    dra.subrequest("two", "gpu.nvidia.com", count=2),
                                    dra.subrequest("one", "gpu.nvidia.com"),
                                ],
                            )
                        ]
                    ),
                )
            ],
            MINE,
        ),
    ),
    (
        "admin-access may use an allocated device",
        lambda: _world(
            [_gpus("node-a", 1)],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    {
                        "devices": {
                            "requests": [
                                {
                                    "name": "gpu",
                                    "exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": True},
                                }
                            ]
                        }
                    },
                ),
                _claim("other", alloc=ALLOCATED_A),
            ],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "tainted device, no toleration",
        lambda: _world(
            [_gpus("node-a", 1, taints={"gpu-0": [{"key": "example.com/broken", "effect": "NoSchedule"}]})],
            [_claim()],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "tainted device, tolerated",
        lambda: _world(
            [_gpus("node-a", 1, taints={"gpu-0": [{"key": "example.com/broken", "effect": "NoSchedule"}]})],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [
                            dra.request(
                                "gpu", tolerations=[{"key": "example.com/broken", "operator": "Exists"}]
                            )
                        ]
                    ),
                )
            ],
            MINE,
            nodes=("node-a",),
        ),
    ),
    (
        "unknown-selector: runtime error on a missing attribute",
        lambda: _world(
            [_gpus("node-a", 1)],
            [
                dra.resource_claim(
                    NS,
                    "my-claim",
                    dra.claim_spec(
                        [dra.request("gpu", selectors=["device.attributes['gpu.nvidia.com'].index == 0"])]
                    ),
                )
            ],
            MINE,
            nodes=("node-a",),
        ),
    ),
]

EXPECTED = {
    "claim-reference (no claim object)": PodVerdict.CLAIM,
    "claim-template, not created yet": PodVerdict.CLAIM,
    "claim-template, claim not owned by the pod": PodVerdict.CLAIM,
    "deleted claim": PodVerdict.CLAIM,
    "structured no resources": PodVerdict.NO_GPU_NODE,
    "structured with resources": PodVerdict.SCHEDULABLE,
    "structured, missing class": PodVerdict.NO_GPU_NODE,
    "allocated claim, node matches": PodVerdict.SCHEDULABLE,
    "allocated claim, not available on the node": PodVerdict.CLAIM,
    "structured ignore allocated device (in use by another claim)": PodVerdict.EXHAUSTED,
    "claim reserved for the most pods it may serve": PodVerdict.CLAIM,
    "simple": PodVerdict.SCHEDULABLE,
    "other-node: the device is on another node than the one selected": PodVerdict.NO_GPU_NODE,
    "too-many-devices for one node": PodVerdict.EXHAUSTED,
    "all-devices": PodVerdict.SCHEDULABLE,
    "all-devices-some-allocated": PodVerdict.EXHAUSTED,
    "all-devices-of-the-incomplete-pool": PodVerdict.EXHAUSTED,
    "old generation of a pool is ignored": PodVerdict.NO_GPU_NODE,
    "network-attached device (allNodes slice)": PodVerdict.SCHEDULABLE,
    "small-and-large: two requests with selectors": PodVerdict.SCHEDULABLE,
    "with-constraint (matchAttribute) satisfiable": PodVerdict.SCHEDULABLE,
    "with-constraint not satisfiable (each GPU has its own uuid)": PodVerdict.EXHAUSTED,
    "prioritized-list: first subrequest fails, second fits": PodVerdict.SCHEDULABLE,
    "admin-access may use an allocated device": PodVerdict.SCHEDULABLE,
    "tainted device, no toleration": PodVerdict.ALLOCATABLE_ZERO,
    "tainted device, tolerated": PodVerdict.SCHEDULABLE,
    "unknown-selector: runtime error on a missing attribute": PodVerdict.NO_GPU_NODE,
}

LEFT_OUT = (
    (
        "extended resource rows (DRAExtendedResource)",
        "alpha and off in 1.34/1.35; kubewhy reads extended resources from node allocatable only",
    ),
    (
        "in-flight allocations (`is in the process of being allocated`)",
        "the scheduler's memory, in no object",
    ),
    ("Reserve, PreBind, Unreserve and PostFilter rows", "what the scheduler does after Filter, not why"),
    ("filter timeout (DRASchedulerFilterTimeout)", "a property of the search's duration, not of the objects"),
    ("partitionable devices and consumable capacity", "alpha and off in 1.34/1.35"),
    ("binding conditions (DRADeviceBindingConditions)", "alpha; decided after Filter"),
    (
        "invalid pools (duplicate device names)",
        "1.34 errors, 1.35 skips: kubewhy reads the pool as published",
    ),
    ("CEL cost limits", "the API server rejects such selectors at creation: no snapshot holds one"),
)
"""Upstream rows a snapshot cannot express, and why."""


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_upstream_filter_rows(row: tuple[str, Any]) -> None:
    name, run = row
    assert run() == EXPECTED[name]


def test_every_row_has_an_expectation_and_left_out_rows_say_why() -> None:
    assert {r[0] for r in ROWS} == set(EXPECTED)
    assert all(why for _, why in LEFT_OUT)


def test_cannot_be_evaluated_is_named_in_the_evidence() -> None:
    objects = [
        dra.node("node-a", H100, 1),
        _gpus("node-a"),
        *dra.device_classes(),
        dra.resource_claim(
            NS,
            "my-claim",
            dra.claim_spec(
                [
                    dra.request(
                        "gpu", selectors=["cel.bind(t, device.attributes['gpu.nvidia.com'].type, t == 'gpu')"]
                    )
                ]
            ),
        ),
    ]
    pod = dra.pod(NS, "my-pod", MINE)
    found = classify(TriageView(pod, (objects[0],), (), (), NOW, dra=Dra.of(objects)))
    assert found.verdict == PodVerdict.SCHEDULABLE
    assert any("cannot be evaluated by kubewhy" in e and "cel.bind" in e for e in found.evidence)


def test_exhausted_names_the_holding_claims_and_pods() -> None:
    objects = [
        dra.node("node-a", H100, 1),
        _gpus("node-a"),
        *dra.device_classes(),
        _claim(),
        _claim("other", alloc=ALLOCATED_A, reserved_for=["other-pod"]),
    ]
    pod = dra.pod(NS, "my-pod", MINE)
    found = classify(TriageView(pod, (objects[0],), (), (), NOW, dra=Dra.of(objects)))
    assert found.verdict == PodVerdict.EXHAUSTED
    assert "node-a: gpu-0 held by claim ml/other (request gpu; reserved for pod other-pod)" in found.evidence
    assert "kubectl get resourceclaim other -n ml -o yaml" in [c.text for c in found.next_commands]
    assert "kubectl get resourceslices --field-selector spec.nodeName=node-a -o yaml" in [
        c.text for c in found.next_commands
    ]


def test_a_pod_asking_both_kinds_is_checked_for_both() -> None:
    gpu_node = dra.node("node-a", H100, 1)
    gpu_node["status"]["capacity"]["nvidia.com/gpu"] = gpu_node["status"]["allocatable"]["nvidia.com/gpu"] = (
        "1"
    )
    objects = [gpu_node, _gpus("node-a"), *dra.device_classes(), _claim()]
    fits = dra.pod(NS, "my-pod", MINE, limits={"nvidia.com/gpu": "1"})
    too_many = dra.pod(NS, "my-pod", MINE, limits={"nvidia.com/gpu": "2"})
    view = Dra.of(objects)
    assert classify(TriageView(fits, (gpu_node,), (), (), NOW, dra=view)).verdict == PodVerdict.SCHEDULABLE
    assert classify(TriageView(too_many, (gpu_node,), (), (), NOW, dra=view)).verdict == PodVerdict.EXHAUSTED


def test_the_lab_and_corpus_files_are_what_devtools_writes() -> None:
    """`python -m devtools.dra_lab` rewrites them: the committed files must not drift from it."""
    for path, build in FILES.items():
        assert json.loads((ROOT / path).read_text()) == dra.as_list(build()), path
