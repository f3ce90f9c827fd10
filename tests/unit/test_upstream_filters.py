"""kube-scheduler's own unit-test tables, ported row by row: each row's pod and node go through
`classify`, and kubewhy must give kube-scheduler's answer.

Every row is adapted so the pod also asks 1 `nvidia.com/gpu` of a node that has 8 free (kubewhy
triages accelerator pods): a row the scheduler passes is `schedulable`, a row it fails is the funnel
step that checks the same rule, with the scheduler's own reasons in the evidence.

Sources (kubernetes/kubernetes):
- `pkg/scheduler/framework/plugins/noderesources/fit_test.go`: TestEnoughRequests,
  TestNotEnoughRequests, TestStorageRequests. Node allocatable as there: cpu 10m, memory 20,
  pods 32 (1 in TestNotEnoughRequests), example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5.
  Rows failing on `example.com/aaa`/`example.com/bbb` (extended resources, devices to kubewhy) give
  the device steps (`exhausted`, or `no-gpu-node` for a resource the node does not report).
- `pkg/scheduler/framework/plugins/nodeports/node_ports_test.go`: TestNodePorts, TestFits.
- `staging/src/k8s.io/api/core/v1/toleration_test.go` (1.35): the `Lt`/`Gt` rows of
  TestTolerationToleratesTaint and the rows of TestCompareNumericValues, as a taint on the node and a
  toleration on the pod (NoSchedule, key `example.com/sla`).

Rows left out, and why:
- fit_test.go "skip checking ignored extended resource": `ignoredResources` is scheduler profile
  configuration, which kubewhy does not read (the default profile ignores nothing).
- fit_test.go / node_ports_test.go TestPreFilterDisabled: the plugin's internal error when its
  PreFilter did not run; no pod or node gives it.
- node_ports_test.go Test_isSchedulableAfterAssignedPodDeleted: queueing hints (when to retry), not a
  decision on a pod and a node.
- toleration_test.go TestCompareNumericValues "Equal operator" and "Exists operator": they call the
  numeric helper with an operator the helper refuses; as tolerations, Equal and Exists are the
  existing rows of `tests/unit/test_scheduling.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify
from diagnosis.views import TriageView

GPU = "nvidia.com/gpu"
NODE = "n1"
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)

ALLOCATABLE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    "example.com/aaa": "5",
    "ephemeral-storage": "20",
    "hugepages-2Mi": "5",
    GPU: "8",
}


def _node(allocatable: dict[str, str], taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
        "spec": {},
        "status": {"capacity": dict(allocatable), "allocatable": dict(allocatable)},
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def _requests(cpu: int = 0, memory: int = 0, storage: int = 0, **scalar: int) -> dict[str, Any]:
    """framework.Resource as container requests: cpu in millicores, the rest in units."""
    asks: dict[str, Any] = {}
    if cpu:
        asks["cpu"] = f"{cpu}m"
    if memory:
        asks["memory"] = str(memory)
    if storage:
        asks["ephemeral-storage"] = str(storage)
    names = {
        "aaa": "example.com/aaa",
        "bbb": "example.com/bbb",
        "io_a": "kubernetes.io/something",
        "io_b": "subdomain.kubernetes.io/something",
        "hugepages": "hugepages-2Mi",
    }
    asks.update({names[k]: str(v) for k, v in scalar.items()})
    return asks


def _container(
    name: str, requests: dict[str, Any], ports: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": "busybox", "resources": {"requests": requests}}
    extended = {k: v for k, v in requests.items() if "/" in k and "kubernetes.io/" not in k}
    if extended:
        container["resources"]["limits"] = extended  # extended resources: limits equal requests
    if ports:
        container["ports"] = ports
    return container


@dataclass
class Pod:
    containers: list[dict[str, Any]] = field(default_factory=list)
    init: list[dict[str, Any]] = field(default_factory=list)
    overhead: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, str]] = field(default_factory=list)
    gpu: bool = True
    """The row's pod asks 1 GPU more; False: the row's pod as it is (rows about pods with no device)."""

    def pending(self) -> dict[str, Any]:
        """The row's pod, asking 1 GPU more in its first app container (unless `gpu` is False)."""
        containers = [dict(c) for c in self.containers] or [_container("main", {})]
        if self.gpu:
            first = containers[0]
            resources = {k: dict(v) for k, v in first.get("resources", {}).items()}
            resources.setdefault("requests", {})[GPU] = "1"
            resources.setdefault("limits", {})[GPU] = "1"
            containers[0] = {**first, "resources": resources}
        spec: dict[str, Any] = {"containers": containers, "priority": 0}
        if self.init:
            spec["initContainers"] = self.init
        if self.overhead:
            spec["overhead"] = self.overhead
        if self.tolerations:
            spec["tolerations"] = self.tolerations
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pending", "namespace": "ml", "uid": "pending-uid"},
            "spec": spec,
            "status": {"phase": "Pending"},
        }


