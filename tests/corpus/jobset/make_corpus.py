# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""Writes the JobSet corpus (`tests/corpus/jobset/*.json`, `index.yaml`) and the JobSet demo
snapshots (`bot/demo/jobset-*.json`).

Each snapshot is a `kind: List` shaped as `kubectl get nodes,pods,events,jobs,jobsets,resourcequotas
-A -o json` prints it, with objects as the controllers write them: the JobSet after its webhook's
defaulting, child Jobs `<js>-<rj>-<i>` with JobSet's labels, annotations and ownerReferences, pods
named by the Job controller (`<job>-<index>-<5 chars>`) with completion-index annotations and labels,
events as the Job controller, the JobSet controller and the scheduler record them, and nodes with
GKE/EKS/AKS labels and taints. Everything is derived from a seed per snapshot, so running this again
writes the same files:

    python tests/corpus/jobset/make_corpus.py     # with the project's virtualenv active

Each snapshot is one scenario function, registered with `@scenario` (its seed, file and the verdict
`index.yaml` records for it) and written with the builders above it, each of which models what one
controller writes: node pools, child Jobs and their pods, conditions, event series, restarts.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
NOW = datetime(2026, 11, 29, 9, 0, 0, tzinfo=UTC)
"""The moment every snapshot was taken (tests use it as the view's `now`)."""

Obj = dict[str, Any]
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet of Kubernetes' generated name suffixes."""


def ts(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class World:
    """One snapshot being built; a seeded random source makes uids and suffixes repeatable."""

    seed: str
    items: list[Obj] = field(default_factory=list)
    rng: random.Random = field(init=False)
    version: int = 4_180_000

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(ALPHABET) for _ in range(n))

    def hexid(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def rv(self) -> str:
        self.version += self.rng.randint(3, 900)
        return str(self.version)

    def add(self, obj: Obj) -> Obj:
        self.items.append(obj)
        return obj

    def snapshot(self) -> Obj:
        order = {
            "Node": 0,
            "Pod": 1,
            "Event": 2,
            "Job": 3,
            "JobSet": 4,
            "ResourceQuota": 5,
            "RuntimeClass": 6,
            "Workload": 7,
            "PersistentVolumeClaim": 8,
            "PersistentVolume": 9,
            "StorageClass": 10,
            "CSINode": 11,
            "CSIDriver": 12,
            "CSIStorageCapacity": 13,
            "Namespace": 14,
        }
        items = sorted(self.items, key=lambda o: order[o["kind"]])
        return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# --- nodes ---------------------------------------------------------------------------------------

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


# --- JobSet, Jobs, pods ------------------------------------------------------------------------


def owner_ref(api_version: str, kind: str, name: str, uid: str) -> Obj:
    """The controller ownerReference a controller sets on the objects it creates."""
    return {
        "apiVersion": api_version,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": name,
        "uid": uid,
    }


@dataclass
class RJ:
    """A replicatedJob of a JobSet's spec."""

    name: str
    replicas: int
    parallelism: int
    resource: tuple[str, str]
    image: str
    container: str = "trainer"
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    restart_policy: str = "OnFailure"
    backoff_limit: int = 0
    runtime_class: str = ""
    depends_on: list[Obj] = field(default_factory=list)
    affinity: Obj = field(default_factory=dict)


def recreate(max_restarts: int) -> Obj:
    """A failurePolicy that recreates every Job on a failure, at most `max_restarts` times."""
    return {"maxRestarts": max_restarts, "restartStrategy": "Recreate"}


RESTART_POLICY = recreate(10)


@dataclass
class JS:
    """A JobSet being built and what the objects of its children need."""

    w: World
    name: str
    ns: str
    rjs: list[RJ]
    obj: Obj
    topology: str = ""

    @property
    def uid(self) -> str:
        return str(self.obj["metadata"]["uid"])


def jobset(
    w: World,
    name: str,
    ns: str,
    rjs: list[RJ],
    *,
    created: float = 90,
    topology: str = "",
    failure_policy: Obj | None = RESTART_POLICY,
    suspend: bool = False,
    queue: str = "",
    coordinator: Obj | None = None,
    in_order: bool = False,
    status: Obj | None = None,
) -> JS:
    """A JobSet as its webhook defaults it. `failure_policy`: by default the corpus's usual one
    (Recreate, at most 10 restarts); None: none, so the first failed Job fails the JobSet. `queue`: the
    Kueue LocalQueue it is labelled for."""
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    annotations = {"alpha.jobset.sigs.k8s.io/exclusive-topology": topology} if topology else {}
    spec: Obj = {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True, "subdomain": name},
        "replicatedJobs": [
            {
                **({"dependsOn": rj.depends_on} if rj.depends_on else {}),
                "groupName": "default",
                "name": rj.name,
                "replicas": rj.replicas,
                "template": {"metadata": {}, "spec": job_spec(rj, name, None)},
            }
            for rj in rjs
        ],
        "startupPolicy": {"startupPolicyOrder": "InOrder" if in_order else "AnyOrder"},
        "successPolicy": {"operator": "All"},
        "suspend": suspend,
    }
    if failure_policy is not None:
        spec["failurePolicy"] = dict(failure_policy)
    if coordinator is not None:
        spec["coordinator"] = coordinator
    obj = w.add(
        {
            "apiVersion": JOBSET_API,
            "kind": "JobSet",
            "metadata": {
                **({"annotations": annotations} if annotations else {}),
                "creationTimestamp": ts(created),
                "generation": 1,
                **({"labels": labels} if labels else {}),
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": status or {},
        }
    )
    return JS(w, name, ns, rjs, obj, topology)


def job_spec(
    rj: RJ, js: str, labels: dict[str, str] | None, annotations: dict[str, str] | None = None
) -> Obj:
    """The Job spec of replicatedJob `rj`: an Indexed Job, its pods on JobSet `js`'s subdomain."""
    request, amount = rj.resource
    container = {
        "command": ["python3", "-m", "train", "--config=/etc/train/config.yaml"],
        "image": rj.image,
        "imagePullPolicy": "IfNotPresent",
        "name": rj.container,
        "ports": [{"containerPort": 8471, "protocol": "TCP"}, {"containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {request: amount}, "requests": {request: amount}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    pod_spec: Obj = {
        **({"affinity": rj.affinity} if rj.affinity else {}),
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        **({"nodeSelector": rj.node_selector} if rj.node_selector else {}),
        "restartPolicy": rj.restart_policy,
        **({"runtimeClassName": rj.runtime_class} if rj.runtime_class else {}),
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "subdomain": js,
        "terminationGracePeriodSeconds": 30,
        **({"tolerations": rj.tolerations} if rj.tolerations else {}),
    }
    meta: Obj = {}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {
        "backoffLimit": rj.backoff_limit,
        "completionMode": "Indexed",
        "completions": rj.parallelism,
        "manualSelector": False,
        "parallelism": rj.parallelism,
        "podReplacementPolicy": "TerminatingOrFailed",
        "suspend": False,
        "template": {"metadata": meta, "spec": pod_spec},
    }


@dataclass
class Job:
    """A child Job built, and what its pods need."""

    js: JS
    rj: RJ
    index: int
    obj: Obj
    attempt: int

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def uid(self) -> str:
        return str(self.obj["metadata"]["uid"])

    @property
    def key(self) -> str:
        return hashlib.sha1(f"{self.js.ns}/{self.name}".encode()).hexdigest()


def jobset_keys(js: JS, rj: RJ, index: int, attempt: int, job_key: str) -> dict[str, str]:
    """The labels (and annotations) the JobSet controller puts on a child Job and its pod template."""
    total = sum(r.replicas for r in js.rjs)
    before = sum(r.replicas for r in js.rjs[: js.rjs.index(rj)])
    return {
        "jobset.sigs.k8s.io/global-replicas": str(total),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": str(total),
        "jobset.sigs.k8s.io/job-global-index": str(before + index),
        "jobset.sigs.k8s.io/job-group-index": str(before + index),
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/job-key": job_key,
        "jobset.sigs.k8s.io/jobset-name": js.name,
        "jobset.sigs.k8s.io/jobset-uid": js.uid,
        "jobset.sigs.k8s.io/replicatedjob-name": rj.name,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(rj.replicas),
        "jobset.sigs.k8s.io/restart-attempt": str(attempt),
    }


def job(
    js: JS,
    rj: RJ,
    index: int,
    *,
    created: float,
    attempt: int = 0,
    active: int = 0,
    ready: int = 0,
    failed: int = 0,
    succeeded: int = 0,
    conditions: list[Obj] | None = None,
    completed: float | None = None,
    pods_created: bool = True,
    suspend: bool = False,
    deleting: float | None = None,
) -> Job:
    """Child Job `<js>-<rj>-<index>` of restart `attempt`, as the JobSet controller creates it, with the
    status the Job controller keeps (`active`, `ready`, ... pods; `completed`: when it completed).
    `pods_created=False`: the API server has rejected every pod it tried to create, so the Job
    controller has only stamped its startTime. `deleting`: being deleted in the foreground, as the
    JobSet controller deletes the Jobs of an attempt it restarts."""
    w = js.w
    name = f"{js.name}-{rj.name}-{index}"
    uid = w.uid()
    key = hashlib.sha1(f"{js.ns}/{name}".encode()).hexdigest()
    keys = jobset_keys(js, rj, index, attempt, key)
    annotations = dict(keys)
    if js.topology:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = js.topology
    if js.obj["spec"].get("coordinator"):
        c = js.obj["spec"]["coordinator"]
        endpoint = f"{js.name}-{c['replicatedJob']}-{c.get('jobIndex', 0)}-{c.get('podIndex', 0)}.{js.name}"
        keys["jobset.sigs.k8s.io/coordinator"] = endpoint
        annotations["jobset.sigs.k8s.io/coordinator"] = endpoint
    template_labels = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
        **keys,
    }
    spec = job_spec(rj, js.name, template_labels, annotations)
    spec["suspend"] = suspend
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    meta: Obj = {
        "annotations": {"batch.kubernetes.io/job-tracking": "", **annotations},
        "creationTimestamp": ts(created),
        "generation": 1,
        "labels": keys,
        "name": name,
        "namespace": js.ns,
        "ownerReferences": [owner_ref(JOBSET_API, "JobSet", js.name, js.uid)],
        "resourceVersion": w.rv(),
        "uid": uid,
    }
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
        meta["deletionGracePeriodSeconds"] = 0
        meta["finalizers"] = ["foregroundDeletion"]
    obj = w.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": spec,
            "status": job_status(active, ready, failed, succeeded, created, conditions, completed)
            if pods_created
            else {"startTime": ts(created - 0.1), "terminating": 0, "uncountedTerminatedPods": {}},
        }
    )
    return Job(js, rj, index, obj, attempt)


def job_status(
    active: int,
    ready: int,
    failed: int,
    succeeded: int,
    start: float,
    conditions: list[Obj] | None,
    completed: float | None,
) -> Obj:
    """An Indexed Job's status as the Job controller writes it (the lowest indexes succeeded)."""
    status: Obj = {"active": active} if active else {}
    if conditions:
        status["conditions"] = conditions
    if failed:
        status["failed"] = failed
    if succeeded:
        status["completedIndexes"] = "0" if succeeded == 1 else f"0-{succeeded - 1}"
        status["succeeded"] = succeeded
    status["ready"] = ready
    status["startTime"] = ts(start)
    status["terminating"] = 0
    status["uncountedTerminatedPods"] = {}
    if completed is not None:
        status["completionTime"] = ts(completed)
    return status


def cond(
    type_: str, reason: str, message: str, minutes_ago: float, status: str = "True", probe: bool = True
) -> Obj:
    """A core/v1 pod or Job condition (`probe`: with a lastProbeTime)."""
    found: Obj = {}
    if probe:
        found["lastProbeTime"] = ts(minutes_ago)
    found.update(
        {
            "lastTransitionTime": ts(minutes_ago),
            "message": message,
            "reason": reason,
            "status": status,
            "type": type_,
        }
    )
    return found


def jcond(type_: str, reason: str, message: str, minutes_ago: float, status: str = "True") -> Obj:
    """A metav1.Condition, as the JobSet controller and Kueue write them."""
    return {
        "lastTransitionTime": ts(minutes_ago),
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": type_,
    }


