"""Nodes as their clouds label and taint them: GKE GPU and TPU node pools, EKS p4d node groups, AKS
agent pools, on-premises nodes labelled by GPU feature discovery."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devtools.jobset_corpus.world import Obj, World, ts

GKE_ZONE = ("us-central1", "us-central1-a")


def gke_node(
    w: World,
    cluster: str,
    pool: str,
    machine: str,
    extra: dict[str, str],
    capacity: dict[str, str],
    *,
    taints: list[Obj] | None = None,
    ready: str = "True",
    host: str | None = None,
    created: float = 4000,
    spot: bool = False,
    group: str | None = None,
    zone: str = GKE_ZONE[1],
) -> Obj:
    name = f"gke-{cluster}-{pool}-{group or w.hexid(8)}-{w.suffix(4)}"
    region = GKE_ZONE[0]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": machine,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": "208" if machine.startswith("a3") else "24",
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": "110",
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-provisioning": "spot" if spot else "standard",
        "cloud.google.com/gke-stack-type": "IPV4",
        "cloud.google.com/machine-family": machine.split("-")[0],
        "cloud.google.com/private-node": "false",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": machine,
        "topology.gke.io/zone": zone,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        **({"cloud.google.com/gke-spot": "true"} if spot else {}),
        **({"cloud.google.com/gce-topology-host": host} if host else {}),
        **extra,
    }
    return node(
        w, name, labels, capacity, taints or [], ready, f"gce://ml-platform-prod/{zone}/{name}", created
    )


def plain_node(
    w: World,
    name: str,
    labels: dict[str, str],
    capacity: dict[str, str],
    provider: str,
    *,
    taints: list[Obj] | None = None,
) -> Obj:
    base = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    return node(w, name, {**base, **labels}, capacity, taints or [], "True", provider, 9000)


def node(
    w: World,
    name: str,
    labels: dict[str, str],
    extended: dict[str, str],
    taints: list[Obj],
    ready: str,
    provider: str,
    created: float,
) -> Obj:
    cpu, memory = (
        ("208", "1872855532Ki")
        if "208" in labels.get("cloud.google.com/gke-cpu-scaling-level", "")
        else ("96", "1056767976Ki")
    )
    capacity = {
        "cpu": cpu,
        "ephemeral-storage": "507904736Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
        **extended,
    }
    allocatable = {
        **capacity,
        "cpu": f"{int(cpu) * 1000 - 1930}m",
        "memory": "1809381356Ki" if cpu == "208" else "1000124392Ki",
    }
    beat = ts(0.4) if ready == "True" else ts(19)
    reasons = {
        "True": ("KubeletReady", "kubelet is posting ready status"),
        "False": ("KubeletNotReady", "container runtime network not ready: NetworkReady=false"),
        "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status."),
    }
    pressure = [
        {
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created),
            "message": f"kubelet has {m}",
            "reason": r,
            "status": "False" if ready != "Unknown" else "Unknown",
            "type": t,
        }
        for t, r, m in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "sufficient PID available"),
        )
    ]
    reason, message = reasons[ready]
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": ts(created),
                "labels": labels,
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "podCIDR": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.0/24",
                "podCIDRs": [f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.0/24"],
                "providerID": provider,
                **({"taints": taints} if taints else {}),
            },
            "status": {
                "addresses": [
                    {
                        "address": f"10.128.{w.rng.randint(0, 15)}.{w.rng.randint(2, 250)}",
                        "type": "InternalIP",
                    },
                    {"address": name, "type": "Hostname"},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": [
                    *pressure,
                    {
                        "lastHeartbeatTime": beat,
                        "lastTransitionTime": ts(created if ready == "True" else 19),
                        "message": message,
                        "reason": reason,
                        "status": ready,
                        "type": "Ready",
                    },
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": w.uid(),
                    "containerRuntimeVersion": "containerd://2.0.4",
                    "kernelVersion": "6.6.87+",
                    "kubeProxyVersion": "",
                    "machineID": w.hexid(32),
                    "kubeletVersion": "v1.34.7-gke.1049000" if provider.startswith("gce") else "v1.34.7",
                    "operatingSystem": "linux",
                    "systemUUID": w.uid(),
                    "osImage": "Container-Optimized OS from Google"
                    if provider.startswith("gce")
                    else "Ubuntu 24.04.2 LTS",
                },
            },
        }
    )


TPU_TAINT = {"effect": "NoSchedule", "key": "google.com/tpu", "value": "present"}
GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}


def tpu_v5e(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    """A host of a GKE TPU v5e 4x4 slice node pool: 4 chips, tainted `google.com/tpu`."""
    extra = {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x4",
        "cloud.google.com/gke-placement-group": f"{pool}-pg",
    }
    return gke_node(
        w, cluster, pool, "ct5lp-hightpu-4t", extra, {"google.com/tpu": "4"}, taints=[TPU_TAINT], **kw
    )


def gke_gpu_node(
    w: World,
    cluster: str,
    pool: str,
    machine: str,
    gpus: str,
    accelerator: str,
    driver: str,
    *,
    extra: dict[str, str] | None = None,
    **kw: Any,
) -> Obj:
    """A node of a GKE GPU node pool: GKE labels it with the accelerator (and the driver version it
    installs, when it installs one) and taints it `nvidia.com/gpu=present:NoSchedule`."""
    labels = {
        "cloud.google.com/gke-accelerator": accelerator,
        **({"cloud.google.com/gke-gpu-driver-version": driver} if driver else {}),
        **(extra or {}),
    }
    return gke_node(w, cluster, pool, machine, labels, {"nvidia.com/gpu": gpus}, taints=[GPU_TAINT], **kw)


def a3(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    """An a3-highgpu-8g node: 8 H100s."""
    return gke_gpu_node(w, cluster, pool, "a3-highgpu-8g", "8", "nvidia-h100-80gb", "latest", **kw)


def a2(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    """An a2-highgpu-8g node: 8 A100s, from a pool that does not let GKE install the driver."""
    return gke_gpu_node(w, cluster, pool, "a2-highgpu-8g", "8", "nvidia-tesla-a100", "", **kw)


def g2(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    """A g2-standard-24 node: 2 L4s."""
    return gke_gpu_node(w, cluster, pool, "g2-standard-24", "2", "nvidia-l4", "default", **kw)


def cpu_node(w: World, cluster: str) -> Obj:
    """A node of the cluster's default CPU pool."""
    return gke_node(w, cluster, "default-pool", "e2-standard-8", {}, {})


