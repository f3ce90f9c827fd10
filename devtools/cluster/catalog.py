"""What a generated cluster is made of: its name and place, its node pools, and the workloads that run
on it or wait for it. Plain data; the builders in this package turn it into objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]
"""An object, or a part of one, as `kubectl get -o json` prints it."""

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
ACCELERATOR_POOL_NODES = 1000
"""The most nodes of one GPU node pool (`pools.pool_sizes` splits a larger one)."""
PENDING_SHARE = 0.005
"""Pending pods, as a share of all pods."""

KUBE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet of the random suffixes Kubernetes puts in generated names."""


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