def pod(
    j: Job,
    index: int,
    phase: str,
    *,
    node: Obj | None = None,
    created: float = 87,
    started: float | None = None,
    ready: bool | None = None,
    waiting: tuple[str, str] | None = None,
    terminated: Obj | None = None,
    last_terminated: Obj | None = None,
    restarts: int = 0,
    unschedulable: str = "",
    gated: list[str] | None = None,
    deleting: float | None = None,
    disruption: tuple[str, str] | None = None,
    status_reason: tuple[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    """Pod `index` of Job `j` as the Job controller creates it and the kubelet reports it: `phase`, on
    `node` once bound (`waiting`/`terminated`: the container's state), or Pending because
    `unschedulable` (the scheduler's message) or `gated`. A leader of an exclusive-placement JobSet
    gets the pod (anti-)affinity the JobSet webhook adds; a follower, the `node_selector` it copies
    from its leader's node. `disruption`: the DisruptionTarget condition (reason, message)."""
    js, rj, w = j.js, j.rj, j.js.w
    name = f"{j.name}-{index}-{w.suffix()}"
    keys = jobset_keys(js, rj, j.index, j.attempt, j.key)
    labels = {
        "batch.kubernetes.io/controller-uid": j.uid,
        "batch.kubernetes.io/job-completion-index": str(index),
        "batch.kubernetes.io/job-name": j.name,
        "controller-uid": j.uid,
        "job-name": j.name,
        **keys,
        "jobset.sigs.k8s.io/priority": "0",
    }
    annotations = {"batch.kubernetes.io/job-completion-index": str(index), **{k: v for k, v in keys.items()}}
    if js.topology:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = js.topology
    spec = json.loads(json.dumps(j.obj["spec"]["template"]["spec"]))
    spec["containers"][0]["env"] = [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']",
                }
            },
        }
    ]
    spec["containers"][0]["volumeMounts"] = [
        {
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": f"kube-api-access-{w.suffix()}",
            "readOnly": True,
        }
    ]
    spec["hostname"] = f"{j.name}-{index}"
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["priority"] = 0
    spec["serviceAccount"] = "default"
    spec["serviceAccountName"] = "default"
    # The DefaultTolerationSeconds admission plugin tolerates a NotReady or unreachable node for 5 min.
    spec.setdefault("tolerations", [])
    spec["tolerations"] += [
        {
            "effect": "NoExecute",
            "key": f"node.kubernetes.io/{key}",
            "operator": "Exists",
            "tolerationSeconds": 300,
        }
        for key in ("not-ready", "unreachable")
    ]
    if node_selector is not None:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **node_selector}
    if js.topology and index == 0:
        selector = {
            "matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [j.key]}]
        }
        others = {
            "matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [j.key]},
                {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
            ]
        }
        spec["affinity"] = {
            **spec.get("affinity", {}),
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": js.topology}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": others, "namespaceSelector": {}, "topologyKey": js.topology}
                ]
            },
        }
    if gated:
        spec["schedulingGates"] = [{"name": g} for g in gated]
    node_name = node["metadata"]["name"] if node is not None else ""
    if node_name:
        spec["nodeName"] = node_name
    meta: Obj = {
        "annotations": annotations,
        "creationTimestamp": ts(created),
        "generateName": f"{j.name}-{index}-",
        "labels": labels,
        "name": name,
        "namespace": js.ns,
        "ownerReferences": [owner_ref("batch/v1", "Job", j.name, j.uid)],
        "resourceVersion": w.rv(),
        "uid": w.uid(),
    }
    if phase != "Pending" or node_name:
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
        meta["deletionGracePeriodSeconds"] = 30
    status: Obj = {"phase": phase, "qosClass": "BestEffort"}
    conditions: list[Obj] = []
    if disruption:
        conditions.append(cond("DisruptionTarget", disruption[0], disruption[1], deleting or 10, probe=True))
    if node is not None and node_name:
        began = started if started is not None else created - 0.2
        running = phase == "Running" and not waiting
        sandbox = "True" if phase != "Pending" else "False"
        why_unready = (
            ("", "")
            if ready or running
            else ("ContainersNotReady", f"containers with unready status: [{rj.container}]")
        )
        is_ready = "True" if (ready if ready is not None else running) else "False"
        conditions += [
            cond("PodReadyToStartContainers", "", "", began, sandbox, probe=False),
            cond("Initialized", "", "", began, probe=False),
            *(cond(t, *why_unready, began, is_ready, probe=False) for t in ("Ready", "ContainersReady")),
            cond("PodScheduled", "", "", created - 0.05, probe=False),
        ]
        for c in conditions:
            if not c["reason"]:
                del c["reason"]
                del c["message"]
        status["hostIP"] = node["status"]["addresses"][0]["address"]
        status["hostIPs"] = [{"ip": status["hostIP"]}]
        if phase != "Pending" or waiting:
            status["podIP"] = f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}"
            status["podIPs"] = [{"ip": status["podIP"]}]
        status["startTime"] = ts(began)
        state: Obj
        if terminated is not None:
            state = {"terminated": terminated}
        elif waiting is not None:
            state = {"waiting": {"reason": waiting[0], **({"message": waiting[1]} if waiting[1] else {})}}
        elif phase == "Running":
            state = {"running": {"startedAt": ts(began - 0.5)}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        status["containerStatuses"] = [
            {
                "containerID": f"containerd://{w.suffix(16)}" if phase != "Pending" else None,
                "image": rj.image,
                "imageID": f"{rj.image.split(':')[0]}@sha256:{hashlib.sha256(rj.image.encode()).hexdigest()}",
                "lastState": {"terminated": last_terminated} if last_terminated else {},
                "name": rj.container,
                "ready": bool(ready if ready is not None else running),
                "restartCount": restarts,
                "started": bool(running),
                "state": state,
            }
        ]
        if status["containerStatuses"][0]["containerID"] is None:
            del status["containerStatuses"][0]["containerID"]
    elif gated or unschedulable:
        reason, message, since = (
            ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates", created)
            if gated
            else ("Unschedulable", unschedulable, created - 0.1)
        )
        conditions.append({**cond("PodScheduled", reason, message, since, "False"), "lastProbeTime": None})
    if status_reason:
        status["reason"], status["message"] = status_reason
    if conditions:
        status["conditions"] = conditions
    request = rj.resource[0]
    if request in ("cpu", "memory"):
        status["qosClass"] = "Guaranteed"
    return w.add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})


def exited(code: int, reason: str, minutes_ago: float, ran: float = 20.0) -> Obj:
    """A container's `terminated` state: it exited `minutes_ago` after running `ran` minutes."""
    return {
        "containerID": f"containerd://{hashlib.sha1(f'{code}{minutes_ago}'.encode()).hexdigest()[:16]}",
        "exitCode": code,
        "finishedAt": ts(minutes_ago),
        "reason": reason,
        "startedAt": ts(minutes_ago + ran),
    }


# --- events --------------------------------------------------------------------------------------


def event(
    w: World,
    about: Obj,
    reason: str,
    message: str,
    *,
    kind: str = "Warning",
    source: str = "job-controller",
    count: int = 1,
    first: float = 30,
    last: float = 1,
    new_style: bool = False,
) -> Obj:
    """An event as `kubectl get events -o json` shows it: legacy recorders fill `source`, `count` and
    the timestamps; `events.k8s.io` recorders (JobSet ≥ v0.12, the scheduler) fill `eventTime`,
    `reportingComponent`, `action` and `series`."""
    meta = about["metadata"]
    name = f"{meta['name']}.{w.rng.getrandbits(64):016x}"
    involved = {
        "apiVersion": about["apiVersion"],
        "kind": about["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace", "default"),
        "resourceVersion": meta["resourceVersion"],
        "uid": meta["uid"],
    }
    base: Obj = {
        "apiVersion": "v1",
        "involvedObject": involved,
        "kind": "Event",
        "message": message,
        "metadata": {
            "creationTimestamp": ts(first),
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "resourceVersion": w.rv(),
            "uid": w.uid(),
        },
        "reason": reason,
        "type": kind,
    }
    if new_style:
        base.update(
            {
                "action": {"default-scheduler": "Scheduling", "jobset": "Reconciling"}.get(
                    source, "Reconciling"
                ),
                "eventTime": (NOW - timedelta(minutes=first)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "firstTimestamp": None,
                "lastTimestamp": None,
                "reportingComponent": source,
                "reportingInstance": f"{source}-{w.suffix(10)}",
                "source": {},
            }
        )
        if count > 1:
            base["series"] = {
                "count": count,
                "lastObservedTime": (NOW - timedelta(minutes=last)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            }
    else:
        base.update(
            {
                "count": count,
                "eventTime": None,
                "firstTimestamp": ts(first),
                "lastTimestamp": ts(last),
                "reportingComponent": source,
                "reportingInstance": "",
                "source": {"component": source},
            }
        )
    return w.add(base)


def failed_create(j: Job, error: str, count: int, *, first: float, last: float) -> Obj:
    """The Job controller's series of failed pod creations (`error`: what the API server answered)."""
    return event(
        j.js.w, j.obj, "FailedCreate", f"Error creating: {error}", count=count, first=first, last=last
    )


def created_pod(j: Job, p: Obj, minutes_ago: float) -> Obj:
    """The Job controller's record of creating pod `p`."""
    name = p["metadata"]["name"]
    return event(
        j.js.w,
        j.obj,
        "SuccessfulCreate",
        f"Created pod: {name}",
        kind="Normal",
        first=minutes_ago,
        last=minutes_ago,
    )


def scheduled(w: World, p: Obj, minutes_ago: float) -> Obj:
    """The scheduler's record of binding `p` to its node."""
    node = p["spec"]["nodeName"]
    return event(
        w,
        p,
        "Scheduled",
        f"Successfully assigned {p['metadata']['namespace']}/{p['metadata']['name']} to {node}",
        kind="Normal",
        source="default-scheduler",
        first=minutes_ago,
        last=minutes_ago,
        new_style=True,
    )


def failed_scheduling(w: World, p: Obj, message: str, count: int, first: float, last: float = 0.5) -> Obj:
    """The scheduler's series of failed attempts to place `p`."""
    return event(
        w,
        p,
        "FailedScheduling",
        message,
        source="default-scheduler",
        count=count,
        first=first,
        last=last,
        new_style=True,
    )


# --- Kueue, quota, runtime classes, controller pods ------------------------------------------------


def workload(js: JS, conditions: list[Obj], admitted_flavor: str = "") -> Obj:
    """The Workload Kueue creates for a JobSet labelled with a queue: one podSet per replicatedJob, and
    the flavor assignment once admitted."""
    w = js.w
    queue = js.obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    pod_sets = [
        {
            "count": rj.replicas * rj.parallelism,
            "name": rj.name,
            "template": js.obj["spec"]["replicatedJobs"][i]["template"]["spec"]["template"],
        }
        for i, rj in enumerate(js.rjs)
    ]
    status: Obj = {"conditions": conditions}
    if admitted_flavor:
        status["admission"] = {
            "clusterQueue": "tpu-cluster-queue",
            "podSetAssignments": [
                {
                    "count": ps["count"],
                    "flavors": {js.rjs[i].resource[0]: admitted_flavor},
                    "name": ps["name"],
                }
                for i, ps in enumerate(pod_sets)
            ],
        }
    return w.add(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "creationTimestamp": js.obj["metadata"]["creationTimestamp"],
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "generation": 1,
                "labels": {"kueue.x-k8s.io/job-uid": js.uid},
                "name": f"jobset-{js.name}-{hashlib.sha1(js.uid.encode()).hexdigest()[:5]}",
                "namespace": js.ns,
                "ownerReferences": [owner_ref(JOBSET_API, "JobSet", js.name, js.uid)],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "active": True,
                "podSets": pod_sets,
                "priority": 0,
                "priorityClassSource": "",
                "queueName": queue,
            },
            "status": status,
        }
    )


def quota(w: World, name: str, ns: str, hard: dict[str, str], used: dict[str, str]) -> Obj:
    """A namespace's ResourceQuota and the usage the quota controller last counted."""
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {
                "creationTimestamp": ts(30000),
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {"hard": hard},
            "status": {"hard": hard, "used": used},
        }
    )


def exceeded_quota(quota_name: str, resource: str, requested: int, used: int, limit: int) -> str:
    """The ResourceQuota admission plugin's reason for rejecting an object."""
    return (
        f"exceeded quota: {quota_name}, requested: {resource}={requested}, used: {resource}={used}, "
        f"limited: {resource}={limit}"
    )


