# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""The TrainJob corpus: one scenario per snapshot, in the order of `index.yaml`, each a stuck state of a
kubeflow/trainer or Kueue report (issue numbers in the docstrings) or a healthy baseline."""

from __future__ import annotations

from collections.abc import Callable

from devtools.jobset_corpus.events import failed_scheduling
from devtools.jobset_corpus.jobs import RJ, job, jobset, jobset_status, rj_status
from devtools.jobset_corpus.nodes import a3, cpu_node, pool
from devtools.jobset_corpus.pods import pod
from devtools.jobset_corpus.scenario import Build, Scenarios, gpu_rj
from devtools.jobset_corpus.world import Obj, World, jcond
from devtools.trainjob_corpus.objects import (
    creation_failed,
    failed,
    in_gang,
    kueue_workload,
    owned,
    podgroup,
    runtime,
    suspended,
    trainjob,
)

SCENARIOS = Scenarios()
CLUSTER = "train-prod"
NS = "ml-train"
INITIALIZER_IMAGE = "ghcr.io/kubeflow/trainer/dataset-initializer:v2.3.0"


def scenario(seed: str, verdict: str, path: str = "", **more: str) -> Callable[[Build], Build]:
    """Registers a scenario written to `tests/corpus/trainjob/<seed>.json`, or to `path`."""
    return SCENARIOS.scenario(seed, verdict, path=path or f"tests/corpus/trainjob/{seed}.json", **more)


def torch_runtime(w: World, gang: Obj | None = None) -> list[RJ]:
    """`torch-distributed`: one replicatedJob `node` of 8-GPU pods."""
    rjs = [gpu_rj("node", 1, 2, container="node")]
    runtime(w, "torch-distributed", rjs, num_nodes=2, gang=gang)
    return rjs


def initializers(w: World, gang: Obj | None = None, ns: str = "") -> list[RJ]:
    """`torchtune-llama3.2-1b`: the dataset and model initializers, then `node` once both completed (a
    TrainingRuntime of namespace `ns`, else a ClusterTrainingRuntime)."""
    after = [
        {"name": "dataset-initializer", "status": "Complete"},
        {"name": "model-initializer", "status": "Complete"},
    ]
    rjs = [
        RJ(
            "dataset-initializer",
            1,
            1,
            ("cpu", "2"),
            INITIALIZER_IMAGE,
            "dataset-initializer",
            restart_policy="Never",
        ),
        RJ(
            "model-initializer",
            1,
            1,
            ("cpu", "2"),
            INITIALIZER_IMAGE.replace("dataset", "model"),
            "model-initializer",
            restart_policy="Never",
        ),
        gpu_rj("node", 1, 2, container="node", depends_on=after),
    ]
    steps = {"dataset-initializer": "dataset-initializer", "model-initializer": "model-initializer"}
    runtime(w, "torchtune-llama3.2-1b", rjs, gang=gang, steps=steps, ns=ns)
    return rjs


@scenario(
    "jobset-not-created-requests", "jobset-not-created", path="bot/demo/trainjob-jobset-not-created.json"
)
def jobset_not_created_requests(w: World) -> None:
    """kubeflow/trainer#2363, #2351: the JobSet Trainer built is refused, so the TrainJob has no pods and
    no condition; only the event says why."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    torch_runtime(w)
    tj = trainjob(w, NS, "llama-sft", "torch-distributed", created=30, num_nodes=2, gpus="8")
    error = 'admission webhook "jobset-validating-webhook.jobset.x-k8s.io" denied the request: spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "8": must be equal to nvidia.com/gpu limit of 0'
    creation_failed(w, tj, error, 14, first=29.5, last=1.0)


@scenario("jobset-not-created-no-crd", "jobset-not-created")
def jobset_not_created_no_crd(w: World) -> None:
    """JobSet is not installed: Trainer cannot apply the JobSet it built."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    torch_runtime(w)
    tj = trainjob(w, NS, "bert-pretrain", "torch-distributed", created=12, num_nodes=2)
    error = 'no matches for kind "JobSet" in version "jobset.x-k8s.io/v1alpha2"'
    creation_failed(w, tj, error, 8, first=11.8, last=0.7)


@scenario("runtime-missing", "runtime-missing")
def runtime_missing(w: World) -> None:
    """The ClusterTrainingRuntime was deleted after the TrainJob was created (before v2.3.0 snapshots
    the runtime): Trainer can build nothing."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    tj = trainjob(w, NS, "llama-tune", "torchtune-llama3.2-1b", created=45)
    error = 'not found ClusterTrainingRuntime specified in TrainJob: clustertrainingruntimes.trainer.kubeflow.org "torchtune-llama3.2-1b" not found'
    creation_failed(w, tj, error, 20, first=44, last=2)


