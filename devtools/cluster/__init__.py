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

The builders, in the order `generate` calls them (each adds to the `World`, drawing from one seeded
random source, so the same arguments give the same cluster):

- `catalog`: what the cluster is made of (pools, workload shapes); `units`: quantities and times;
- `workloads`: DaemonSets, ReplicaSets and Jobs with their pod templates;
- `pools`: the node pools, each node (`nodes`) filled with pods (`pods`);
- `jobset`: the TPU JobSet, its slices' node pools, child Jobs and pods;
- `scheduler`: the pending pods and what kube-scheduler says about them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from devtools.cluster import jobset
from devtools.cluster.catalog import MAX_PODS, NOW, POOLS, TOPOLOGY_KEY, TPU_TOPOLOGY, Obj
from devtools.cluster.pools import fill_pool, pool_sizes
from devtools.cluster.scheduler import add_pending_pods, allocatable
from devtools.cluster.workloads import add_standing_workloads, settle_jobs
from devtools.cluster.world import World

__all__ = ["MAX_PODS", "NOW", "TOPOLOGY_KEY", "Cluster", "Obj", "allocatable", "generate"]


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
    nodes: int,
    pods_per_node: int,
    *,
    slices: int = 4,
    hosts_per_slice: int = 64,
    pending: int | None = None,
    seed: int = 7,
) -> Cluster:
    """A cluster of `nodes` nodes holding about `pods_per_node` pods each (at least the DaemonSet and
    accelerator pods a node runs), with `pending` more pending (None: `PENDING_SHARE` of them), and a
    JobSet of `slices` × `hosts_per_slice` pods whose TPU nodes (all slices but the last) count among
    `nodes`."""
    if hosts_per_slice not in TPU_TOPOLOGY:
        raise ValueError(f"hosts_per_slice must be one of {sorted(TPU_TOPOLOGY)}")
    if slices < 2:
        raise ValueError("slices must be at least 2: the last one is the pending one")
    tpu_nodes = (slices - 1) * hosts_per_slice
    if nodes < tpu_nodes + 2 * len(POOLS):
        raise ValueError(f"{nodes} nodes cannot hold {tpu_nodes} TPU nodes and two nodes of every other pool")
    world = World(random.Random(seed))
    add_standing_workloads(world)
    for pool, size in pool_sizes(nodes - tpu_nodes):
        fill_pool(world, pool, size, pods_per_node)
    the_jobset = jobset.add_jobset(world, slices, hosts_per_slice)
    pinned, unpinned = add_pending_pods(world, pending)
    settle_jobs(world)
    return Cluster(
        world.nodes,
        world.pods,
        world.jobs,
        [the_jobset],
        world.events,
        pinned,
        unpinned,
        (jobset.NAMESPACE, jobset.NAME),
    )
