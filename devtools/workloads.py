"""Realistic objects for the sentinel's tests and demo: a GPU node of a test pool, a Deployment's pod
asking for GPUs on that pool (pending, or placed), shaped as the API serves them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

POOL = "kubewhy.test/pool"
NODE = "gpu-a100-0"


def _now() -> str:
    return f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}"


def gpu_node(name: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, POOL: "sentinel", "nvidia.com/gpu.product": "A100"},
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "96", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
            "allocatable": {"cpu": "94", "memory": "980Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T00:00:00Z"}],
        },
    }


def gpu_pod(namespace: str, deployment: str, index: int, gpus: int = 1, node: str = "") -> dict[str, Any]:
    """A pod of a Deployment's ReplicaSet asking for GPUs on the test pool, as the API serves it."""
    created = _now()
    template_hash = "7d9f8c6b5"
    replica_set = f"{deployment}-{template_hash}"
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{replica_set}-{index:05d}",
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "labels": {"app": deployment, "pod-template-hash": template_hash},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": replica_set,
                    "uid": f"uid-{replica_set}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "creationTimestamp": created,
        },
        "spec": {
            "nodeSelector": {POOL: "sentinel"},
            "schedulerName": "default-scheduler",
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                    "resources": {
                        "limits": {"nvidia.com/gpu": str(gpus)},
                        "requests": {"nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"] = {"phase": "Running", "qosClass": "BestEffort", "startTime": created}
    else:
        pod["status"]["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
                "lastTransitionTime": created,
            }
        ]
    return pod


def placed(pod: dict[str, Any], node: str = NODE) -> dict[str, Any]:
    return pod | {
        "spec": pod["spec"] | {"nodeName": node},
        "status": {"phase": "Running", "qosClass": "BestEffort", "startTime": _now()},
    }