def runtime_class(w: World, name: str, handler: str) -> Obj:
    """A RuntimeClass (cluster-scoped)."""
    return w.add(
        {
            "apiVersion": "node.k8s.io/v1",
            "handler": handler,
            "kind": "RuntimeClass",
            "metadata": {
                "creationTimestamp": ts(50000),
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
        }
    )


def controller_pod(w: World, ns: str, deployment: str, gpu_nodes: int) -> Obj:
    """A Pending controller-manager pod of a webhook's Deployment, in a cluster whose only nodes are
    `gpu_nodes` tainted GPU nodes: the webhook has no endpoint."""
    message = (
        f"0/{gpu_nodes} nodes are available: {gpu_nodes} node(s) had untolerated taint {{nvidia.com/gpu: present}}. "
        f"preemption: 0/{gpu_nodes} nodes are available: {gpu_nodes} Preemption is not helpful for scheduling."
    )
    name = f"{deployment}-{w.suffix(10)}-{w.suffix()}"
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(75),
                "generateName": name[:-5],
                "labels": {"control-plane": "controller-manager", "pod-template-hash": name.split("-")[-2]},
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref("apps/v1", "ReplicaSet", name[:-6], w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "containers": [
                    {
                        "args": ["--zap-log-level=2"],
                        "command": ["/manager"],
                        "image": "registry.k8s.io/jobset/jobset:v0.12.0"
                        if "jobset" in ns
                        else "registry.k8s.io/kueue/kueue:v0.14.2",
                        "name": "manager",
                        "ports": [{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"}],
                        "resources": {
                            "limits": {"cpu": "2", "memory": "4Gi"},
                            "requests": {"cpu": "2", "memory": "4Gi"},
                        },
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "serviceAccountName": "jobset-controller-manager"
                if "jobset" in ns
                else "kueue-controller-manager",
                "terminationGracePeriodSeconds": 10,
            },
            "status": {
                "conditions": [
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": ts(75),
                        "message": message,
                        "reason": "Unschedulable",
                        "status": "False",
                        "type": "PodScheduled",
                    }
                ],
                "phase": "Pending",
                "qosClass": "Guaranteed",
            },
        }
    )


def other_pod(
    w: World, ns: str, name: str, node: Obj, resource: tuple[str, str], owner: tuple[str, str]
) -> Obj:
    """A running pod of another workload that holds devices on `node`."""
    request, amount = resource
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(600),
                "labels": {"app": owner[1]},
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref("apps/v1", owner[0], owner[1], w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "containers": [
                    {
                        "image": "us-docker.pkg.dev/ml-platform-prod/serve/jetstream:2026.11.02",
                        "name": "server",
                        "resources": {"limits": {request: amount}, "requests": {request: amount}},
                    }
                ],
                "nodeName": node["metadata"]["name"],
                "priority": 0,
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "tolerations": [{"effect": "NoSchedule", "key": request, "operator": "Exists"}],
            },
            "status": {
                "conditions": [
                    {"lastProbeTime": None, "lastTransitionTime": ts(598), "status": "True", "type": "Ready"},
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": ts(599.9),
                        "status": "True",
                        "type": "PodScheduled",
                    },
                ],
                "hostIP": node["status"]["addresses"][0]["address"],
                "phase": "Running",
                "podIP": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}",
                "qosClass": "BestEffort",
                "startTime": ts(599),
            },
        }
    )


# --- JobSet and Job status, as the controllers write it --------------------------------------------


def rj_status(
    name: str, ready: int = 0, active: int = 0, succeeded: int = 0, failed: int = 0, suspended: int = 0
) -> Obj:
    """A replicatedJob's line of `status.replicatedJobsStatus`: how many of its Jobs are in each state."""
    return {
        "active": active,
        "failed": failed,
        "name": name,
        "ready": ready,
        "succeeded": succeeded,
        "suspended": suspended,
    }


def jobset_status(
    *replicated: Obj, conditions: list[Obj] | None = None, restarts: int = 0, terminal: str = ""
) -> Obj:
    """A JobSet's status as its controller writes it. No failure-policy rule here spares a restart from
    the count, so `restartsCountTowardsMax` is `restarts` (written once there has been one)."""
    status: Obj = {"conditions": conditions} if conditions else {}
    if replicated:
        status["replicatedJobsStatus"] = list(replicated)
    status["restarts"] = restarts
    if restarts:
        status["restartsCountTowardsMax"] = restarts
    if terminal:
        status["terminalState"] = terminal
    return status


RESTART_ACTION = "applying RestartJobSet failure policy action (first failed job: {})"


def jobset_completed(minutes_ago: float) -> Obj:
    """Every Job succeeded (successPolicy `All`)."""
    return jcond("Completed", "AllJobsCompleted", "jobset completed successfully", minutes_ago)


def jobset_suspended(minutes_ago: float) -> Obj:
    return jcond("Suspended", "SuspendedJobs", "jobset is suspended", minutes_ago)


def jobset_resumed(minutes_ago: float) -> Obj:
    """Suspended=False after Kueue (or a person) set `suspend: false`."""
    return jcond("Suspended", "ResumeJobs", "jobset is resumed", minutes_ago, "False")


def jobset_restarting(first_failed: str, minutes_ago: float) -> Obj:
    """The default failure policy action: a Job failed, so the controller restarts the whole JobSet."""
    return jcond("RestartingJobSet", "DefaultFailurePolicy", RESTART_ACTION.format(first_failed), minutes_ago)


def jobset_restarted(minutes_ago: float) -> Obj:
    """RestartingJobSet=False once every Job of the new attempt is ready."""
    return jcond("RestartingJobSet", "JobsReady", "all jobs are ready", minutes_ago, "False")


def admitted(cluster_queue: str, minutes_ago: float) -> list[Obj]:
    """A Kueue Workload's conditions once its ClusterQueue reserved quota and admitted it."""
    return [
        jcond(
            "QuotaReserved", "QuotaReserved", f"Quota reserved in ClusterQueue {cluster_queue}", minutes_ago
        ),
        jcond("Admitted", "Admitted", "The workload is admitted", minutes_ago),
    ]


def completions_reached(type_: str, minutes_ago: float) -> Obj:
    """A Job condition (`SuccessCriteriaMet`, then `Complete`) once every index succeeded."""
    return cond(type_, "CompletionsReached", "Reached expected number of succeeded pods", minutes_ago)


def backoff_limit_exceeded(type_: str, minutes_ago: float) -> Obj:
    """A Job condition (`FailureTarget`, then `Failed`) once more pods failed than backoffLimit allows."""
    return cond(type_, "BackoffLimitExceeded", "Job has reached the specified backoff limit", minutes_ago)


def job_suspended(minutes_ago: float) -> Obj:
    return cond("Suspended", "JobSuspended", "Job suspended", minutes_ago)


# --- events the JobSet controller records ----------------------------------------------------------


def jobset_event(
    js: JS,
    reason: str,
    message: str,
    *,
    first: float,
    last: float | None = None,
    count: int = 1,
    kind: str = "Warning",
    new_style: bool = True,
) -> Obj:
    """An event the JobSet controller records about its JobSet (`new_style=False`: as a JobSet
    controller older than v0.12 records it)."""
    last = first if last is None else last
    return event(
        js.w,
        js.obj,
        reason,
        message,
        kind=kind,
        source="jobset",
        count=count,
        first=first,
        last=last,
        new_style=new_style,
    )


def restart_events(
    js: JS,
    first_failed: str,
    *,
    first: float,
    last: float,
    count: int = 1,
    reasons: tuple[str, ...] = ("RestartJobSetFailurePolicyAction",),
    new_style: bool = True,
) -> None:
    """The JobSet controller's series of restarts: `count` times (the first `first` minutes ago), a
    Job failed and the failure policy restarted the JobSet."""
    for reason in reasons:
        jobset_event(
            js,
            reason,
            RESTART_ACTION.format(first_failed),
            first=first,
            last=last,
            count=count,
            new_style=new_style,
        )


def job_creation_failed(
    js: JS, job_name: str, error: str, count: int, *, first: float, last: float, new_style: bool = True
) -> Obj:
    """The JobSet controller's series of failed attempts to create child Job `job_name`."""
    message = f'job "{job_name}" creation failed with error: {error}'
    return jobset_event(
        js, "JobCreationFailed", message, count=count, first=first, last=last, new_style=new_style
    )


# --- replicatedJobs, Jobs and pods as the scenarios use them ----------------------------------------

TPU_IMAGE = "us-central1-docker.pkg.dev/ml-platform-prod/train/maxtext:2026.11.20"
GPU_IMAGE = "nvcr.io/nvidia/pytorch:25.10-py3"
TPU_SELECTOR = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "4x4",
}
TPU_TOLERATION = [{"effect": "NoSchedule", "key": "google.com/tpu", "operator": "Exists"}]
GPU_TOLERATION = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
NODEPOOL = "cloud.google.com/gke-nodepool"
BLOCK = "cloud.google.com/gce-topology-block"
MISSING_SELECTOR = (
    'admission webhook "vpod.kb.io" denied the request: follower pod node selector for topology domain not found. '
    "missing selector: {key}"
)
NOT_SET = 'admission webhook "{webhook}" denied the request: follower pod node selector not set'
SHUTDOWN = "Pod was terminated in response to imminent node shutdown."


def tpu_slice(name: str = "slice", replicas: int = 2, backoff_limit: int = 0) -> RJ:
    """A replicatedJob of v5e 4x4 slices: 4 hosts of 4 chips each."""
    return RJ(
        name,
        replicas,
        4,
        ("google.com/tpu", "4"),
        TPU_IMAGE,
        "jax",
        dict(TPU_SELECTOR),
        list(TPU_TOLERATION),
        backoff_limit=backoff_limit,
    )


def gpu_rj(
    name: str, replicas: int, parallelism: int, gpus: str = "8", image: str = GPU_IMAGE, **kw: Any
) -> RJ:
    """A replicatedJob whose pods each take `gpus` GPUs and tolerate the GPU taint."""
    return RJ(
        name,
        replicas,
        parallelism,
        ("nvidia.com/gpu", gpus),
        image,
        kw.pop("container", "trainer"),
        tolerations=list(GPU_TOLERATION),
        **kw,
    )


def node_affinity(key: str, value: str) -> Obj:
    """A required node affinity: only nodes labelled `key=value`."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def follower_selector(j: Job, index: int, leader_node: Obj) -> dict[str, str] | None:
    """The nodeSelector `mpod.kb.io` gives a follower pod (index > 0) of an exclusive-placement Job:
    the leader node's value of the topology label. None for a leader or without exclusive placement."""
    topology = j.js.topology
    if not topology or not index:
        return None
    return {topology: leader_node["metadata"]["labels"][topology]}


def full_job(
    js: JS, rj: RJ, index: int, nodes: list[Obj], *, attempt: int = 0, created: float = 88, ready: bool = True
) -> Job:
    """A child Job with all its pods running, followers following the leader's domain."""
    n = rj.parallelism
    j = job(js, rj, index, attempt=attempt, created=created, active=n, ready=n if ready else 0)
    for i in range(n):
        node, selector = nodes[i % len(nodes)], follower_selector(j, i, nodes[0])
        pod(j, i, "Running", node=node, created=created - 0.1, ready=ready, node_selector=selector)
    return j


def exited_pod(j: Job, index: int, node: Obj, created: float, terminated: Obj, **kw: Any) -> Obj:
    """A pod whose container exited (`terminated`, from `exited`) and is not restarted: Succeeded on
    exit code 0, Failed otherwise."""
    phase = "Succeeded" if terminated["exitCode"] == 0 else "Failed"
    return pod(j, index, phase, node=node, created=created, ready=False, terminated=terminated, **kw)


def shut_down_pod(j: Job, index: int, node: Obj, created: float, terminated: Obj, **kw: Any) -> Obj:
    """A pod the kubelet's graceful node shutdown killed (a spot or maintenance shutdown): Failed, with
    a DisruptionTarget condition."""
    return exited_pod(
        j,
        index,
        node,
        created,
        terminated,
        disruption=("TerminationByKubelet", SHUTDOWN),
        status_reason=("Terminated", SHUTDOWN),
        **kw,
    )


def creating_pod(
    j: Job, index: int, node: Obj, created: float, started: float, *, scheduled_event: bool = True
) -> Obj:
    """A pod bound to `node` whose container is still being created (image pull, volumes), and the
    scheduler's Scheduled event 0.1 min after creation (`scheduled_event=False`: it has expired)."""
    p = pod(
        j, index, "Pending", node=node, created=created, started=started, waiting=("ContainerCreating", "")
    )
    if scheduled_event:
        scheduled(j.js.w, p, created - 0.1)
    return p


def new_leader(
    j: Job,
    created: float,
    *,
    node: Obj | None = None,
    started: float | None = None,
    unschedulable: str = "",
    attempts: int = 0,
) -> Obj:
    """A leader pod (index 0) the Job controller has just (re)created, with its SuccessfulCreate event:
    running on `node`, or Pending because `unschedulable`, with `attempts` FailedScheduling events."""
    phase = "Running" if node is not None else "Pending"
    leader = pod(j, 0, phase, node=node, created=created, started=started, unschedulable=unschedulable)
    created_pod(j, leader, created)
    if attempts:
        failed_scheduling(j.js.w, leader, unschedulable, attempts, first=created - 0.1)
    return leader


# --- the scenarios -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A snapshot to write and what `/jobset why` must answer about its JobSet."""

    build: Callable[[World], None]
    seed: str
    path: str
    verdict: str
    pod_verdict: str | None
    cause: str | None
    target: str = ""
    """The JobSet asked about, when the snapshot holds several (else the first)."""


SCENARIOS: list[Scenario] = []
"""In the order they are defined, which is the order of `index.yaml`."""


def scenario(
    seed: str,
    verdict: str,
    *,
    pod_verdict: str | None = None,
    cause: str | None = None,
    path: str = "",
    target: str = "",
) -> Callable[[Callable[[World], None]], Callable[[World], None]]:
    """Registers a scenario builder. `seed` names the snapshot and seeds its random source; the snapshot
    is written to `tests/corpus/jobset/<seed>.json` unless `path` (from the repository root) says
    otherwise."""

    def register(build: Callable[[World], None]) -> Callable[[World], None]:
        file = path or f"tests/corpus/jobset/{seed}.json"
        SCENARIOS.append(Scenario(build, seed, file, verdict, pod_verdict, cause, target))
        return build

    return register


