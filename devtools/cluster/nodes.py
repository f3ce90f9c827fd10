"""Nodes as GKE registers them: labels, taints, capacity and allocatable after the kubelet's
reservations, node-problem-detector's conditions; a few cordoned, NotReady, or with unhealthy GPUs."""

from __future__ import annotations

import string
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from devtools.cluster.catalog import (
    CLUSTER,
    K8S_VERSION,
    MAX_PODS,
    NODE_IMAGES,
    NOW,
    PROJECT,
    REGION,
    ZONES,
    Accelerator,
    Obj,
    Pool,
)
from devtools.cluster.pods import add_system_pods
from devtools.cluster.units import (
    allocatable_cpu_m,
    allocatable_memory_mib,
    capacity_memory_ki,
    cpu_quantity,
    ts,
)
from devtools.cluster.world import World


@dataclass(frozen=True)
class _Health:
    """What has happened to node `index` of a pool: node 1 of every 97 is cordoned, node 2 of every 199
    is NotReady, and on GPU pools node 3 of every 101 has its devices unhealthy (capacity kept,
    allocatable 0)."""

    cordoned: bool
    not_ready: bool
    unhealthy: bool
    created: datetime
    incident: datetime
    """When it was cordoned or lost."""

    @classmethod
    def of(cls, index: int, accelerator: Accelerator | None) -> _Health:
        return cls(
            cordoned=index % 97 == 1,
            not_ready=index % 199 == 2,
            unhealthy=accelerator is not None
            and accelerator.resource == "nvidia.com/gpu"
            and index % 101 == 3,
            created=NOW - timedelta(days=3 + index % 40, minutes=index % 60),
            incident=NOW - timedelta(hours=2, minutes=index % 50),
        )


def add_node(
    world: World,
    pool: Pool,
    index: int,
    group: str,
    *,
    pool_name: str | None = None,
    accelerator: Accelerator | None = None,
    extra_labels: dict[str, str] | None = None,
) -> Obj:
    """Node `index` of `pool` (its instance group `group`), with the DaemonSet pods it runs."""
    pool_name = pool_name or pool.name
    accelerator = accelerator or pool.accelerator
    name = world.unique("", f"gke-{CLUSTER}-{pool_name}-{group}-", string.ascii_lowercase + string.digits, 4)
    n = len(world.nodes)
    zone = ZONES[zlib.crc32(pool_name.encode()) % len(ZONES)] if accelerator else ZONES[index % len(ZONES)]
    health = _Health.of(index, accelerator)
    labels = _labels(pool, pool_name, accelerator, name, zone) | (extra_labels or {})
    address = f"10.128.{n // 250}.{2 + n % 250}"
    node: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _metadata(world, name, zone, labels, health.created),
        "spec": _spec(pool, accelerator, name, zone, n, health),
        "status": _status(world, pool, accelerator, name, address, health),
    }
    world.nodes.append(node)
    world.used[name] = Counter()
    world.host_ip[name] = address
    add_system_pods(world, node)
    return node


def _labels(
    pool: Pool, pool_name: str, accelerator: Accelerator | None, name: str, zone: str
) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": pool.machine,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": str(pool.cpus),
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": str(MAX_PODS),
        "cloud.google.com/gke-nodepool": pool_name,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-provisioning": "spot" if pool.spot else "standard",
        "cloud.google.com/machine-family": pool.machine.split("-")[0],
        "cloud.google.com/private-node": "false",
        "failure-domain.beta.kubernetes.io/region": REGION,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": pool.machine,
        "topology.gke.io/zone": zone,
        "topology.kubernetes.io/region": REGION,
        "topology.kubernetes.io/zone": zone,
    }
    if pool.spot:
        labels["cloud.google.com/gke-spot"] = "true"
    if accelerator:
        labels |= accelerator.labels
    return labels


def _metadata(world: World, name: str, zone: str, labels: dict[str, str], created: datetime) -> Obj:
    csi_id = f'{{"pd.csi.storage.gke.io":"projects/{PROJECT}/zones/{zone}/instances/{name}"}}'
    gke_labels = ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k.startswith("cloud.google.com/"))
    return {
        "annotations": {
            "container.googleapis.com/instance_id": str(world.rng.getrandbits(62)),
            "csi.volume.kubernetes.io/nodeid": csi_id,
            "node.alpha.kubernetes.io/ttl": "0",
            "node.gke.io/last-applied-node-labels": gke_labels,
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        },
        "creationTimestamp": ts(created),
        "labels": labels,
        "name": name,
        "resourceVersion": world.rv(),
        "uid": world.uid(),
    }


