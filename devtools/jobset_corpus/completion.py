"""JobSets that finished: `completed` and `failed`."""

from __future__ import annotations

from devtools.jobset_corpus.events import event, jobset_event
from devtools.jobset_corpus.jobs import (
    RJ,
    TPU_IMAGE,
    completions_reached,
    job,
    job_failed,
    jobset,
    jobset_completed,
    jobset_restarted,
    jobset_status,
    recreate,
    rj_status,
)
from devtools.jobset_corpus.nodes import a3, cpu_node, eks_p4d, g2, pool, tpu_v5e
from devtools.jobset_corpus.pods import exited
from devtools.jobset_corpus.scenario import (
    NODEPOOL,
    Scenarios,
    exited_pod,
    follower_selector,
    gpu_rj,
    tpu_slice,
)
from devtools.jobset_corpus.world import World, jcond

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


@scenario("completed-gpu", "completed")
def completed_gpu(w: World) -> None:
    """Two single-pod Jobs ran to completion on L4 nodes."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    cpu_node(w, "ml-prod")
    rj = gpu_rj("workers", 2, 1, "2")
    status = jobset_status(
        rj_status("workers", succeeded=2), conditions=[jobset_completed(12)], terminal="Completed"
    )
    js = jobset(w, "bert-finetune", "ml-train", [rj], created=300, failure_policy=None, status=status)
    done = completions_reached(12)
    for i, n in enumerate(nodes):
        j = job(js, rj, i, created=299, succeeded=1, conditions=done, completed=12)
        exited_pod(j, 0, n, 298.9, exited(0, "Completed", 12.2, 280))
    jobset_event(js, "AllJobsCompleted", "jobset completed successfully", kind="Normal", first=12)


@scenario("completed-tpu", "completed", path="tests/corpus/jobset/completed-tpu-after-restart.json")
def completed_tpu_after_restart(w: World) -> None:
    """A driver and a v5e slice completed on their second attempt (one restart)."""
    nodes = pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    driver = RJ("driver", 1, 1, ("cpu", "4"), TPU_IMAGE, "driver")
    workers = tpu_slice("workers", 1)
    status = jobset_status(
        rj_status("driver", succeeded=1),
        rj_status("workers", succeeded=1),
        conditions=[jobset_restarted(300), jobset_completed(4)],
        restarts=1,
        terminal="Completed",
    )
    js = jobset(w, "gemma-eval", "llm", [driver, workers], created=500, topology=NODEPOOL, status=status)
    done = completions_reached(4)
    for rj, finished in ((driver, 4.5), (workers, 4.6)):
        n = rj.parallelism
        j = job(js, rj, 0, attempt=1, created=320, succeeded=n, conditions=done, completed=4)
        for i in range(n):
            ok = exited(0, "Completed", finished, 300)
            exited_pod(j, i, nodes[i], 319, ok, node_selector=follower_selector(j, i, nodes[0]))


@scenario("failed-no-policy", "failed")
def failed_no_policy(w: World) -> None:
    """workers-1's pod exited 1 and its Job reached backoffLimit 0; without a failure policy the first
    failed Job fails the JobSet."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1, restart_policy="Never", container="pytorch")
    message = "jobset failed due to one or more job failures (first failed job: resnet-train-workers-1)"
    status = jobset_status(
        rj_status("workers", failed=1),
        conditions=[jcond("Failed", "FailedJobs", message, 35)],
        terminal="Failed",
    )
    js = jobset(w, "resnet-train", "vision", [rj], created=240, failure_policy=None, status=status)
    failed = job_failed(35.1)
    j = job(js, rj, 1, created=239, failed=1, conditions=failed)
    illegal = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    ended = {**exited(1, "Error", 35.3, 200), "message": illegal}
    exited_pod(j, 0, nodes[1], 238.9, ended)
    event(w, j.obj, "BackoffLimitExceeded", "Job has reached the specified backoff limit", first=35, last=35)
    jobset_event(js, "FailedJobs", message, first=35, new_style=False)


@scenario("failed-max-restarts", "failed")
def failed_max_restarts(w: World) -> None:
    """The fourth attempt's worker was OOM-killed with maxRestarts 3 used up: the JobSet failed."""
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    rj = gpu_rj("workers", 2, 1)
    message = (
        "jobset failed due to reaching max number of restarts (first failed job: llama-pretrain-workers-0)"
    )
    conditions = [
        jcond("RestartingJobSet", "JobSetFailed", "jobset failed", 20, "False"),
        jcond("Failed", "ReachedMaxRestarts", message, 20),
    ]
    status = jobset_status(
        rj_status("workers", failed=1), conditions=conditions, restarts=3, terminal="Failed"
    )
    js = jobset(w, "llama-pretrain", "llm", [rj], created=400, failure_policy=recreate(3), status=status)
    j = job(js, rj, 0, attempt=3, created=60, failed=1, conditions=job_failed(20.2))
    exited_pod(j, 0, nodes[0], 59.9, exited(137, "OOMKilled", 20.4, 35))
    jobset_event(js, "ReachedMaxRestarts", message, first=20)