@scenario("completed-gpu", "completed")
def completed_gpu(w: World) -> None:
    """Two single-pod Jobs ran to completion on L4 nodes."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    cpu_node(w, "ml-prod")
    rj = gpu_rj("workers", 2, 1, "2")
    status = jobset_status(
        rj_status("workers", succeeded=2), conditions=[jobset_completed(12)], terminal="Completed"
    )
    js = jobset(w, "bert-finetune", "ml-train", [rj], created=300, failure_policy=None, status=status)
    done = [completions_reached("Complete", 12), completions_reached("SuccessCriteriaMet", 12.1)]
    for i, n in enumerate(nodes):
        j = job(js, rj, i, created=299, succeeded=1, conditions=done, completed=12)
        exited_pod(j, 0, n, 298.9, exited(0, "Completed", 12.2, 280))
    jobset_event(js, "AllJobsCompleted", "jobset completed successfully", kind="Normal", first=12)


@scenario("completed-tpu", "completed", path="tests/corpus/jobset/completed-tpu-after-restart.json")
def completed_tpu_after_restart(w: World) -> None:
    """A driver and a v5e slice completed on their second attempt (one restart)."""
    nodes = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    driver = RJ("driver", 1, 1, ("cpu", "4"), TPU_IMAGE, "driver")
    workers = tpu_slice("workers", 1)
    status = jobset_status(
        rj_status("driver", succeeded=1),
        rj_status("workers", succeeded=1),
        conditions=[jobset_restarted(300), jobset_completed(4)],
        restarts=1,
        terminal="Completed",
    )
    js = jobset(w, "gemma-eval", "llm", [driver, workers], created=500, topology=NODEPOOL, status=status)
    done = [completions_reached("Complete", 4)]
    for rj, finished in ((driver, 4.5), (workers, 4.6)):
        n = rj.parallelism
        j = job(js, rj, 0, attempt=1, created=320, succeeded=n, conditions=done, completed=4)
        for i in range(n):
            ok = exited(0, "Completed", finished, 300)
            exited_pod(j, i, nodes[i], 319, ok, node_selector=follower_selector(j, i, nodes[0]))


@scenario("failed-no-policy", "failed")
def failed_no_policy(w: World) -> None:
    """workers-1's pod exited 1 and its Job reached backoffLimit 0; without a failure policy the first
    failed Job fails the JobSet."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1, restart_policy="Never", container="pytorch")
    message = "jobset failed due to one or more job failures (first failed job: resnet-train-workers-1)"
    status = jobset_status(
        rj_status("workers", failed=1),
        conditions=[jcond("Failed", "FailedJobs", message, 35)],
        terminal="Failed",
    )
    js = jobset(w, "resnet-train", "vision", [rj], created=240, failure_policy=None, status=status)
    failed = [backoff_limit_exceeded("FailureTarget", 35.2), backoff_limit_exceeded("Failed", 35.1)]
    j = job(js, rj, 1, created=239, failed=1, conditions=failed)
    exited_pod(j, 0, nodes[1], 238.9, exited(1, "Error", 35.3, 200))
    event(w, j.obj, "BackoffLimitExceeded", "Job has reached the specified backoff limit", first=35, last=35)
    jobset_event(js, "FailedJobs", message, first=35, new_style=False)


@scenario("failed-max-restarts", "failed")
def failed_max_restarts(w: World) -> None:
    """The fourth attempt's worker was OOM-killed with maxRestarts 3 used up: the JobSet failed."""
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 1)
    message = (
        "jobset failed due to reaching max number of restarts (first failed job: llama-pretrain-workers-0)"
    )
    conditions = [
        jcond("RestartingJobSet", "JobSetFailed", "jobset failed", 20, "False"),
        jcond("Failed", "ReachedMaxRestarts", message, 20),
    ]
    status = jobset_status(
        rj_status("workers", failed=1), conditions=conditions, restarts=3, terminal="Failed"
    )
    js = jobset(w, "llama-pretrain", "llm", [rj], created=400, failure_policy=recreate(3), status=status)
    j = job(js, rj, 0, attempt=3, created=60, failed=1, conditions=[backoff_limit_exceeded("Failed", 20.2)])
    exited_pod(j, 0, nodes[0], 59.9, exited(137, "OOMKilled", 20.4, 35))
    jobset_event(js, "ReachedMaxRestarts", message, first=20)


@scenario("suspended-kueue", "suspended")
def suspended_kueue(w: World) -> None:
    """Kueue keeps the JobSet suspended: its ClusterQueue lacks TPU quota."""
    pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    rj = tpu_slice("workers", 4)
    status = jobset_status(rj_status("workers", suspended=4), conditions=[jobset_suspended(45)])
    js = jobset(w, "gemma-tune", "team-a", [rj], created=45, suspend=True, queue="tpu-queue", status=status)
    for i in range(4):
        job(js, rj, i, created=44.9, suspend=True, conditions=[job_suspended(44.9)])
    pending = (
        "couldn't assign flavors to pod set workers: insufficient unused quota for google.com/tpu in flavor "
        "v5e-4x4, 48 more needed"
    )
    workload(js, [jcond("QuotaReserved", "Pending", pending, 44, "False")])
    jobset_event(js, "SuspendedJobs", "jobset is suspended", kind="Normal", first=45)


@scenario("suspended-by-hand", "suspended")
def suspended_by_hand(w: World) -> None:
    """Someone suspended a sweep after two of its six trials had completed."""
    nodes = pool(w, 2, g2, "research", "l4-pool")
    rj = gpu_rj("trial", 6, 1, "1")
    status = jobset_status(rj_status("trial", suspended=4, succeeded=2), conditions=[jobset_suspended(400)])
    js = jobset(
        w, "sweep-lr", "research", [rj], created=900, suspend=True, failure_policy=None, status=status
    )
    for i in range(2):
        j = job(js, rj, i, created=899, succeeded=1, conditions=[completions_reached("Complete", 600)])
        exited_pod(j, 0, nodes[i], 898, exited(0, "Completed", 600, 280))
    for i in range(2, 6):
        job(js, rj, i, created=899, suspend=True, conditions=[job_suspended(400)])


@scenario("webhook-unavailable-jobset", "webhook-unavailable")
def webhook_unavailable_jobset(w: World) -> None:
    """JobSet's pod webhook has no endpoint (its controller pod cannot schedule), so every pod creation
    fails."""
    pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers"))
    js = jobset(w, "mixtral-sft", "ml-train", [rj], created=40, status=status)
    error = (
        'Internal error occurred: failed calling webhook "mpod.kb.io": failed to call webhook: Post '
        '"https://jobset-webhook-service.jobset-system.svc:443/mutate--v1-pod?timeout=10s": no endpoints available '
        'for service "jobset-webhook-service"'
    )
    for i in range(2):
        j = job(js, rj, i, created=39.9, pods_created=False)
        failed_create(j, error, 14, first=39.8, last=2 + i)
    controller_pod(w, "jobset-system", "jobset-controller-manager", 4)


@scenario("webhook-unavailable-kueue", "webhook-unavailable")
def webhook_unavailable_kueue(w: World) -> None:
    """Kueue admitted the JobSet, but its Job webhook has no endpoint, so no child Job can be created."""
    pool(w, 2, a3, "ml-prod", "a3-pool")
    driver = RJ("driver", 1, 1, ("cpu", "2"), GPU_IMAGE, "driver")
    workers = gpu_rj("workers", 2, 1)
    status = jobset_status(conditions=[jobset_resumed(24)])
    js = jobset(
        w,
        "t5-distill",
        "team-b",
        [driver, workers],
        created=25,
        queue="gpu-queue",
        failure_policy=None,
        status=status,
    )
    workload(js, admitted("gpu-cluster-queue", 24), admitted_flavor="h100-on-demand")
    error = (
        'Internal error occurred: failed calling webhook "mjob.kb.io": failed to call webhook: Post '
        '"https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s": no endpoints '
        'available for service "kueue-webhook-service"'
    )
    job_creation_failed(js, "t5-distill-driver-0", error, 9, first=23.5, last=1.5, new_style=False)
    controller_pod(w, "kueue-system", "kueue-controller-manager", 2)


@scenario("leader-duplicate-tpu", "leader-duplicate", path="bot/demo/jobset-leader-duplicate.json")
def leader_duplicate_tpu(w: World) -> None:
    """A node shutdown killed slice-1's leader and two followers. The Job controller recreated the
    leader, so a Failed leader pod sits beside its replacement, and the pod webhook refuses every
    replacement follower (the deadlock of JobSet ≤ v0.12.0)."""
    p1 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    p2 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-2")
    rj = tpu_slice("slice", 2, backoff_limit=4)
    status = jobset_status(rj_status("slice", ready=1, active=2))
    js = jobset(
        w,
        "llm-pretrain",
        "llm",
        [rj],
        created=200,
        topology=NODEPOOL,
        failure_policy=recreate(4),
        status=status,
    )
    full_job(js, rj, 0, p1, created=199)
    j = job(js, rj, 1, created=199, active=2, ready=1, failed=3)
    killed = [
        shut_down_pod(
            j, i, p2[i], 198.9, exited(143, "Error", 41, 150), node_selector=follower_selector(j, i, p2[0])
        )
        for i in range(3)
    ]
    killed[0]["status"]["conditions"][0]["lastTransitionTime"] = ts(41)
    pod(j, 3, "Running", node=p2[3], created=198.9, node_selector=follower_selector(j, 3, p2[0]))
    new_leader(j, 38, node=p2[0], started=36)
    failed_create(j, MISSING_SELECTOR.format(key=NODEPOOL), 31, first=38, last=0.8)


@scenario("leader-duplicate-gpu", "leader-duplicate")
def leader_duplicate_gpu(w: World) -> None:
    """The leader and a follower exited 1 (restartPolicy Never). A Failed leader pod sits beside its
    replacement, and the pod webhook refuses the replacement follower (the deadlock of JobSet ≤
    v0.12.0)."""
    block = "b-7c1d3e"
    placement = {BLOCK: block, "cloud.google.com/gce-topology-subblock": "sb-02"}
    nodes = pool(w, 4, a3, "ml-prod", "a3-compact", extra=placement)
    affinity = node_affinity("cloud.google.com/gke-accelerator", "nvidia-h100-80gb")
    rj = gpu_rj("workers", 1, 4, restart_policy="Never", backoff_limit=6, affinity=affinity)
    status = jobset_status(rj_status("workers", active=1))
    js = jobset(
        w,
        "sd-train",
        "vision",
        [rj],
        created=150,
        topology=BLOCK,
        failure_policy={"maxRestarts": 2},
        status=status,
    )
    j = job(js, rj, 0, created=149, active=3, ready=3, failed=2)
    follow = {BLOCK: block}
    exited_pod(j, 0, nodes[0], 148.9, exited(1, "Error", 22, 120))
    pod(j, 1, "Running", node=nodes[1], created=148.9, node_selector=follow)
    exited_pod(j, 2, nodes[2], 148.9, exited(1, "Error", 22, 120), node_selector=follow)
    pod(j, 3, "Running", node=nodes[3], created=148.9, node_selector=follow)
    new_leader(j, 21.5, node=nodes[0], started=20)
    failed_create(j, NOT_SET.format(webhook="validate--v1-pod.x-k8s.io"), 19, first=21.4, last=0.6)


@scenario("topology-label-missing-event", "topology-label-missing")
def topology_label_missing_event(w: World) -> None:
    """The leaders run on nodes without the exclusive-topology label, so `mpod.kb.io` refuses every
    follower and says why."""
    nodes = pool(w, 4, a3, "ml-prod", "a3-ondemand")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", active=2))
    js = jobset(w, "phi-pretrain", "ml-train", [rj], created=35, topology=BLOCK, status=status)
    error = f'admission webhook "mpod.kb.io" denied the request: node does not have topology label: {BLOCK}'
    for i in range(2):
        j = job(js, rj, i, created=34.9, active=1, ready=1)
        new_leader(j, 34.8, node=nodes[2 * i], started=33)
        failed_create(j, error, 17, first=34.7, last=0.9 + i)


@scenario("topology-label-missing-node", "topology-label-missing")
def topology_label_missing_node(w: World) -> None:
    """The leader runs on a node without the exclusive-topology label; no event says so, the node's
    labels do."""
    key = "topology.k8s.aws/network-node-layer-3"
    nodes = [eks_p4d(w, i, **({key: f"nn-{w.hexid(17)}"} if i >= 2 else {})) for i in range(4)]
    rj = gpu_rj("trainer", 1, 2, restart_policy="OnFailure")
    status = jobset_status(rj_status("trainer", active=1))
    js = jobset(w, "nemo-sft", "nlp", [rj], created=180, topology=key, failure_policy=None, status=status)
    j = job(js, rj, 0, created=179.9, active=1, ready=1)
    pod(j, 0, "Running", node=nodes[0], created=179.8, started=178)


