# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""JobSets whose pods or Jobs are not created, or whose followers are refused: `webhook-unavailable`,
`leader-duplicate`, `topology-label-missing`, `leader-pending` and `create-rejected`."""

from __future__ import annotations

from devtools.jobset_corpus.events import failed_create, job_creation_failed
from devtools.jobset_corpus.jobs import (
    GPU_IMAGE,
    RJ,
    admitted,
    job,
    jobset,
    jobset_resumed,
    jobset_status,
    recreate,
    rj_status,
)
from devtools.jobset_corpus.nodes import a3, aks_node, cpu_node, eks_p4d, g2, pool, tpu_v5e
from devtools.jobset_corpus.objects import (
    controller_pod,
    exceeded_quota,
    other_pod,
    quota,
    runtime_class,
    workload,
)
from devtools.jobset_corpus.pods import exited, pod
from devtools.jobset_corpus.scenario import (
    BLOCK,
    MISSING_SELECTOR,
    NODEPOOL,
    NOT_SET,
    Scenarios,
    exited_pod,
    follower_selector,
    full_job,
    gpu_rj,
    new_leader,
    node_affinity,
    refused_followers,
    shut_down_pod,
    tpu_slice,
)
from devtools.jobset_corpus.world import World, ts

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


@scenario("webhook-unavailable-jobset", "webhook-unavailable")
def webhook_unavailable_jobset(w: World) -> None:
    """JobSet's pod webhook has no endpoint (its controller pod cannot schedule), so every pod creation
    fails."""
    pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers"))
    js = jobset(w, "mixtral-sft", "ml-train", [rj], created=40, status=status)
    error = (
        'Internal error occurred: failed calling webhook "mpod.kb.io": failed to call webhook: Post '
        '"https://jobset-webhook-service.jobset-system.svc:443/mutate--v1-pod?timeout=10s": no endpoints available '
        'for service "jobset-webhook-service"'
    )
    for i in range(2):
        j = job(js, rj, i, created=39.9, pods_created=False)
        failed_create(j, error, 14, first=39.8, last=2 + i)
    controller_pod(w, "jobset-system", "jobset-controller-manager", 4)


@scenario("webhook-unavailable-kueue", "webhook-unavailable")
def webhook_unavailable_kueue(w: World) -> None:
    """Kueue admitted the JobSet, but its Job webhook has no endpoint, so no child Job can be created."""
    pool(w, 2, a3, "ml-prod", "a3-pool")
    driver = RJ("driver", 1, 1, ("cpu", "2"), GPU_IMAGE, "driver")
    workers = gpu_rj("workers", 2, 1)
    status = jobset_status(conditions=[jobset_resumed(24)])
    js = jobset(
        w,
        "t5-distill",
        "team-b",
        [driver, workers],
        created=25,
        queue="gpu-queue",
        failure_policy=None,
        status=status,
    )
    workload(js, admitted("gpu-cluster-queue", 24), admitted_flavor="h100-on-demand")
    error = (
        'Internal error occurred: failed calling webhook "mjob.kb.io": failed to call webhook: Post '
        '"https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s": no endpoints '
        'available for service "kueue-webhook-service"'
    )
    job_creation_failed(js, "t5-distill-driver-0", error, 9, first=23.5, last=1.5, new_style=False)
    controller_pod(w, "kueue-system", "kueue-controller-manager", 2)


@scenario("leader-duplicate-tpu", "leader-duplicate", path="bot/demo/jobset-leader-duplicate.json")
def leader_duplicate_tpu(w: World) -> None:
    """A node shutdown killed slice-1's leader and two followers. The Job controller recreated the
    leader, so a Failed leader pod sits beside its replacement, and the pod webhook refuses every
    replacement follower (the deadlock of JobSet ≤ v0.12.0)."""
    p1 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    p2 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-2")
    rj = tpu_slice("slice", 2, backoff_limit=4)
    status = jobset_status(rj_status("slice", ready=1, active=2))
    js = jobset(
        w,
        "llm-pretrain",
        "llm",
        [rj],
        created=200,
        topology=NODEPOOL,
        failure_policy=recreate(4),
        status=status,
    )
    full_job(js, rj, 0, p1, created=199)
    j = job(js, rj, 1, created=199, active=2, ready=1, failed=3)
    killed = [
        shut_down_pod(
            j, i, p2[i], 198.9, exited(143, "Error", 41, 150), node_selector=follower_selector(j, i, p2[0])
        )
        for i in range(3)
    ]
    killed[0]["status"]["conditions"][0]["lastTransitionTime"] = ts(41)
    pod(j, 3, "Running", node=p2[3], created=198.9, node_selector=follower_selector(j, 3, p2[0]))
    new_leader(j, 38, node=p2[0], started=36)
    failed_create(j, MISSING_SELECTOR.format(key=NODEPOOL), 31, first=38, last=0.8)


@scenario("leader-duplicate-gpu", "leader-duplicate")
def leader_duplicate_gpu(w: World) -> None:
    """The leader and a follower exited 1 (restartPolicy Never). A Failed leader pod sits beside its
    replacement, and the pod webhook refuses the replacement follower (the deadlock of JobSet ≤
    v0.12.0)."""
    block = "b-7c1d3e"
    placement = {BLOCK: block, "cloud.google.com/gce-topology-subblock": "sb-02"}
    nodes = pool(w, 4, a3, "ml-prod", "a3-compact", extra=placement)
    affinity = node_affinity("cloud.google.com/gke-accelerator", "nvidia-h100-80gb")
    rj = gpu_rj("workers", 1, 4, restart_policy="Never", backoff_limit=6, affinity=affinity)
    status = jobset_status(rj_status("workers", active=1))
    js = jobset(
        w,
        "sd-train",
        "vision",
        [rj],
        created=150,
        topology=BLOCK,
        failure_policy={"maxRestarts": 2},
        status=status,
    )
    j = job(js, rj, 0, created=149, active=3, ready=3, failed=2)
    follow = {BLOCK: block}
    exited_pod(j, 0, nodes[0], 148.9, exited(1, "Error", 22, 120))
    pod(j, 1, "Running", node=nodes[1], created=148.9, node_selector=follow)
    exited_pod(j, 2, nodes[2], 148.9, exited(1, "Error", 22, 120), node_selector=follow)
    pod(j, 3, "Running", node=nodes[3], created=148.9, node_selector=follow)
    new_leader(j, 21.5, node=nodes[0], started=20)
    failed_create(j, NOT_SET.format(webhook="validate--v1-pod.x-k8s.io"), 19, first=21.4, last=0.6)


@scenario("topology-label-missing-event", "topology-label-missing")
def topology_label_missing_event(w: World) -> None:
    """The leaders run on nodes without the exclusive-topology label, so `mpod.kb.io` refuses every
    follower and says why."""
    nodes = pool(w, 4, a3, "ml-prod", "a3-ondemand")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", active=2))
    js = jobset(w, "phi-pretrain", "ml-train", [rj], created=35, topology=BLOCK, status=status)
    error = f'admission webhook "mpod.kb.io" denied the request: node does not have topology label: {BLOCK}'
    for i in range(2):
        j = job(js, rj, i, created=34.9, active=1, ready=1)
        new_leader(j, 34.8, node=nodes[2 * i], started=33)
        failed_create(j, error, 17, first=34.7, last=0.9 + i)


@scenario("topology-label-missing-node", "topology-label-missing")
def topology_label_missing_node(w: World) -> None:
    """The leader runs on a node without the exclusive-topology label; no event says so, the node's
    labels do."""
    key = "topology.k8s.aws/network-node-layer-3"
    nodes = [eks_p4d(w, i, **({key: f"nn-{w.hexid(17)}"} if i >= 2 else {})) for i in range(4)]
    rj = gpu_rj("trainer", 1, 2, restart_policy="OnFailure")
    status = jobset_status(rj_status("trainer", active=1))
    js = jobset(w, "nemo-sft", "nlp", [rj], created=180, topology=key, failure_policy=None, status=status)
    j = job(js, rj, 0, created=179.9, active=1, ready=1)
    pod(j, 0, "Running", node=nodes[0], created=179.8, started=178)


@scenario(
    "leader-pending-tpu",
    "leader-pending",
    pod_verdict="exhausted",
    path="bot/demo/jobset-leader-pending-tpu.json",
)
def leader_pending_tpu(w: World) -> None:
    """slice-1's leader cannot schedule: the second pool's TPUs are held by a serving StatefulSet."""
    for _ in range(2):
        cpu_node(w, "ml-prod")
    p1 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    p2 = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-2")
    rj = tpu_slice()
    status = jobset_status(rj_status("slice", ready=1, active=2))
    js = jobset(w, "maxtext-v5e", "llm", [rj], created=52, topology=NODEPOOL, status=status)
    for i, n in enumerate(p2):
        other_pod(
            w, "serving", f"gemma-serve-{i}", n, ("google.com/tpu", "4"), ("StatefulSet", "gemma-serve")
        )
    full_job(js, rj, 0, p1, created=51.9)
    j = job(js, rj, 1, created=51.9, active=1)
    message = (
        "0/10 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 8 Insufficient google.com/tpu. "
        "preemption: 0/10 nodes are available: 10 No preemption victims found for incoming pod."
    )
    new_leader(j, 51.8, unschedulable=message, attempts=19)
    failed_create(j, MISSING_SELECTOR.format(key=NODEPOOL), 23, first=51.7, last=0.7)


@scenario("leader-pending-taint", "leader-pending", pod_verdict="taint")
def leader_pending_taint(w: World) -> None:
    """The leaders do not tolerate the AKS GPU pool's `sku=gpu` taint."""
    aks_node(w, "system", "38117962", 0, "Standard_D8ds_v5")
    for i in range(3):
        aks_node(w, "gpupool", "21504838", i, "Standard_ND96asr_v4", gpu=True)
    rj = gpu_rj("trainer", 2, 2, "4", affinity=node_affinity("kubernetes.azure.com/agentpool", "gpupool"))
    status = jobset_status(rj_status("trainer", active=2))
    js = jobset(w, "vit-huge", "vision", [rj], created=28, topology="kubernetes.io/hostname", status=status)
    message = (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 node(s) had untolerated taint {sku: gpu}. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    refused_followers(js, rj, 27.9, message, attempts=11, refusals=15)


@scenario(
    "leader-pending-expired",
    "leader-pending",
    pod_verdict="label-mismatch",
    path="tests/corpus/jobset/leader-pending-expired-events.json",
)
def leader_pending_expired(w: World) -> None:
    """The leader asks for H100 nodes in an L4 cluster; its events have expired."""
    pool(w, 3, g2, "research", "l4-pool")
    rj = gpu_rj("actor", 1, 4, "2", node_selector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    status = jobset_status(rj_status("actor", active=1))
    js = jobset(w, "rl-rollout", "research", [rj], created=200, topology=NODEPOOL, status=status)
    j = job(js, rj, 0, created=199.9, active=1)
    message = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    pod(j, 0, "Pending", created=199.8, unschedulable=message)


@scenario("create-rejected-quota", "create-rejected")
def create_rejected_quota(w: World) -> None:
    """The namespace's GPU quota is used up by workers-0, so workers-1's pods are forbidden."""
    nodes = pool(w, 4, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 2)
    status = jobset_status(rj_status("workers", ready=1, active=1))
    js = jobset(w, "whisper-ft", "team-a", [rj], created=33, status=status)
    full_job(js, rj, 0, nodes[:2], created=32.9)
    j = job(js, rj, 1, created=32.9, pods_created=False)
    gpus = "requests.nvidia.com/gpu"
    quota(w, "gpu-quota", "team-a", {gpus: "16"}, {gpus: "16"})
    exceeded = exceeded_quota("gpu-quota", gpus, 8, 16, 16)
    failed_create(
        j, f'pods "whisper-ft-workers-1-0-{w.suffix()}" is forbidden: {exceeded}', 12, first=32.8, last=1.2
    )


@scenario("create-rejected-runtimeclass", "create-rejected")
def create_rejected_runtimeclass(w: World) -> None:
    """The pods name a RuntimeClass the cluster does not have."""
    pool(w, 2, g2, "ml-prod", "l4-pool")
    runtime_class(w, "nvidia", "nvidia")
    rj = gpu_rj("server", 1, 1, "1", "vllm/vllm-openai:v0.11.2", runtime_class="nvidia-cdi", container="vllm")
    status = jobset_status(rj_status("server"))
    js = jobset(w, "vllm-bench", "inference", [rj], created=18, failure_policy=None, status=status)
    j = job(js, rj, 0, created=17.9, pods_created=False)
    error = 'pods "vllm-bench-server-0-0-" is forbidden: pod rejected: RuntimeClass "nvidia-cdi" not found'
    failed_create(j, error, 9, first=17.8, last=0.7)


@scenario("create-rejected-job-quota", "create-rejected")
def create_rejected_job_quota(w: World) -> None:
    """A `count/jobs.batch` quota forbids the fourth child Job."""
    nodes = [cpu_node(w, "data") for _ in range(2)]
    rj = RJ("shard", 4, 1, ("cpu", "4"), "us-docker.pkg.dev/ml-platform-prod/etl/beam-worker:2.61", "worker")
    status = jobset_status(rj_status("shard", ready=3, active=3))
    js = jobset(w, "etl-shards", "batch", [rj], created=14, failure_policy=None, status=status)
    for i in range(3):
        j = job(js, rj, i, created=13.9, active=1, ready=1)
        pod(j, 0, "Running", node=nodes[i % 2], created=13.8)
    jobs = "count/jobs.batch"
    quota(w, "job-count", "batch", {jobs: "3"}, {jobs: "3"})
    error = f'jobs.batch "etl-shards-shard-3" is forbidden: {exceeded_quota("job-count", jobs, 1, 3, 3)}'
    job_creation_failed(js, "etl-shards-shard-3", error, 11, first=13.8, last=0.4)
