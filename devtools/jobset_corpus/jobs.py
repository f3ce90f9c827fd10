"""A JobSet as its webhook defaults it, its child Jobs as the JobSet controller creates them, and the
status and conditions the JobSet and Job controllers write."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from devtools.jobset_corpus.world import JOBSET_API, Obj, World, cond, jcond, owner_ref, ts

TPU_IMAGE = "us-central1-docker.pkg.dev/ml-platform-prod/train/maxtext:2026.11.20"
GPU_IMAGE = "nvcr.io/nvidia/pytorch:25.10-py3"


@dataclass
class RJ:
    """A replicatedJob of a JobSet's spec."""

    name: str
    replicas: int
    parallelism: int
    resource: tuple[str, str]
    image: str
    container: str = "trainer"
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    restart_policy: str = "OnFailure"
    backoff_limit: int = 0
    runtime_class: str = ""
    depends_on: list[Obj] = field(default_factory=list)
    affinity: Obj = field(default_factory=dict)


def recreate(max_restarts: int) -> Obj:
    """A failurePolicy that recreates every Job on a failure, at most `max_restarts` times."""
    return {"maxRestarts": max_restarts, "restartStrategy": "Recreate"}


RESTART_POLICY = recreate(10)


@dataclass
class JS:
    """A JobSet being built and what the objects of its children need."""

    w: World
    name: str
    ns: str
    rjs: list[RJ]
    obj: Obj
    topology: str = ""

    @property
    def uid(self) -> str:
        return str(self.obj["metadata"]["uid"])


