"""A generated cluster (`devtools.cluster.generate`) with its autoscaler speaking, for the benchmarks:
cluster-autoscaler's status ConfigMap (YAML, ≥ 1.30) listing every node pool as a node group (its
MIG URL; the H100 pool growing by one node, the other GPU pools at their max size), and the events
a pending pod gets from it:

- the pinned pod (8 GPUs on the H100 pool): `TriggeredScaleUp` to the H100 pool 3 min ago;
- the unpinned pod (1 GPU anywhere): `NotTriggerScaleUp`, the GPU pools at their max size;
- on the status ConfigMap, a `ScaleUpFailed` of another pool (the L4 Spot pool's stockout), which a
  question about the pinned pod reads and leaves aside.

The builders and message formats are the corpus's (`devtools.autoscaling_corpus`).
"""

from __future__ import annotations

from collections import Counter

from devtools.autoscaling_corpus import MIG, Group, ca_event, status_configmap, yaml_status
from devtools.cluster import Cluster, Obj

POOL = "cloud.google.com/gke-nodepool"
ACCELERATOR = "cloud.google.com/gke-accelerator"
SPOT_POOL = "l4-spot-pool"


def with_autoscaler(cluster: Cluster) -> list[Obj]:
    """The objects that make cluster-autoscaler speak about the cluster's pending pods."""
    sizes = Counter(n["metadata"]["labels"][POOL] for n in cluster.nodes)
    h100 = next(
        n["metadata"]["labels"][POOL]
        for n in cluster.nodes
        if n["metadata"]["labels"].get(ACCELERATOR) == "nvidia-h100-80gb"
    )
    gpu_pools = {
        n["metadata"]["labels"][POOL] for n in cluster.nodes if ACCELERATOR in n["metadata"]["labels"]
    }
    groups = [_group(pool, size, h100, gpu_pools) for pool, size in sorted(sizes.items())]
    status = status_configmap(yaml_status(groups, 0.1), 0.1)
    pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in cluster.pods}
    pinned, unpinned = pods[cluster.pinned], pods[cluster.unpinned]
    size = sizes[h100]
    triggered = f"pod triggered scale-up: [{{{MIG.format(pool=h100)} {size}->{size + 1} (max: {size + 2})}}]"
    refused = (
        f"pod didn't trigger scale-up: {len(gpu_pools)} max node group size reached,"
        f" {len(sizes) - len(gpu_pools)} Insufficient nvidia.com/gpu"
    )
    stockout = (
        f"Failed adding 1 nodes to group {MIG.format(pool=SPOT_POOL)} due to"
        " OutOfResource.RESOURCE_POOL_EXHAUSTED; source errors: Instance creation failed: The zone"
        " 'projects/ml-prod/zones/us-central1-a' does not have enough resources available to fulfill"
        " the request."
    )
    return [
        status,
        ca_event(pinned, "TriggeredScaleUp", triggered, 3),
        ca_event(unpinned, "NotTriggerScaleUp", refused, 1, count=4),
        ca_event(status, "ScaleUpFailed", stockout, 0.5, "Warning"),
    ]


def _group(pool: str, size: int, h100: str, gpu_pools: set[str]) -> Group:
    if pool == h100:
        return Group(MIG.format(pool=pool), size, size + 1, 0, size + 2, "InProgress", since_minutes=3)
    return Group(MIG.format(pool=pool), size, size, 0, size if pool in gpu_pools else size + 2)
