"""A deterministic generator of large GKE clusters running GPU and TPU work, as the API serves them.

`generate(nodes, pods_per_node)` builds node pools with GKE labels and taints (two CPU pools, A100 and
H100 pools, an L4 Spot pool, TPU v5p slices), fills every node with DaemonSet and workload pods the
way a busy cluster looks (every GPU and TPU taken, CPU and memory requests within allocatable, a few
finished and terminating pods), adds pending pods with the scheduler's `PodScheduled=False` condition
and `FailedScheduling` events, and a multi-slice TPU JobSet with exclusive topology whose last slice
has no room: its leader is pending and the JobSet pod webhook rejects its followers.

Every object is a plain dict shaped exactly like `kubectl get -o json` prints it. So that 500,000 pods
fit in memory, the pods of one workload share their read-only parts (labels, owner references,
container specs, tolerations, volumes, conditions): treat every object as read-only.
"""

from __future__ import annotations

import random
import string
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
"""The moment the generated cluster is observed."""

CLUSTER = "prod-ml"
PROJECT = "acme-ml-prod"
REGION = "us-central1"
ZONES = ("us-central1-a", "us-central1-b", "us-central1-c")
K8S_VERSION = "v1.33.5-gke.1162000"
MAX_PODS = 110
TOPOLOGY_KEY = "cloud.google.com/gke-nodepool"
"""The JobSet's exclusive-topology key: one TPU slice is one node pool."""
PENDING_SHARE = 0.005
"""Pending pods, as a share of all pods."""

_KUBE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet of the random suffixes Kubernetes puts in generated names."""


# --- what the cluster is made of ------------------------------------------------------------------


@dataclass(frozen=True)
class Accelerator:
    resource: str
    count: int
    labels: dict[str, str]
    taint: Obj


@dataclass(frozen=True)
class Pool:
    name: str
    machine: str
    cpus: int
    memory_gib: int
    share: float
    """Share of the non-TPU nodes."""
    accelerator: Accelerator | None = None
    spot: bool = False


@dataclass(frozen=True)
class Shape:
    """What a workload's pods run and how they are placed. cpu in millicores, memory in MiB."""

    name: str
    image: str
    cpu_m: int
    memory_mib: int
    extended: dict[str, int] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Obj, ...] = ()
    command: tuple[str, ...] = ()


def _gpu(product: str, gke: str, count: int, memory_mib: int, family: str) -> Accelerator:
    return Accelerator(
        resource="nvidia.com/gpu",
        count=count,
        labels={
            "cloud.google.com/gke-accelerator": gke,
            "cloud.google.com/gke-gpu-driver-version": "default",
            "nvidia.com/gpu.count": str(count),
            "nvidia.com/gpu.family": family,
            "nvidia.com/gpu.memory": str(memory_mib),
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": product,
        },
        taint={"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"},
    )


POOLS = (
    Pool("cpu-n2-pool", "n2-standard-32", 32, 128, 0.40),
    Pool("cpu-highmem-pool", "n2-highmem-16", 16, 128, 0.15),
    Pool(
        "a100-pool",
        "a2-highgpu-8g",
        96,
        680,
        0.15,
        _gpu("NVIDIA-A100-SXM4-40GB", "nvidia-tesla-a100", 8, 40960, "ampere"),
    ),
    Pool(
        "h100-pool",
        "a3-highgpu-8g",
        208,
        1872,
        0.15,
        _gpu("NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb", 8, 81559, "hopper"),
    ),
    Pool(
        "l4-spot-pool",
        "g2-standard-24",
        24,
        96,
        0.15,
        _gpu("NVIDIA-L4", "nvidia-l4", 2, 23034, "ada-lovelace"),
        spot=True,
    ),
)
TPU_HOST = Pool("tpu-v5p-slice", "ct5p-hightpu-4t", 208, 448, 0.0)
TPU_CHIPS_PER_HOST = 4
TPU_TOPOLOGY = {1: "2x2x1", 2: "2x2x2", 4: "2x2x4", 8: "2x4x4", 16: "4x4x4", 32: "4x4x8", 64: "4x4x16"}
"""v5p slice topology by the number of hosts in the slice (4 chips a host)."""

