# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""`leader-pending` JobSets colliding under exclusive placement: a JobSet's leaders kept out of every
domain by their own anti-affinity. Written last: `index.yaml` lists them after the other families."""

from __future__ import annotations

from devtools.jobset_corpus.jobs import RJ, TPU_IMAGE, jobset, jobset_status, rj_status
from devtools.jobset_corpus.nodes import a3, pool, tpu_v5e
from devtools.jobset_corpus.scenario import (
    NODEPOOL,
    TPU_SELECTOR,
    TPU_TOLERATION,
    Scenarios,
    full_job,
    gpu_rj,
    refused_followers,
)
from devtools.jobset_corpus.world import Obj, World

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


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
    refused_followers(js, rj, 19.9, message, attempts=8, refusals=12)


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