def _spec(pool: Pool, accelerator: Accelerator | None, name: str, zone: str, n: int, health: _Health) -> Obj:
    """The node's pod CIDR and provider ID, and its taints: its accelerator's, Spot's, then the node
    lifecycle's (cordoned, unreachable)."""
    taints: list[Obj] = []
    if accelerator:
        taints.append(accelerator.taint)
    if pool.spot:
        taints.append({"effect": "NoSchedule", "key": "cloud.google.com/gke-spot", "value": "true"})
    cidr = f"10.{64 + n // 256}.{n % 256}.0/24"
    spec: Obj = {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"gce://{PROJECT}/{zone}/{name}"}
    if health.cordoned:
        spec["unschedulable"] = True
        taints.append(
            {
                "effect": "NoSchedule",
                "key": "node.kubernetes.io/unschedulable",
                "timeAdded": ts(health.incident),
            }
        )
    if health.not_ready:
        taints += [
            {"effect": effect, "key": "node.kubernetes.io/unreachable", "timeAdded": ts(health.incident)}
            for effect in ("NoSchedule", "NoExecute")
        ]
    if taints:
        spec["taints"] = taints
    return spec


def _status(
    world: World, pool: Pool, accelerator: Accelerator | None, name: str, address: str, health: _Health
) -> Obj:
    capacity, allocatable = _resources(pool, accelerator, health.unhealthy)
    return {
        "addresses": [
            {"address": address, "type": "InternalIP"},
            {"address": name, "type": "Hostname"},
        ],
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": _conditions(world, health.created, health.incident if health.not_ready else None),
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": NODE_IMAGES,
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": world.uid(),
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.6.56+",
            "kubeProxyVersion": K8S_VERSION,
            "kubeletVersion": K8S_VERSION,
            "machineID": world.hex(32),
            "operatingSystem": "linux",
            "osImage": "Container-Optimized OS from Google",
            "systemUUID": world.uid(),
        },
    }


def _resources(pool: Pool, accelerator: Accelerator | None, unhealthy: bool) -> tuple[Obj, Obj]:
    """Capacity, and allocatable after the kubelet's reservations; unhealthy devices are in capacity
    but not in allocatable."""
    common = {
        "ephemeral-storage": "98831908Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "pods": str(MAX_PODS),
    }
    capacity: Obj = common | {"cpu": str(pool.cpus), "memory": f"{capacity_memory_ki(pool)}Ki"}
    allocatable: Obj = common | {
        "cpu": cpu_quantity(allocatable_cpu_m(pool)),
        "ephemeral-storage": "47060071478",
        "memory": f"{allocatable_memory_mib(pool) * 1024}Ki",
    }
    if accelerator:
        capacity[accelerator.resource] = str(accelerator.count)
        allocatable[accelerator.resource] = "0" if unhealthy else str(accelerator.count)
    return capacity, allocatable


def _conditions(world: World, created: datetime, lost: datetime | None) -> list[Obj]:
    """node-problem-detector's conditions and the kubelet's; the kubelet's all Unknown since `lost`,
    if set."""
    beat = ts(NOW - timedelta(seconds=world.rng.randrange(5, 40)))
    since = ts(created + timedelta(minutes=1))

    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        return {
            "lastHeartbeatTime": beat,
            "lastTransitionTime": since,
            "message": message,
            "reason": reason,
            "status": status,
            "type": type_,
        }

    problems = [
        cond(
            "FrequentContainerdRestart",
            "False",
            "NoFrequentContainerdRestart",
            "containerd is functioning properly",
        ),
        cond("KernelDeadlock", "False", "KernelHasNoDeadlock", "kernel has no deadlock"),
        cond("ReadonlyFilesystem", "False", "FilesystemIsNotReadOnly", "Filesystem is not read-only"),
        cond(
            "FrequentKubeletRestart", "False", "NoFrequentKubeletRestart", "kubelet is functioning properly"
        ),
        {
            "lastHeartbeatTime": since,
            "lastTransitionTime": since,
            "message": "NodeController create implicit route",
            "reason": "RouteCreated",
            "status": "False",
            "type": "NetworkUnavailable",
        },
    ]
    if lost is not None:
        return problems + _lost(lost)
    return [
        *problems,
        cond(
            "MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
        ),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]


def _lost(since: datetime) -> list[Obj]:
    """The kubelet's conditions once it stopped posting status."""
    gone = ts(since)
    return [
        {
            "lastHeartbeatTime": gone,
            "lastTransitionTime": gone,
            "message": "Kubelet stopped posting node status.",
            "reason": "NodeStatusUnknown",
            "status": "Unknown",
            "type": t,
        }
        for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
    ]
