"""An exclusive-topology TPU JobSet: one child Job per slice, one pod per TPU host. Every slice but the
last has its own node pool and runs; the last finds no free pool, so its leader is pending and the
JobSet pod webhook rejects its followers (they never get the topology nodeSelector)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from devtools.cluster.catalog import (
    NOW,
    REGISTRY,
    TOPOLOGY_KEY,
    TPU_CHIPS_PER_HOST,
    TPU_HOST,
    TPU_TOPOLOGY,
    Accelerator,
    Obj,
    Shape,
)
from devtools.cluster.nodes import add_node
from devtools.cluster.pods import add_pod
from devtools.cluster.scheduler import failed_scheduling, unschedulable
from devtools.cluster.units import ts
from devtools.cluster.workloads import container, workload
from devtools.cluster.world import Workload, World

NAME = "pretrain-v5p"
NAMESPACE = "llm"
REPLICATED_JOB = "slice"
EXCLUSIVE = {"alpha.jobset.sigs.k8s.io/exclusive-topology": TOPOLOGY_KEY}
"""The annotation that gives each child Job a topology domain (a node pool) of its own."""


@dataclass(frozen=True)
class _JobSet:
    slices: int
    hosts: int
    """Pods (TPU hosts) per slice."""
    uid: str
    created: datetime
    selector: dict[str, str]
    shape: Shape


def add_jobset(world: World, slices: int, hosts: int) -> Obj:
    """The JobSet, its child Jobs, their pods and the TPU node pools of the slices that run."""
    selector = {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": TPU_TOPOLOGY[hosts],
    }
    shape = Shape(
        "jax-trainer",
        f"{REGISTRY}/training/maxtext:2026.11.0",
        200000,
        400 * 1024,
        {"google.com/tpu": TPU_CHIPS_PER_HOST},
        selector,
        command=("python3", "-m", "MaxText.train", "MaxText/configs/base.yml"),
    )
    js = _JobSet(slices, hosts, world.uid(), NOW - timedelta(hours=3), selector, shape)
    for s in range(slices - 1):
        pool = f"tpu-v5p-slice-{s}"
        _child(world, js, s, _slice_nodes(world, js, pool), pool)
    _child(world, js, slices - 1, [], None)
    return _jobset(world, js)


def _slice_nodes(world: World, js: _JobSet, pool: str) -> list[str]:
    """The TPU hosts of one slice: a node pool of its own, in one placement group."""
    accelerator = Accelerator(
        "google.com/tpu",
        TPU_CHIPS_PER_HOST,
        js.selector,
        {"effect": "NoSchedule", "key": "google.com/tpu", "value": "present"},
    )
    group = world.hex(8)
    placement = {"cloud.google.com/gke-placement-group": f"{pool}-placement"}
    nodes = [
        add_node(world, TPU_HOST, h, group, pool_name=pool, accelerator=accelerator, extra_labels=placement)
        for h in range(js.hosts)
    ]
    return [n["metadata"]["name"] for n in nodes]


def _labels(world: World, js: _JobSet, index: int) -> dict[str, str]:
    """What the JobSet controller puts on child Job `index` and its pods."""
    job = f"{NAME}-{REPLICATED_JOB}-{index}"
    key = uuid.uuid5(uuid.NAMESPACE_DNS, f"{NAMESPACE}/{job}").hex + world.hex(8)
    return {
        "jobset.sigs.k8s.io/global-replicas": str(js.slices),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": str(js.slices),
        "jobset.sigs.k8s.io/job-global-index": str(index),
        "jobset.sigs.k8s.io/job-group-index": str(index),
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/job-key": key,
        "jobset.sigs.k8s.io/jobset-name": NAME,
        "jobset.sigs.k8s.io/jobset-uid": js.uid,
        "jobset.sigs.k8s.io/replicatedjob-name": REPLICATED_JOB,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(js.slices),
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }


def _child(world: World, js: _JobSet, index: int, nodes: list[str], pool: str | None) -> None:
    """Child Job `index` with a pod on each of `nodes` (followers pinned to `pool` by the webhook),
    or, with no nodes, only its pending leader and the webhook's rejections of its followers."""
    name = f"{NAME}-{REPLICATED_JOB}-{index}"
    labels = _labels(world, js, index)
    annotations = labels | EXCLUSIVE
    world.names.add((NAMESPACE, name))
    wl = workload(
        world,
        NAMESPACE,
        "Job",
        name,
        js.shape,
        labels,
        created=js.created + timedelta(seconds=3),
        spec_extra={"restartPolicy": "OnFailure", "subdomain": NAME},
    )
    del wl.labels["app.kubernetes.io/name"]
    affinity = _leader_affinity(labels["jobset.sigs.k8s.io/job-key"])
    message = unschedulable(world, wl) if not nodes else None
    pods = [
        _child_pod(world, js, wl, p, nodes[p] if nodes else None, annotations, affinity, pool, message)
        for p in range(max(len(nodes), 1))
    ]
    job = _child_job(world, js, wl, labels, annotations, running=len(nodes), pods=len(pods))
    world.jobs.append(job)
    ref = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": name,
        "namespace": NAMESPACE,
        "resourceVersion": job["metadata"]["resourceVersion"],
        "uid": wl.uid,
    }
    for pod_name in pods[:3]:
        world.events.append(
            _job_event(world, js, ref, "Normal", "SuccessfulCreate", f"Created pod: {pod_name}", 1)
        )
    if not nodes:
        rejection = (
            'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node '
            f"selector for topology domain not found. missing selector: {TOPOLOGY_KEY}"
        )
        world.events.append(_job_event(world, js, ref, "Warning", "FailedCreate", rejection, 17))


