# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""The LeaderWorkerSet corpus: one scenario per snapshot, in the order of `index.yaml`, each the stuck
state of a report in kubernetes-sigs/lws (issue numbers in the docstrings) or a healthy baseline."""

from __future__ import annotations

from collections.abc import Callable

from devtools.jobset_corpus.nodes import a3, aks_node, cpu_node, pool, tpu_v5e
from devtools.jobset_corpus.scenario import Build, Scenarios
from devtools.jobset_corpus.world import Obj, World, jcond, ts
from devtools.lws_corpus.objects import (
    JAX_IMAGE,
    RUNNING,
    Lws,
    State,
    available,
    group,
    lws_event,
    lws_object,
    lws_pod,
    volcano_podgroup,
)

SCENARIOS = Scenarios()
CLUSTER = "inference-prod"
NODEPOOL = "cloud.google.com/gke-nodepool"
GPUS = {"nvidia.com/gpu": "8"}
INSUFFICIENT = "0/{n} nodes are available: {n} Insufficient nvidia.com/gpu. preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."


def scenario(seed: str, verdict: str, path: str = "", **more: str) -> Callable[[Build], Build]:
    """Registers a scenario written to `tests/corpus/lws/<seed>.json`, or to `path`."""
    return SCENARIOS.scenario(seed, verdict, path=path or f"tests/corpus/lws/{seed}.json", **more)


def serving(
    w: World,
    name: str,
    replicas: int,
    size: int,
    *,
    topology: str = "",
    startup: str = "LeaderCreated",
    restart: str = "RecreateGroupOnPodRestart",
    readiness: bool = False,
) -> Lws:
    """A vLLM LeaderWorkerSet in namespace `serving`, each pod on a whole 8-GPU node."""
    return Lws(
        w,
        "serving",
        name,
        replicas,
        size,
        dict(GPUS),
        topology=topology,
        startup=startup,
        restart=restart,
        revision=w.hexid(10),
        readiness=readiness,
    )


def gone(node: Obj, w: World) -> Obj:
    """A node deleted since its pods were bound to it (a preempted Spot VM, a repaired host)."""
    w.items.remove(node)
    return node


@scenario(
    "leader-pending-exclusive-tpu",
    "leader-pending",
    pod_verdict="exhausted",
    path="bot/demo/lws-leader-pending-tpu.json",
)
def leader_pending_exclusive_tpu(w: World) -> None:
    """Exclusive placement, one TPU slice per group: group 0 holds the only slice, so group 1's leader
    waits and its workers are never created (no StatefulSet, no event)."""
    slice_a = pool(w, 4, tpu_v5e, CLUSTER, "tpu-v5e-slice-a")
    cpu_node(w, CLUSTER)
    lws = Lws(
        w,
        "serving",
        "jetstream-llama",
        2,
        4,
        {"google.com/tpu": "4"},
        image=JAX_IMAGE,
        topology=NODEPOOL,
        revision=w.hexid(10),
    )
    lws_object(lws, created=95, conditions=available(lws, "False", 94), ready=1, updated=2)
    group(lws, 0, list(slice_a), created=94, domain="tpu-v5e-slice-a")
    message = "0/5 nodes are available: 5 Insufficient google.com/tpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."
    group(lws, 1, [None] * 4, created=94, unschedulable=message)


@scenario("gang-exclusive-volcano", "gang-unsatisfiable")
def gang_exclusive_volcano(w: World) -> None:
    """Volcano gang scheduling with exclusive placement (code-derived, as the TrainJob dependsOn gang):
    the group's PodGroup counts its 2 pods (minMember = size under LeaderCreated), but its worker is
    created only once the leader is scheduled, and Volcano holds the leader until the gang can form."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    cpu_node(w, CLUSTER)
    lws = serving(w, "llama-70b", 1, 2, topology=NODEPOOL)
    lws.volcano = True
    lws_object(lws, created=30, conditions=available(lws, "False", 29), ready=0, updated=1)
    said = "pod group is not ready, 1 Pending, 2 minAvailable; Pending: 1 Unschedulable"
    (leader,) = group(lws, 0, [None, None], created=29, unschedulable=said)
    unschedulable = {
        "lastTransitionTime": ts(28),
        "message": f"1/1 tasks in gang unschedulable: {said}",
        "reason": "NotEnoughTasks",
        "status": "True",
        "transitionID": w.uid(),
        "type": "Unschedulable",
    }
    volcano_podgroup(lws, leader, {"conditions": [unschedulable], "phase": "Pending"})