NAMESPACES = ("web", "search", "data-pipeline", "monitoring", "ads")
REGISTRY = "us-docker.pkg.dev/acme-ml-prod"
CPU_SHAPES = (
    Shape("ranker", f"{REGISTRY}/search/ranker:5.2.1", 1000, 4096),
    Shape("feature-store", f"{REGISTRY}/data/feature-store:0.31.2", 500, 2048),
    Shape("checkout-api", f"{REGISTRY}/web/checkout-api:1.84.0", 250, 512),
    Shape("frontend", f"{REGISTRY}/web/frontend:2026.11.3", 100, 128),
    Shape("metrics-relay", f"{REGISTRY}/obs/metrics-relay:3.0.7", 50, 64),
)
"""Largest requests first: a node takes the largest that fit its free share."""
SYSTEM_SHAPES = {
    "fluentbit-gke": Shape("fluentbit", "gke.gcr.io/fluent-bit:v1.8.12-gke.36", 100, 200),
    "gke-metadata-server": Shape("gke-metadata-server", "gke.gcr.io/gke-metadata-server:20251021", 100, 100),
    "pdcsi-node": Shape(
        "gce-pd-driver", "gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.17.3-gke.0", 10, 20
    ),
    "nvidia-gpu-device-plugin-small-cos": Shape(
        "nvidia-gpu-device-plugin", "gke.gcr.io/nvidia-gpu-device-plugin:v1.0.30-gke.2", 50, 50
    ),
    "tpu-device-plugin": Shape("tpu-device-plugin", "gke.gcr.io/tpu-device-plugin:v0.9.4-gke.2", 20, 64),
}
TRAIN_COMMAND = ("torchrun", "--nproc-per-node=8", "pretrain_gpt.py")
GPU1 = {"nvidia.com/gpu": 1}
SPOT_TOLERATION = {
    "effect": "NoSchedule",
    "key": "cloud.google.com/gke-spot",
    "operator": "Equal",
    "value": "true",
}
PENDING_SHAPES = (
    # 8 GPUs pinned to the full H100 pool: exhausted. The first one is `Cluster.pinned`.
    (
        0.30,
        "ml-training",
        "Job",
        Shape(
            "train-h100",
            f"{REGISTRY}/training/megatron:24.09",
            200000,
            1400 * 1024,
            {"nvidia.com/gpu": 8},
            {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
            command=TRAIN_COMMAND,
        ),
    ),
    # 1 GPU anywhere, while every GPU in the cluster is taken. The first one is `Cluster.unpinned`.
    (
        0.40,
        "ml-serving",
        "ReplicaSet",
        Shape("vllm-mistral-7b", f"{REGISTRY}/serving/vllm:0.9.2", 4000, 32768, GPU1),
    ),
    # A GPU model the cluster does not have: label-mismatch.
    (
        0.10,
        "ml-serving",
        "ReplicaSet",
        Shape(
            "vllm-llama-405b",
            f"{REGISTRY}/serving/vllm:0.9.2",
            8000,
            65536,
            GPU1,
            {"nvidia.com/gpu.product": "NVIDIA-H200-141GB-HBM3e"},
        ),
    ),
    # The Spot pool, without the Spot toleration: taint.
    (
        0.10,
        "ml-serving",
        "ReplicaSet",
        Shape(
            "whisper-asr-canary",
            f"{REGISTRY}/speech/whisper-asr:3.2.0-rc1",
            6000,
            24576,
            GPU1,
            {"cloud.google.com/gke-nodepool": "l4-spot-pool"},
        ),
    ),
    # No accelerator, more CPU than any node has: no-request.
    (0.10, "data-pipeline", "ReplicaSet", Shape("etl-backfill", f"{REGISTRY}/data/etl:7.0.0", 240000, 65536)),
)
DEFAULT_TOLERATIONS = (
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
)
"""Added to every pod by the DefaultTolerationSeconds admission plugin."""


@dataclass(frozen=True)
class Cluster:
    """The generated objects, and what to ask about them."""

    nodes: list[Obj]
    pods: list[Obj]
    jobs: list[Obj]
    jobsets: list[Obj]
    events: list[Obj]
    pinned: tuple[str, str]
    """(namespace, name) of a pending 8-GPU pod with a nodeSelector for the full H100 pool."""
    unpinned: tuple[str, str]
    """(namespace, name) of a pending 1-GPU pod without nodeSelector, while every GPU is taken."""
    jobset: tuple[str, str]
    """(namespace, name) of the TPU JobSet whose last slice's leader is pending."""

    def objects(self) -> list[Obj]:
        return [*self.nodes, *self.pods, *self.jobs, *self.jobsets, *self.events]


def generate(
    nodes: int, pods_per_node: int, *, slices: int = 4, hosts_per_slice: int = 64, seed: int = 7
) -> Cluster:
    """A cluster of `nodes` nodes holding about `pods_per_node` pods each (at least the DaemonSet and
    accelerator pods a node runs), with `PENDING_SHARE` more pending, and a JobSet of `slices` ×
    `hosts_per_slice` pods whose TPU nodes (all slices but the last) count among `nodes`."""
    if hosts_per_slice not in TPU_TOPOLOGY:
        raise ValueError(f"hosts_per_slice must be one of {sorted(TPU_TOPOLOGY)}")
    if slices < 2:
        raise ValueError("slices must be at least 2: the last one is the pending one")
    tpu_nodes = (slices - 1) * hosts_per_slice
    if nodes < tpu_nodes + 2 * len(POOLS):
        raise ValueError(f"{nodes} nodes cannot hold {tpu_nodes} TPU nodes and two nodes of every other pool")
    builder = _Builder(random.Random(seed), pods_per_node)
    for pool, size in pool_sizes(nodes - tpu_nodes):
        builder.fill_pool(pool, size)
    jobset = _JobSetBuilder(builder, slices, hosts_per_slice).build()
    pinned, unpinned = builder.pending_pods()
    builder.settle_jobs()
    return Cluster(
        builder.nodes,
        builder.pods,
        builder.jobs,
        [jobset],
        builder.events,
        pinned,
        unpinned,
        (_JobSetBuilder.NAMESPACE, _JobSetBuilder.NAME),
    )


def pool_sizes(total: int) -> list[tuple[Pool, int]]:
    """Sizes of the non-TPU pools by their shares (largest remainder), each at least 2 nodes."""
    spare = total - 2 * len(POOLS)
    exact = [p.share * spare for p in POOLS]
    sizes = [int(x) for x in exact]
    by_remainder = sorted(range(len(POOLS)), key=lambda i: exact[i] - sizes[i], reverse=True)
    for i in by_remainder[: spare - sum(sizes)]:
        sizes[i] += 1
    return [(pool, 2 + size) for pool, size in zip(POOLS, sizes, strict=True)]


# --- quantities and times -------------------------------------------------------------------------


def ts(moment: datetime) -> str:
    """RFC 3339 at second precision, as the API writes metadata timestamps."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_ts(moment: datetime) -> str:
    """RFC 3339 with microseconds, as the API writes `eventTime`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def cpu_quantity(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def memory_quantity(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def reserved_cpu_m(cpus: int) -> int:
    """GKE's kubelet CPU reservation: 6% of the first core, 1% of the second, 0.5% of the next two,
    0.25% of the rest."""
    return 60 + 10 * min(1, cpus - 1) + 5 * min(2, max(cpus - 2, 0)) + (max(cpus - 4, 0) * 25) // 10


def reserved_memory_mib(memory_gib: int) -> int:
    """GKE's kubelet memory reservation plus the 100 MiB eviction threshold."""
    left, reserved = float(memory_gib), 0.0
    for size, rate in ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (10**6, 0.02)):
        part = min(left, size)
        reserved += part * rate
        left -= part
    return int(reserved * 1024) + 100


def capacity_memory_ki(pool: Pool) -> int:
    """What the kernel reports: a little under the machine's nominal memory."""
    return pool.memory_gib * 1024 * 1024 - 2_500_000


def allocatable_memory_mib(pool: Pool) -> int:
    return (capacity_memory_ki(pool) // 1024) - reserved_memory_mib(pool.memory_gib)


def allocatable_cpu_m(pool: Pool) -> int:
    return pool.cpus * 1000 - reserved_cpu_m(pool.cpus)


# --- pods and their controllers -------------------------------------------------------------------


@dataclass
class Workload:
    """A controller (DaemonSet, ReplicaSet, Job) whose pods share one template."""

    namespace: str
    kind: str
    name: str
    uid: str
    labels: dict[str, str]
    spec: Obj
    """The pod spec without `nodeName`."""
    requests: dict[str, int]
    """cpu (millicores), memory (MiB) and extended resources of one pod."""
    created: datetime
    conditions: list[Obj] = field(default_factory=list)
    """Shared by its pods: they were created and started together."""
    job: Obj | None = None
    """The Job object, for `kind == "Job"`."""
    pods: int = 0
    finished: bool = False


def _container(shape: Shape, mount: str) -> Obj:
    requests: Obj = {"cpu": cpu_quantity(shape.cpu_m), "memory": memory_quantity(shape.memory_mib)}
    limits: Obj = {"memory": memory_quantity(shape.memory_mib)}
    for resource, count in shape.extended.items():
        requests[resource] = limits[resource] = str(count)
    container: Obj = {"name": shape.name, "image": shape.image, "imagePullPolicy": "IfNotPresent"}
    if shape.command:
        container["command"] = list(shape.command)
    return container | {
        "resources": {"limits": limits, "requests": requests},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": mount, "readOnly": True}
        ],
    }


def _token_volume(name: str) -> Obj:
    namespace_file = {
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
        "path": "namespace",
    }
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [namespace_file]}},
            ],
        },
    }