def jobset(
    w: World,
    name: str,
    ns: str,
    rjs: list[RJ],
    *,
    created: float = 90,
    topology: str = "",
    failure_policy: Obj | None = RESTART_POLICY,
    suspend: bool = False,
    queue: str = "",
    coordinator: Obj | None = None,
    in_order: bool = False,
    status: Obj | None = None,
) -> JS:
    """A JobSet as its webhook defaults it. `failure_policy`: by default the corpus's usual one
    (Recreate, at most 10 restarts); None: none, so the first failed Job fails the JobSet. `queue`: the
    Kueue LocalQueue it is labelled for."""
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    annotations = {"alpha.jobset.sigs.k8s.io/exclusive-topology": topology} if topology else {}
    spec: Obj = {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True, "subdomain": name},
        "replicatedJobs": [
            {
                **({"dependsOn": rj.depends_on} if rj.depends_on else {}),
                "groupName": "default",
                "name": rj.name,
                "replicas": rj.replicas,
                "template": {"metadata": {}, "spec": job_spec(rj, name, None)},
            }
            for rj in rjs
        ],
        "startupPolicy": {"startupPolicyOrder": "InOrder" if in_order else "AnyOrder"},
        "successPolicy": {"operator": "All"},
        "suspend": suspend,
    }
    if failure_policy is not None:
        spec["failurePolicy"] = dict(failure_policy)
    if coordinator is not None:
        spec["coordinator"] = coordinator
    obj = w.add(
        {
            "apiVersion": JOBSET_API,
            "kind": "JobSet",
            "metadata": {
                **({"annotations": annotations} if annotations else {}),
                "creationTimestamp": ts(created),
                "generation": 1,
                **({"labels": labels} if labels else {}),
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": status or {},
        }
    )
    return JS(w, name, ns, rjs, obj, topology)


def job_spec(
    rj: RJ, js: str, labels: dict[str, str] | None, annotations: dict[str, str] | None = None
) -> Obj:
    """The Job spec of replicatedJob `rj`: an Indexed Job, its pods on JobSet `js`'s subdomain."""
    request, amount = rj.resource
    container = {
        "command": ["python3", "-m", "train", "--config=/etc/train/config.yaml"],
        "image": rj.image,
        "imagePullPolicy": "IfNotPresent",
        "name": rj.container,
        "ports": [{"containerPort": 8471, "protocol": "TCP"}, {"containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {request: amount}, "requests": {request: amount}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    pod_spec: Obj = {
        **({"affinity": rj.affinity} if rj.affinity else {}),
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        **({"nodeSelector": rj.node_selector} if rj.node_selector else {}),
        "restartPolicy": rj.restart_policy,
        **({"runtimeClassName": rj.runtime_class} if rj.runtime_class else {}),
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "subdomain": js,
        "terminationGracePeriodSeconds": 30,
        **({"tolerations": rj.tolerations} if rj.tolerations else {}),
    }
    meta: Obj = {}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {
        "backoffLimit": rj.backoff_limit,
        "completionMode": "Indexed",
        "completions": rj.parallelism,
        "manualSelector": False,
        "parallelism": rj.parallelism,
        "podReplacementPolicy": "TerminatingOrFailed",
        "suspend": False,
        "template": {"metadata": meta, "spec": pod_spec},
    }


@dataclass
class Job:
    """A child Job built, and what its pods need."""

    js: JS
    rj: RJ
    index: int
    obj: Obj
    attempt: int

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def uid(self) -> str:
        return str(self.obj["metadata"]["uid"])

    @property
    def key(self) -> str:
        return hashlib.sha1(f"{self.js.ns}/{self.name}".encode()).hexdigest()


def jobset_keys(js: JS, rj: RJ, index: int, attempt: int, job_key: str) -> dict[str, str]:
    """The labels (and annotations) the JobSet controller puts on a child Job and its pod template."""
    total = sum(r.replicas for r in js.rjs)
    before = sum(r.replicas for r in js.rjs[: js.rjs.index(rj)])
    return {
        "jobset.sigs.k8s.io/global-replicas": str(total),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": str(total),
        "jobset.sigs.k8s.io/job-global-index": str(before + index),
        "jobset.sigs.k8s.io/job-group-index": str(before + index),
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/job-key": job_key,
        "jobset.sigs.k8s.io/jobset-name": js.name,
        "jobset.sigs.k8s.io/jobset-uid": js.uid,
        "jobset.sigs.k8s.io/replicatedjob-name": rj.name,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(rj.replicas),
        "jobset.sigs.k8s.io/restart-attempt": str(attempt),
    }


def job(
    js: JS,
    rj: RJ,
    index: int,
    *,
    created: float,
    attempt: int = 0,
    active: int = 0,
    ready: int = 0,
    failed: int = 0,
    succeeded: int = 0,
    conditions: list[Obj] | None = None,
    completed: float | None = None,
    pods_created: bool = True,
    suspend: bool = False,
    deleting: float | None = None,
) -> Job:
    """Child Job `<js>-<rj>-<index>` of restart `attempt`, as the JobSet controller creates it, with the
    status the Job controller keeps (`active`, `ready`, ... pods; `completed`: when it completed).
    `pods_created=False`: the API server has rejected every pod it tried to create, so the Job
    controller has only stamped its startTime. `deleting`: being deleted in the foreground, as the
    JobSet controller deletes the Jobs of an attempt it restarts."""
    w = js.w
    name = f"{js.name}-{rj.name}-{index}"
    uid = w.uid()
    key = hashlib.sha1(f"{js.ns}/{name}".encode()).hexdigest()
    keys = jobset_keys(js, rj, index, attempt, key)
    annotations = dict(keys)
    if js.topology:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = js.topology
    if js.obj["spec"].get("coordinator"):
        c = js.obj["spec"]["coordinator"]
        endpoint = f"{js.name}-{c['replicatedJob']}-{c.get('jobIndex', 0)}-{c.get('podIndex', 0)}.{js.name}"
        keys["jobset.sigs.k8s.io/coordinator"] = endpoint
        annotations["jobset.sigs.k8s.io/coordinator"] = endpoint
    template_labels = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
        **keys,
    }
    spec = job_spec(rj, js.name, template_labels, annotations)
    spec["suspend"] = suspend
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    meta: Obj = {
        "annotations": {"batch.kubernetes.io/job-tracking": "", **annotations},
        "creationTimestamp": ts(created),
        "generation": 1,
        "labels": keys,
        "name": name,
        "namespace": js.ns,
        "ownerReferences": [owner_ref(JOBSET_API, "JobSet", js.name, js.uid)],
        "resourceVersion": w.rv(),
        "uid": uid,
    }
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
        meta["deletionGracePeriodSeconds"] = 0
        meta["finalizers"] = ["foregroundDeletion"]
    obj = w.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": spec,
            "status": job_status(active, ready, failed, succeeded, created, conditions, completed)
            if pods_created
            else {"startTime": ts(created - 0.1), "terminating": 0, "uncountedTerminatedPods": {}},
        }
    )
    return Job(js, rj, index, obj, attempt)


