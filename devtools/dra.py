"""Dynamic Resource Allocation objects as the API serves them, for the DRA lab, the corpus and the
large generated clusters: the NVIDIA GPU DRA driver's DeviceClasses (its Helm chart's
`deviceclass-*.yaml`), ResourceSlices as its kubelet plugin publishes them (one pool per node named
after the node, one slice; full GPUs `gpu-<minor>`, MIG devices
`gpu-<minor>-mig-<profile>-<profileID>-<start>`, attributes and capacity per `deviceinfo.go`), claims,
templates and the pods that use them.

Every function returns a plain dict shaped as `kubectl get -o json` prints it, in the `resource.k8s.io`
version asked for (`v1`, `v1beta2` or `v1beta1`: v1beta1 nests request fields on the request and device
fields under `basic`).
"""

from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

DRIVER = "gpu.nvidia.com"
CREATED = "2026-11-20T10:00:00Z"


def uid(*parts: str) -> str:
    """A stable uid from names: the same objects every time they are built."""
    return str(uuid.UUID(int=zlib.crc32("/".join(parts).encode()) * 2**96 + len("/".join(parts))))


def _meta(name: str, namespace: str | None = None, kind: str = "", **extra: Any) -> Obj:
    found: Obj = {
        "creationTimestamp": extra.pop("created", CREATED),
        "name": name,
        "resourceVersion": str(100000 + zlib.crc32(f"{kind}/{namespace}/{name}".encode()) % 90000),
        "uid": uid(kind, namespace or "", name),
    }
    if namespace is not None:
        found["namespace"] = namespace
    found.update(extra)
    return found


# --- DeviceClasses ----------------------------------------------------------------------------------

NVIDIA_CLASSES = {
    "gpu.nvidia.com": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
    ),
    "mig.nvidia.com": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
    ),
    "vfio.gpu.nvidia.com": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'"
    ),
    "compute-domain-daemon.nvidia.com": (
        "device.driver == 'compute-domain.nvidia.com' && "
        "device.attributes['compute-domain.nvidia.com'].type == 'daemon'"
    ),
    "compute-domain-default-channel.nvidia.com": (
        "device.driver == 'compute-domain.nvidia.com' && "
        "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
        "device.attributes['compute-domain.nvidia.com'].id == 0"
    ),
}
"""The NVIDIA driver's classes and selectors (deployments/helm/*/templates/deviceclass-*.yaml)."""


def device_classes(version: str = "v1") -> list[Obj]:
    found = []
    for name, expression in NVIDIA_CLASSES.items():
        spec: Obj = {"selectors": [{"cel": {"expression": expression}}]}
        if name == "gpu.nvidia.com" and version == "v1":
            spec["extendedResourceName"] = "nvidia.com/gpu"
        found.append(
            {
                "apiVersion": f"resource.k8s.io/{version}",
                "kind": "DeviceClass",
                "metadata": _meta(
                    name,
                    kind="DeviceClass",
                    labels={"app.kubernetes.io/managed-by": "Helm"},
                    annotations={"meta.helm.sh/release-name": "nvidia-dra-driver-gpu"},
                ),
                "spec": spec,
            }
        )
    return found


# --- ResourceSlices ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gpu:
    product: str
    architecture: str
    compute: str
    memory: str
    brand: str = "Nvidia"