@scenario(
    "leader-pending-tpu",
    "leader-pending",
    pod_verdict="exhausted",
    path="bot/demo/jobset-leader-pending-tpu.json",
)
def leader_pending_tpu(w: World) -> None:
    """slice-1's leader cannot schedule: the second pool's TPUs are held by a serving StatefulSet."""
    for _ in range(2):
        cpu_node(w, "ml-prod")
    p1 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    p2 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-2")
    rj = tpu_slice()
    status = jobset_status(rj_status("slice", ready=1, active=2))
    js = jobset(w, "maxtext-v5e", "llm", [rj], created=52, topology=NODEPOOL, status=status)
    for i, n in enumerate(p2):
        other_pod(
            w, "serving", f"gemma-serve-{i}", n, ("google.com/tpu", "4"), ("StatefulSet", "gemma-serve")
        )
    full_job(js, rj, 0, p1, created=51.9)
    j = job(js, rj, 1, created=51.9, active=1)
    message = (
        "0/10 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 8 Insufficient google.com/tpu. "
        "preemption: 0/10 nodes are available: 10 No preemption victims found for incoming pod."
    )
    new_leader(j, 51.8, unschedulable=message, attempts=19)
    failed_create(j, MISSING_SELECTOR.format(key=NODEPOOL), 23, first=51.7, last=0.7)


