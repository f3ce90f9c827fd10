"""JobSets on their way: `pods-pending`, `starting` and `running`."""

from __future__ import annotations

from devtools.jobset_corpus.events import event, failed_scheduling
from devtools.jobset_corpus.jobs import (
    GPU_IMAGE,
    admitted,
    job,
    jobset,
    jobset_restarted,
    jobset_resumed,
    jobset_status,
    rj_status,
)
from devtools.jobset_corpus.nodes import a3, g2, pool, tpu_v5e
from devtools.jobset_corpus.objects import other_pod, workload
from devtools.jobset_corpus.pods import crash_looping, exited, pod
from devtools.jobset_corpus.scenario import (
    BLOCK,
    NODEPOOL,
    Scenarios,
    creating_pod,
    full_job,
    gpu_rj,
    tpu_slice,
)
from devtools.jobset_corpus.world import World, cond, jcond, ts

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


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


@scenario("gang-min-member-scaled-down", "gang-unsatisfiable")
def gang_min_member_scaled_down(w: World) -> None:
    """scheduler-plugins' coscheduling, run as the cluster's scheduler: the team made PodGroup
    `llama-sft` (minMember 8) for eight workers, then cut the JobSet to four and left the PodGroup; its
    PreFilter refuses every pod, waiting for siblings that will never exist
    (`pkg/coscheduling/core/core.go`)."""
    pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 1, 4)
    status = jobset_status(rj_status("workers", active=1))
    js = jobset(w, "llama-sft", "ml-train", [rj], created=22, status=status)
    group = w.add(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "creationTimestamp": ts(60),
                "generation": 1,
                "name": "llama-sft",
                "namespace": "ml-train",
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {"minMember": 8, "scheduleTimeoutSeconds": 120},
            "status": {"phase": "Pending"},
        }
    )
    j = job(js, rj, 0, created=21.9, active=4)
    for i in range(4):
        p = pod(j, i, "Pending", created=21.8)
        p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group["metadata"]["name"]
        message = (
            f"0/4 nodes are available: pre-filter pod {p['metadata']['name']} cannot find enough sibling "
            "pods, current pods number: 4, minMember of group: 8. preemption: 0/4 nodes are available: 4 "
            "Preemption is not helpful for scheduling."
        )
        p["status"]["conditions"] = [
            {**cond("PodScheduled", "Unschedulable", message, 21.7, "False"), "lastProbeTime": None}
        ]
        failed_scheduling(w, p, message, 12, first=21.7)


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


@scenario("starting-crashloop", "starting")
def starting_crashloop(w: World) -> None:
    """Worker 0's container crash-loops in place (restartPolicy OnFailure, within its Job's backoff
    limit): the JobSet has not restarted, it never gets started."""
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 1, backoff_limit=6)
    status = jobset_status(rj_status("workers", ready=1, active=2))
    js = jobset(w, "whisper-asr", "speech", [rj], created=25, status=status)
    said = "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\n"
    j = job(js, rj, 0, created=24.9, active=1)
    crashing = crash_looping(j, nodes[0], 24.8, {**exited(1, "Error", 1.2, 0.4), "message": said}, 4, "1m20s")
    meta = crashing["metadata"]
    back_off = f"Back-off restarting failed container trainer in pod {meta['name']}_speech({meta['uid']})"
    event(w, crashing, "BackOff", back_off, source="kubelet", count=9, first=20, last=0.5)
    full_job(js, rj, 1, [nodes[1]], created=24.9)


@scenario("starting-image-pull", "starting")
def starting_image_pull(w: World) -> None:
    """The template names an image tag the registry does not have: the kubelet backs off pulling it."""
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    image = "us-docker.pkg.dev/ml-prod/train/llama-sft:v2.14"
    rj = gpu_rj("workers", 2, 1, image=image)
    status = jobset_status(rj_status("workers", active=2))
    js = jobset(w, "llama-sft", "llm", [rj], created=18, status=status)
    for i in range(2):
        p = pod(
            job(js, rj, i, created=17.9, active=1),
            0,
            "Pending",
            node=nodes[i],
            created=17.8,
            waiting=("ImagePullBackOff", f'Back-off pulling image "{image}"'),
        )
        said = (
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack '
            f'image "{image}": failed to resolve reference "{image}": {image}: not found'
        )
        event(w, p, "Failed", said, source="kubelet", count=6, first=17.5, last=1)
        back_off = f'Back-off pulling image "{image}"'
        event(w, p, "BackOff", back_off, source="kubelet", count=70, first=17, last=0.3)


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