def _leader_affinity(key: str) -> Obj:
    """What JobSet's pod webhook gives a leader: its Job's pods together in one topology domain, and no
    other Job's pods there."""
    same_job = {
        "matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [key]}]
    }
    other_jobs = {
        "matchExpressions": [
            {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
            {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [key]},
            {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
        ]
    }
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": same_job, "topologyKey": TOPOLOGY_KEY}
            ]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": other_jobs, "namespaceSelector": {}, "topologyKey": TOPOLOGY_KEY}
            ]
        },
    }


def _child_pod(
    world: World,
    js: _JobSet,
    wl: Workload,
    p: int,
    node: str | None,
    annotations: dict[str, str],
    affinity: Obj,
    pool: str | None,
    pending: str | None,
) -> str:
    """Pod `p` of a child Job: the leader (index 0) with the affinity, a follower with the topology
    nodeSelector; `pending`: the scheduler's message, for a leader that is not placed. Its name."""
    name = f"{wl.name}-{p}-"
    index_label = {"batch.kubernetes.io/job-completion-index": str(p)}
    meta = {
        "annotations": annotations | index_label,
        "labels": wl.labels | index_label | {"jobset.sigs.k8s.io/priority": "0"},
        "generateName": name,
    }
    spec: Obj = {"hostname": f"{wl.name}-{p}"}
    if p == 0:
        spec["affinity"] = affinity
    else:
        spec["nodeSelector"] = js.selector | {TOPOLOGY_KEY: str(pool)}
    pod = add_pod(world, wl, node, name=world.unique(NAMESPACE, name), meta_extra=meta, spec_extra=spec)
    if pending is not None:
        world.events.append(failed_scheduling(world, pod, pending, wl.created))
    return str(pod["metadata"]["name"])


def _child_job(
    world: World,
    js: _JobSet,
    wl: Workload,
    labels: dict[str, str],
    annotations: dict[str, str],
    running: int,
    pods: int,
) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "annotations": annotations | {"batch.kubernetes.io/job-tracking": ""},
            "creationTimestamp": ts(wl.created),
            "generation": 1,
            "labels": labels,
            "name": wl.name,
            "namespace": NAMESPACE,
            "ownerReferences": [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "JobSet",
                    "name": NAME,
                    "uid": js.uid,
                }
            ],
            "resourceVersion": world.rv(),
            "uid": wl.uid,
        },
        "spec": {
            "backoffLimit": 0,
            "completionMode": "Indexed",
            "completions": js.hosts,
            "manualSelector": False,
            "parallelism": js.hosts,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": wl.uid}},
            "suspend": False,
            "template": {"metadata": {"annotations": annotations, "labels": wl.labels}, "spec": wl.spec},
        },
        "status": {
            "active": pods,
            "ready": running,
            "startTime": ts(wl.created),
            "terminating": 0,
            "uncountedTerminatedPods": {},
        },
    }


def _job_event(world: World, js: _JobSet, job: Obj, type_: str, reason: str, message: str, count: int) -> Obj:
    """A job-controller event (core v1 recorder: first and last timestamps, a count)."""
    first = js.created + timedelta(seconds=4)
    last = NOW - timedelta(minutes=1) if count > 1 else first
    return {
        "apiVersion": "v1",
        "count": count,
        "eventTime": None,
        "firstTimestamp": ts(first),
        "involvedObject": job,
        "kind": "Event",
        "lastTimestamp": ts(last),
        "message": message,
        "metadata": {
            "creationTimestamp": ts(first),
            "name": f"{job['name']}.{world.hex(16)}",
            "namespace": NAMESPACE,
            "resourceVersion": world.rv(),
            "uid": world.uid(),
        },
        "reason": reason,
        "reportingComponent": "job-controller",
        "reportingInstance": "",
        "source": {"component": "job-controller"},
        "type": type_,
    }


def _jobset(world: World, js: _JobSet) -> Obj:
    """The JobSet object: one replicatedJob of `slices` child Jobs, all active, all but the last ready."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "annotations": EXCLUSIVE,
            "creationTimestamp": ts(js.created),
            "generation": 1,
            "labels": {"app.kubernetes.io/part-of": "llm-pretraining"},
            "name": NAME,
            "namespace": NAMESPACE,
            "resourceVersion": world.rv(),
            "uid": js.uid,
        },
        "spec": _jobset_spec(js),
        "status": {
            "replicatedJobsStatus": [
                {
                    "active": js.slices,
                    "failed": 0,
                    "name": REPLICATED_JOB,
                    "ready": js.slices - 1,
                    "succeeded": 0,
                    "suspended": 0,
                }
            ],
            "restarts": 0,
            "restartsCountTowardsMax": 0,
        },
    }


def _jobset_spec(js: _JobSet) -> Obj:
    trainer = {
        k: v for k, v in container(js.shape, "").items() if k in ("name", "image", "command", "resources")
    }
    pod_template = {
        "spec": {
            "containers": [trainer],
            "nodeSelector": js.selector,
            "restartPolicy": "OnFailure",
            "subdomain": NAME,
        }
    }
    return {
        "failurePolicy": {"maxRestarts": 3, "restartStrategy": "Recreate"},
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True, "subdomain": NAME},
        "replicatedJobs": [
            {
                "groupName": "default",
                "name": REPLICATED_JOB,
                "replicas": js.slices,
                "template": {
                    "metadata": {"annotations": EXCLUSIVE},
                    "spec": {
                        "backoffLimit": 0,
                        "completionMode": "Indexed",
                        "completions": js.hosts,
                        "parallelism": js.hosts,
                        "template": pod_template,
                    },
                },
            }
        ],
        "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
        "successPolicy": {"operator": "All"},
        "suspend": False,
    }