@scenario("leader-pending-anti-affinity", "leader-pending", pod_verdict="pod-affinity", target="llama-405b")
def leader_pending_anti_affinity(w: World) -> None:
    """lws#539: every LWS pod carries `group-key`, so an exclusive leader's anti-affinity keeps it out of
    the only H100 pool, where one small pod of another LeaderWorkerSet runs."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool-1")
    cpu_node(w, CLUSTER)
    embed = serving(w, "embedder", 1, 1)
    embed.resources = {"nvidia.com/gpu": "1"}
    lws_object(embed, created=300, conditions=available(embed, "True", 290), ready=1, updated=1)
    group(embed, 0, [nodes[0]], created=295)
    llama = serving(w, "llama-405b", 1, 2, topology=NODEPOOL)
    lws_object(llama, created=40, conditions=available(llama, "False", 39), ready=0, updated=1)
    message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    group(llama, 0, [None, None], created=39, unschedulable=message)


@scenario("leader-pending-kueue-gated", "leader-pending", pod_verdict="gated")
def leader_pending_kueue_gated(w: World) -> None:
    """startupPolicy LeaderReady, pods queued in Kueue: the leader waits for admission behind Kueue's
    scheduling gate, and no worker exists until it is Ready."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    lws = serving(w, "deepseek-r1", 1, 2, startup="LeaderReady")
    lws_object(lws, created=25, conditions=available(lws, "False", 24), ready=0, updated=1)
    leader = lws_pod(lws, 0, 0, node=None, created=24, gated=["kueue.x-k8s.io/admission"])
    leader["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "inference"


@scenario("leader-pending-taint", "leader-pending", pod_verdict="taint")
def leader_pending_taint(w: World) -> None:
    """No exclusive placement, LeaderCreated: the workers exist, and they and their leader are all held
    by the AKS GPU pool's `sku=gpu` taint the template does not tolerate (the system pool admits only
    critical add-ons)."""
    for i in range(2):
        aks_node(w, "gpupool", "28461937", i, "Standard_ND96asr_v4", gpu=True)
    system = aks_node(w, "system", "19283746", 0, "Standard_D8s_v5")
    system["spec"]["taints"] = [{"effect": "NoSchedule", "key": "CriticalAddonsOnly", "value": "true"}]
    lws = serving(w, "mixtral-8x22b", 1, 2)
    lws_object(lws, created=18, conditions=available(lws, "False", 17), ready=0, updated=1)
    message = "0/3 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}, 2 node(s) had untolerated taint {sku: gpu}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    group(lws, 0, [None, None], created=17, unschedulable=message)


@scenario("workers-not-created-leader-not-ready", "workers-not-created")
def workers_not_created_leader_not_ready(w: World) -> None:
    """startupPolicy LeaderReady with a readiness probe that waits for the model, which needs the
    workers: the leader is never Ready, so the workers never come."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 1, 2, startup="LeaderReady", readiness=True)
    lws_object(lws, created=50, conditions=available(lws, "False", 49), ready=0, updated=1)
    group(lws, 0, [nodes[0], None], created=49, states=[State(ready=False), RUNNING])


@scenario("workers-not-created-topology-label", "workers-not-created")
def workers_not_created_topology_label(w: World) -> None:
    """Exclusive by `cloud.google.com/gce-topology-block` with LeaderReady: the leader became Ready on a
    node whose block label a relabelling had taken away, so the controller cannot copy it to the
    workers (`node does not have topology label: ` in its log, no event)."""
    block = "cloud.google.com/gce-topology-block"
    labelled = [a3(w, CLUSTER, "a3-mega-1") for _ in range(3)]
    for node in labelled[1:]:
        node["metadata"]["labels"][block] = "b-7f2c"
    lws = serving(w, "llama-405b", 1, 3, topology=block, startup="LeaderReady")
    lws_object(lws, created=70, conditions=available(lws, "False", 69), ready=0, updated=1)
    lws_pod(lws, 0, 0, node=labelled[0], created=69)


@scenario("workers-not-created-node-gone", "workers-not-created")
def workers_not_created_node_gone(w: World) -> None:
    """Exclusive placement: the leader's Spot node was deleted after it was bound, and the controller
    cannot read the node's topology value (LWS with PR #946 stops there)."""
    nodes = pool(w, 3, a3, CLUSTER, "a3-spot", spot=True)
    lws = serving(w, "qwen3-235b", 1, 2, topology=NODEPOOL)
    lws_object(lws, created=30, conditions=available(lws, "False", 29), ready=0, updated=1)
    lws_pod(lws, 0, 0, node=gone(nodes[0], w), created=12)


@scenario("workers-pending-empty-selector", "workers-pending", pod_verdict="label-mismatch")
def workers_pending_empty_selector(w: World) -> None:
    """LWS ≤ v0.10.0 with the leader's node gone: the worker StatefulSet is created anyway, selecting
    `cloud.google.com/gke-nodepool: ""`, which no node has."""
    nodes = pool(w, 3, a3, CLUSTER, "a3-spot", spot=True)
    lws = serving(w, "qwen3-235b", 1, 3, topology=NODEPOOL)
    lws_object(lws, created=30, conditions=available(lws, "False", 29), ready=0, updated=1)
    message = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    group(lws, 0, [gone(nodes[0], w), None, None], created=12, unschedulable=message, domain="")


@scenario("workers-pending-exhausted", "workers-pending", pod_verdict="exhausted")
def workers_pending_exhausted(w: World) -> None:
    """One group of three on two H100 nodes: the leader and one worker run, the last worker has no node."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 1, 3)
    lws_object(lws, created=45, conditions=available(lws, "False", 44), ready=0, updated=1)
    group(lws, 0, [nodes[0], nodes[1], None], created=44, unschedulable=INSUFFICIENT.format(n=2))


@scenario("partial-groups", "partial-groups", pod_verdict="exhausted")
def partial_groups(w: World) -> None:
    """lws#167, #810: three groups of four on eight H100 nodes, no gang scheduler: each group placed some
    pods and waits for the rest, so none serves."""
    nodes = pool(w, 8, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 3, 4)
    lws_object(lws, created=60, conditions=available(lws, "False", 59), ready=0, updated=3)
    message = INSUFFICIENT.format(n=8)
    group(lws, 0, [*nodes[0:3], None], created=59, unschedulable=message)
    group(lws, 1, [*nodes[3:6], None], created=59, unschedulable=message)
    group(lws, 2, [nodes[6], nodes[7], None, None], created=59, unschedulable=message)


@scenario("restarting-worker-crash", "restarting", cause="app-failure")
def restarting_worker_crash(w: World) -> None:
    """RecreateGroupOnPodRestart: a worker's container exits 1 at every start, and each restart
    recreates the group — no backoff, no limit."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool")
    lws = serving(w, "vllm-405b", 1, 2)
    lws_object(lws, created=120, conditions=available(lws, "False", 60), ready=0, updated=1)
    crashed = State(ready=False, restarts=1, last_exit=(1, "Error"), last_exit_ago=0.5)
    group(lws, 0, nodes, created=2, states=[State(ready=False), crashed])
    lws_event(
        lws,
        "RecreateGroup",
        "Worker pod vllm-405b-0-1 failed, deleted leader pod vllm-405b-0 to recreate group 0",
        58,
        last=2.5,
        count=9,
        action="Delete",
    )


