"""Pods: bound (Running, or finished), terminating, or pending; and the DaemonSet pods every node runs."""

from __future__ import annotations

from datetime import datetime, timedelta

from devtools.cluster.catalog import NOW, Obj
from devtools.cluster.units import ts
from devtools.cluster.world import Workload, World


def add_pod(
    world: World,
    wl: Workload,
    node: str | None,
    *,
    name: str | None = None,
    phase: str = "Running",
    terminating: bool = False,
    meta_extra: Obj | None = None,
    spec_extra: Obj | None = None,
) -> Obj:
    """A pod of `wl`: bound to `node` (Running, or finished in `phase`) or pending if `node` is None."""
    prefix = wl.name + "-"
    name = name or world.unique(wl.namespace, prefix)
    wl.pods += 1
    metadata: Obj = {
        "creationTimestamp": ts(wl.created),
        "generateName": prefix,
        "labels": wl.labels,
        "name": name,
        "namespace": wl.namespace,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1" if wl.kind == "Job" else "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": wl.kind,
                "name": wl.name,
                "uid": wl.uid,
            }
        ],
        "resourceVersion": world.rv(),
        "uid": world.uid(),
    }
    if terminating:
        metadata |= {"deletionGracePeriodSeconds": 30, "deletionTimestamp": ts(NOW - timedelta(seconds=12))}
    metadata |= meta_extra or {}
    spec = wl.spec | (spec_extra or {})
    if node is not None:
        spec["nodeName"] = node
        used = world.used[node]
        used.update(wl.requests)
        used["pods"] += 1
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": _status(world, wl, node, phase),
    }
    world.pods.append(pod)
    return pod


def _status(world: World, wl: Workload, node: str | None, phase: str) -> Obj:
    if node is None:
        return {"conditions": wl.conditions, "phase": "Pending", "qosClass": "Burstable"}
    if not wl.conditions:
        wl.conditions.extend(_bound_conditions(wl.created, phase))
    container = wl.spec["containers"][0]
    container_id = "containerd://" + world.hex(64)
    host_ip = world.host_ip[node]
    pod_ip = f"10.{world.rng.randrange(64, 96)}.{world.rng.randrange(256)}.{world.rng.randrange(2, 255)}"
    return {
        "conditions": wl.conditions,
        "containerStatuses": [
            {
                "containerID": container_id,
                "image": container["image"],
                "imageID": container["image"].split(":")[0] + "@sha256:" + world.hex(64),
                "lastState": {},
                "name": container["name"],
                "ready": phase == "Running",
                "restartCount": 0,
                "started": phase == "Running",
                "state": _state(wl.created, phase, container_id),
            }
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "phase": phase,
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "qosClass": "Burstable",
        "startTime": ts(wl.created + timedelta(seconds=4)),
    }


def _state(created: datetime, phase: str, container_id: str) -> Obj:
    """The container's state: running since its start, or finished with exit code 0."""
    started = ts(created + timedelta(seconds=9))
    if phase == "Running":
        return {"running": {"startedAt": started}}
    return {
        "terminated": {
            "containerID": container_id,
            "exitCode": 0,
            "finishedAt": ts(created + timedelta(minutes=14)),
            "reason": "Completed",
            "startedAt": started,
        }
    }


def _bound_conditions(created: datetime, phase: str) -> list[Obj]:
    running = phase == "Running"
    ready = "True" if running else "False"
    done: Obj = {} if running else {"reason": "PodCompleted"}

    def cond(type_: str, status: str, delay: int, extra: Obj) -> Obj:
        return {
            "lastProbeTime": None,
            "lastTransitionTime": ts(created + timedelta(seconds=delay)),
            "status": status,
            "type": type_,
        } | extra

    return [
        cond("PodReadyToStartContainers", ready, 6, {}),
        cond("Initialized", "True", 2, done),
        cond("Ready", ready, 11, done),
        cond("ContainersReady", ready, 11, done),
        cond("PodScheduled", "True", 1, {}),
    ]


def add_system_pods(world: World, node: Obj) -> None:
    """The DaemonSet pods every GKE node runs, and the device plugin of its accelerator, each pinned
    to the node by the DaemonSet controller's node affinity."""
    name = node["metadata"]["name"]
    labels = node["metadata"]["labels"]
    wanted = ["fluentbit-gke", "gke-metadata-server", "pdcsi-node"]
    if "cloud.google.com/gke-accelerator" in labels:
        wanted.append("nvidia-gpu-device-plugin-small-cos")
    if "cloud.google.com/gke-tpu-accelerator" in labels:
        wanted.append("tpu-device-plugin")
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    for ds in wanted:
        add_pod(world, world.daemonsets[ds], name, spec_extra={"affinity": affinity})
