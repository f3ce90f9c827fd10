# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""The other objects of a JobSet's cluster: Kueue Workloads, ResourceQuotas, RuntimeClasses, the
webhook controllers' pods, and other workloads' pods holding devices."""

from __future__ import annotations

import hashlib

from devtools.jobset_corpus.jobs import JS
from devtools.jobset_corpus.world import JOBSET_API, Obj, World, owner_ref, ts


def workload(js: JS, conditions: list[Obj], admitted_flavor: str = "") -> Obj:
    """The Workload Kueue creates for a JobSet labelled with a queue: one podSet per replicatedJob, and
    the flavor assignment once admitted."""
    w = js.w
    queue = js.obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    pod_sets = [
        {
            "count": rj.replicas * rj.parallelism,
            "name": rj.name,
            "template": js.obj["spec"]["replicatedJobs"][i]["template"]["spec"]["template"],
        }
        for i, rj in enumerate(js.rjs)
    ]
    status: Obj = {"conditions": conditions}
    if admitted_flavor:
        status["admission"] = {
            "clusterQueue": "tpu-cluster-queue",
            "podSetAssignments": [
                {
                    "count": ps["count"],
                    "flavors": {js.rjs[i].resource[0]: admitted_flavor},
                    "name": ps["name"],
                }
                for i, ps in enumerate(pod_sets)
            ],
        }
    return w.add(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "creationTimestamp": js.obj["metadata"]["creationTimestamp"],
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "generation": 1,
                "labels": {"kueue.x-k8s.io/job-uid": js.uid},
                "name": f"jobset-{js.name}-{hashlib.sha1(js.uid.encode()).hexdigest()[:5]}",
                "namespace": js.ns,
                "ownerReferences": [owner_ref(JOBSET_API, "JobSet", js.name, js.uid)],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "active": True,
                "podSets": pod_sets,
                "priority": 0,
                "priorityClassSource": "",
                "queueName": queue,
            },
            "status": status,
        }
    )


def quota(w: World, name: str, ns: str, hard: dict[str, str], used: dict[str, str]) -> Obj:
    """A namespace's ResourceQuota and the usage the quota controller last counted."""
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {
                "creationTimestamp": ts(30000),
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {"hard": hard},
            "status": {"hard": hard, "used": used},
        }
    )


def exceeded_quota(quota_name: str, resource: str, requested: int, used: int, limit: int) -> str:
    """The ResourceQuota admission plugin's reason for rejecting an object."""
    return (
        f"exceeded quota: {quota_name}, requested: {resource}={requested}, used: {resource}={used}, "
        f"limited: {resource}={limit}"
    )


def runtime_class(w: World, name: str, handler: str) -> Obj:
    """A RuntimeClass (cluster-scoped)."""
    return w.add(
        {
            "apiVersion": "node.k8s.io/v1",
            "handler": handler,
            "kind": "RuntimeClass",
            "metadata": {
                "creationTimestamp": ts(50000),
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
        }
    )


def controller_pod(w: World, ns: str, deployment: str, gpu_nodes: int) -> Obj:
    """A Pending controller-manager pod of a webhook's Deployment, in a cluster whose only nodes are
    `gpu_nodes` tainted GPU nodes: the webhook has no endpoint."""
    message = (
        f"0/{gpu_nodes} nodes are available: {gpu_nodes} node(s) had untolerated taint {{nvidia.com/gpu: present}}. "
        f"preemption: 0/{gpu_nodes} nodes are available: {gpu_nodes} Preemption is not helpful for scheduling."
    )
    name = f"{deployment}-{w.suffix(10)}-{w.suffix()}"
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(75),
                "generateName": name[:-5],
                "labels": {"control-plane": "controller-manager", "pod-template-hash": name.split("-")[-2]},
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref("apps/v1", "ReplicaSet", name[:-6], w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "containers": [
                    {
                        "args": ["--zap-log-level=2"],
                        "command": ["/manager"],
                        "image": "registry.k8s.io/jobset/jobset:v0.12.0"
                        if "jobset" in ns
                        else "registry.k8s.io/kueue/kueue:v0.14.2",
                        "name": "manager",
                        "ports": [{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"}],
                        "resources": {
                            "limits": {"cpu": "2", "memory": "4Gi"},
                            "requests": {"cpu": "2", "memory": "4Gi"},
                        },
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "serviceAccountName": "jobset-controller-manager"
                if "jobset" in ns
                else "kueue-controller-manager",
                "terminationGracePeriodSeconds": 10,
            },
            "status": {
                "conditions": [
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": ts(75),
                        "message": message,
                        "reason": "Unschedulable",
                        "status": "False",
                        "type": "PodScheduled",
                    }
                ],
                "phase": "Pending",
            },
        }
    )


def other_pod(
    w: World, ns: str, name: str, node: Obj, resource: tuple[str, str], owner: tuple[str, str]
) -> Obj:
    """A running pod of another workload that holds devices on `node`."""
    request, amount = resource
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(600),
                "labels": {"app": owner[1]},
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref("apps/v1", owner[0], owner[1], w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "containers": [
                    {
                        "image": "us-docker.pkg.dev/ml-platform-prod/serve/jetstream:2026.11.02",
                        "name": "server",
                        "resources": {"limits": {request: amount}, "requests": {request: amount}},
                    }
                ],
                "nodeName": node["metadata"]["name"],
                "priority": 0,
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "tolerations": [{"effect": "NoSchedule", "key": request, "operator": "Exists"}],
            },
            "status": {
                "conditions": [
                    {"lastProbeTime": None, "lastTransitionTime": ts(598), "status": "True", "type": "Ready"},
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": ts(599.9),
                        "status": "True",
                        "type": "PodScheduled",
                    },
                ],
                "hostIP": node["status"]["addresses"][0]["address"],
                "phase": "Running",
                "podIP": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}",
                "startTime": ts(599),
            },
        }
    )