def _existing(*containers: dict[str, Any]) -> dict[str, Any]:
    """The pod already on the node (`framework.NewNodeInfo(newResourcePod(...))`)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "existing", "namespace": "default", "uid": "existing-uid"},
        "spec": {"nodeName": NODE, "containers": list(containers) or [_container("c", {})]},
        "status": {"phase": "Running"},
    }


def _verdict(pod: Pod, node: dict[str, Any], existing: dict[str, Any]) -> tuple[PodVerdict, str]:
    found = classify(TriageView(pod.pending(), (node,), (existing,), (), NOW))
    return PodVerdict(found.verdict), "\n".join(found.evidence)


def _pod(*requests: dict[str, Any], init: tuple[dict[str, Any], ...] = (), **more: Any) -> Pod:
    return Pod(
        [_container(f"c{i}", r) for i, r in enumerate(requests)],
        [_container(f"i{i}", r) for i, r in enumerate(init)],
        **more,
    )


# --- noderesources/fit_test.go ----------------------------------------------------------------

R = _requests
FIT_ROWS: list[tuple[str, Pod, dict[str, Any], PodVerdict, tuple[str, ...]]] = [
    ("no resources requested always fits", Pod(), R(10, 20), PodVerdict.SCHEDULABLE, ()),
    (
        "too many resources fails",
        _pod(R(1, 1)),
        R(10, 20),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient cpu", "Insufficient memory"),
    ),
    (
        "too many resources fails due to init container cpu",
        _pod(R(1, 1), init=(R(3, 1),)),
        R(8, 19),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient cpu",),
    ),
    (
        "too many resources fails due to highest init container cpu",
        _pod(R(1, 1), init=(R(3, 1), R(2, 1))),
        R(8, 19),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient cpu",),
    ),
    (
        "too many resources fails due to init container memory",
        _pod(R(1, 1), init=(R(1, 3),)),
        R(9, 19),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient memory",),
    ),
    (
        "too many resources fails due to highest init container memory",
        _pod(R(1, 1), init=(R(1, 3), R(1, 2))),
        R(9, 19),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient memory",),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        _pod(R(1, 1), init=(R(1, 1),)),
        R(9, 19),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        _pod(R(1, 1), init=(R(1, 1), R(1, 1))),
        R(9, 19),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    ("both resources fit", _pod(R(1, 1)), R(5, 5), PodVerdict.SCHEDULABLE, ()),
    ("one resource memory fits", _pod(R(2, 1)), R(9, 5), PodVerdict.NODE_RESOURCES, ("Insufficient cpu",)),
    ("one resource cpu fits", _pod(R(1, 2)), R(5, 19), PodVerdict.NODE_RESOURCES, ("Insufficient memory",)),
    ("equal edge case", _pod(R(5, 1)), R(5, 19), PodVerdict.SCHEDULABLE, ()),
    (
        "equal edge case for init container",
        _pod(R(4, 1), init=(R(5, 1),)),
        R(5, 19),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    ("extended resource fits", _pod(R(aaa=1)), R(), PodVerdict.SCHEDULABLE, ()),
    (
        "extended resource fits for init container",
        _pod(R(), init=(R(aaa=1),)),
        R(),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    (
        "extended resource capacity enforced",
        _pod(R(1, 1, aaa=10)),
        R(aaa=0),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource capacity enforced for init container",
        _pod(R(), init=(R(1, 1, aaa=10),)),
        R(aaa=0),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource allocatable enforced",
        _pod(R(1, 1, aaa=1)),
        R(aaa=5),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource allocatable enforced for init container",
        _pod(R(), init=(R(1, 1, aaa=1),)),
        R(aaa=5),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        _pod(R(1, 1, aaa=3), R(1, 1, aaa=3)),
        R(aaa=2),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        _pod(R(), init=(R(1, 1, aaa=3), R(1, 1, aaa=3))),
        R(aaa=2),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        _pod(R(), init=(R(1, 1, aaa=6), R(1, 1, aaa=3))),
        R(aaa=2),
        PodVerdict.EXHAUSTED,
        ("Insufficient example.com/aaa",),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        _pod(R(1, 1, bbb=1)),
        R(),
        PodVerdict.NO_GPU_NODE,
        ("Insufficient example.com/bbb",),
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        _pod(R(), init=(R(1, 1, bbb=1),)),
        R(),
        PodVerdict.NO_GPU_NODE,
        ("Insufficient example.com/bbb",),
    ),
    (
        "kubernetes.io resource capacity enforced",
        _pod(R(1, 1, io_a=10)),
        R(),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient kubernetes.io/something",),
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        _pod(R(), init=(R(1, 1, io_b=10),)),
        R(),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient subdomain.kubernetes.io/something",),
    ),
    (
        "hugepages resource capacity enforced",
        _pod(R(1, 1, hugepages=10)),
        R(hugepages=0),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient hugepages-2Mi",),
    ),
    (
        "hugepages resource capacity enforced for init container",
        _pod(R(), init=(R(1, 1, hugepages=10),)),
        R(hugepages=0),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient hugepages-2Mi",),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        _pod(R(1, 1, hugepages=3), R(1, 1, hugepages=3)),
        R(hugepages=2),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient hugepages-2Mi",),
    ),
    (
        "resources + pod overhead fits",
        _pod(R(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        R(5, 5),
        PodVerdict.SCHEDULABLE,
        (),
    ),
    (
        "requests + overhead does not fit for memory",
        _pod(R(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        R(5, 5),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient memory",),
    ),
    # TestStorageRequests
    (
        "due to container scratch disk",
        _pod(R(1, 1)),
        R(10, 10),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient cpu",),
    ),
    ("pod fit", _pod(R(1, 1)), R(2, 10), PodVerdict.SCHEDULABLE, ()),
    (
        "storage ephemeral local storage request exceeds allocatable",
        _pod(R(storage=25)),
        R(2, 2),
        PodVerdict.NODE_RESOURCES,
        ("Insufficient ephemeral-storage",),
    ),
    ("pod fits", _pod(R(storage=10)), R(2, 2), PodVerdict.SCHEDULABLE, ()),
]


@pytest.mark.parametrize(
    ("pod", "used", "verdict", "reasons"), [r[1:] for r in FIT_ROWS], ids=[r[0] for r in FIT_ROWS]
)
def test_fit_rows(pod: Pod, used: dict[str, Any], verdict: PodVerdict, reasons: tuple[str, ...]) -> None:
    found, evidence = _verdict(pod, _node(ALLOCATABLE), _existing(_container("c", used)))
    assert found == verdict
    if verdict is PodVerdict.NODE_RESOURCES:
        said = [evidence.index(r) for r in reasons]
        assert said == sorted(said), "in the scheduler's order"
    elif reasons:
        assert reasons[0].removeprefix("Insufficient ") in evidence


NO_DEVICE_ROWS: list[tuple[str, Pod, PodVerdict, str]] = [
    # fit_test.go as it is: the pod asks a prefixed native resource and no device. A node that lacks
    # the resource never takes it: not `no-request` ("it can start").
    (
        "kubernetes.io resource capacity enforced",
        _pod(R(1, 1, io_a=10), gpu=False),
        PodVerdict.NODE_RESOURCES,
        "Insufficient kubernetes.io/something",
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        _pod(R(), init=(R(1, 1, io_b=10),), gpu=False),
        PodVerdict.NODE_RESOURCES,
        "Insufficient subdomain.kubernetes.io/something",
    ),
]


@pytest.mark.parametrize(
    ("pod", "verdict", "reason"), [r[1:] for r in NO_DEVICE_ROWS], ids=[r[0] for r in NO_DEVICE_ROWS]
)
def test_native_resources_without_a_device(pod: Pod, verdict: PodVerdict, reason: str) -> None:
    found, evidence = _verdict(pod, _node(ALLOCATABLE), _existing(_container("c", R())))
    assert found == verdict
    assert reason in evidence


def test_a_native_resource_the_node_has_leaves_a_pod_without_a_device_schedulable() -> None:
    allocatable = {**ALLOCATABLE, "kubernetes.io/something": "10"}
    found, _ = _verdict(
        _pod(R(1, 1, io_a=10), gpu=False), _node(allocatable), _existing(_container("c", R()))
    )
    assert found is PodVerdict.SCHEDULABLE


def test_overhead_counts_for_extended_resources() -> None:
    """`component-helpers/resource/helpers_test.go` "req-and-overhead": PodRequests adds spec.overhead
    for every resource; here the overhead holds a GPU: 1 + 8 asked of 8 never fits."""
    pod = _pod(R(1, 1), overhead={"cpu": "1m", GPU: "8"})
    found, evidence = _verdict(pod, _node(ALLOCATABLE), _existing(_container("c", R())))
    assert found is PodVerdict.EXHAUSTED
    assert "the pod asks nvidia.com/gpu=9" in evidence
    assert "spec.overhead nvidia.com/gpu=8" in evidence


def _resizing(
    spec_cpu: int, status_cpu: int | None, allocated_cpu: int | None, infeasible: bool = False
) -> dict[str, Any]:
    """The pod already on the node, being resized in place: its spec asks `spec_cpu` millicores, the
    kubelet reports `status_cpu` in `containerStatuses[].resources.requests` and `allocated_cpu` in
    `allocatedResources` (None: not reported)."""
    existing = _existing(_container("c", R(spec_cpu, 1)))
    container_status: dict[str, Any] = {
        "name": "c",
        "ready": True,
        "restartCount": 0,
        "state": {"running": {}},
    }
    if status_cpu is not None:
        container_status["resources"] = {"requests": {"cpu": f"{status_cpu}m", "memory": "1"}}
    if allocated_cpu is not None:
        container_status["allocatedResources"] = {"cpu": f"{allocated_cpu}m", "memory": "1"}
    existing["status"]["containerStatuses"] = [container_status]
    if infeasible:
        existing["status"]["conditions"] = [
            {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
        ]
    return existing


RESIZE_ROWS: list[tuple[str, dict[str, Any], PodVerdict]] = [
    # `AggregateContainerRequests` (`component-helpers/resource/helpers.go`, InPlacePodVerticalScaling
    # on by default since 1.33), as kube-scheduler's NodeResourcesFit counts an existing pod: per
    # container, the larger of the spec's requests, `resources.requests` and `allocatedResources`
    # when the status reports `resources`; with an infeasible resize, the status alone. The pod asks
    # 5m of the node's 10m cpu.
    ("no status resources: the spec", _resizing(4, None, 8), PodVerdict.SCHEDULABLE),
    ("being shrunk in place: status resources held", _resizing(4, 8, 4), PodVerdict.NODE_RESOURCES),
    ("allocated larger than the status: allocated held", _resizing(4, 4, 8), PodVerdict.NODE_RESOURCES),
    ("being grown in place: the spec held", _resizing(8, 4, 4), PodVerdict.NODE_RESOURCES),
    ("all agree", _resizing(4, 4, 4), PodVerdict.SCHEDULABLE),
    (
        "infeasible resize: the spec does not count",
        _resizing(8, 4, 4, infeasible=True),
        PodVerdict.SCHEDULABLE,
    ),
]


@pytest.mark.parametrize(
    ("existing", "verdict"), [r[1:] for r in RESIZE_ROWS], ids=[r[0] for r in RESIZE_ROWS]
)
def test_resize_rows(existing: dict[str, Any], verdict: PodVerdict) -> None:
    found, evidence = _verdict(_pod(R(5, 1)), _node(ALLOCATABLE), existing)
    assert found == verdict
    if verdict is PodVerdict.NODE_RESOURCES:
        assert "Insufficient cpu" in evidence


NOT_ENOUGH_PODS = [
    (
        "even without specified resources predicate fails when there's no space for additional pod",
        Pod(),
        R(10, 20),
    ),
    (
        "even if both resources fit predicate fails when there's no space for additional pod",
        _pod(R(1, 1)),
        R(5, 5),
    ),
    (
        "even for equal edge case predicate fails when there's no space for additional pod",
        _pod(R(5, 1)),
        R(5, 19),
    ),
    (
        "even for equal edge case predicate fails when there's no space for additional pod "
        "due to init container",
        _pod(R(5, 1), init=(R(5, 1),)),
        R(5, 19),
    ),
]


@pytest.mark.parametrize(
    ("pod", "used"), [r[1:] for r in NOT_ENOUGH_PODS], ids=[r[0] for r in NOT_ENOUGH_PODS]
)
def test_not_enough_pods_rows(pod: Pod, used: dict[str, Any]) -> None:
    allocatable = {
        "cpu": "10m",
        "memory": "20",
        "pods": "1",
        "example.com/aaa": "0",
        "ephemeral-storage": "0",
        "hugepages-2Mi": "0",
        GPU: "8",
    }
    found, evidence = _verdict(pod, _node(allocatable), _existing(_container("c", used)))
    assert found is PodVerdict.NODE_RESOURCES
    assert "Too many pods" in evidence


# --- nodeports/node_ports_test.go -------------------------------------------------------------


def _ports(*specs: str) -> list[dict[str, Any]]:
    """`PROTOCOL/HOSTIP/PORT` as the test's newPod writes them."""
    found = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        found.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol})
    return found