@scenario("suspended-kueue", "suspended")
def suspended_kueue(w: World) -> None:
    """Queued in Kueue: the ClusterQueue's quota is used, so Kueue keeps the TrainJob suspended."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = torch_runtime(w)
    tj = trainjob(
        w,
        NS,
        "gemma-sft",
        "torch-distributed",
        created=50,
        suspend=True,
        queue="team-a",
        conditions=[suspended(50)],
    )
    pending = jcond(
        "QuotaReserved",
        "Pending",
        "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor h100, 16 more needed",
        49,
        "False",
    )
    kueue_workload(w, tj, rjs, [pending])


@scenario("suspended-admitted", "suspended")
def suspended_admitted(w: World) -> None:
    """kueue#11931: Kueue admitted the Workload, and the TrainJob stays suspended (Kueue and Trainer
    versions that do not match)."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = torch_runtime(w)
    tj = trainjob(
        w,
        NS,
        "qwen-dpo",
        "torch-distributed",
        created=40,
        suspend=True,
        queue="team-b",
        conditions=[suspended(40)],
    )
    kueue_workload(
        w,
        tj,
        rjs,
        [
            jcond("QuotaReserved", "QuotaReserved", "Quota reserved in ClusterQueue gpu-cluster-queue", 35),
            jcond("Admitted", "Admitted", "The workload is admitted", 35),
        ],
    )


@scenario("suspended-by-hand", "suspended")
def suspended_by_hand(w: World) -> None:
    """spec.suspend set by a person (no Kueue queue label, no Workload): nothing resumes it but them."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    torch_runtime(w)
    trainjob(w, NS, "phi-sft", "torch-distributed", created=30, suspend=True, conditions=[suspended(30)])


@scenario("deadline-exceeded", "deadline-exceeded")
def deadline_exceeded(w: World) -> None:
    """activeDeadlineSeconds passed (waiting for nodes counts): Trainer failed it and deleted its JobSet."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    torch_runtime(w)
    trainjob(
        w,
        NS,
        "resnet-sweep",
        "torch-distributed",
        created=130,
        deadline=7200,
        conditions=[failed("DeadlineExceeded", "TrainJob exceeded its active deadline", 10)],
    )


