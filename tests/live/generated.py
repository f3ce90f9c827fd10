"""A GKE cluster of any size, grown from the realistic objects of `data/gpu-cluster.json`: A100 nodes
full of GPU pods, CPU nodes full of services, and two pending pods that ask for GPUs — one pinned to
a node by hostname, one that may go to any GPU node. Each node and pod is a copy of a real-shaped
template with its own name, uid and labels.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

TEMPLATES = Path(__file__).with_name("data") / "gpu-cluster.json"
NAMESPACE = "ml-train"
PINNED = "llama-ft-pinned"
UNPINNED = "notebook-anywhere"


@dataclass(frozen=True)
class Generated:
    objects: list[Obj]
    gpu_nodes: tuple[str, ...]
    pinned_node: str


def _templates() -> dict[str, Obj]:
    items = json.loads(TEMPLATES.read_text())["items"]
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in items}


def _copy(template: Obj, name: str, seed: str) -> Obj:
    obj = copy.deepcopy(template)
    meta = obj["metadata"]
    meta["name"] = name
    meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{seed}/{name}"))
    meta.pop("generateName", None)
    if "kubernetes.io/hostname" in meta.get("labels", {}):
        meta["labels"]["kubernetes.io/hostname"] = name
    return obj


def cluster(nodes: int, pods_per_node: int, gpu_share: float = 0.25) -> Generated:
    """`nodes` nodes, a `gpu_share` of them A100 nodes whose two GPUs are both taken; every node
    holds `pods_per_node` bound pods."""
    t = _templates()
    gpu_node = t["Node/gke-ml-prod-a100-pool-3f9c2a1b-7xkq"]
    cpu_node = t["Node/gke-ml-prod-cpu-pool-5b7e1c44-h8vn"]
    gpu_pod = t["Pod/vllm-llama3-8b-7d9f8b6c5-k2xjp"]
    cpu_pod = t["Pod/router-6b8f9c7d4d-2lmwz"]
    gpus = max(1, int(nodes * gpu_share))
    objects: list[Obj] = []
    gpu_names = []
    for i in range(nodes):
        is_gpu = i < gpus
        node_name = f"gke-ml-prod-{'a100-pool-3f9c2a1b' if is_gpu else 'cpu-pool-5b7e1c44'}-{i:05d}"
        objects.append(_copy(gpu_node if is_gpu else cpu_node, node_name, "node"))
        if is_gpu:
            gpu_names.append(node_name)
        for j in range(pods_per_node):
            template = gpu_pod if is_gpu and j < 2 else cpu_pod
            pod = _copy(template, f"{template['metadata']['name'][:-6]}-{i:05d}{j:02d}", "pod")
            pod["spec"]["nodeName"] = node_name
            objects.append(pod)
    pinned = _copy(t["Pod/llama-ft-0-x7k2p"], PINNED, "pending")
    pinned["spec"]["nodeSelector"] = {"kubernetes.io/hostname": gpu_names[0]}
    unpinned = _copy(t["Pod/notebook-carol"], UNPINNED, "pending")
    objects += [pinned, unpinned]
    return Generated(objects, tuple(gpu_names), gpu_names[0])