def _port_pod(*specs: str) -> Pod:
    return Pod([_container("c", {}, _ports(*specs))])


SIDECAR = {**_container("sidecar", {}, _ports("TCP//8001")), "restartPolicy": "Always"}
PLAIN_INIT = _container("init", {}, _ports("TCP//8001"))
PORT_ROWS: list[tuple[str, Pod, tuple[str, ...], bool]] = [
    ("skip filter", Pod(), (), True),
    ("other port", _port_pod("UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/9090",), True),
    ("same udp port", _port_pod("UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), False),
    ("same tcp port", _port_pod("TCP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), False),
    ("different host ip", _port_pod("TCP/127.0.0.1/8080"), ("TCP/127.0.0.2/8080",), True),
    ("different protocol", _port_pod("UDP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), True),
    (
        "second udp port conflict",
        _port_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ("UDP/127.0.0.1/8080",),
        False,
    ),
    (
        "first tcp port conflict",
        _port_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        False,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        _port_pod("TCP/0.0.0.0/8001"),
        ("TCP/127.0.0.1/8001",),
        False,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        _port_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ("TCP/127.0.0.1/8001",),
        False,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        _port_pod("TCP/127.0.0.1/8001"),
        ("TCP/0.0.0.0/8001",),
        False,
    ),
    ("second different protocol", _port_pod("UDP/127.0.0.1/8001"), ("TCP/0.0.0.0/8001",), True),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        _port_pod("UDP/127.0.0.1/8001"),
        ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        False,
    ),
    ("non-sidecar initContainer using hostPort", Pod(init=[PLAIN_INIT]), ("TCP/0.0.0.0/8001",), True),
    ("TCP hostPort conflict from sidecar initContainer", Pod(init=[SIDECAR]), ("TCP/0.0.0.0/8001",), False),
    # TestFits
    ("non-conflicting ports", _port_pod("TCP/127.0.0.1/80"), ("TCP/127.0.0.1/9090",), True),
    (
        "multiple non-conflicting ports",
        _port_pod("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
        ("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
        True,
    ),
    ("same ports on different protocols", _port_pod("TCP/127.0.0.1/80"), ("UDP/127.0.0.1/80",), True),
    ("conflicting ports", _port_pod("TCP/127.0.0.1/80"), ("TCP/127.0.0.1/80",), False),
    (
        "multiple ports, some conflicting",
        _port_pod("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
        ("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
        False,
    ),
]


@pytest.mark.parametrize(("pod", "used", "fits"), [r[1:] for r in PORT_ROWS], ids=[r[0] for r in PORT_ROWS])
def test_node_ports_rows(pod: Pod, used: tuple[str, ...], fits: bool) -> None:
    existing = _existing(_container("c", {}, _ports(*used)))
    found, evidence = _verdict(pod, _node(ALLOCATABLE), existing)
    assert found is (PodVerdict.SCHEDULABLE if fits else PodVerdict.HOST_PORT)
    if not fits:
        assert "node(s) didn't have free ports for the requested pod ports" in evidence


# --- core/v1 toleration_test.go: Lt and Gt ----------------------------------------------------

TOLERATION_ROWS: list[tuple[str, str, str, str, bool]] = [
    # TestTolerationToleratesTaint, the Lt/Gt rows (feature gate on)
    ("Gt - taint value less than toleration value", "Gt", "950", "800", False),
    ("Gt - taint value greater than toleration value", "Gt", "750", "950", True),
    ("Lt - taint value greater than toleration value", "Lt", "800", "950", False),
    ("Lt - taint value less than toleration value", "Lt", "950", "800", True),
    ("Gt and taint with equal numeric value", "Gt", "950", "950", False),
    ("Gt and taint with non-numeric value", "Gt", "950", "high", False),
    ("Gt and negative numeric values - taint value less than threshold", "Gt", "-100", "-200", False),
    (
        "Gt and large int64 values - taint value less than threshold",
        "Gt",
        "9223372036854775806",
        "100",
        False,
    ),
    # TestCompareNumericValues
    ("Gt - taint greater", "Gt", "100", "200", True),
    ("Gt - taint less", "Gt", "200", "100", False),
    ("Gt - taint equal", "Gt", "100", "100", False),
    ("Gt - negative numbers, taint greater", "Gt", "-100", "-50", True),
    ("Gt - negative numbers, taint less", "Gt", "-50", "-100", False),
    ("Gt - zero and positive", "Gt", "0", "1", True),
    ("Gt - large int64 values, taint greater", "Gt", "9223372036854775806", "9223372036854775807", True),
    ("Lt - taint less", "Lt", "200", "100", True),
    ("Lt - taint greater", "Lt", "100", "200", False),
    ("Lt - taint equal", "Lt", "100", "100", False),
    ("Lt - negative numbers, taint less", "Lt", "-50", "-100", True),
    ("Lt - negative numbers, taint greater", "Lt", "-100", "-50", False),
    ("Lt - zero and negative", "Lt", "0", "-1", True),
    ("Gt - invalid toleration value (non-numeric)", "Gt", "abc", "100", False),
    ("Gt - invalid toleration value (empty string)", "Gt", "", "100", False),
    ("Gt - invalid toleration value (leading zero)", "Gt", "0100", "200", False),
    ("Gt - invalid toleration value (plus sign)", "Gt", "+100", "200", False),
    ("Gt - invalid toleration value (floating point)", "Gt", "100.5", "200", False),
    ("Gt - invalid toleration value (just minus sign)", "Gt", "-", "100", False),
    ("Gt - invalid taint value (non-numeric)", "Gt", "100", "xyz", False),
    ("Gt - invalid taint value (empty string)", "Gt", "100", "", False),
    ("Gt - invalid taint value (leading zero)", "Gt", "100", "0200", False),
    ("Lt - invalid taint value (plus sign)", "Lt", "100", "+200", False),
    ("Lt - invalid taint value (spaces)", "Lt", "100", " 200 ", False),
    ("Gt - both zero", "Gt", "0", "0", False),
    ("Lt - both zero", "Lt", "0", "0", False),
    ("Gt - max int64 as taint", "Gt", "0", "9223372036854775807", True),
    ("Lt - min int64 as taint", "Lt", "0", "-9223372036854775808", True),
]


@pytest.mark.parametrize(
    ("operator", "toleration", "taint", "tolerated"),
    [r[1:] for r in TOLERATION_ROWS],
    ids=[r[0] for r in TOLERATION_ROWS],
)
def test_toleration_comparison_rows(operator: str, toleration: str, taint: str, tolerated: bool) -> None:
    key = "example.com/sla"
    node = _node(ALLOCATABLE, [{"key": key, "value": taint, "effect": "NoSchedule"}])
    pod = Pod(tolerations=[{"key": key, "operator": operator, "value": toleration, "effect": "NoSchedule"}])
    found, _ = _verdict(pod, node, _existing())
    assert found is (PodVerdict.SCHEDULABLE if tolerated else PodVerdict.TAINT)
