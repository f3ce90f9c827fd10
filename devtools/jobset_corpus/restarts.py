# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""`restarting` JobSets, one per cause: node preemption, node failure, pod preemption, application
failure, unknown."""

from __future__ import annotations

from devtools.jobset_corpus.events import event, restart_events
from devtools.jobset_corpus.jobs import (
    job,
    job_failed,
    jobset,
    jobset_restarting,
    jobset_status,
    rj_status,
)
from devtools.jobset_corpus.nodes import a2, a3, cpu_node, eks_p4d, lab_node, pool, unreachable
from devtools.jobset_corpus.objects import other_pod
from devtools.jobset_corpus.pods import crash_looping, exited, pod
from devtools.jobset_corpus.scenario import BLOCK, Scenarios, creating_pod, full_job, gpu_rj, shut_down_pod
from devtools.jobset_corpus.world import World

SCENARIOS = Scenarios()
scenario = SCENARIOS.scenario


@scenario(
    "preemption-restarts",
    "restarting",
    cause="node-preemption",
    path="bot/demo/jobset-preemption-restarts.json",
)
def preemption_restarts(w: World) -> None:
    """Spot nodes shut down under slice workers-1 (attempt 3); its Job is still being deleted, so the
    Recreate strategy has recreated only workers-0 for attempt 4 so far."""
    for _ in range(2):
        cpu_node(w, "ml-prod")
    nodes = pool(w, 4, a3, "ml-prod", "a3-spot-pool", spot=True)
    rj = gpu_rj("workers", 2, 2)
    first_failed = "llama3-70b-ft-workers-1"
    status = jobset_status(
        rj_status("workers", active=1), conditions=[jobset_restarting(first_failed, 6)], restarts=4
    )
    js = jobset(w, "llama3-70b-ft", "llm", [rj], created=240, status=status)
    failed = job_failed(6.5)
    old = job(js, rj, 1, attempt=3, created=48, deleting=6, failed=2, conditions=failed)
    # The spot node the old pods ran on is deleted: only its name and address remain on them.
    gone = {
        "metadata": {
            "name": "gke-ml-prod-a3-spot-pool-" + nodes[0]["metadata"]["name"].split("-")[-2] + "-wq4z"
        },
        "status": {"addresses": [{"address": "10.128.3.17"}]},
    }
    for i in range(2):
        shut_down_pod(old, i, gone, 47.9, exited(143, "Error", 7, 40), deleting=6)
    j = job(js, rj, 0, attempt=4, created=5.5, active=2)
    for i in range(2):
        creating_pod(j, i, nodes[i], 5.4, started=5)
    reasons = ("RestartJobSetFailurePolicyAction", "RestartingJobSet")
    restart_events(js, first_failed, count=4, first=178, last=6, reasons=reasons)


@scenario("restarting-app-failure", "restarting", cause="app-failure")
def restarting_app_failure(w: World) -> None:
    """The driver crash-loops on the JobSet's third attempt; its failures restarted the JobSet twice."""
    nodes = pool(w, 3, a2, "nlp-cluster", "a100-pool")
    driver = gpu_rj("driver", 1, 1, "8")
    workers = gpu_rj("workers", 2, 1, "8")
    status = jobset_status(rj_status("driver", active=1), rj_status("workers", ready=2, active=2), restarts=2)
    js = jobset(
        w,
        "bert-large-mlm",
        "nlp",
        [driver, workers],
        created=130,
        failure_policy={"maxRestarts": 5},
        coordinator={"replicatedJob": "driver", "jobIndex": 0, "podIndex": 0},
        status=status,
    )
    j = job(js, driver, 0, attempt=2, created=16, active=1)
    said = (
        "Traceback (most recent call last):\n  File \"/app/train.py\", line 212, in <module>\n"
        "    tokenizer = AutoTokenizer.from_pretrained(args.model)\n"
        "OSError: Can't load tokenizer for 'bert-large-uncased-mlm'. Make sure the name is right.\n"
    )
    crash_looping(j, nodes[0], 15.9, {**exited(1, "Error", 1.5, 3), "message": said}, 2, "40s")
    for i in range(2):
        full_job(js, workers, i, [nodes[1 + i]], attempt=2, created=16)
    restart_events(js, "bert-large-mlm-driver-0", count=2, first=55, last=16.2, new_style=False)