@scenario("runtime-unsupported", "runtime-unsupported")
def runtime_unsupported(w: World) -> None:
    """A runtimeRef of a kind Trainer does not serve, created past the webhook."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    trainjob(
        w,
        NS,
        "xgb-train",
        "xgboost-distributed",
        created=15,
        runtime_kind="XGBoostRuntime",
        conditions=[
            failed(
                "TrainingRuntimeNotSupported", "unsupported runtime: XGBoostRuntime.trainer.kubeflow.org", 15
            )
        ],
    )


def _initializer_pods(w: World, tj: Obj, rjs: list[RJ], *, cpu: Obj, phase: str, message: str = "") -> None:
    """The JobSet of the torchtune runtime with its two initializer Jobs and their one pod each; `node`
    waits on them (dependsOn), so it has no Job."""
    status = jobset_status(
        rj_status("dataset-initializer", active=1),
        rj_status("model-initializer", active=1),
        rj_status("node"),
    )
    js = jobset(w, tj["metadata"]["name"], NS, rjs, created=20, failure_policy=None, status=status)
    owned(js, tj)
    for rj in rjs[:2]:
        j = job(js, rj, 0, created=19.9, active=1, ready=1 if phase == "Running" else 0)
        p = pod(j, 0, phase, node=cpu if phase == "Running" else None, created=19.8, unschedulable=message)
        if message:
            failed_scheduling(w, p, message, 14, first=19.7)


@scenario("waiting-initializer", "waiting-initializer")
def waiting_initializer(w: World) -> None:
    """The team's copy of the torchtune runtime (a TrainingRuntime of its namespace): the `node` step
    waits for both initializers to complete (dependsOn); they are downloading the model and the dataset."""
    cpu = cpu_node(w, CLUSTER)
    pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = initializers(w, ns=NS)
    tj = trainjob(w, NS, "llama-tune", "torchtune-llama3.2-1b", created=20, runtime_kind="TrainingRuntime")
    _initializer_pods(w, tj, rjs, cpu=cpu, phase="Running")


@scenario("gang-dependson-deadlock", "gang-unsatisfiable")
def gang_dependson_deadlock(w: World) -> None:
    """Coscheduling counts every replicatedJob's pods in minMember, `node` among them, but `node` is only
    created after the initializers complete: the initializers wait for a gang that cannot form."""
    cpu = cpu_node(w, CLUSTER)
    pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = initializers(w, gang={"coscheduling": {"scheduleTimeoutSeconds": 60}})
    tj = trainjob(w, NS, "llama-tune", "torchtune-llama3.2-1b", created=20)
    podgroup(w, tj, "scheduling.x-k8s.io", 4, {"cpu": "4", "nvidia.com/gpu": "16"}, {"phase": "Pending"})
    message = "0/3 nodes are available: pre-filter pod llama-tune-dataset-initializer-0-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 4. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    _initializer_pods(w, tj, rjs, cpu=cpu, phase="Pending", message=message)
    in_gang(w, tj, "scheduling.x-k8s.io")


@scenario("gang-min-resources", "gang-unsatisfiable")
def gang_min_resources(w: World) -> None:
    """Volcano: the PodGroup asks 32 GPUs at once on a cluster of 16; the gang is never admitted."""
    pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = [gpu_rj("node", 1, 4, container="node")]
    runtime(w, "torch-distributed-volcano", rjs, num_nodes=4, gang={"volcano": {}})
    tj = trainjob(w, NS, "mixtral-pretrain", "torch-distributed-volcano", created=35, num_nodes=4)
    conditions = [
        {
            "lastTransitionTime": "2026-11-29T08:26:00Z",
            "message": "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Unschedulable",
            "reason": "NotEnoughResources",
            "status": "True",
            "transitionID": "5d5b7e4c-0b7a-4d5e-9f0a-3c1e2b4a6d77",
            "type": "Unschedulable",
        }
    ]
    podgroup(
        w,
        tj,
        "scheduling.volcano.sh",
        4,
        {"nvidia.com/gpu": "32"},
        {"conditions": conditions, "phase": "Pending"},
    )
    js = jobset(w, "mixtral-pretrain", NS, rjs, created=34, status=jobset_status(rj_status("node", active=1)))
    owned(js, tj)
    j = job(js, rjs[0], 0, created=33.9, active=4)
    for i in range(4):
        pod(
            j,
            i,
            "Pending",
            created=33.8,
            unschedulable="pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Unschedulable",
        )
    in_gang(w, tj, "scheduling.volcano.sh")


@scenario("pods-pending-exhausted", "pods-pending", pod_verdict="exhausted")
def pods_pending_exhausted(w: World) -> None:
    """No gang, no initializer: the JobSet's own verdict, with the runtime in front. Three nodes asked,
    two 8-GPU nodes in the cluster."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = [gpu_rj("node", 1, 3, container="node")]
    runtime(w, "torch-distributed", rjs, num_nodes=3)
    tj = trainjob(w, NS, "llama-sft", "torch-distributed", created=25, num_nodes=3, gpus="8")
    js = jobset(w, "llama-sft", NS, rjs, created=24, status=jobset_status(rj_status("node", active=1)))
    owned(js, tj)
    j = job(js, rjs[0], 0, created=23.9, active=3, ready=2)
    for i, node in enumerate(nodes):
        pod(j, i, "Running", node=node, created=23.8)
    message = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    waiting = pod(j, 2, "Pending", created=23.8, unschedulable=message)
    failed_scheduling(w, waiting, message, 11, first=23.7)


@scenario("running", "running")
def running(w: World) -> None:
    """Healthy: the JobSet runs its two nodes; the TrainJob has no condition (Trainer writes none while
    it runs)."""
    nodes = pool(w, 2, a3, CLUSTER, "a3-pool")
    rjs = torch_runtime(w)
    tj = trainjob(
        w,
        NS,
        "bert-finetune",
        "torch-distributed",
        created=90,
        num_nodes=2,
        jobs_status=[{"active": 1, "failed": 0, "name": "node", "ready": 1, "succeeded": 0, "suspended": 0}],
    )
    js = jobset(
        w, "bert-finetune", NS, rjs, created=89, status=jobset_status(rj_status("node", active=1, ready=1))
    )
    owned(js, tj)
    j = job(js, rjs[0], 0, created=88.9, active=2, ready=2)
    for i, node in enumerate(nodes):
        pod(j, i, "Running", node=node, created=88.8)
