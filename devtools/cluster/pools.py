"""Node pools, full the way a busy cluster is: every GPU taken by inference replicas or training Jobs,
then CPU pods up to the pods a node holds, within its allocatable CPU and memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from devtools.cluster.catalog import (
    ACCELERATOR_POOL_NODES,
    GPU1,
    MAX_PODS,
    POOLS,
    REGISTRY,
    SPOT_TOLERATION,
    TRAIN_COMMAND,
    Pool,
    Shape,
)
from devtools.cluster.nodes import add_node
from devtools.cluster.pods import add_pod
from devtools.cluster.units import allocatable_cpu_m, allocatable_memory_mib
from devtools.cluster.workloads import job, workload
from devtools.cluster.world import Workload, World


def pool_sizes(total: int) -> list[tuple[Pool, int]]:
    """Sizes of the non-TPU pools by their shares (largest remainder), each at least 2 nodes; an
    accelerator pool past `ACCELERATOR_POOL_NODES` is split into pools of that many nodes at most
    (`h100-pool`, `h100-pool-2`, …), as a large AI cluster runs many accelerator pools beside a few
    large CPU ones."""
    spare = total - 2 * len(POOLS)
    exact = [p.share * spare for p in POOLS]
    sizes = [int(x) for x in exact]
    by_remainder = sorted(range(len(POOLS)), key=lambda i: exact[i] - sizes[i], reverse=True)
    for i in by_remainder[: spare - sum(sizes)]:
        sizes[i] += 1
    return [part for pool, size in zip(POOLS, sizes, strict=True) for part in _split(pool, 2 + size)]


def _split(pool: Pool, size: int) -> list[tuple[Pool, int]]:
    """`size` nodes of `pool` as one pool, or, for an accelerator pool, as even parts of at most
    `ACCELERATOR_POOL_NODES`."""
    if pool.accelerator is None or size <= ACCELERATOR_POOL_NODES:
        return [(pool, size)]
    parts = -(-size // ACCELERATOR_POOL_NODES)
    names = [pool.name, *(f"{pool.name}-{k}" for k in range(2, parts + 1))]
    return [(replace(pool, name=n), size // parts + (k < size % parts)) for k, n in enumerate(names)]


def fill_pool(world: World, pool: Pool, size: int, pods_per_node: int) -> None:
    """`size` nodes of `pool`, each with its accelerator pods (if its devices are healthy), then CPU
    pods up to `pods_per_node`."""
    group = world.hex(8)
    accelerator_pods = _accelerator_pods(world, pool)
    for index in range(size):
        node = add_node(world, pool, index, group)
        name = node["metadata"]["name"]
        if pool.accelerator and node["status"]["allocatable"][pool.accelerator.resource] != "0":
            for wl in accelerator_pods(index):
                add_pod(world, wl, name)
        _fill_cpu(world, name, pool, pods_per_node)


def _accelerator_pods(world: World, pool: Pool) -> Callable[[int], list[Workload]]:
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
        asr_rs = workload(world, "ml-serving", "ReplicaSet", f"whisper-asr-{world.suffix(10)}", asr)
        return lambda index: [asr_rs] * gpus
    half = Shape(
        "vllm-llama-70b",
        f"{REGISTRY}/serving/vllm:0.9.2",
        20000,
        163840,
        {"nvidia.com/gpu": gpus // 2},
        selector,
    )
    half_rs = workload(world, "ml-serving", "ReplicaSet", f"vllm-llama-70b-{world.suffix(10)}", half)
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
            jobs[index // 8] = job(world, "ml-training", f"pretrain-{model}-{index // 8:03d}", train)
        return [jobs[index // 8]]

    return workloads


def _fill_cpu(world: World, node: str, pool: Pool, pods_per_node: int) -> None:
    """Fill the node up to `pods_per_node` with CPU pods whose requests fit what is left;
    2% are finished batch pods (phase Succeeded), 0.5% are terminating."""
    used = world.used[node]
    slots = min(pods_per_node, MAX_PODS) - used["pods"]
    if slots <= 0:
        return
    cpu_left = (allocatable_cpu_m(pool) - used["cpu"]) * 9 // 10
    mem_left = (allocatable_memory_mib(pool) - used["memory"]) * 9 // 10
    fitting = [
        wl
        for wl in world.cpu_workloads
        if wl.requests["cpu"] * slots <= cpu_left and wl.requests["memory"] * slots <= mem_left
    ]
    choices = fitting or world.cpu_workloads[-10:]  # none fits: the smallest shape's ReplicaSets
    for _ in range(slots):
        roll = world.rng.random()
        if roll < 0.02:
            add_pod(world, world.rng.choice(world.finished_jobs), node, phase="Succeeded")
        else:
            add_pod(world, world.rng.choice(choices), node, terminating=roll > 0.995)