@scenario("leader-pending-taint", "leader-pending", pod_verdict="taint")
def leader_pending_taint(w: World) -> None:
    """The leaders do not tolerate the AKS GPU pool's `sku=gpu` taint."""
    aks_node(w, "system", "38117962", 0, "Standard_D8ds_v5")
    for i in range(3):
        aks_node(w, "gpupool", "21504838", i, "Standard_ND96asr_v4", gpu=True)
    rj = gpu_rj("trainer", 2, 2, "4", affinity=node_affinity("kubernetes.azure.com/agentpool", "gpupool"))
    status = jobset_status(rj_status("trainer", active=2))
    js = jobset(w, "vit-huge", "vision", [rj], created=28, topology="kubernetes.io/hostname", status=status)
    message = (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 node(s) had untolerated taint {sku: gpu}. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    for i in range(2):
        j = job(js, rj, i, created=27.9, active=1)
        new_leader(j, 27.8, unschedulable=message, attempts=11)
        failed_create(j, NOT_SET.format(webhook="vpod.kb.io"), 15, first=27.7, last=0.5 + i)


@scenario(
    "leader-pending-expired",
    "leader-pending",
    pod_verdict="label-mismatch",
    path="tests/corpus/jobset/leader-pending-expired-events.json",
)
def leader_pending_expired(w: World) -> None:
    """The leader asks for H100 nodes in an L4 cluster; its events have expired."""
    pool(w, 3, g2, "research", "l4-pool")
    rj = gpu_rj("actor", 1, 4, "2", node_selector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    status = jobset_status(rj_status("actor", active=1))
    js = jobset(w, "rl-rollout", "research", [rj], created=200, topology=NODEPOOL, status=status)
    j = job(js, rj, 0, created=199.9, active=1)
    message = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    pod(j, 0, "Pending", created=199.8, unschedulable=message)


@scenario("create-rejected-quota", "create-rejected")
def create_rejected_quota(w: World) -> None:
    """The namespace's GPU quota is used up by workers-0, so workers-1's pods are forbidden."""
    nodes = pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", ready=1, active=1))
    js = jobset(w, "whisper-ft", "team-a", [rj], created=33, status=status)
    full_job(js, rj, 0, nodes[:2], created=32.9)
    j = job(js, rj, 1, created=32.9, pods_created=False)
    gpus = "requests.nvidia.com/gpu"
    quota(w, "gpu-quota", "team-a", {gpus: "16"}, {gpus: "16"})
    exceeded = exceeded_quota("gpu-quota", gpus, 8, 16, 16)
    failed_create(
        j, f'pods "whisper-ft-workers-1-0-{w.suffix()}" is forbidden: {exceeded}', 12, first=32.8, last=1.2
    )


@scenario("create-rejected-runtimeclass", "create-rejected")
def create_rejected_runtimeclass(w: World) -> None:
    """The pods name a RuntimeClass the cluster does not have."""
    pool(w, 2, g2, "ml-prod", "l4-pool")
    runtime_class(w, "nvidia", "nvidia")
    rj = gpu_rj("server", 1, 1, "1", "vllm/vllm-openai:v0.11.2", runtime_class="nvidia-cdi", container="vllm")
    status = jobset_status(rj_status("server"))
    js = jobset(w, "vllm-bench", "inference", [rj], created=18, failure_policy=None, status=status)
    j = job(js, rj, 0, created=17.9, pods_created=False)
    error = 'pods "vllm-bench-server-0-0-" is forbidden: pod rejected: RuntimeClass "nvidia-cdi" not found'
    failed_create(j, error, 9, first=17.8, last=0.7)


@scenario("create-rejected-job-quota", "create-rejected")
def create_rejected_job_quota(w: World) -> None:
    """A `count/jobs.batch` quota forbids the fourth child Job."""
    nodes = [cpu_node(w, "data") for _ in range(2)]
    rj = RJ("shard", 4, 1, ("cpu", "4"), "us-docker.pkg.dev/ml-platform-prod/etl/beam-worker:2.61", "worker")
    status = jobset_status(rj_status("shard", ready=3, active=3))
    js = jobset(w, "etl-shards", "batch", [rj], created=14, failure_policy=None, status=status)
    for i in range(3):
        j = job(js, rj, i, created=13.9, active=1, ready=1)
        pod(j, 0, "Running", node=nodes[i % 2], created=13.8)
    jobs = "count/jobs.batch"
    quota(w, "job-count", "batch", {jobs: "3"}, {jobs: "3"})
    error = f'jobs.batch "etl-shards-shard-3" is forbidden: {exceeded_quota("job-count", jobs, 1, 3, 3)}'
    job_creation_failed(js, "etl-shards-shard-3", error, 11, first=13.8, last=0.4)


@scenario(
    "preemption-restarts",
    "restarting",
    cause="node-preemption",
    path="bot/demo/jobset-preemption-restarts.json",
)
def preemption_restarts(w: World) -> None:
    """Spot nodes shut down under slice workers-1 (attempt 3); its Job is still being deleted, so the
    Recreate strategy has recreated only workers-0 for attempt 4 so far."""
    for _ in range(2):
        cpu_node(w, "ml-prod")
    nodes = pool(w, 4, a3, "ml-prod", "a3-spot-pool", spot=True)
    rj = gpu_rj("workers", 2, 2)
    first_failed = "llama3-70b-ft-workers-1"
    status = jobset_status(
        rj_status("workers", active=1), conditions=[jobset_restarting(first_failed, 6)], restarts=4
    )
    js = jobset(w, "llama3-70b-ft", "llm", [rj], created=240, status=status)
    failed = [backoff_limit_exceeded("Failed", 6.5)]
    old = job(js, rj, 1, attempt=3, created=48, deleting=6, failed=2, conditions=failed)
    # The spot node the old pods ran on is deleted: only its name and address remain on them.
    gone = {
        "metadata": {
            "name": "gke-ml-prod-a3-spot-pool-" + nodes[0]["metadata"]["name"].split("-")[-2] + "-wq4z"
        },
        "status": {"addresses": [{"address": "10.128.3.17"}]},
    }
    for i in range(2):
        shut_down_pod(old, i, gone, 47.9, exited(143, "Error", 7, 40), deleting=6)
    j = job(js, rj, 0, attempt=4, created=5.5, active=2)
    for i in range(2):
        creating_pod(j, i, nodes[i], 5.4, started=5)
    reasons = ("RestartJobSetFailurePolicyAction", "RestartingJobSet")
    restart_events(js, first_failed, count=4, first=178, last=6, reasons=reasons)


@scenario("restarting-app-failure", "restarting", cause="app-failure")
def restarting_app_failure(w: World) -> None:
    """The driver crash-loops on the JobSet's third attempt; its failures restarted the JobSet twice."""
    nodes = pool(w, 3, a2, "nlp-cluster", "a100-pool")
    driver = gpu_rj("driver", 1, 1, "8")
    workers = gpu_rj("workers", 2, 1, "8")
    status = jobset_status(rj_status("driver", active=1), rj_status("workers", ready=2, active=2), restarts=2)
    js = jobset(
        w,
        "bert-large-mlm",
        "nlp",
        [driver, workers],
        created=130,
        failure_policy={"maxRestarts": 5},
        coordinator={"replicatedJob": "driver", "jobIndex": 0, "podIndex": 0},
        status=status,
    )
    j = job(js, driver, 0, attempt=2, created=16, active=1)
    crashing = pod(
        j,
        0,
        "Running",
        node=nodes[0],
        created=15.9,
        started=15.5,
        ready=False,
        waiting=("CrashLoopBackOff", ""),
        last_terminated=exited(1, "Error", 1.5, 3),
        restarts=2,
    )
    meta = crashing["metadata"]
    crashing["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = (
        f"back-off 40s restarting failed container=trainer pod={meta['name']}_nlp({meta['uid']})"
    )
    for i in range(2):
        full_job(js, workers, i, [nodes[1 + i]], attempt=2, created=16)
    restart_events(js, "bert-large-mlm-driver-0", count=2, first=55, last=16.2, new_style=False)


@scenario("restarting-node-failure", "restarting", cause="node-failure")
def restarting_node_failure(w: World) -> None:
    """Node `bad` stopped reporting: the taint manager evicted workers-1's pod (attempt 2), whose Job
    failed and restarted the JobSet. That pod is stuck Terminating on the unreachable node, so its Job
    is not gone and workers-1 of attempt 3 cannot be created yet (jobset#576)."""
    placement = {BLOCK: "b-91f2", "cloud.google.com/gce-topology-subblock": "sb-01"}
    nodes = [
        a3(w, "ml-prod", "a3-pool", group="3e8f1a7c", host=f"h-{w.hexid(12)}", extra=placement)
        for _ in range(5)
    ]
    bad = nodes[1]
    unreachable(bad, 9)
    rj = gpu_rj("workers", 4, 1)
    first_failed = "palm-tune-workers-1"
    status = jobset_status(
        rj_status("workers", active=3), conditions=[jobset_restarting(first_failed, 3)], restarts=3
    )
    js = jobset(w, "palm-tune", "llm", [rj], created=320, status=status)
    fail_job = (
        "Container trainer for pod llm/palm-tune-workers-1-0 failed with exit code 137 matching FailJob rule at "
        "index 0"
    )
    failed = [cond("Failed", "PodFailurePolicy", fail_job, 3.5)]
    old = job(js, rj, 1, attempt=2, created=130, deleting=3, failed=1, conditions=failed)
    evicted = ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
    stuck = pod(old, 0, "Running", node=bad, created=129.9, ready=False, deleting=4, disruption=evicted)
    event(w, stuck, "NodeNotReady", "Node is not ready", source="node-controller", first=9, last=9)
    event(
        w,
        stuck,
        "TaintManagerEviction",
        f"Marking for deletion Pod llm/{stuck['metadata']['name']}",
        kind="Normal",
        source="taint-eviction-controller",
        first=4,
        last=4,
    )
    for i in (0, 2, 3):
        j = job(js, rj, i, attempt=3, created=2.5, active=1)
        creating_pod(j, 0, nodes[i], 2.4, started=2.2)
    restart_events(js, first_failed, count=3, first=215, last=3)


@scenario("restarting-pod-preemption", "restarting", cause="pod-preemption")
def restarting_pod_preemption(w: World) -> None:
    """A higher-priority Deployment preempted workers-0 (attempt 0); workers-1 was recreated for
    attempt 1 and waits for GPUs, workers-0's old Job is still being deleted."""
    nodes = [lab_node(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1, "4")
    first_failed = "ablation-small-workers-0"
    status = jobset_status(
        rj_status("workers", active=1), conditions=[jobset_restarting(first_failed, 2)], restarts=1
    )
    js = jobset(
        w, "ablation-small", "research", [rj], created=70, failure_policy={"maxRestarts": 3}, status=status
    )
    old = job(js, rj, 0, attempt=0, created=69, deleting=2, failed=1)
    preempted = (
        "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
    )
    victim = pod(
        old, 0, "Running", node=nodes[0], created=68.9, ready=False, deleting=2.2, disruption=preempted
    )
    event(
        w,
        victim,
        "Preempted",
        "Preempted by pod 0b7e5a4c-51d7-4f3e-a0a2-9d8f1c6e2b71 on node gpu-node-00.lab.internal",
        source="default-scheduler",
        first=2.3,
        last=2.3,
        new_style=True,
    )
    j = job(js, rj, 1, attempt=1, created=1.5, active=1)
    message = (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No "
        "preemption victims found for incoming pod."
    )
    pod(j, 0, "Pending", created=1.4, unschedulable=message)
    for i, n in enumerate(nodes):
        other_pod(
            w, "prod-inference", f"llm-gateway-{i}", n, ("nvidia.com/gpu", "8"), ("Deployment", "llm-gateway")
        )
    restart_events(js, first_failed, first=2, last=2)


@scenario("restarting-unknown", "restarting", cause="unknown")
def restarting_unknown(w: World) -> None:
    """The JobSet restarted, and nothing left says why: the failed Jobs and their events are gone."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1)
    first_failed = "dlrm-train-workers-0"
    status = jobset_status(
        rj_status("workers", active=2), conditions=[jobset_restarting(first_failed, 1.5)], restarts=1
    )
    js = jobset(w, "dlrm-train", "ml-train", [rj], created=400, status=status)
    for i in range(2):
        j = job(js, rj, i, attempt=1, created=1.2, active=1)
        creating_pod(j, 0, nodes[i], 1.1, started=1, scheduled_event=False)


@scenario("pods-pending-exhausted", "pods-pending", pod_verdict="exhausted")
def pods_pending_exhausted(w: World) -> None:
    """Another workload holds every L4, so the workers cannot schedule."""
    nodes = pool(w, 3, g2, "ml-prod", "l4-pool")
    for i, n in enumerate(nodes):
        name = f"sdxl-serve-{w.suffix(10)}-{w.suffix()}"
        other_pod(w, "inference", name, n, ("nvidia.com/gpu", "2"), ("ReplicaSet", f"sdxl-serve-{i}"))
    rj = gpu_rj("workers", 1, 2, "2")
    status = jobset_status(rj_status("workers", active=1))
    js = jobset(w, "sdxl-finetune", "ml-train", [rj], created=26, status=status)
    j = job(js, rj, 0, created=25.9, active=2)
    message = (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No "
        "preemption victims found for incoming pod."
    )
    for i in range(2):
        p = pod(j, i, "Pending", created=25.8, unschedulable=message)
        failed_scheduling(w, p, message, 9, first=25.7)


@scenario("pods-pending-gated", "pods-pending", pod_verdict="gated")
def pods_pending_gated(w: World) -> None:
    """Kueue admitted the JobSet, and its topology-aware scheduling still gates the pods."""
    placement = {BLOCK: "b-1a", "cloud.google.com/gce-topology-subblock": "sb-1"}
    pool(w, 4, a3, "ml-prod", "a3-pool", extra=placement)
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", active=2), conditions=[jobset_resumed(9)])
    js = jobset(
        w,
        "bert-serve-eval",
        "team-a",
        [rj],
        created=10,
        queue="tas-queue",
        failure_policy=None,
        status=status,
    )
    workload(js, admitted("tas-cluster-queue", 9), admitted_flavor="h100-tas")
    for i in range(2):
        j = job(js, rj, i, created=8.9, active=2)
        for k in range(2):
            pod(j, k, "Pending", created=8.8, gated=["kueue.x-k8s.io/topology"])


@scenario("starting-containers", "starting")
def starting_containers(w: World) -> None:
    """The pods are bound and pulling their image."""
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 1)
    status = jobset_status(rj_status("workers", active=2))
    js = jobset(w, "yolo-train", "vision", [rj], created=3, status=status)
    for i in range(2):
        j = job(js, rj, i, created=2.9, active=1)
        p = creating_pod(j, 0, nodes[i], 2.8, started=2.5)
        pulling = f'Pulling image "{GPU_IMAGE}"'
        event(w, p, "Pulling", pulling, kind="Normal", source="kubelet", first=2.4, last=2.4)


@scenario("starting-in-order", "starting")
def starting_in_order(w: World) -> None:
    """InOrder startup: the policy Jobs wait until the reward model is ready."""
    nodes = pool(w, 3, a3, "ml-prod", "a3-pool")
    reward = gpu_rj("reward-model", 1, 1)
    policy = gpu_rj("policy", 2, 1)
    in_progress = jcond(
        "StartupPolicyInProgress",
        "InOrderStartupPolicyInProgress",
        "in order startup policy is in progress",
        6,
    )
    status = jobset_status(rj_status("reward-model", active=1), rj_status("policy"), conditions=[in_progress])
    js = jobset(w, "rlhf-pipeline", "llm", [reward, policy], created=6, in_order=True, status=status)
    j = job(js, reward, 0, created=5.9, active=1)
    pod(j, 0, "Running", node=nodes[0], created=5.8, ready=False)


@scenario("running-steady", "running")
def running_steady(w: World) -> None:
    """Every pod has been running and ready for ten hours."""
    nodes = pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", ready=2, active=2))
    js = jobset(w, "gpt-neox-20b", "ml-train", [rj], created=600, status=status)
    for i in range(2):
        full_job(js, rj, i, nodes[2 * i : 2 * i + 2], created=599)


@scenario("running-after-restarts", "running")
def running_after_restarts(w: World) -> None:
    """Running and ready again after two restarts."""
    nodes = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    rj = tpu_slice("slice", 1)
    status = jobset_status(
        rj_status("slice", ready=1, active=1), conditions=[jobset_restarted(410)], restarts=2
    )
    js = jobset(w, "gemma-pretrain", "llm", [rj], created=1500, topology=NODEPOOL, status=status)
    full_job(js, rj, 0, nodes, attempt=2, created=420)


# --- writing -----------------------------------------------------------------------------------


# --- /triage cases of the placement filters: volumes, topology spread, pod (anti-)affinity ----------

TRIAGE_CASES: list[tuple[str, Callable[[World], None]]] = []
"""(seed, builder) of the snapshots written to `tests/corpus/triage/<seed>.json`; their entries in
`tests/corpus/triage/index.yaml` are written by hand, with the rule each one shows."""


def triage_case(seed: str) -> Callable[[Callable[[World], None]], Callable[[World], None]]:
    def register(build: Callable[[World], None]) -> Callable[[World], None]:
        TRIAGE_CASES.append((seed, build))
        return build

    return register


def app_pod(
    w: World,
    ns: str,
    owner: tuple[str, str],
    labels: dict[str, str],
    resource: tuple[str, str],
    *,
    node: Obj | None = None,
    extra: Obj | None = None,
    unschedulable: str = "",
    created: float = 45,
) -> Obj:
    """A pod of a Deployment (through its ReplicaSet, `pod-template-hash` and all), a StatefulSet or a
    Job: Running on `node`, or Pending with the scheduler's `unschedulable` message and its
    FailedScheduling event. `extra`: more pod spec (volumes, affinity, spread constraints)."""
    kind, owner_name = owner
    request, amount = resource
    own_labels = dict(labels)
    if kind == "Deployment":
        template_hash = w.suffix(10)
        kind, owner_name = "ReplicaSet", f"{owner_name}-{template_hash}"
        own_labels["pod-template-hash"] = template_hash
        name = f"{owner_name}-{w.suffix()}"
    elif kind == "StatefulSet":
        name = f"{owner_name}-{sum(1 for o in w.items if o['kind'] == 'Pod')}"
        own_labels["apps.kubernetes.io/pod-index"] = name.rsplit("-", 1)[1]
        own_labels["statefulset.kubernetes.io/pod-name"] = name
    else:
        name = f"{owner_name}-{w.suffix()}"
        own_labels["batch.kubernetes.io/job-name"] = owner_name
    api = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}[kind]
    spec: Obj = {
        "containers": [
            {
                "image": GPU_IMAGE,
                "name": "main",
                "resources": {"limits": {request: amount}, "requests": {request: amount}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never" if kind == "Job" else "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            *([{"effect": "NoSchedule", "key": request, "operator": "Exists"}] if "/" in request else []),
            *(
                {"effect": "NoExecute", "key": f"node.kubernetes.io/{k}", "operator": "Exists", "tolerationSeconds": 300}
                for k in ("not-ready", "unreachable")
            ),
        ],
        **(extra or {}),
    }
    status: Obj = {"phase": "Pending", "qosClass": "BestEffort"}
    if node is not None:
        spec["nodeName"] = node["metadata"]["name"]
        status = {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": ts(created - 1), "status": "True", "type": t}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": node["status"]["addresses"][0]["address"],
            "phase": "Running",
            "podIP": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}",
            "qosClass": "BestEffort",
            "startTime": ts(created - 0.5),
        }
    elif unschedulable:
        status["conditions"] = [
            {**cond("PodScheduled", "Unschedulable", unschedulable, created - 0.1, "False"), "lastProbeTime": None}
        ]
    p = w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(created),
                "labels": own_labels,
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref(api, kind, owner_name, w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": status,
        }
    )
    if unschedulable:
        failed_scheduling(w, p, unschedulable, 12, first=created - 0.2)
    return p


def namespace_object(w: World, name: str, labels: dict[str, str] | None = None) -> Obj:
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "creationTimestamp": ts(90000),
                "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
    )


def storage_class(
    w: World, name: str, provisioner: str, mode: str, *, parameters: dict[str, str] | None = None,
    allowed: list[Obj] | None = None,
) -> Obj:
    return w.add(
        {
            "allowVolumeExpansion": provisioner != "kubernetes.io/no-provisioner",
            **({"allowedTopologies": allowed} if allowed else {}),
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"creationTimestamp": ts(90000), "name": name, "resourceVersion": w.rv(), "uid": w.uid()},
            **({"parameters": parameters} if parameters else {}),
            "provisioner": provisioner,
            "reclaimPolicy": "Delete" if provisioner != "kubernetes.io/no-provisioner" else "Retain",
            "volumeBindingMode": mode,
        }
    )


def claim(
    w: World, ns: str, name: str, storage_class_name: str, size: str, *, selected_node: str = "",
    access: str = "ReadWriteOnce",
) -> Obj:
    """A PVC as the API serves it before binding (`bind` binds it to a PV)."""
    annotations = {"volume.kubernetes.io/selected-node": selected_node} if selected_node else {}
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                **({"annotations": annotations} if annotations else {}),
                "creationTimestamp": ts(3000),
                "finalizers": ["kubernetes.io/pvc-protection"],
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "accessModes": [access],
                "resources": {"requests": {"storage": size}},
                "storageClassName": storage_class_name,
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }
    )


def volume(
    w: World, name: str, storage_class_name: str, size: str, *, driver: str = "", handle: str = "",
    affinity: tuple[str, list[str]] | None = None, labels: dict[str, str] | None = None,
    local_path: str = "", bound_to: Obj | None = None, access: str = "ReadWriteOnce",
) -> Obj:
    """A PV: a CSI volume (`driver`, `handle`) or a local one (`local_path`), with a required node
    affinity `(key, values)`, and bound to the PVC `bound_to` (which is then bound to it)."""
    source: Obj = (
        {"csi": {"driver": driver, "fsType": "ext4", "volumeHandle": handle}}
        if driver
        else {"local": {"path": local_path}}
    )
    spec: Obj = {
        "accessModes": [access],
        "capacity": {"storage": size},
        **source,
        "persistentVolumeReclaimPolicy": "Delete" if driver else "Retain",
        "storageClassName": storage_class_name,
        "volumeMode": "Filesystem",
    }
    if affinity is not None:
        key, values = affinity
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    phase = "Available"
    if bound_to is not None:
        meta = bound_to["metadata"]
        spec["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "resourceVersion": meta["resourceVersion"],
            "uid": meta["uid"],
        }
        phase = "Bound"
        bound_to["spec"]["volumeName"] = name
        bound_to["metadata"].setdefault("annotations", {}).update(
            {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                **({"volume.beta.kubernetes.io/storage-provisioner": driver,
                    "volume.kubernetes.io/storage-provisioner": driver} if driver else {}),
            }
        )
        bound_to["status"] = {"accessModes": [access], "capacity": {"storage": size}, "phase": "Bound"}
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "annotations": {"pv.kubernetes.io/provisioned-by": driver} if driver else {},
                "creationTimestamp": ts(2990),
                "finalizers": ["kubernetes.io/pv-protection"],
                **({"labels": labels} if labels else {}),
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": {"lastPhaseTransitionTime": ts(2990), "phase": phase},
        }
    )


def pod_volume(volume_name: str, claim_name: str) -> Obj:
    """The pod spec volume `volume_name` backed by the PVC `claim_name`."""
    return {"volumes": [{"name": volume_name, "persistentVolumeClaim": {"claimName": claim_name}}]}


def spread(key: str, labels: dict[str, str], max_skew: int = 1, **more: Any) -> Obj:
    return {
        "topologySpreadConstraints": [
            {
                "labelSelector": {"matchLabels": labels},
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                **more,
            }
        ]
    }


def full_of(w: World, ns: str, owner: tuple[str, str], node: Obj, gpus: str) -> Obj:
    """Another workload's running pod holding `gpus` GPUs on `node`."""
    return app_pod(w, ns, owner, {"app": owner[1]}, ("nvidia.com/gpu", gpus), node=node, created=900)


PD_CSI = "pd.csi.storage.gke.io"
GKE_TOPOLOGY_ZONE = "topology.gke.io/zone"


@triage_case("gke-pvc-bound-other-zone")
def pvc_bound_other_zone(w: World) -> None:
    """The checkpoint PVC was first used by a run in us-central1-c; its PD (and so its PV's node
    affinity) stays there, while the H100 nodes with free GPUs are all in us-central1-a."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    full_of(w, "llm", ("Job", "llama-sft-7"), nodes[0], "8")
    premium = storage_class(w, "premium-rwo", PD_CSI, "WaitForFirstConsumer", parameters={"type": "pd-ssd"})
    pvc = claim(w, "llm", "llama-ckpt", premium["metadata"]["name"], "2Ti",
                selected_node="gke-ml-prod-a3-pool-6c1d2e0f-q7zx")
    pv = f"pvc-{pvc['metadata']['uid']}"
    volume(w, pv, "premium-rwo", "2Ti", driver=PD_CSI,
           handle=f"projects/ml-platform-prod/zones/us-central1-c/disks/{pv}",
           affinity=(GKE_TOPOLOGY_ZONE, ["us-central1-c"]), bound_to=pvc)
    message = (
        "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    app_pod(w, "llm", ("Job", "llama-eval-ckpt-120"), {"app": "llama-eval"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("ckpt", "llama-ckpt"), unschedulable=message)


@triage_case("eks-pv-zone-label")
def pv_zone_label(w: World) -> None:
    """A statically created PV for a restored EBS snapshot carries zone labels (no node affinity): it
    is in us-west-2a, and the p4d node group is in us-west-2b."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    full_of(w, "research", ("Job", "protein-fold-311"), nodes[0], "8")
    storage_class(w, "gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", parameters={"type": "gp3"})
    pvc = claim(w, "research", "alphafold-db", "gp3", "3Ti")
    volume(w, "alphafold-db-restored", "gp3", "3Ti", driver="ebs.csi.aws.com", handle="vol-0a83c5f1e29b74d61",
           labels={"topology.kubernetes.io/region": "us-west-2", "topology.kubernetes.io/zone": "us-west-2a"},
           bound_to=pvc)
    message = (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had no available volume zone. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    app_pod(w, "research", ("Job", "alphafold-infer-17"), {"app": "alphafold"}, ("nvidia.com/gpu", "4"),
            extra=pod_volume("db", "alphafold-db"), unschedulable=message)


@triage_case("onprem-local-pv-wffc")
def local_pv_wffc(w: World) -> None:
    """The dataset cache is a local NVMe volume: only gpu-node-03 has one big enough, and its GPUs
    are all taken; the class has no provisioner, so nothing can be made on the other nodes."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    full_of(w, "vision", ("Job", "sam2-train-4"), nodes[2], "8")
    storage_class(w, "local-nvme", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    claim(w, "vision", "imagenet-cache", "local-nvme", "2Ti")
    for node, size in ((nodes[0], "900Gi"), (nodes[1], "900Gi"), (nodes[2], "3500Gi")):
        host = node["metadata"]["name"]
        volume(w, f"local-pv-{w.hexid(8)}", "local-nvme", size, local_path="/mnt/nvme0",
               affinity=("kubernetes.io/hostname", [host]))
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't find available persistent volumes to bind. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    app_pod(w, "vision", ("Job", "vit-eval-9"), {"app": "vit-eval"}, ("nvidia.com/gpu", "2"),
            extra=pod_volume("cache", "imagenet-cache"), unschedulable=message)


@triage_case("gke-pvc-missing")
def pvc_missing(w: World) -> None:
    """The Job names `shared-dataset`; the PVC is `shared-datasets`."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    storage_class(w, "standard-rwx", "filestore.csi.storage.gke.io", "WaitForFirstConsumer")
    pvc = claim(w, "ml-train", "shared-datasets", "standard-rwx", "1Ti", access="ReadWriteMany")
    volume(w, f"pvc-{pvc['metadata']['uid']}", "standard-rwx", "1Ti", driver="filestore.csi.storage.gke.io",
           handle="modeInstance/us-central1-a/pvc-datasets/vol1", bound_to=pvc)
    del nodes
    message = (
        '0/2 nodes are available: persistentvolumeclaim "shared-dataset" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    app_pod(w, "ml-train", ("Job", "bert-finetune-3"), {"app": "bert-finetune"}, ("nvidia.com/gpu", "1"),
            extra=pod_volume("data", "shared-dataset"), unschedulable=message)


def csi_driver(w: World, name: str) -> Obj:
    """The CSIDriver a CSI driver's chart installs, opted into storage capacity tracking."""
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"creationTimestamp": ts(90000), "name": name, "resourceVersion": w.rv(), "uid": w.uid()},
            "spec": {
                "attachRequired": False,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "podInfoOnMount": True,
                "requiresRepublish": False,
                "seLinuxMount": False,
                "storageCapacity": True,
                "volumeLifecycleModes": ["Persistent"],
            },
        }
    )


def capacity_class(w: World, name: str, driver: str, parameters: dict[str, str]) -> Obj:
    """A WaitForFirstConsumer StorageClass of a CSI driver that publishes its capacity."""
    csi_driver(w, driver)
    return storage_class(w, name, driver, "WaitForFirstConsumer", parameters=parameters)


def local_capacity(
    w: World, ns: str, of: Obj, key: str, node: Obj, size: str, maximum: str = ""
) -> Obj:
    """The CSIStorageCapacity the external-provisioner of the class `of` publishes for one node's
    topology segment (`key`: the driver's topology label, which its node plugin puts on the node)."""
    host = node["metadata"]["name"]
    node["metadata"]["labels"][key] = host
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "capacity": size,
            "kind": "CSIStorageCapacity",
            **({"maximumVolumeSize": maximum} if maximum else {}),
            "metadata": {
                "creationTimestamp": ts(5000),
                "generateName": "csisc-",
                "labels": {
                    "csi.storage.k8s.io/drivername": of["provisioner"],
                    "csi.storage.k8s.io/managed-by": "external-provisioner",
                },
                "name": f"csisc-{w.suffix()}",
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "nodeTopology": {"matchLabels": {key: host}},
            "storageClassName": of["metadata"]["name"],
        }
    )


