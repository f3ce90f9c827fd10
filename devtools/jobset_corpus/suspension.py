"""`suspended` JobSets: held by Kueue, or by hand."""

from __future__ import annotations

from devtools.jobset_corpus.events import jobset_event
from devtools.jobset_corpus.jobs import (
    completions_reached,
    job,
    job_suspended,
    jobset,
    jobset_status,
    jobset_suspended,
    rj_status,
)
from devtools.jobset_corpus.nodes import g2, pool, tpu_v5e
from devtools.jobset_corpus.objects import workload
from devtools.jobset_corpus.pods import exited
from devtools.jobset_corpus.scenario import Scenarios, exited_pod, gpu_rj, tpu_slice
from devtools.jobset_corpus.world import World, jcond

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


@scenario("suspended-kueue", "suspended")
def suspended_kueue(w: World) -> None:
    """Kueue keeps the JobSet suspended: its ClusterQueue lacks TPU quota."""
    pool(w, 4, tpu_v5e, "ml-prod", "tpu-v5e-pool-1")
    rj = tpu_slice("workers", 4)
    status = jobset_status(rj_status("workers", suspended=4), conditions=[jobset_suspended(45)])
    js = jobset(w, "gemma-tune", "team-a", [rj], created=45, suspend=True, queue="tpu-queue", status=status)
    for i in range(4):
        job(js, rj, i, created=44.9, suspend=True, conditions=[job_suspended(44.9)])
    pending = (
        "couldn't assign flavors to pod set workers: insufficient unused quota for google.com/tpu in flavor "
        "v5e-4x4, 48 more needed"
    )
    workload(js, [jcond("QuotaReserved", "Pending", pending, 44, "False")])
    jobset_event(js, "SuspendedJobs", "jobset is suspended", kind="Normal", first=45)


@scenario("suspended-by-hand", "suspended")
def suspended_by_hand(w: World) -> None:
    """Someone suspended a sweep after two of its six trials had completed."""
    nodes = pool(w, 2, g2, "research", "l4-pool")
    rj = gpu_rj("trial", 6, 1, "1")
    status = jobset_status(rj_status("trial", suspended=4, succeeded=2), conditions=[jobset_suspended(400)])
    js = jobset(
        w, "sweep-lr", "research", [rj], created=900, suspend=True, failure_policy=None, status=status
    )
    for i in range(2):
        j = job(js, rj, i, created=899, succeeded=1, conditions=completions_reached(600), completed=600)
        exited_pod(j, 0, nodes[i], 898, exited(0, "Completed", 600, 280))
    for i in range(2, 6):
        job(js, rj, i, created=899, suspend=True, conditions=[job_suspended(400)])