@scenario("restarting-image-pull", "restarting", cause="app-failure")
def restarting_image_pull(w: World) -> None:
    """lws#726: the leader gives up waiting for a worker still pulling its 20 GB image; its restart
    recreates the group, and the pull starts again."""
    nodes = pool(w, 3, a3, CLUSTER, "a3-pool")
    lws = serving(w, "vllm-405b", 1, 3)
    lws_object(lws, created=90, conditions=available(lws, "False", 80), ready=0, updated=1)
    timed_out = State(ready=False, restarts=1, last_exit=(1, "Error"), last_exit_ago=0.3)
    pulling = State(phase="Pending", ready=False, waiting=("ContainerCreating", ""))
    group(lws, 0, nodes, created=6, states=[timed_out, RUNNING, pulling])
    lws_event(
        lws,
        "RecreateGroup",
        "Worker pod vllm-405b-0 failed, deleted leader pod vllm-405b-0 to recreate group 0",
        75,
        last=6.5,
        count=5,
        action="Delete",
    )


@scenario("update-stuck", "update-stuck")
def update_stuck(w: World) -> None:
    """A rolling update whose first updated group never becomes Ready (its new image fails the
    readiness probe): maxUnavailable 1, so the rollout waits on it forever."""
    nodes = pool(w, 4, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 2, 2, readiness=True)
    conditions = [
        *available(lws, "False", 35),
        jcond("UpdateInProgress", "GroupsUpdating", "Rolling Upgrade is in progress", 35),
    ]
    lws_object(lws, created=900, conditions=conditions, ready=1, updated=1)
    group(lws, 0, nodes[0:2], created=880)
    lws.revision = w.hexid(10)
    group(lws, 1, nodes[2:4], created=34, states=[State(ready=False), RUNNING])
    lws_event(lws, "GroupsUpdating", "Updating replica 1", 35)


@scenario("starting-image-pull", "starting")
def starting_image_pull(w: World) -> None:
    """Created three minutes ago with RecreateGroupAfterStart: the pods are placed and pull their image."""
    nodes = pool(w, 4, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 2, 2, restart="RecreateGroupAfterStart")
    lws_object(lws, created=3, conditions=available(lws, "False", 3), ready=0, updated=2)
    pulling = State(phase="Pending", ready=False, waiting=("ContainerCreating", ""))
    group(lws, 0, nodes[0:2], created=2.8, states=[pulling, pulling])
    group(lws, 1, nodes[2:4], created=2.8, states=[pulling, pulling])


@scenario("running-vllm", "running")
def running_vllm(w: World) -> None:
    """Two groups of two, every pod Ready: Available=True."""
    nodes = pool(w, 4, a3, CLUSTER, "a3-pool")
    lws = serving(w, "llama-405b", 2, 2)
    lws_object(lws, created=400, conditions=available(lws, "True", 380), ready=2, updated=2)
    group(lws, 0, nodes[0:2], created=390)
    group(lws, 1, nodes[2:4], created=390)
