"""A TrainJob as Kubeflow Trainer v2.3.0 writes it: the TrainJob after its webhook's defaulting, the
(Cluster)TrainingRuntime it names, the JobSet it builds (named as the TrainJob, owned by it), the
PodGroup of a gang-scheduling runtime, its one event `TrainJobResourcesCreationFailed`, and Kueue's
Workload for a queued TrainJob."""

from __future__ import annotations

import copy
import hashlib

from devtools.jobset_corpus.events import event
from devtools.jobset_corpus.jobs import JS, RJ, job_spec
from devtools.jobset_corpus.world import Obj, World, jcond, owner_ref, ts

API = "trainer.kubeflow.org/v1alpha1"
STEP = "trainer.kubeflow.org/trainjob-ancestor-step"


def runtime(
    w: World,
    name: str,
    rjs: list[RJ],
    *,
    ns: str = "",
    num_nodes: int = 1,
    gang: Obj | None = None,
    steps: dict[str, str] | None = None,
) -> Obj:
    """A ClusterTrainingRuntime (or, with `ns`, a TrainingRuntime): torch's mlPolicy, `gang` its
    podGroupPolicy, a JobSet template of `rjs`, each labelled with its ancestor step."""
    steps = steps or {}
    replicated = [
        {
            **({"dependsOn": rj.depends_on} if rj.depends_on else {}),
            "name": rj.name,
            "replicas": rj.replicas,
            "template": {
                "metadata": {"labels": {STEP: steps.get(rj.name, "trainer")}},
                "spec": job_spec(rj, name, None),
            },
        }
        for rj in rjs
    ]
    meta: Obj = {
        "creationTimestamp": ts(20000),
        "generation": 1,
        "name": name,
        "resourceVersion": w.rv(),
        "uid": w.uid(),
    }
    if ns:
        meta["namespace"] = ns
    return w.add(
        {
            "apiVersion": API,
            "kind": "TrainingRuntime" if ns else "ClusterTrainingRuntime",
            "metadata": meta,
            "spec": {
                "mlPolicy": {"numNodes": num_nodes, "torch": {"numProcPerNode": "auto"}},
                **({"podGroupPolicy": gang} if gang else {}),
                "template": {"spec": {"replicatedJobs": replicated}},
            },
        }
    )


def trainjob(
    w: World,
    ns: str,
    name: str,
    runtime_name: str,
    *,
    created: float,
    runtime_kind: str = "ClusterTrainingRuntime",
    num_nodes: int | None = None,
    gpus: str = "",
    suspend: bool = False,
    queue: str = "",
    conditions: list[Obj] | None = None,
    deadline: int | None = None,
    jobs_status: list[Obj] | None = None,
) -> Obj:
    """A TrainJob as its webhook defaults it, with the status the Trainer controller writes."""
    trainer: Obj = {}
    if num_nodes is not None:
        trainer["numNodes"] = num_nodes
    if gpus:
        trainer["resourcesPerNode"] = {
            "limits": {"nvidia.com/gpu": gpus},
            "requests": {"nvidia.com/gpu": gpus},
        }
    status: Obj = {}
    if conditions:
        status["conditions"] = conditions
    if jobs_status:
        status["jobsStatus"] = jobs_status
    return w.add(
        {
            "apiVersion": API,
            "kind": "TrainJob",
            "metadata": {
                "creationTimestamp": ts(created),
                "generation": 1,
                **({"labels": {"kueue.x-k8s.io/queue-name": queue}} if queue else {}),
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                **({"activeDeadlineSeconds": deadline} if deadline else {}),
                "managedBy": "trainer.kubeflow.org/trainjob-controller",
                "runtimeRef": {
                    "apiGroup": "trainer.kubeflow.org",
                    "kind": runtime_kind,
                    "name": runtime_name,
                },
                "suspend": suspend,
                **({"trainer": trainer} if trainer else {}),
            },
            "status": status,
        }
    )


def owned(js: JS, tj: Obj) -> None:
    """The JobSet as Trainer applies it: owned by the TrainJob (controller), labelled with the steps."""
    meta = tj["metadata"]
    js.obj["metadata"]["ownerReferences"] = [owner_ref(API, "TrainJob", meta["name"], meta["uid"])]