def eks_p4d(w: World, i: int, **labels: str) -> Obj:
    """A p4d.24xlarge node (8 A100s, EFA) of an EKS managed node group, with GPU feature discovery's
    labels; `labels` adds more (such as EC2's network topology)."""
    name = f"ip-10-0-{40 + i}-{w.rng.randint(10, 250)}.us-west-2.compute.internal"
    return plain_node(
        w,
        name,
        {
            "eks.amazonaws.com/capacityType": "ON_DEMAND",
            "eks.amazonaws.com/nodegroup": "p4d-training",
            "node.kubernetes.io/instance-type": "p4d.24xlarge",
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
            "topology.kubernetes.io/region": "us-west-2",
            "topology.kubernetes.io/zone": "us-west-2b",
            **labels,
        },
        {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"},
        f"aws:///us-west-2b/i-0{w.hexid(16)}",
        taints=[GPU_TAINT],
    )


def pool(w: World, count: int, make: Callable[..., Obj], cluster: str, name: str, **kw: Any) -> list[Obj]:
    """`count` nodes of GKE node pool `name`, made by `make` (`a3`, `tpu_v5e`, ...): one managed
    instance group, so one hash in their names."""
    group = w.hexid(8)
    return [make(w, cluster, name, group=group, **kw) for _ in range(count)]


def aks_node(w: World, agent_pool: str, vmss: str, i: int, machine: str, *, gpu: bool = False) -> Obj:
    """Instance `i` of an AKS agent pool's VM scale set; the GPU pool carries AKS's `sku=gpu` taint."""
    name = f"aks-{agent_pool}-{vmss}-vmss{i:06d}"
    labels = {
        "agentpool": agent_pool,
        **({"kubernetes.azure.com/accelerator": "nvidia"} if gpu else {}),
        "kubernetes.azure.com/agentpool": agent_pool,
        "kubernetes.azure.com/mode": "user" if gpu else "system",
        "node.kubernetes.io/instance-type": machine,
        "topology.kubernetes.io/zone": "eastus-1",
    }
    provider = (
        "azure:///subscriptions/6f1c0a7e-2f3b-4d55-9c2e-0e8b1f7d9a11/resourceGroups/mc_ml_aks-ml_eastus/providers/"
        f"Microsoft.Compute/virtualMachineScaleSets/aks-{agent_pool}-{vmss}-vmss/virtualMachines/{i}"
    )
    capacity = {"nvidia.com/gpu": "8"} if gpu else {}
    taints = [{"effect": "NoSchedule", "key": "sku", "value": "gpu"}] if gpu else None
    return plain_node(w, name, labels, capacity, provider, taints=taints)


def lab_node(w: World, i: int) -> Obj:
    """An on-premises H100 node labelled by GPU feature discovery; no cloud provider, no providerID."""
    labels = {
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.present": "true",
        "node-role.kubernetes.io/worker": "",
    }
    n = plain_node(w, f"gpu-node-{i:02d}.lab.internal", labels, {"nvidia.com/gpu": "8"}, "")
    del n["spec"]["providerID"]
    return n


def unreachable(node: Obj, minutes_ago: float) -> None:
    """What the node lifecycle controller does when a kubelet stops posting status: Ready=Unknown and
    the `unreachable` taints (once a pod's toleration of the NoExecute one runs out, the taint manager
    evicts it)."""
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    ready.update(
        {
            "lastTransitionTime": ts(minutes_ago),
            "message": "Kubelet stopped posting node status.",
            "reason": "NodeStatusUnknown",
            "status": "Unknown",
        }
    )
    node["spec"]["taints"] = [
        *node["spec"]["taints"],
        {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": ts(minutes_ago)},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": ts(minutes_ago)},
    ]