@triage_case("onprem-topolvm-capacity")
def topolvm_capacity(w: World) -> None:
    """A fine-tuning Job asks a 3Ti scratch volume on TopoLVM (local NVMe). The two nodes with free
    GPUs have 1.2Ti and 800Gi left in their volume groups; the one with 6Ti has its GPUs taken."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    key = "topology.topolvm.io/node"
    nvme = capacity_class(w, "topolvm-nvme", "topolvm.io", {"topolvm.io/device-class": "nvme"})
    for node, size in zip(nodes, ("1288490188800", "858993459200", "6597069766656"), strict=True):
        local_capacity(w, "topolvm-system", nvme, key, node, size)
    full_of(w, "research", ("Job", "llama-pretrain-ablation"), nodes[2], "8")
    claim(w, "research", "finetune-scratch", "topolvm-nvme", "3Ti")
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) did not have enough free storage. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
        "helpful for scheduling."
    )
    app_pod(w, "research", ("Job", "llm-finetune-7"), {"app": "llm-finetune"}, ("nvidia.com/gpu", "4"),
            extra=pod_volume("scratch", "finetune-scratch"), unschedulable=message)


@triage_case("eks-openebs-capacity-missing")
def openebs_capacity_missing(w: World) -> None:
    """OpenEBS LVM LocalPV on a p4d node group: the node that joined ten minutes ago has free GPUs,
    but the driver has published no CSIStorageCapacity for it yet (its node plugin is still starting);
    the other node's GPUs are taken."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    key = "openebs.io/nodename"
    lvm = capacity_class(w, "openebs-lvmpv", "local.csi.openebs.io", {"storage": "lvm", "volgroup": "lvmvg"})
    local_capacity(w, "openebs", lvm, key, nodes[0], "3298534883328")
    nodes[1]["metadata"]["creationTimestamp"] = ts(10)
    full_of(w, "speech", ("Job", "whisper-large-ft"), nodes[0], "8")
    claim(w, "speech", "audio-shards-cache", "openebs-lvmpv", "1Ti")
    message = (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) did not have enough free storage. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not "
        "helpful for scheduling."
    )
    app_pod(w, "speech", ("Job", "whisper-distil-3"), {"app": "whisper-distil"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("cache", "audio-shards-cache"), unschedulable=message)


@triage_case("onprem-linstor-max-volume")
def linstor_max_volume(w: World) -> None:
    """LINSTOR pools on the GPU nodes report 7Ti free but at most 2Ti in one volume (the largest
    extent left), and the checkpoint volume asks 4Ti: no node can take it, though one has free GPUs."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    key = "linbit.com/hostname"
    pool = capacity_class(w, "linstor-nvme", "linstor.csi.linbit.com", {"linstor.csi.linbit.com/storagePool": "nvme-thin"})
    for node in nodes:
        local_capacity(w, "piraeus-datastore", pool, key, node, "7Ti", maximum="2Ti")
    for node in nodes[1:]:
        full_of(w, "vision", ("Job", "sam2-train-4"), node, "8")
    claim(w, "vision", "sam2-ckpt", "linstor-nvme", "4Ti")
    message = (
        "0/3 nodes are available: 1 node(s) did not have enough free storage, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 2 No preemption victims found for incoming pod, 1 Preemption is not "
        "helpful for scheduling."
    )
    app_pod(w, "vision", ("Job", "sam2-eval-11"), {"app": "sam2-eval"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("ckpt", "sam2-ckpt"), unschedulable=message)


ONE_POD = "ReadWriteOncePod"
IN_USE = (
    "1 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
    "another pod"
)


def one_pod_checkpoint(w: World, ns: str, name: str, size: str) -> Obj:
    """A ReadWriteOncePod PD-backed claim, bound, in us-central1-a (where the H100 nodes are)."""
    premium = storage_class(w, "premium-rwo", PD_CSI, "WaitForFirstConsumer", parameters={"type": "pd-ssd"})
    pvc = claim(w, ns, name, premium["metadata"]["name"], size, access=ONE_POD)
    pv = f"pvc-{pvc['metadata']['uid']}"
    volume(w, pv, "premium-rwo", size, driver=PD_CSI, access=ONE_POD,
           handle=f"projects/ml-platform-prod/zones/us-central1-a/disks/{pv}",
           affinity=(GKE_TOPOLOGY_ZONE, ["us-central1-a"]), bound_to=pvc)
    return pvc


@triage_case("gke-rwop-eval-while-training")
def rwop_eval_while_training(w: World) -> None:
    """The eval Job mounts the training run's checkpoint PVC, which is ReadWriteOncePod: the training
    pod still has it, so the eval pod can start nowhere, though an H100 node is free
    (VolumeRestrictions)."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "llm", "llama-ckpt", "2Ti")
    app_pod(w, "llm", ("Job", "llama-sft-7"), {"app": "llama-sft-7"}, ("nvidia.com/gpu", "8"), node=nodes[0],
            extra=pod_volume("ckpt", "llama-ckpt"), created=900)
    message = (
        f"0/3 nodes are available: {IN_USE}, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    app_pod(w, "llm", ("Job", "llama-eval-ckpt-120"), {"app": "llama-eval"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("ckpt", "llama-ckpt"), unschedulable=message)


@triage_case("gke-rwop-old-pod-terminating")
def rwop_old_pod_terminating(w: World) -> None:
    """The Job's pod was deleted (a node drain) and the Job made a new one at once; the old pod flushes
    its checkpoint in a one-hour grace period and holds the ReadWriteOncePod claim until it is gone."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "nlp", "t5-xxl-ckpt", "1Ti")
    old = app_pod(w, "nlp", ("Job", "t5-xxl-pretrain"), {"app": "t5-xxl-pretrain"}, ("nvidia.com/gpu", "8"),
                  node=nodes[0], extra=pod_volume("ckpt", "t5-xxl-ckpt"), created=600)
    old["spec"]["terminationGracePeriodSeconds"] = 3600
    old["metadata"].update(deletionGracePeriodSeconds=3600, deletionTimestamp=ts(42 - 60),
                           finalizers=["batch.kubernetes.io/job-tracking"])
    message = (
        f"0/3 nodes are available: {IN_USE}, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    new = app_pod(w, "nlp", ("Job", "t5-xxl-pretrain"), {"app": "t5-xxl-pretrain"}, ("nvidia.com/gpu", "8"),
                  extra=pod_volume("ckpt", "t5-xxl-ckpt"), unschedulable=message, created=42)
    new["spec"]["terminationGracePeriodSeconds"] = 3600
    new["metadata"]["ownerReferences"] = old["metadata"]["ownerReferences"]


@triage_case("gke-rwop-rolling-update")
def rwop_rolling_update(w: World) -> None:
    """A vLLM Deployment keeps its weights on a ReadWriteOncePod PVC; a rolling update (the default
    strategy) starts the new ReplicaSet's pod first, which waits for the old pod's volume while the old
    pod waits for the new one to be ready."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "serving", "llama-70b-weights", "500Gi")
    app_pod(w, "serving", ("Deployment", "vllm-llama-70b"), {"app": "vllm-llama-70b"}, ("nvidia.com/gpu", "8"),
            node=nodes[0], extra=pod_volume("weights", "llama-70b-weights"), created=2800)
    message = (
        f"0/3 nodes are available: {IN_USE}, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    app_pod(w, "serving", ("Deployment", "vllm-llama-70b"), {"app": "vllm-llama-70b"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("weights", "llama-70b-weights"), unschedulable=message, created=30)


def csinode(w: World, node: Obj, driver: str, count: int) -> Obj:
    """The CSINode the kubelet registers for `node`: `driver` may attach `count` volumes."""
    name = node["metadata"]["name"]
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {
                "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"},
                "creationTimestamp": node["metadata"]["creationTimestamp"],
                "name": name,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
                ],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "drivers": [
                    {
                        "allocatable": {"count": count},
                        "name": driver,
                        "nodeID": node["spec"]["providerID"].rsplit("/", 1)[-1] or name,
                        "topologyKeys": ["kubernetes.io/os", "topology.ebs.csi.aws.com/zone", "topology.kubernetes.io/zone"],
                    }
                ]
            },
        }
    )