A100_40 = Gpu("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi")
A100_80 = Gpu("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi")
H100 = Gpu("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "80Gi")
L4 = Gpu("NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi")

DRIVER_VERSION = "580.95.5"
CUDA_VERSION = "13.0.0"


@dataclass(frozen=True)
class Mig:
    """A MIG device: its profile (`1g.10gb`), profile id, placement start and size, memory."""

    profile: str
    profile_id: int
    start: int
    size: int
    memory: str
    multiprocessors: int


def _attrs(values: dict[str, Any]) -> Obj:
    found: Obj = {}
    for key, value in values.items():
        if isinstance(value, bool):
            found[key] = {"bool": value}
        elif isinstance(value, int):
            found[key] = {"int": value}
        elif key in ("cudaComputeCapability", "driverVersion", "cudaDriverVersion"):
            found[key] = {"version": value}
        else:
            found[key] = {"string": value}
    return found


def _device(
    name: str, attributes: dict[str, Any], capacity: dict[str, str], taints: list[Obj], version: str
) -> Obj:
    body: Obj = {"attributes": _attrs(attributes), "capacity": {k: {"value": v} for k, v in capacity.items()}}
    if taints:
        body["taints"] = taints
    return {"name": name, "basic": body} if version == "v1beta1" else {"name": name, **body}


def gpu_devices(
    node: str,
    gpu: Gpu,
    minors: range | list[int],
    migs: dict[int, list[Mig]] | None = None,
    taints: dict[str, list[Obj]] | None = None,
    version: str = "v1",
) -> list[Obj]:
    """The devices the driver publishes for these GPUs: a full GPU, or its MIG devices when MIG is on."""
    found = []
    for minor in minors:
        gpu_uuid = f"GPU-{uid(node, str(minor))}"
        common = {
            "productName": gpu.product,
            "brand": gpu.brand,
            "architecture": gpu.architecture,
            "cudaComputeCapability": gpu.compute,
            "driverVersion": DRIVER_VERSION,
            "cudaDriverVersion": CUDA_VERSION,
            "resource.kubernetes.io/pciBusID": f"0000:{0x10 + minor * 0x10:02x}:00.0",
            "resource.kubernetes.io/pcieRoot": f"pci0000:{minor // 4:02x}",
        }
        for mig in (migs or {}).get(minor, []):
            name = f"gpu-{minor}-mig-{mig.profile.replace('.', '')}-{mig.profile_id}-{mig.start}"
            capacity = {"memory": mig.memory, "multiprocessors": str(mig.multiprocessors), "copyEngines": "1"}
            capacity.update({f"memorySlice{i}": "1" for i in range(mig.start, mig.start + mig.size)})
            attributes = {
                "type": "mig",
                "uuid": f"MIG-{uid(node, name)}",
                "parentUUID": gpu_uuid,
                "profile": mig.profile,
                **common,
            }
            found.append(_device(name, attributes, capacity, (taints or {}).get(name, []), version))
        if minor not in (migs or {}):
            name = f"gpu-{minor}"
            attributes = {"type": "gpu", "uuid": gpu_uuid, "addressingMode": "None", **common}
            found.append(
                _device(name, attributes, {"memory": gpu.memory}, (taints or {}).get(name, []), version)
            )
    return found


def channel_devices(
    node: str, ids: list[int], taints: list[Obj] | None = None, version: str = "v1"
) -> list[Obj]:
    """IMEX channels of a ComputeDomain, as the `compute-domain.nvidia.com` kubelet plugin publishes them."""
    return [_device(f"channel-{i}", {"type": "channel", "id": i}, {}, taints or [], version) for i in ids]


def resource_slice(
    node: str,
    devices: list[Obj],
    version: str = "v1",
    generation: int = 1,
    slice_count: int = 1,
    index: int = 0,
    driver: str = DRIVER,
) -> Obj:
    name = f"{node}-{driver}-{uid(node, driver, str(generation), str(index))[:5]}"
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": _meta(
            name,
            kind="ResourceSlice",
            generateName=f"{node}-{driver}-",
            ownerReferences=[
                {
                    "apiVersion": "v1",
                    "controller": True,
                    "kind": "Node",
                    "name": node,
                    "uid": uid("Node", "", node),
                }
            ],
        ),
        "spec": {
            "devices": devices,
            "driver": driver,
            "nodeName": node,
            "pool": {"generation": generation, "name": node, "resourceSliceCount": slice_count},
        },
    }


# --- nodes ------------------------------------------------------------------------------------------