def _tolerations(shape: Shape) -> list[Obj]:
    """A pod's persisted tolerations: its own, those GKE's ExtendedResourceToleration admission adds
    for each extended resource it requests, then the DefaultTolerationSeconds ones."""
    injected = [{"effect": "NoSchedule", "key": r, "operator": "Exists"} for r in sorted(shape.extended)]
    return [*shape.tolerations, *injected, *DEFAULT_TOLERATIONS]


def _bound_conditions(created: datetime, phase: str) -> list[Obj]:
    running = phase == "Running"
    ready = "True" if running else "False"
    done: Obj = {} if running else {"reason": "PodCompleted"}

    def cond(type_: str, status: str, delay: int, extra: Obj) -> Obj:
        return {
            "lastProbeTime": None,
            "lastTransitionTime": ts(created + timedelta(seconds=delay)),
            "status": status,
            "type": type_,
        } | extra

    return [
        cond("PodReadyToStartContainers", ready, 6, {}),
        cond("Initialized", "True", 2, done),
        cond("Ready", ready, 11, done),
        cond("ContainersReady", ready, 11, done),
        cond("PodScheduled", "True", 1, {}),
    ]


# --- the scheduler's view, for FailedScheduling messages ------------------------------------------


def _tolerated(taint: Obj, tolerations: list[Obj]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _allocatable(node: Obj, resource: str) -> int:
    """Allocatable in the generator's units: millicores, MiB, or a count."""
    value = node["status"]["allocatable"].get(resource, "0")
    if resource == "cpu":
        return int(value[:-1]) if value.endswith("m") else int(value) * 1000
    if resource == "memory":
        return int(value.removesuffix("Ki")) // 1024
    return int(value)


def filter_reasons(
    spec: Obj, requests: dict[str, int], node: Obj, used: Counter[str]
) -> tuple[list[str], bool]:
    """The reasons kube-scheduler's first failing Filter plugin gives for `node` (default plugin
    order) and whether preemption cannot help there. A node the pod fits gives ([], False)."""
    tolerations = spec.get("tolerations", [])
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    if node["spec"].get("unschedulable") and not _tolerated(cordon, tolerations):
        return ["node(s) were unschedulable"], True
    for taint in node["spec"].get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute") and not _tolerated(taint, tolerations):
            return [f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"], True
    labels = node["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in spec.get("nodeSelector", {}).items()):
        return ["node(s) didn't match Pod's node affinity/selector"], True
    if used["pods"] >= MAX_PODS:
        return ["Too many pods"], False
    short = [f"Insufficient {r}" for r, want in requests.items() if _allocatable(node, r) - used[r] < want]
    return short, False


# --- the builder ----------------------------------------------------------------------------------


class _Builder:
    """Builds nodes and pods in order, keeping each node's requested resources."""

    def __init__(self, rng: random.Random, pods_per_node: int) -> None:
        self.rng = rng
        self.pods_per_node = pods_per_node
        self.names: set[tuple[str, str]] = set()
        self.nodes: list[Obj] = []
        self.pods: list[Obj] = []
        self.jobs: list[Obj] = []
        self.events: list[Obj] = []
        self.used: dict[str, Counter[str]] = {}
        self.host_ip: dict[str, str] = {}
        self.job_workloads: list[Workload] = []
        self.resource_version = 48_000_000
        self.daemonsets = {
            name: self.workload(
                "kube-system",
                "DaemonSet",
                name,
                shape,
                {"k8s-app": name},
                spec_extra={
                    "priorityClassName": "system-node-critical",
                    "priority": 2000001000,
                    "tolerations": [{"operator": "Exists"}],
                },
            )
            for name, shape in SYSTEM_SHAPES.items()
        }
        self.cpu_workloads = [
            self.workload(ns, "ReplicaSet", f"{shape.name}-{self.suffix(10)}", shape)
            for shape in CPU_SHAPES
            for ns in NAMESPACES
            for _ in range(2)
        ]
        embed = Shape("embed-backfill", f"{REGISTRY}/data/embedder:1.12.0", 200, 512)
        self.finished_jobs = [
            self.job("data-pipeline", f"embed-backfill-{self.hex(5)}", embed, finished=True)
            for _ in range(20)
        ]

    # identifiers

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def rv(self) -> str:
        self.resource_version += self.rng.randrange(1, 40)
        return str(self.resource_version)

    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choices(_KUBE_ALPHABET, k=length))

    def hex(self, length: int) -> str:
        return f"{self.rng.getrandbits(4 * length):0{length}x}"

    def unique(self, namespace: str, prefix: str, alphabet: str = _KUBE_ALPHABET, length: int = 5) -> str:
        """`prefix` and a random suffix, a name not yet used in `namespace` (`""`: cluster-scoped)."""
        while (namespace, name := prefix + "".join(self.rng.choices(alphabet, k=length))) in self.names:
            pass
        self.names.add((namespace, name))
        return name

    # nodes

    def node(
        self,
        pool: Pool,
        index: int,
        group: str,
        *,
        pool_name: str | None = None,
        accelerator: Accelerator | None = None,
        extra_labels: dict[str, str] | None = None,
    ) -> Obj:
        """Node `index` of `pool`. The index decides its health: node 1 of every 97 is cordoned, node
        2 of every 199 is NotReady, and on GPU pools node 3 of every 101 has its devices unhealthy
        (capacity kept, allocatable 0)."""
        pool_name = pool_name or pool.name
        accelerator = accelerator or pool.accelerator
        name = self.unique(
            "", f"gke-{CLUSTER}-{pool_name}-{group}-", string.ascii_lowercase + string.digits, 4
        )
        n = len(self.nodes)
        zone = (
            ZONES[zlib.crc32(pool_name.encode()) % len(ZONES)] if accelerator else ZONES[index % len(ZONES)]
        )
        cordoned, not_ready = index % 97 == 1, index % 199 == 2
        unhealthy = accelerator is not None and accelerator.resource == "nvidia.com/gpu" and index % 101 == 3
        created = NOW - timedelta(days=3 + index % 40, minutes=index % 60)
        incident = NOW - timedelta(hours=2, minutes=index % 50)
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
        labels |= extra_labels or {}
        taints: list[Obj] = []
        if accelerator:
            taints.append(accelerator.taint)
        if pool.spot:
            taints.append({"effect": "NoSchedule", "key": "cloud.google.com/gke-spot", "value": "true"})
        cidr = f"10.{64 + n // 256}.{n % 256}.0/24"
        spec: Obj = {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"gce://{PROJECT}/{zone}/{name}"}
        if cordoned:
            spec["unschedulable"] = True
            taints.append(
                {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": ts(incident)}
            )
        if not_ready:
            taints += [
                {"effect": effect, "key": "node.kubernetes.io/unreachable", "timeAdded": ts(incident)}
                for effect in ("NoSchedule", "NoExecute")
            ]
        if taints:
            spec["taints"] = taints
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
        address = f"10.128.{n // 250}.{2 + n % 250}"
        csi_id = f'{{"pd.csi.storage.gke.io":"projects/{PROJECT}/zones/{zone}/instances/{name}"}}'
        gke_labels = ",".join(
            f"{k}={v}" for k, v in sorted(labels.items()) if k.startswith("cloud.google.com/")
        )
        node: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "container.googleapis.com/instance_id": str(self.rng.getrandbits(62)),
                    "csi.volume.kubernetes.io/nodeid": csi_id,
                    "node.alpha.kubernetes.io/ttl": "0",
                    "node.gke.io/last-applied-node-labels": gke_labels,
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": ts(created),
                "labels": labels,
                "name": name,
                "resourceVersion": self.rv(),
                "uid": self.uid(),
            },
            "spec": spec,
            "status": {
                "addresses": [
                    {"address": address, "type": "InternalIP"},
                    {"address": name, "type": "Hostname"},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": self._node_conditions(created, incident if not_ready else None),
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": NODE_IMAGES,
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": self.uid(),
                    "containerRuntimeVersion": "containerd://1.7.24",
                    "kernelVersion": "6.6.56+",
                    "kubeProxyVersion": K8S_VERSION,
                    "kubeletVersion": K8S_VERSION,
                    "machineID": self.hex(32),
                    "operatingSystem": "linux",
                    "osImage": "Container-Optimized OS from Google",
                    "systemUUID": self.uid(),
                },
            },
        }
        self.nodes.append(node)
        self.used[name] = Counter()
        self.host_ip[name] = address
        self.system_pods(node)
        return node

    def _node_conditions(self, created: datetime, lost: datetime | None) -> list[Obj]:
        """node-problem-detector's conditions and the kubelet's; all Unknown since `lost` if set."""
        beat = ts(NOW - timedelta(seconds=self.rng.randrange(5, 40)))
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
                "FrequentKubeletRestart",
                "False",
                "NoFrequentKubeletRestart",
                "kubelet is functioning properly",
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
            gone = ts(lost)
            return problems + [
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
        return [
            *problems,
            cond(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ]

    # workloads and pods

    def workload(
        self,
        namespace: str,
        kind: str,
        name: str,
        shape: Shape,
        extra_labels: dict[str, str] | None = None,
        *,
        spec_extra: Obj | None = None,
        created: datetime | None = None,
        uid: str | None = None,
    ) -> Workload:
        """A controller of `kind` (DaemonSet, ReplicaSet or Job) and its pod template."""
        uid = uid or self.uid()
        created = created or NOW - timedelta(days=1 + self.rng.randrange(20), minutes=self.rng.randrange(60))
        labels = {"app.kubernetes.io/name": shape.name}
        if kind == "ReplicaSet":
            labels["pod-template-hash"] = name.rsplit("-", 1)[-1]
        elif kind == "DaemonSet":
            labels = {"controller-revision-hash": self.suffix(10), "pod-template-generation": "3"}
        elif kind == "Job":
            labels |= {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": uid,
                "job-name": name,
            }
        labels |= extra_labels or {}
        mount = "kube-api-access-" + self.suffix()
        spec: Obj = {
            "containers": [_container(shape, mount)],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Never" if kind == "Job" else "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": _tolerations(shape),
            "volumes": [_token_volume(mount)],
        }
        if shape.node_selector:
            spec["nodeSelector"] = shape.node_selector
        spec |= spec_extra or {}
        requests = {"cpu": shape.cpu_m, "memory": shape.memory_mib, **shape.extended}
        return Workload(namespace, kind, name, uid, labels, spec, requests, created)

    def job(
        self,
        namespace: str,
        name: str,
        shape: Shape,
        *,
        finished: bool = False,
        created: datetime | None = None,
    ) -> Workload:
        """A Job and its pod template; `settle_jobs` fills in its counts once its pods exist."""
        self.names.add((namespace, name))
        wl = self.workload(namespace, "Job", name, shape, created=created)
        wl.finished = finished
        wl.job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "creationTimestamp": ts(wl.created),
                "generation": 1,
                "labels": {k: v for k, v in wl.labels.items() if k != "app.kubernetes.io/name"},
                "name": name,
                "namespace": namespace,
                "resourceVersion": self.rv(),
                "uid": wl.uid,
            },
            "spec": {
                "backoffLimit": 6 if finished else 0,
                "completionMode": "NonIndexed",
                "manualSelector": False,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": wl.uid}},
                "suspend": False,
                "template": {"metadata": {"labels": wl.labels}, "spec": wl.spec},
            },
            "status": {"startTime": ts(wl.created)},
        }
        self.jobs.append(wl.job)
        self.job_workloads.append(wl)
        return wl

    def settle_jobs(self) -> None:
        """Completions, parallelism and status of the plain Jobs, from the pods they got."""
        unused = [wl.job for wl in self.job_workloads if not wl.pods]
        self.jobs[:] = [job for job in self.jobs if all(job is not u for u in unused)]
        for wl in self.job_workloads:
            assert wl.job is not None
            wl.job["spec"] |= {"completions": wl.pods, "parallelism": wl.pods}
            if wl.finished:
                done = ts(wl.created + timedelta(minutes=15))
                wl.job["status"] = {
                    "completionTime": done,
                    "conditions": [
                        {
                            "lastProbeTime": done,
                            "lastTransitionTime": done,
                            "message": "Reached expected number of succeeded pods",
                            "reason": "CompletionsReached",
                            "status": "True",
                            "type": "SuccessCriteriaMet",
                        },
                        {
                            "lastProbeTime": done,
                            "lastTransitionTime": done,
                            "message": "Reached expected number of succeeded pods",
                            "reason": "CompletionsReached",
                            "status": "True",
                            "type": "Complete",
                        },
                    ],
                    "ready": 0,
                    "startTime": ts(wl.created),
                    "succeeded": wl.pods,
                    "terminating": 0,
                    "uncountedTerminatedPods": {},
                }
            else:
                pending = any(c["type"] == "PodScheduled" and c["status"] == "False" for c in wl.conditions)
                wl.job["status"] |= {
                    "active": wl.pods,
                    "ready": 0 if pending else wl.pods,
                    "terminating": 0,
                    "uncountedTerminatedPods": {},
                }

    def pod(
        self,
        wl: Workload,
        node: str | None,
        *,
        name: str | None = None,
        phase: str = "Running",
        terminating: bool = False,
        meta_extra: Obj | None = None,
        spec_extra: Obj | None = None,
    ) -> Obj:
        """A pod of `wl`: bound to `node` (Running, or finished in `phase`) or pending if `node` is None."""
        prefix = wl.name + "-"
        name = name or self.unique(wl.namespace, prefix)
        wl.pods += 1
        metadata: Obj = {
            "creationTimestamp": ts(wl.created),
            "generateName": prefix,
            "labels": wl.labels,
            "name": name,
            "namespace": wl.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1" if wl.kind == "Job" else "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": wl.kind,
                    "name": wl.name,
                    "uid": wl.uid,
                }
            ],
            "resourceVersion": self.rv(),
            "uid": self.uid(),
        }
        if terminating:
            metadata |= {
                "deletionGracePeriodSeconds": 30,
                "deletionTimestamp": ts(NOW - timedelta(seconds=12)),
            }
        metadata |= meta_extra or {}
        spec = wl.spec | (spec_extra or {})
        if node is not None:
            spec["nodeName"] = node
            used = self.used[node]
            used.update(wl.requests)
            used["pods"] += 1
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": spec,
            "status": self._pod_status(wl, node, phase),
        }
        self.pods.append(pod)
        return pod

    def _pod_status(self, wl: Workload, node: str | None, phase: str) -> Obj:
        if node is None:
            return {"conditions": wl.conditions, "phase": "Pending", "qosClass": "Burstable"}
        if not wl.conditions:
            wl.conditions.extend(_bound_conditions(wl.created, phase))
        container = wl.spec["containers"][0]
        container_id = "containerd://" + self.hex(64)
        started = ts(wl.created + timedelta(seconds=9))
        if phase == "Running":
            state: Obj = {"running": {"startedAt": started}}
        else:
            state = {
                "terminated": {
                    "containerID": container_id,
                    "exitCode": 0,
                    "finishedAt": ts(wl.created + timedelta(minutes=14)),
                    "reason": "Completed",
                    "startedAt": started,
                }
            }
        host_ip = self.host_ip[node]
        pod_ip = f"10.{self.rng.randrange(64, 96)}.{self.rng.randrange(256)}.{self.rng.randrange(2, 255)}"
        return {
            "conditions": wl.conditions,
            "containerStatuses": [
                {
                    "containerID": container_id,
                    "image": container["image"],
                    "imageID": container["image"].split(":")[0] + "@sha256:" + self.hex(64),
                    "lastState": {},
                    "name": container["name"],
                    "ready": phase == "Running",
                    "restartCount": 0,
                    "started": phase == "Running",
                    "state": state,
                }
            ],
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "phase": phase,
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "qosClass": "Burstable",
            "startTime": ts(wl.created + timedelta(seconds=4)),
        }

    def system_pods(self, node: Obj) -> None:
        """The DaemonSet pods every GKE node runs, and the device plugin of its accelerator."""
        name = node["metadata"]["name"]
        labels = node["metadata"]["labels"]
        wanted = ["fluentbit-gke", "gke-metadata-server", "pdcsi-node"]
        if "cloud.google.com/gke-accelerator" in labels:
            wanted.append("nvidia-gpu-device-plugin-small-cos")
        if "cloud.google.com/gke-tpu-accelerator" in labels:
            wanted.append("tpu-device-plugin")
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
        affinity = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
        for ds in wanted:
            self.pod(self.daemonsets[ds], name, spec_extra={"affinity": affinity})

    def fill_pool(self, pool: Pool, size: int) -> None:
        group = self.hex(8)
        accelerator_pods = self._accelerator_pods(pool)
        for index in range(size):
            node = self.node(pool, index, group)
            name = node["metadata"]["name"]
            if pool.accelerator and node["status"]["allocatable"][pool.accelerator.resource] != "0":
                for wl in accelerator_pods(index):
                    self.pod(wl, name)
            self._fill_cpu(name, pool)

    def _accelerator_pods(self, pool: Pool) -> Callable[[int], list[Workload]]:
        """From a node's index in the pool, the workloads whose pods take all its GPUs: inference
        replicas on the Spot pool and every other A100 node, 8-node training Jobs elsewhere."""
        if pool.accelerator is None:
            return lambda index: []
        gpus = pool.accelerator.count
        product = pool.accelerator.labels["cloud.google.com/gke-accelerator"]
        selector = {"cloud.google.com/gke-accelerator": product}
        if pool.spot:
            asr = Shape(
                "whisper-asr",
                f"{REGISTRY}/speech/whisper-asr:3.1.0",
                6000,
                24576,
                GPU1,
                selector | {"cloud.google.com/gke-spot": "true"},
                (SPOT_TOLERATION,),
            )
            asr_rs = self.workload("ml-serving", "ReplicaSet", f"whisper-asr-{self.suffix(10)}", asr)
            return lambda index: [asr_rs] * gpus
        half = Shape(
            "vllm-llama-70b",
            f"{REGISTRY}/serving/vllm:0.9.2",
            20000,
            163840,
            {"nvidia.com/gpu": gpus // 2},
            selector,
        )
        half_rs = self.workload("ml-serving", "ReplicaSet", f"vllm-llama-70b-{self.suffix(10)}", half)
        train = Shape(
            "train",
            f"{REGISTRY}/training/megatron:24.09",
            (pool.cpus - 8) * 1000,
            pool.memory_gib * 1024 * 3 // 4,
            {"nvidia.com/gpu": gpus},
            selector,
            command=TRAIN_COMMAND,
        )
        model = product.split("-")[-1] if product.endswith("a100") else product.split("-")[1]
        jobs: dict[int, Workload] = {}

        def workloads(index: int) -> list[Workload]:
            if product.endswith("a100") and index % 2:
                return [half_rs, half_rs]
            if index // 8 not in jobs:
                jobs[index // 8] = self.job("ml-training", f"pretrain-{model}-{index // 8:03d}", train)
            return [jobs[index // 8]]

        return workloads

    def _fill_cpu(self, node: str, pool: Pool) -> None:
        """Fill the node up to `pods_per_node` with CPU pods whose requests fit what is left;
        2% are finished batch pods (phase Succeeded), 0.5% are terminating."""
        used = self.used[node]
        slots = min(self.pods_per_node, MAX_PODS) - used["pods"]
        if slots <= 0:
            return
        cpu_left = (allocatable_cpu_m(pool) - used["cpu"]) * 9 // 10
        mem_left = (allocatable_memory_mib(pool) - used["memory"]) * 9 // 10
        fitting = [
            wl
            for wl in self.cpu_workloads
            if wl.requests["cpu"] * slots <= cpu_left and wl.requests["memory"] * slots <= mem_left
        ]
        largest = (
            [wl for wl in fitting if wl.requests == fitting[0].requests]
            if fitting
            else self.cpu_workloads[-10:]
        )
        choices = fitting or largest
        for _ in range(slots):
            roll = self.rng.random()
            if roll < 0.02:
                self.pod(self.rng.choice(self.finished_jobs), node, phase="Succeeded")
            else:
                self.pod(self.rng.choice(choices), node, terminating=roll > 0.995)

    # pending pods

    def pending_pods(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """`PENDING_SHARE` of all pods, pending for five reasons; returns the pinned and unpinned targets."""
        total = max(len(PENDING_SHAPES), round(len(self.pods) * PENDING_SHARE))
        firsts: list[tuple[str, str]] = []
        for share, namespace, kind, shape in PENDING_SHAPES:
            created = NOW - timedelta(minutes=20 + self.rng.randrange(30))
            if kind == "Job":
                wl = self.job(namespace, f"{shape.name}-{self.hex(4)}", shape, created=created)
            else:
                wl = self.workload(namespace, kind, f"{shape.name}-{self.suffix(10)}", shape, created=created)
            message = self.scheduler_message(wl)
            wl.conditions.append(
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": ts(created),
                    "message": message,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            )
            for i in range(max(1, round(share * total))):
                pod = self.pod(wl, None)
                self.events.append(self.failed_scheduling(pod, message, created))
                if i == 0:
                    firsts.append((namespace, pod["metadata"]["name"]))
        return firsts[0], firsts[1]

    def scheduler_message(self, wl: Workload) -> str:
        """What kube-scheduler v1.33 writes for a pod of `wl` against the nodes as they are: each node
        counted under the first filter that rejects it, then the preemption summary (all pods here run
        at priority 0, so no node has victims)."""
        reasons: Counter[str] = Counter()
        unresolvable = 0
        for node in self.nodes:
            failed, final = filter_reasons(wl.spec, wl.requests, node, self.used[node["metadata"]["name"]])
            reasons.update(failed)
            unresolvable += final
        n = len(self.nodes)
        histogram = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
        preemption = [
            f"{count} {text}"
            for count, text in (
                (n - unresolvable, "No preemption victims found for incoming pod"),
                (unresolvable, "Preemption is not helpful for scheduling"),
            )
            if count
        ]
        return (
            f"0/{n} nodes are available: {histogram}. "
            f"preemption: 0/{n} nodes are available: {', '.join(sorted(preemption))}."
        )

    def failed_scheduling(self, pod: Obj, message: str, since: datetime) -> Obj:
        """The scheduler's Warning event (events.k8s.io recorder, as the core v1 API shows it)."""
        meta = pod["metadata"]
        last = NOW - timedelta(seconds=self.rng.randrange(5, 300))
        return {
            "action": "Scheduling",
            "apiVersion": "v1",
            "eventTime": micro_ts(since + timedelta(microseconds=self.rng.randrange(10**6))),
            "firstTimestamp": None,
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": meta["name"],
                "namespace": meta["namespace"],
                "resourceVersion": meta["resourceVersion"],
                "uid": meta["uid"],
            },
            "kind": "Event",
            "lastTimestamp": None,
            "message": message,
            "metadata": {
                "creationTimestamp": ts(since),
                "name": f"{meta['name']}.{self.hex(16)}",
                "namespace": meta["namespace"],
                "resourceVersion": self.rv(),
                "uid": self.uid(),
            },
            "reason": "FailedScheduling",
            "reportingComponent": "default-scheduler",
            "reportingInstance": f"default-scheduler-gke-{CLUSTER}-control-plane",
            "series": {
                "count": 1 + int((NOW - since).total_seconds()) // 60,
                "lastObservedTime": micro_ts(last),
            },
            "source": {},
            "type": "Warning",
        }


NODE_IMAGES = [
    {"names": [f"gke.gcr.io/{image}"], "sizeBytes": size}
    for image, size in (
        ("fluent-bit:v1.8.12-gke.36", 91_503_482),
        ("gke-metadata-server:20251021", 78_339_245),
        ("gcp-compute-persistent-disk-csi-driver:v1.17.3-gke.0", 67_911_902),
        ("kube-proxy-amd64:" + K8S_VERSION, 43_265_123),
        ("nvidia-gpu-device-plugin:v1.0.30-gke.2", 41_012_333),
        ("pause:3.10", 320_368),
    )
]
"""The images a node reports (shared: the same on every node)."""


class _JobSetBuilder:
    """An exclusive-topology TPU JobSet: one child Job per slice, one pod per TPU host. Every slice but
    the last has its own node pool and runs; the last finds no free pool, so its leader is pending
    and the JobSet pod webhook rejects its followers (they never get the topology nodeSelector)."""

    NAME = "pretrain-v5p"
    NAMESPACE = "llm"
    REPLICATED_JOB = "slice"

    def __init__(self, b: _Builder, slices: int, hosts: int) -> None:
        self.b = b
        self.slices = slices
        self.hosts = hosts
        self.uid = b.uid()
        self.created = NOW - timedelta(hours=3)
        self.selector = {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
            "cloud.google.com/gke-tpu-topology": TPU_TOPOLOGY[hosts],
        }
        self.shape = Shape(
            "jax-trainer",
            f"{REGISTRY}/training/maxtext:2026.11.0",
            200000,
            400 * 1024,
            {"google.com/tpu": TPU_CHIPS_PER_HOST},
            self.selector,
            command=("python3", "-m", "MaxText.train", "MaxText/configs/base.yml"),
        )

    def build(self) -> Obj:
        accelerator = Accelerator(
            "google.com/tpu",
            TPU_CHIPS_PER_HOST,
            self.selector,
            {"effect": "NoSchedule", "key": "google.com/tpu", "value": "present"},
        )
        for s in range(self.slices - 1):
            group, pool = self.b.hex(8), f"tpu-v5p-slice-{s}"
            placement = {"cloud.google.com/gke-placement-group": f"{pool}-placement"}
            nodes = [
                self.b.node(
                    TPU_HOST, h, group, pool_name=pool, accelerator=accelerator, extra_labels=placement
                )
                for h in range(self.hosts)
            ]
            self.child(s, [n["metadata"]["name"] for n in nodes], pool)
        self.child(self.slices - 1, [], None)
        return self.jobset()

    def labels(self, index: int) -> dict[str, str]:
        job = f"{self.NAME}-{self.REPLICATED_JOB}-{index}"
        key = uuid.uuid5(uuid.NAMESPACE_DNS, f"{self.NAMESPACE}/{job}").hex + self.b.hex(8)
        return {
            "jobset.sigs.k8s.io/global-replicas": str(self.slices),
            "jobset.sigs.k8s.io/group-name": "default",
            "jobset.sigs.k8s.io/group-replicas": str(self.slices),
            "jobset.sigs.k8s.io/job-global-index": str(index),
            "jobset.sigs.k8s.io/job-group-index": str(index),
            "jobset.sigs.k8s.io/job-index": str(index),
            "jobset.sigs.k8s.io/job-key": key,
            "jobset.sigs.k8s.io/jobset-name": self.NAME,
            "jobset.sigs.k8s.io/jobset-uid": self.uid,
            "jobset.sigs.k8s.io/replicatedjob-name": self.REPLICATED_JOB,
            "jobset.sigs.k8s.io/replicatedjob-replicas": str(self.slices),
            "jobset.sigs.k8s.io/restart-attempt": "0",
        }

    def child(self, index: int, nodes: list[str], pool: str | None) -> None:
        """Child Job `index` with a pod on each of `nodes` (followers pinned to `pool` by the webhook),
        or, with no nodes, only its pending leader and the webhook's rejections of its followers."""
        b = self.b
        name = f"{self.NAME}-{self.REPLICATED_JOB}-{index}"
        labels = self.labels(index)
        annotations = labels | {"alpha.jobset.sigs.k8s.io/exclusive-topology": TOPOLOGY_KEY}
        b.names.add((self.NAMESPACE, name))
        wl = b.workload(
            self.NAMESPACE,
            "Job",
            name,
            self.shape,
            labels,
            created=self.created + timedelta(seconds=3),
            spec_extra={"restartPolicy": "OnFailure", "subdomain": self.NAME},
        )
        del wl.labels["app.kubernetes.io/name"]
        key = labels["jobset.sigs.k8s.io/job-key"]
        same_job = {
            "matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [key]}]
        }
        other_jobs = {
            "matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [key]},
                {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
            ]
        }
        leader_affinity = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": same_job, "topologyKey": TOPOLOGY_KEY}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": other_jobs, "namespaceSelector": {}, "topologyKey": TOPOLOGY_KEY}
                ]
            },
        }
        if not nodes:
            wl.conditions.append(
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": ts(wl.created),
                    "message": b.scheduler_message(wl),
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            )
        pods = []
        for p in range(max(len(nodes), 1)):
            index_label = {"batch.kubernetes.io/job-completion-index": str(p)}
            meta = {
                "annotations": annotations | index_label,
                "labels": wl.labels | index_label | {"jobset.sigs.k8s.io/priority": "0"},
                "generateName": f"{name}-{p}-",
            }
            spec: Obj = {"hostname": f"{name}-{p}"}
            if p == 0:
                spec["affinity"] = leader_affinity
            else:
                spec["nodeSelector"] = self.selector | {TOPOLOGY_KEY: str(pool)}
            pod = b.pod(
                wl,
                nodes[p] if nodes else None,
                name=b.unique(self.NAMESPACE, f"{name}-{p}-"),
                meta_extra=meta,
                spec_extra=spec,
            )
            pods.append(pod["metadata"]["name"])
            if not nodes:
                b.events.append(b.failed_scheduling(pod, wl.conditions[-1]["message"], wl.created))
        job: Obj = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "annotations": annotations | {"batch.kubernetes.io/job-tracking": ""},
                "creationTimestamp": ts(wl.created),
                "generation": 1,
                "labels": labels,
                "name": name,
                "namespace": self.NAMESPACE,
                "ownerReferences": [
                    {
                        "apiVersion": "jobset.x-k8s.io/v1alpha2",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "JobSet",
                        "name": self.NAME,
                        "uid": self.uid,
                    }
                ],
                "resourceVersion": b.rv(),
                "uid": wl.uid,
            },
            "spec": {
                "backoffLimit": 0,
                "completionMode": "Indexed",
                "completions": self.hosts,
                "manualSelector": False,
                "parallelism": self.hosts,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": wl.uid}},
                "suspend": False,
                "template": {"metadata": {"annotations": annotations, "labels": wl.labels}, "spec": wl.spec},
            },
            "status": {
                "active": len(pods),
                "ready": len(nodes),
                "startTime": ts(wl.created),
                "terminating": 0,
                "uncountedTerminatedPods": {},
            },
        }
        b.jobs.append(job)
        ref = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "namespace": self.NAMESPACE,
            "resourceVersion": job["metadata"]["resourceVersion"],
            "uid": wl.uid,
        }
        for pod_name in pods[:3]:
            b.events.append(self.job_event(ref, "Normal", "SuccessfulCreate", f"Created pod: {pod_name}", 1))
        if not nodes:
            rejection = (
                'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node '
                f"selector for topology domain not found. missing selector: {TOPOLOGY_KEY}"
            )
            b.events.append(self.job_event(ref, "Warning", "FailedCreate", rejection, 17))

    def job_event(self, job: Obj, type_: str, reason: str, message: str, count: int) -> Obj:
        """A job-controller event (core v1 recorder: first and last timestamps, a count)."""
        first = self.created + timedelta(seconds=4)
        last = NOW - timedelta(minutes=1) if count > 1 else first
        return {
            "apiVersion": "v1",
            "count": count,
            "eventTime": None,
            "firstTimestamp": ts(first),
            "involvedObject": job,
            "kind": "Event",
            "lastTimestamp": ts(last),
            "message": message,
            "metadata": {
                "creationTimestamp": ts(first),
                "name": f"{job['name']}.{self.b.hex(16)}",
                "namespace": self.NAMESPACE,
                "resourceVersion": self.b.rv(),
                "uid": self.b.uid(),
            },
            "reason": reason,
            "reportingComponent": "job-controller",
            "reportingInstance": "",
            "source": {"component": "job-controller"},
            "type": type_,
        }

    def jobset(self) -> Obj:
        container = {
            k: v
            for k, v in _container(self.shape, "").items()
            if k in ("name", "image", "command", "resources")
        }
        annotation = {"alpha.jobset.sigs.k8s.io/exclusive-topology": TOPOLOGY_KEY}
        pod_template = {
            "spec": {
                "containers": [container],
                "nodeSelector": self.selector,
                "restartPolicy": "OnFailure",
                "subdomain": self.NAME,
            }
        }
        return {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {
                "annotations": annotation,
                "creationTimestamp": ts(self.created),
                "generation": 1,
                "labels": {"app.kubernetes.io/part-of": "llm-pretraining"},
                "name": self.NAME,
                "namespace": self.NAMESPACE,
                "resourceVersion": self.b.rv(),
                "uid": self.uid,
            },
            "spec": {
                "failurePolicy": {"maxRestarts": 3, "restartStrategy": "Recreate"},
                "network": {
                    "enableDNSHostnames": True,
                    "publishNotReadyAddresses": True,
                    "subdomain": self.NAME,
                },
                "replicatedJobs": [
                    {
                        "groupName": "default",
                        "name": self.REPLICATED_JOB,
                        "replicas": self.slices,
                        "template": {
                            "metadata": {"annotations": annotation},
                            "spec": {
                                "backoffLimit": 0,
                                "completionMode": "Indexed",
                                "completions": self.hosts,
                                "parallelism": self.hosts,
                                "template": pod_template,
                            },
                        },
                    }
                ],
                "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
                "successPolicy": {"operator": "All"},
                "suspend": False,
            },
            "status": {
                "replicatedJobsStatus": [
                    {
                        "active": self.slices,
                        "failed": 0,
                        "name": self.REPLICATED_JOB,
                        "ready": self.slices - 1,
                        "succeeded": 0,
                        "suspended": 0,
                    }
                ],
                "restarts": 0,
                "restartsCountTowardsMax": 0,
            },
        }