def job_status(
    active: int,
    ready: int,
    failed: int,
    succeeded: int,
    start: float,
    conditions: list[Obj] | None,
    completed: float | None,
) -> Obj:
    """An Indexed Job's status as the Job controller writes it (the lowest indexes succeeded)."""
    status: Obj = {"active": active} if active else {}
    if conditions:
        status["conditions"] = conditions
    if failed:
        status["failed"] = failed
    if succeeded:
        status["completedIndexes"] = "0" if succeeded == 1 else f"0-{succeeded - 1}"
        status["succeeded"] = succeeded
    status["ready"] = ready
    status["startTime"] = ts(start)
    status["terminating"] = 0
    status["uncountedTerminatedPods"] = {}
    if completed is not None:
        status["completionTime"] = ts(completed)
    return status


def rj_status(
    name: str, ready: int = 0, active: int = 0, succeeded: int = 0, failed: int = 0, suspended: int = 0
) -> Obj:
    """A replicatedJob's line of `status.replicatedJobsStatus`: how many of its Jobs are in each state."""
    return {
        "active": active,
        "failed": failed,
        "name": name,
        "ready": ready,
        "succeeded": succeeded,
        "suspended": suspended,
    }


def jobset_status(
    *replicated: Obj, conditions: list[Obj] | None = None, restarts: int = 0, terminal: str = ""
) -> Obj:
    """A JobSet's status as its controller writes it. No failure-policy rule here spares a restart from
    the count, so `restartsCountTowardsMax` is `restarts` (written once there has been one)."""
    status: Obj = {"conditions": conditions} if conditions else {}
    if replicated:
        status["replicatedJobsStatus"] = list(replicated)
    status["restarts"] = restarts
    if restarts:
        status["restartsCountTowardsMax"] = restarts
    if terminal:
        status["terminalState"] = terminal
    return status


RESTART_ACTION = "applying RestartJobSet failure policy action (first failed job: {})"


def jobset_completed(minutes_ago: float) -> Obj:
    """Every Job succeeded (successPolicy `All`)."""
    return jcond("Completed", "AllJobsCompleted", "jobset completed successfully", minutes_ago)


def jobset_suspended(minutes_ago: float) -> Obj:
    return jcond("Suspended", "SuspendedJobs", "jobset is suspended", minutes_ago)


def jobset_resumed(minutes_ago: float) -> Obj:
    """Suspended=False after Kueue (or a person) set `suspend: false`."""
    return jcond("Suspended", "ResumeJobs", "jobset is resumed", minutes_ago, "False")


def jobset_restarting(first_failed: str, minutes_ago: float) -> Obj:
    """The default failure policy action: a Job failed, so the controller restarts the whole JobSet."""
    return jcond("RestartingJobSet", "DefaultFailurePolicy", RESTART_ACTION.format(first_failed), minutes_ago)


def jobset_restarted(minutes_ago: float) -> Obj:
    """RestartingJobSet=False once every Job of the new attempt is ready."""
    return jcond("RestartingJobSet", "JobsReady", "all jobs are ready", minutes_ago, "False")


def admitted(cluster_queue: str, minutes_ago: float) -> list[Obj]:
    """A Kueue Workload's conditions once its ClusterQueue reserved quota and admitted it."""
    return [
        jcond(
            "QuotaReserved", "QuotaReserved", f"Quota reserved in ClusterQueue {cluster_queue}", minutes_ago
        ),
        jcond("Admitted", "Admitted", "The workload is admitted", minutes_ago),
    ]


def completions_reached(minutes_ago: float) -> list[Obj]:
    """A Job's conditions once every index succeeded: `SuccessCriteriaMet`, then `Complete` (the API
    server refuses `Complete` without the first, and a Job without `completionTime`, since 1.31)."""
    message = "Reached expected number of succeeded pods"
    return [
        cond(t, "CompletionsReached", message, m)
        for t, m in (("SuccessCriteriaMet", minutes_ago + 0.1), ("Complete", minutes_ago))
    ]


def job_failed(minutes_ago: float, reason: str = "BackoffLimitExceeded", message: str = "") -> list[Obj]:
    """A Job's conditions once it failed: `FailureTarget`, then `Failed` (the API server refuses
    `Failed` without the first since 1.31); by default, more pods failed than backoffLimit allows."""
    message = message or "Job has reached the specified backoff limit"
    return [
        cond(t, reason, message, m)
        for t, m in (("FailureTarget", minutes_ago + 0.1), ("Failed", minutes_ago))
    ]


def job_suspended(minutes_ago: float) -> Obj:
    return cond("Suspended", "JobSuspended", "Job suspended", minutes_ago)
