"""Controllers and their pod templates: DaemonSets, ReplicaSets and plain Jobs, and the workloads every
node of the cluster runs or that fill its CPU."""

from __future__ import annotations

from datetime import datetime, timedelta

from devtools.cluster.catalog import (
    CPU_SHAPES,
    DEFAULT_TOLERATIONS,
    NAMESPACES,
    NOW,
    REGISTRY,
    SYSTEM_SHAPES,
    Obj,
    Shape,
)
from devtools.cluster.units import cpu_quantity, memory_quantity, ts
from devtools.cluster.world import Workload, World

SYSTEM_POD = {
    "priorityClassName": "system-node-critical",
    "priority": 2000001000,
    "tolerations": [{"operator": "Exists"}],
}
"""What a DaemonSet's pods add to their template: they run on every node, whatever its taints."""


def add_standing_workloads(world: World) -> None:
    """The DaemonSets, the CPU ReplicaSets (two per shape and namespace) and the finished batch Jobs
    whose pods fill the nodes."""
    world.daemonsets = {
        name: workload(
            world, "kube-system", "DaemonSet", name, shape, {"k8s-app": name}, spec_extra=SYSTEM_POD
        )
        for name, shape in SYSTEM_SHAPES.items()
    }
    world.cpu_workloads = [
        workload(world, ns, "ReplicaSet", f"{shape.name}-{world.suffix(10)}", shape)
        for shape in CPU_SHAPES
        for ns in NAMESPACES
        for _ in range(2)
    ]
    embed = Shape("embed-backfill", f"{REGISTRY}/data/embedder:1.12.0", 200, 512)
    world.finished_jobs = [
        job(world, "data-pipeline", f"embed-backfill-{world.hex(5)}", embed, finished=True) for _ in range(20)
    ]


def workload(
    world: World,
    namespace: str,
    kind: str,
    name: str,
    shape: Shape,
    extra_labels: dict[str, str] | None = None,
    *,
    spec_extra: Obj | None = None,
    created: datetime | None = None,
    uid: str | None = None,
) -> Workload:
    """A controller of `kind` (DaemonSet, ReplicaSet or Job) and its pod template."""
    uid = uid or world.uid()
    created = created or NOW - timedelta(days=1 + world.rng.randrange(20), minutes=world.rng.randrange(60))
    labels = _pod_labels(world, kind, name, uid, shape) | (extra_labels or {})
    mount = "kube-api-access-" + world.suffix()
    spec: Obj = {
        "containers": [container(shape, mount)],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never" if kind == "Job" else "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": _tolerations(shape),
        "volumes": [_token_volume(mount)],
    }
    if shape.node_selector:
        spec["nodeSelector"] = shape.node_selector
    spec |= spec_extra or {}
    requests = {"cpu": shape.cpu_m, "memory": shape.memory_mib, **shape.extended}
    return Workload(namespace, kind, name, uid, labels, spec, requests, created)


def _pod_labels(world: World, kind: str, name: str, uid: str, shape: Shape) -> dict[str, str]:
    """The labels its controller gives a pod."""
    if kind == "DaemonSet":
        return {"controller-revision-hash": world.suffix(10), "pod-template-generation": "3"}
    labels = {"app.kubernetes.io/name": shape.name}
    if kind == "ReplicaSet":
        labels["pod-template-hash"] = name.rsplit("-", 1)[-1]
    elif kind == "Job":
        labels |= {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
    return labels


def container(shape: Shape, mount: str) -> Obj:
    """The one container of a pod of `shape`, with the service account token mounted at `mount`."""
    requests: Obj = {"cpu": cpu_quantity(shape.cpu_m), "memory": memory_quantity(shape.memory_mib)}
    limits: Obj = {"memory": memory_quantity(shape.memory_mib)}
    for resource, count in shape.extended.items():
        requests[resource] = limits[resource] = str(count)
    made: Obj = {"name": shape.name, "image": shape.image, "imagePullPolicy": "IfNotPresent"}
    if shape.command:
        made["command"] = list(shape.command)
    return made | {
        "resources": {"limits": limits, "requests": requests},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": mount, "readOnly": True}
        ],
    }


def _token_volume(name: str) -> Obj:
    namespace_file = {
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
        "path": "namespace",
    }
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [namespace_file]}},
            ],
        },
    }


def _tolerations(shape: Shape) -> list[Obj]:
    """A pod's persisted tolerations: its own, those GKE's ExtendedResourceToleration admission adds
    for each extended resource it requests, then the DefaultTolerationSeconds ones."""
    injected = [{"effect": "NoSchedule", "key": r, "operator": "Exists"} for r in sorted(shape.extended)]
    return [*shape.tolerations, *injected, *DEFAULT_TOLERATIONS]


# --- plain Jobs -----------------------------------------------------------------------------------


def job(
    world: World,
    namespace: str,
    name: str,
    shape: Shape,
    *,
    finished: bool = False,
    created: datetime | None = None,
) -> Workload:
    """A Job and its pod template; `settle_jobs` fills in its counts once its pods exist."""
    world.names.add((namespace, name))
    wl = workload(world, namespace, "Job", name, shape, created=created)
    wl.finished = finished
    wl.job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "creationTimestamp": ts(wl.created),
            "generation": 1,
            "labels": {k: v for k, v in wl.labels.items() if k != "app.kubernetes.io/name"},
            "name": name,
            "namespace": namespace,
            "resourceVersion": world.rv(),
            "uid": wl.uid,
        },
        "spec": {
            "backoffLimit": 6 if finished else 0,
            "completionMode": "NonIndexed",
            "manualSelector": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": wl.uid}},
            "suspend": False,
            "template": {"metadata": {"labels": wl.labels}, "spec": wl.spec},
        },
        "status": {"startTime": ts(wl.created)},
    }
    world.jobs.append(wl.job)
    world.job_workloads.append(wl)
    return wl


def settle_jobs(world: World) -> None:
    """Completions, parallelism and status of the plain Jobs, from the pods they got; a Job that got
    none is dropped."""
    unused = [wl.job for wl in world.job_workloads if not wl.pods]
    world.jobs[:] = [job for job in world.jobs if all(job is not u for u in unused)]
    for wl in world.job_workloads:
        assert wl.job is not None
        wl.job["spec"] |= {"completions": wl.pods, "parallelism": wl.pods}
        if wl.finished:
            wl.job["status"] = _complete(wl)
        else:
            pending = any(c["type"] == "PodScheduled" and c["status"] == "False" for c in wl.conditions)
            wl.job["status"] |= {
                "active": wl.pods,
                "ready": 0 if pending else wl.pods,
                "terminating": 0,
                "uncountedTerminatedPods": {},
            }


def _complete(wl: Workload) -> Obj:
    """The status of a Job whose pods all succeeded a quarter of an hour after it started."""
    done = ts(wl.created + timedelta(minutes=15))
    conditions = [
        {
            "lastProbeTime": done,
            "lastTransitionTime": done,
            "message": "Reached expected number of succeeded pods",
            "reason": "CompletionsReached",
            "status": "True",
            "type": type_,
        }
        for type_ in ("SuccessCriteriaMet", "Complete")
    ]
    return {
        "completionTime": done,
        "conditions": conditions,
        "ready": 0,
        "startTime": ts(wl.created),
        "succeeded": wl.pods,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    }