def creation_failed(w: World, tj: Obj, error: str, count: int, first: float, last: float) -> Obj:
    """Trainer's one event: the JobSet (or another object it builds) could not be built or applied."""
    found = event(
        w,
        tj,
        "TrainJobResourcesCreationFailed",
        f"TrainJob resources reconciliation failed: {error}",
        source="trainer",
        count=count,
        first=first,
        last=last,
        new_style=True,
    )
    found["action"] = "Reconciling"
    return found


def podgroup(
    w: World, tj: Obj, group: str, min_member: int, min_resources: dict[str, str], status: Obj
) -> Obj:
    """The PodGroup Trainer makes for a gang-scheduling runtime: named as the TrainJob, owned by it."""
    meta = tj["metadata"]
    version = "v1alpha1" if group == "scheduling.x-k8s.io" else "v1beta1"
    spec: Obj = {"minMember": min_member, "minResources": dict(min_resources)}
    if group == "scheduling.x-k8s.io":
        spec["scheduleTimeoutSeconds"] = 60
    else:
        spec["queue"] = "default"
    return w.add(
        {
            "apiVersion": f"{group}/{version}",
            "kind": "PodGroup",
            "metadata": {
                "creationTimestamp": meta["creationTimestamp"],
                "generation": 1,
                "name": meta["name"],
                "namespace": meta["namespace"],
                "ownerReferences": [owner_ref(API, "TrainJob", meta["name"], meta["uid"])],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": status,
        }
    )


def in_gang(w: World, tj: Obj, group: str) -> None:
    """Every pod of the TrainJob's JobSet names its PodGroup, as Trainer's gang plugins set it on each
    replicatedJob's pod template: coscheduling's label `scheduling.x-k8s.io/pod-group`, Volcano's
    annotation `scheduling.k8s.io/group-name` (`pkg/runtime/framework/plugins/{coscheduling,volcano}`)."""
    named = tj["metadata"]["name"]
    for obj in w.items:
        meta = obj["metadata"]
        if obj["kind"] != "Pod" or meta.get("labels", {}).get("jobset.sigs.k8s.io/jobset-name") != named:
            continue
        if group == "scheduling.x-k8s.io":
            meta["labels"]["scheduling.x-k8s.io/pod-group"] = named
        else:
            meta.setdefault("annotations", {})["scheduling.k8s.io/group-name"] = named


def kueue_workload(w: World, tj: Obj, rjs: list[RJ], conditions: list[Obj]) -> Obj:
    """The Workload Kueue makes for a queued TrainJob (owned by it, one podSet per replicatedJob)."""
    meta = tj["metadata"]
    template = {
        "spec": {
            "containers": [
                {
                    "name": "node",
                    "image": rjs[0].image,
                    "resources": {"requests": {rjs[0].resource[0]: rjs[0].resource[1]}},
                }
            ],
            "restartPolicy": "OnFailure",
        }
    }
    return w.add(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "creationTimestamp": meta["creationTimestamp"],
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "generation": 1,
                "labels": {"kueue.x-k8s.io/job-uid": meta["uid"]},
                "name": f"trainjob-{meta['name']}-{hashlib.sha1(meta['uid'].encode()).hexdigest()[:5]}",
                "namespace": meta["namespace"],
                "ownerReferences": [owner_ref(API, "TrainJob", meta["name"], meta["uid"])],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "active": True,
                "podSets": [
                    {
                        "count": rj.replicas * rj.parallelism,
                        "name": rj.name,
                        "template": copy.deepcopy(template),
                    }
                    for rj in rjs
                ],
                "priority": 0,
                "priorityClassSource": "",
                "queueName": meta["labels"]["kueue.x-k8s.io/queue-name"],
            },
            "status": {"conditions": conditions},
        }
    )


def suspended(minutes_ago: float) -> Obj:
    return jcond("Suspended", "Suspended", "TrainJob is suspended", minutes_ago)


def failed(reason: str, message: str, minutes_ago: float) -> Obj:
    return jcond("Failed", reason, message, minutes_ago)