@scenario("restarting-node-failure", "restarting", cause="node-failure")
def restarting_node_failure(w: World) -> None:
    """Node `bad` stopped reporting: the taint manager evicted workers-1's pod (attempt 2), whose Job
    failed and restarted the JobSet. That pod is stuck Terminating on the unreachable node, so its Job
    is not gone and workers-1 of attempt 3 cannot be created yet (jobset#576)."""
    placement = {BLOCK: "b-91f2", "cloud.google.com/gce-topology-subblock": "sb-01"}
    nodes = [
        a3(w, "ml-prod", "a3-pool", group="3e8f1a7c", host=f"h-{w.hexid(12)}", extra=placement)
        for _ in range(5)
    ]
    bad = nodes[1]
    unreachable(bad, 9)
    rj = gpu_rj("workers", 4, 1)
    first_failed = "palm-tune-workers-1"
    status = jobset_status(
        rj_status("workers", active=3), conditions=[jobset_restarting(first_failed, 3)], restarts=3
    )
    js = jobset(w, "palm-tune", "llm", [rj], created=320, status=status)
    fail_job = (
        "Container trainer for pod llm/palm-tune-workers-1-0 failed with exit code 137 matching FailJob rule at "
        "index 0"
    )
    failed = job_failed(3.5, "PodFailurePolicy", fail_job)
    old = job(js, rj, 1, attempt=2, created=130, deleting=3, failed=1, conditions=failed)
    evicted = ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
    stuck = pod(old, 0, "Running", node=bad, created=129.9, ready=False, deleting=4, disruption=evicted)
    event(w, stuck, "NodeNotReady", "Node is not ready", source="node-controller", first=9, last=9)
    event(
        w,
        stuck,
        "TaintManagerEviction",
        f"Marking for deletion Pod llm/{stuck['metadata']['name']}",
        kind="Normal",
        source="taint-eviction-controller",
        first=4,
        last=4,
    )
    for i in (0, 2, 3):
        j = job(js, rj, i, attempt=3, created=2.5, active=1)
        creating_pod(j, 0, nodes[i], 2.4, started=2.2)
    restart_events(js, first_failed, count=3, first=215, last=3)


@scenario("restarting-pod-preemption", "restarting", cause="pod-preemption")
def restarting_pod_preemption(w: World) -> None:
    """A higher-priority Deployment preempted workers-0 (attempt 0); workers-1 was recreated for
    attempt 1 and waits for GPUs, workers-0's old Job is still being deleted."""
    nodes = [lab_node(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1, "4")
    first_failed = "ablation-small-workers-0"
    status = jobset_status(
        rj_status("workers", active=1), conditions=[jobset_restarting(first_failed, 2)], restarts=1
    )
    js = jobset(
        w, "ablation-small", "research", [rj], created=70, failure_policy={"maxRestarts": 3}, status=status
    )
    old = job(js, rj, 0, attempt=0, created=69, deleting=2, failed=1)
    preempted = (
        "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
    )
    victim = pod(
        old, 0, "Running", node=nodes[0], created=68.9, ready=False, deleting=2.2, disruption=preempted
    )
    event(
        w,
        victim,
        "Preempted",
        "Preempted by pod 0b7e5a4c-51d7-4f3e-a0a2-9d8f1c6e2b71 on node gpu-node-00.lab.internal",
        source="default-scheduler",
        first=2.3,
        last=2.3,
        new_style=True,
    )
    j = job(js, rj, 1, attempt=1, created=1.5, active=1)
    message = (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No "
        "preemption victims found for incoming pod."
    )
    pod(j, 0, "Pending", created=1.4, unschedulable=message)
    for i, n in enumerate(nodes):
        other_pod(
            w, "prod-inference", f"llm-gateway-{i}", n, ("nvidia.com/gpu", "8"), ("Deployment", "llm-gateway")
        )
    restart_events(js, first_failed, first=2, last=2)


@scenario("restarting-unknown", "restarting", cause="unknown")
def restarting_unknown(w: World) -> None:
    """The JobSet restarted, and nothing left says why: the failed Jobs and their events are gone."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1)
    first_failed = "dlrm-train-workers-0"
    status = jobset_status(
        rj_status("workers", active=2), conditions=[jobset_restarting(first_failed, 1.5)], restarts=1
    )
    js = jobset(w, "dlrm-train", "ml-train", [rj], created=400, status=status)
    for i in range(2):
        j = job(js, rj, i, attempt=1, created=1.2, active=1)
        creating_pod(j, 0, nodes[i], 1.1, started=1, scheduled_event=False)