def node(
    name: str, gpu: Gpu | None, count: int = 0, taint: bool = True, labels: dict[str, str] | None = None
) -> Obj:
    """A node whose GPUs are served by the DRA driver only: no `nvidia.com/gpu` in its capacity."""
    node_labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        **(labels or {}),
    }
    if gpu is not None:
        node_labels |= {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": gpu.product.replace(" ", "-"),
            "nvidia.com/gpu.count": str(count),
            "nvidia.com/dra-kubelet-plugin": "true",
        }
    resources = {"cpu": "96", "ephemeral-storage": "520120588Ki", "memory": "1056784860Ki", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(name, kind="Node", labels=node_labels, created="2026-11-09T09:00:00Z"),
        "spec": {"taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]}
        if gpu is not None and taint
        else {},
        "status": {
            "allocatable": {**resources, "cpu": "95690m", "memory": "1046297820Ki"},
            "capacity": resources,
            "conditions": [
                {
                    "lastHeartbeatTime": "2026-11-29T08:59:30Z",
                    "lastTransitionTime": "2026-11-09T09:02:00Z",
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                }
            ],
            "nodeInfo": {"kubeletVersion": "v1.34.7", "containerRuntimeVersion": "containerd://2.1.4"},
        },
    }


# --- claims, templates, pods ------------------------------------------------------------------------


def request(
    name: str,
    device_class: str = "gpu.nvidia.com",
    selectors: list[str] | None = None,
    count: int | None = None,
    all_devices: bool = False,
    tolerations: list[Obj] | None = None,
    first_available: list[Obj] | None = None,
) -> Obj:
    """A request in v1 shape (`claim_spec` converts it for v1beta1)."""
    if first_available is not None:
        return {"name": name, "firstAvailable": first_available}
    exactly: Obj = {"deviceClassName": device_class, "allocationMode": "All" if all_devices else "ExactCount"}
    if not all_devices:
        exactly["count"] = count or 1
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if tolerations:
        exactly["tolerations"] = tolerations
    return {"name": name, "exactly": exactly}


def subrequest(name: str, device_class: str, selectors: list[str] | None = None, count: int = 1) -> Obj:
    found: Obj = {
        "name": name,
        "deviceClassName": device_class,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if selectors:
        found["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return found


def claim_spec(requests: list[Obj], constraints: list[Obj] | None = None, version: str = "v1") -> Obj:
    if version == "v1beta1":
        requests = [{"name": r["name"], **r.get("exactly", {})} if "exactly" in r else r for r in requests]
    devices: Obj = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def allocation(node_name: str, results: list[tuple[str, str]], driver: str = DRIVER) -> Obj:
    """`status.allocation` on one node's pool: (request, device) pairs."""
    return {
        "allocationTimestamp": "2026-11-29T07:00:00Z",
        "devices": {
            "results": [
                {"device": device, "driver": driver, "pool": node_name, "request": req}
                for req, device in results
            ]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        },
    }


def resource_claim(
    namespace: str,
    name: str,
    spec: Obj,
    alloc: Obj | None = None,
    reserved_for: list[str] | None = None,
    version: str = "v1",
    owner_pod: str | None = None,
    pod_claim: str | None = None,
    deleting: bool = False,
) -> Obj:
    meta: Obj = {}
    if alloc is not None:
        meta["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    if owner_pod is not None:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": pod_claim or ""}
        meta["generateName"] = f"{owner_pod}-{pod_claim}-"
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Pod",
                "name": owner_pod,
                "uid": uid("Pod", namespace, owner_pod),
            }
        ]
    if deleting:
        meta["deletionTimestamp"] = "2026-11-29T08:40:00Z"
        meta["deletionGracePeriodSeconds"] = 0
    status: Obj = {}
    if alloc is not None:
        status["allocation"] = alloc
    if reserved_for:
        status["reservedFor"] = [
            {"name": p, "resource": "pods", "uid": uid("Pod", namespace, p)} for p in reserved_for
        ]
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaim",
        "metadata": _meta(name, namespace, kind="ResourceClaim", **meta),
        "spec": spec,
        "status": status,
    }


def claim_template(namespace: str, name: str, spec: Obj, version: str = "v1") -> Obj:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaimTemplate",
        "metadata": _meta(name, namespace, kind="ResourceClaimTemplate"),
        "spec": {"spec": spec},
    }


def pod(
    namespace: str,
    name: str,
    claims: list[Obj],
    statuses: list[Obj] | None = None,
    node_name: str | None = None,
    limits: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
    message: str | None = None,
    image: str = "nvcr.io/nvidia/pytorch:25.10-py3",
) -> Obj:
    """A pod that uses its claims from one container (`resources.claims`)."""
    container: Obj = {
        "command": ["python", "train.py"],
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": "trainer",
        "resources": {"claims": [{"name": c["name"]} for c in claims]},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if limits:
        container["resources"] |= {"limits": limits, "requests": dict(limits)}
    spec: Obj = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
    }
    if claims:
        spec["resourceClaims"] = claims
    if node_selector:
        spec["nodeSelector"] = node_selector
    status: Obj
    if node_name:
        spec["nodeName"] = node_name
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-29T07:00:05Z",
                    "status": "True",
                    "type": "PodScheduled",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-29T07:01:10Z",
                    "status": "True",
                    "type": "Ready",
                },
            ],
            "hostIP": "10.128.0.21",
            "phase": "Running",
            "qosClass": "BestEffort",
            "startTime": "2026-11-29T07:00:05Z",
        }
    else:
        status = {"phase": "Pending", "qosClass": "BestEffort"}
        if message:
            status["conditions"] = [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-29T08:20:01Z",
                    "message": message,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ]
    if statuses is not None:
        status["resourceClaimStatuses"] = statuses
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(
            name,
            namespace,
            kind="Pod",
            created="2026-11-29T08:20:00Z",
            labels={"app.kubernetes.io/part-of": "dra-lab"},
        ),
        "spec": spec,
        "status": status,
    }


def event(namespace: str, pod_name: str, reason: str, message: str, component: str) -> Obj:
    return {
        "apiVersion": "v1",
        "count": 6,
        "firstTimestamp": "2026-11-29T08:20:01Z",
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod_name,
            "namespace": namespace,
            "uid": uid("Pod", namespace, pod_name),
        },
        "kind": "Event",
        "lastTimestamp": "2026-11-29T08:55:01Z",
        "message": message,
        "metadata": _meta(
            f"{pod_name}.{uid(reason, pod_name)[:16].replace('-', '')}",
            namespace,
            kind="Event",
            created="2026-11-29T08:20:01Z",
        ),
        "reason": reason,
        "source": {"component": component},
        "type": "Warning",
    }


def as_list(items: list[Obj]) -> Obj:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