@triage_case("eks-ebs-attach-limit")
def ebs_attach_limit(w: World) -> None:
    """The p4d nodes' EBS CSI driver may attach 15 volumes (instance store and EFA interfaces take the
    rest of the 28 Nitro slots); the feature-store shards already hold 15 on each node."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    storage_class(w, "gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", parameters={"type": "gp3"})
    for node in nodes:
        node["spec"]["providerID"] = f"aws:///us-west-2b/i-0{w.hexid(16)}"
        csinode(w, node, "ebs.csi.aws.com", 15)
        for _ in range(15):
            shard = claim(w, "features", f"shard-{w.suffix(8)}", "gp3", "200Gi")
            volume(w, f"pvc-{shard['metadata']['uid']}", "gp3", "200Gi", driver="ebs.csi.aws.com",
                   handle=f"vol-0{w.hexid(16)}", affinity=("topology.ebs.csi.aws.com/zone", ["us-west-2b"]),
                   bound_to=shard)
            app_pod(w, "features", ("StatefulSet", "feature-shard"), {"app": "feature-shard"}, ("cpu", "1"),
                    node=node, extra=pod_volume("data", shard["metadata"]["name"]), created=5000)
    claim(w, "features", "embeddings-scratch", "gp3", "500Gi")
    message = (
        "0/2 nodes are available: 2 node(s) exceed max volume count. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    app_pod(w, "features", ("Job", "embed-refresh-88"), {"app": "embed-refresh"}, ("nvidia.com/gpu", "2"),
            extra=pod_volume("scratch", "embeddings-scratch"), unschedulable=message)


@triage_case("gke-spread-zones-l4")
def spread_zones_l4(w: World) -> None:
    """whisper-asr spreads over zones (maxSkew 1); us-central1-b and -c have one L4 node each, both
    full, so the only free L4s are in us-central1-a, which already has one replica more."""
    a = pool(w, 2, g2, "ml-prod", "l4-pool", zone="us-central1-a")
    b = pool(w, 1, g2, "ml-prod", "l4-pool-b", zone="us-central1-b")
    c = pool(w, 1, g2, "ml-prod", "l4-pool-c", zone="us-central1-c")
    labels = {"app": "whisper-asr"}
    constraint = spread("topology.kubernetes.io/zone", labels)
    owner = ("Deployment", "whisper-asr")
    for node in (a[0], a[0], b[0], c[0]):
        app_pod(w, "speech", owner, labels, ("nvidia.com/gpu", "1"), node=node, extra=constraint, created=600)
    full_of(w, "speech", ("StatefulSet", "tts-serve"), b[0], "1")
    full_of(w, "speech", ("StatefulSet", "tts-serve"), c[0], "1")
    message = (
        "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints, 3 Insufficient nvidia.com/gpu. "
        "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )
    app_pod(w, "speech", owner, labels, ("nvidia.com/gpu", "1"), extra=constraint, unschedulable=message)


@triage_case("gke-spread-min-domains")
def spread_min_domains(w: World) -> None:
    """vLLM replicas must span three zones (minDomains 3) but H100 nodes exist in two: the global
    minimum stays 0, and any zone with a replica is one too many."""
    a = pool(w, 1, a3, "ml-prod", "a3-pool-a", zone="us-central1-a")
    b = pool(w, 1, a3, "ml-prod", "a3-pool-b", zone="us-central1-b")
    cpu_node(w, "ml-prod")
    labels = {"app": "vllm-llama-70b"}
    constraint = spread(
        "topology.kubernetes.io/zone", labels, minDomains=3, nodeAffinityPolicy="Honor"
    )
    extra = {**constraint, "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}}
    for node in (a[0], b[0]):
        app_pod(w, "serving", ("StatefulSet", "vllm-llama-70b"), labels, ("nvidia.com/gpu", "4"), node=node,
                extra=extra, created=700)
    message = (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )
    app_pod(w, "serving", ("StatefulSet", "vllm-llama-70b"), labels, ("nvidia.com/gpu", "4"), extra=extra,
            unschedulable=message)


@triage_case("eks-spread-hostname")
def spread_hostname(w: World) -> None:
    """bert-pretrain spreads over hosts (maxSkew 1); the third p4d node is full of another team's
    pods, but it still counts as a domain with 0 of them, so each other node is one too many."""
    nodes = [eks_p4d(w, i) for i in range(3)]
    labels = {"app": "bert-pretrain", "team": "nlp"}
    constraint = spread("kubernetes.io/hostname", {"app": "bert-pretrain"})
    for node in nodes[:2]:
        app_pod(w, "nlp", ("Job", "bert-pretrain"), labels, ("nvidia.com/gpu", "4"), node=node, extra=constraint,
                created=300)
    full_of(w, "research", ("Job", "protein-fold-312"), nodes[2], "8")
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 No preemption victims found for incoming pod."
    )
    app_pod(w, "nlp", ("Job", "bert-pretrain"), labels, ("nvidia.com/gpu", "4"), extra=constraint,
            unschedulable=message)


def anti_affinity(key: str, labels: dict[str, str]) -> Obj:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


@triage_case("gke-anti-affinity-one-per-node")
def anti_affinity_one_per_node(w: World) -> None:
    """sdxl-serve keeps one replica per node; each L4 node already runs one (with an L4 free)."""
    nodes = pool(w, 3, g2, "ml-prod", "l4-pool")
    labels = {"app": "sdxl-serve"}
    extra = anti_affinity("kubernetes.io/hostname", labels)
    for node in nodes:
        app_pod(w, "inference", ("Deployment", "sdxl-serve"), labels, ("nvidia.com/gpu", "1"), node=node,
                extra=extra, created=800)
    message = (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    app_pod(w, "inference", ("Deployment", "sdxl-serve"), labels, ("nvidia.com/gpu", "1"), extra=extra,
            unschedulable=message)


@triage_case("gke-pod-affinity-cache-zone")
def pod_affinity_cache_zone(w: World) -> None:
    """The ranker must run in the zone of its feature cache (required pod affinity by zone, to the
    namespaces labelled serves=recsys); the cache runs in us-central1-b, the L4 nodes are in
    us-central1-a."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    cache_nodes = [gke_node(w, "ml-prod", "default-pool", "e2-standard-8", {}, {}, zone="us-central1-b")]
    namespace_object(w, "recsys", {"team": "recsys", "tier": "online"})
    namespace_object(w, "platform-cache", {"team": "platform", "serves": "recsys"})
    # The cache keeps batch pods of any namespace labelled tier=batch off its nodes.
    batch_off = {
        "labelSelector": {"matchLabels": {"workload": "batch"}},
        "namespaceSelector": {"matchLabels": {"tier": "batch"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    for _ in range(2):
        app_pod(w, "platform-cache", ("StatefulSet", "feature-cache"), {"app": "feature-cache"}, ("cpu", "2"),
                node=cache_nodes[0], created=2000,
                extra={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [batch_off]}}})
    term = {
        "labelSelector": {"matchLabels": {"app": "feature-cache"}},
        "namespaceSelector": {"matchLabels": {"serves": "recsys"}},
        "topologyKey": "topology.kubernetes.io/zone",
    }
    extra = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    del nodes
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match pod affinity rules. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    app_pod(w, "recsys", ("Deployment", "ranker"), {"app": "ranker"}, ("nvidia.com/gpu", "1"), extra=extra,
            unschedulable=message)


# --- JobSets colliding under exclusive placement ------------------------------------------------------


def colliding(w: World, holder: str, waiting: str, pools: list[list[Obj]], rj: RJ, key: str) -> None:
    """JobSet `holder` runs one Job per domain of `key`, using part of each domain; JobSet `waiting`
    (same priority) is created later: its leaders' anti-affinity refuses every domain `holder` holds,
    though their free nodes fit."""
    running = jobset(w, holder, "llm", [rj], created=300, topology=key,
                     status=jobset_status(rj_status(rj.name, ready=len(pools), active=len(pools))))
    for i, nodes in enumerate(pools):
        full_job(running, rj, i, nodes[: rj.parallelism], created=299)
    js = jobset(w, waiting, "llm", [rj], created=20, topology=key,
                status=jobset_status(rj_status(rj.name, active=len(pools))))
    n = len(pools)
    message = (
        f"0/{sum(map(len, pools))} nodes are available: {sum(map(len, pools)) - n * rj.parallelism} node(s) didn't match pod anti-affinity rules, "
        f"{n * rj.parallelism} Insufficient {rj.resource[0]}. preemption: 0/{sum(map(len, pools))} nodes are available: "
        f"{sum(map(len, pools))} No preemption victims found for incoming pod."
    )
    for i in range(n):
        j = job(js, rj, i, created=19.9, active=1)
        new_leader(j, 19.8, unschedulable=message, attempts=8)
        failed_create(j, NOT_SET.format(webhook="vpod.kb.io"), 12, first=19.7, last=0.5 + i)


@scenario(
    "leader-pending-exclusive-collision",
    "leader-pending",
    pod_verdict="pod-affinity",
    target="llama-70b-sft-b",
)
def leader_pending_exclusive_collision(w: World) -> None:
    """Two fine-tuning JobSets ask for a node pool each per Job; the first holds both A3 pools with
    half their nodes, so the second's leaders are kept out by their own anti-affinity."""
    pools = [pool(w, 4, a3, "ml-prod", f"a3-pool-{i}") for i in (1, 2)]
    colliding(w, "llama-70b-sft-a", "llama-70b-sft-b", pools, gpu_rj("trainer", 2, 2), NODEPOOL)


@scenario(
    "leader-pending-exclusive-tpu", "leader-pending", pod_verdict="pod-affinity", target="gemma-ablation"
)
def leader_pending_exclusive_tpu(w: World) -> None:
    """Two TPU JobSets with a slice per node pool: the first one's slices use 2 of the 4 hosts of each
    pool, and the second one's leaders may not share a pool with them."""
    pools = [pool(w, 4, tpu_v5e, "ml-prod", f"tpu-v5e-pool-{i}") for i in (1, 2)]
    rj = RJ("slice", 2, 2, ("google.com/tpu", "4"), TPU_IMAGE, "jax", dict(TPU_SELECTOR), list(TPU_TOLERATION))
    colliding(w, "gemma-pretrain", "gemma-ablation", pools, rj, NODEPOOL)


def index_entry(s: Scenario, jobset_meta: Obj) -> str:
    """The scenario's entry in `index.yaml` (format in tests/corpus.py)."""
    lines = [
        f"- snapshot: {s.path}",
        f"  namespace: {jobset_meta['namespace']}",
        f"  name: {jobset_meta['name']}",
        f"  verdict: {s.verdict}",
    ]
    if s.pod_verdict:
        lines.append(f"  pod_verdict: {s.pod_verdict}")
    if s.cause:
        lines.append(f"  cause: {s.cause}")
    return "\n".join(lines)


def main() -> None:
    entries = []
    for s in SCENARIOS:
        world = World(s.seed)
        s.build(world)
        (ROOT / s.path).write_text(json.dumps(world.snapshot(), indent=4) + "\n")
        jobset_meta = next(
            o["metadata"]
            for o in world.items
            if o["kind"] == "JobSet" and s.target in ("", o["metadata"]["name"])
        )
        entries.append(index_entry(s, jobset_meta))
    header = (
        "# JobSet corpus: snapshot files and what `/jobset why` must answer (format in tests/corpus.py).\n"
        "# Written by tests/corpus/jobset/make_corpus.py; edit the generator, not the files.\n"
    )
    (HERE / "index.yaml").write_text(header + "\n".join(entries) + "\n")
    for seed, build in TRIAGE_CASES:
        world = World(seed)
        build(world)
        (ROOT / "tests" / "corpus" / "triage" / f"{seed}.json").write_text(
            json.dumps(world.snapshot(), indent=4) + "\n"
        )


if __name__ == "__main__":
    main()
