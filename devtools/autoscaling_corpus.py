# ruff: noqa: E501  (autoscaler messages are kept whole, as the API serves them)
"""The `/triage` corpus cases of *Will a node come?* (`python -m devtools.autoscaling_corpus`): one
snapshot per case under `tests/corpus/triage/autoscaling-*.json`, and their entries in the index.

Each case is a small GPU cluster read at `NOW` (GKE, EKS or Karpenter nodes, one node full), a pending
pod, and the autoscaler's objects as the API serves them: cluster-autoscaler's and GKE's events on the
pod (every prefix cluster-autoscaler has used), its status ConfigMap in the plain-text (≤ 1.29) and
YAML (≥ 1.30) formats, Karpenter NodePools, NodeClaims and events, ProvisioningRequests and Kueue
Workloads. Message formats: as `diagnosis/autoscaling/events.py` cites them from upstream.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from devtools.corpus import CORPUS, ROOT

Obj = dict[str, Any]
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
NS = "ml"
GKE = "cloud.google.com/gke-nodepool"
EKS = "eks.amazonaws.com/nodegroup"
KARPENTER = "karpenter.sh/nodepool"
MIG = "https://www.googleapis.com/compute/v1/projects/ml-prod/zones/us-central1-a/instanceGroups/gke-prod-{pool}-8f3c2a1d-grp"
INDEX_MARK = "# --- Will a node come? (written by devtools/autoscaling_corpus.py) ---"


def ts(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(*seed: str) -> str:
    return str(uuid.UUID(hashlib.sha1("/".join(seed).encode()).hexdigest()[:32]))


def node(name: str, pool_key: str, pool: str, gpus: int, extra: Obj | None = None) -> Obj:
    capacity = {"cpu": "208", "ephemeral-storage": "507944172Ki", "memory": "1891070612Ki", "pods": "110"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "creationTimestamp": ts(3 * 24 * 60),
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "a3-highgpu-8g" if gpus else "n2-standard-8",
                "topology.kubernetes.io/zone": "us-central1-a",
                pool_key: pool,
                **(extra or {}),
            },
            "name": name,
            "resourceVersion": "1000",
            "uid": _uid("node", name),
        },
        "spec": {"providerID": f"gce://ml-prod/us-central1-a/{name}"},
        "status": {
            "allocatable": {**capacity, "cpu": "207", "memory": "1860000000Ki"},
            "capacity": capacity,
            "conditions": [
                {
                    "lastHeartbeatTime": ts(0),
                    "lastTransitionTime": ts(3 * 24 * 60),
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                }
            ],
            "nodeInfo": {"kubeletVersion": "v1.34.1", "containerRuntimeVersion": "containerd://1.7.24"},
        },
    }


def pod(name: str, gpus: int, minutes_ago: float = 20, node_name: str = "", **more: Any) -> Obj:
    spec: Obj = {
        "containers": [
            {
                "image": "nvcr.io/nvidia/pytorch:24.10-py3",
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "resources": {
                    "limits": {"nvidia.com/gpu": str(gpus)},
                    "requests": {"nvidia.com/gpu": str(gpus)},
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": more.pop("priority", 0),
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
        ],
        **more.pop("spec", {}),
    }
    metadata: Obj = {
        "creationTimestamp": ts(minutes_ago),
        "name": name,
        "namespace": NS,
        "resourceVersion": "2000",
        "uid": _uid("pod", name),
        **more.pop("metadata", {}),
    }
    if node_name:
        spec["nodeName"] = node_name
        status: Obj = {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": ts(minutes_ago), "status": "True", "type": t}
                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
            "phase": "Running",
            "qosClass": "BestEffort",
            "startTime": ts(minutes_ago),
        }
    elif spec.get("schedulingGates"):
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": ts(minutes_ago),
                    "message": "Scheduling is blocked due to non-empty scheduling gates",
                    "reason": "SchedulingGated",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": "BestEffort",
        }
    else:
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": ts(minutes_ago),
                    "message": "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": "BestEffort",
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def event(
    about: Obj,
    reason: str,
    message: str,
    minutes_ago: float,
    component: str,
    kind: str = "Normal",
    count: int = 1,
) -> Obj:
    ref = about["metadata"]
    ns = ref.get("namespace") or "default"
    name = f"{ref['name']}.{hashlib.sha1((reason + message).encode()).hexdigest()[:16]}"
    return {
        "apiVersion": "v1",
        "count": count,
        "firstTimestamp": ts(minutes_ago + 5 * (count - 1)),
        "involvedObject": {
            "apiVersion": about["apiVersion"],
            "kind": about["kind"],
            "name": ref["name"],
            **({"namespace": ref["namespace"]} if ref.get("namespace") else {}),
            "resourceVersion": ref.get("resourceVersion", "1"),
            "uid": ref["uid"],
        },
        "kind": "Event",
        "lastTimestamp": ts(minutes_ago),
        "message": message,
        "metadata": {
            "creationTimestamp": ts(minutes_ago + 5 * (count - 1)),
            "name": name,
            "namespace": ns,
            "resourceVersion": "3000",
            "uid": _uid("event", name),
        },
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": "",
        "source": {"component": component},
        "type": kind,
    }


def ca_event(
    about: Obj, reason: str, message: str, minutes_ago: float, kind: str = "Normal", count: int = 1
) -> Obj:
    return event(about, reason, message, minutes_ago, "cluster-autoscaler", kind, count)


def priority_class(name: str, value: int) -> Obj:
    """The PriorityClass a pod names (the API server's priority admission sets the pod's priority from it)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "creationTimestamp": ts(30 * 24 * 60),
            "name": name,
            "resourceVersion": "900",
            "uid": _uid("priorityclass", name),
        },
        "preemptionPolicy": "PreemptLowerPriority",
        "value": value,
        "description": "Batch work that may wait for a node",
    }


def status_configmap(body: str, updated_minutes_ago: float) -> Obj:
    updated = NOW - timedelta(minutes=updated_minutes_ago)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "annotations": {
                "cluster-autoscaler.kubernetes.io/last-updated": updated.strftime("%Y-%m-%d %H:%M:%S.%f")
                + "123 +0000 UTC"
            },
            "creationTimestamp": ts(3 * 24 * 60),
            "name": "cluster-autoscaler-status",
            "namespace": "kube-system",
            "resourceVersion": "4000",
            "uid": _uid("configmap", "cluster-autoscaler-status"),
        },
        "data": {"status": body},
    }


def _go_time(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%d %H:%M:%S.%f") + "123 +0000 UTC"


@dataclass(frozen=True)
class Group:
    id: str
    registered: int
    target: int
    min: int
    max: int
    scale_up: str = "NoActivity"
    error_code: str = ""
    error_message: str = ""
    since_minutes: float = 60


def yaml_status(groups: list[Group], updated_minutes_ago: float = 0.1) -> str:
    """The status as cluster-autoscaler ≥ 1.30 writes it (`yaml.Marshal(ClusterAutoscalerStatus)`)."""
    total = sum(g.registered for g in groups)
    scaling = any(g.scale_up == "InProgress" for g in groups)
    doc: Obj = {
        "time": _go_time(updated_minutes_ago),
        "autoscalerStatus": "Running",
        "clusterWide": {
            "health": {
                "status": "Healthy",
                "nodeCounts": {
                    "registered": {"total": total, "ready": total, "notStarted": 0},
                    "longUnregistered": 0,
                    "unregistered": 0,
                },
                "lastProbeTime": ts(updated_minutes_ago),
                "lastTransitionTime": ts(3 * 24 * 60),
            },
            "scaleUp": {
                "status": "InProgress" if scaling else "NoActivity",
                "lastProbeTime": ts(updated_minutes_ago),
                "lastTransitionTime": ts(60),
            },
            "scaleDown": {
                "status": "NoCandidates",
                "lastProbeTime": ts(updated_minutes_ago),
                "lastTransitionTime": ts(3 * 24 * 60),
            },
        },
        "nodeGroups": [],
    }
    for g in groups:
        scale_up: Obj = {"status": g.scale_up}
        if g.error_code:
            scale_up["backoffInfo"] = {"errorCode": g.error_code, "errorMessage": g.error_message}
        scale_up |= {"lastProbeTime": ts(updated_minutes_ago), "lastTransitionTime": ts(g.since_minutes)}
        doc["nodeGroups"].append(
            {
                "name": g.id,
                "health": {
                    "status": "Healthy",
                    "nodeCounts": {
                        "registered": {"total": g.registered, "ready": g.registered, "notStarted": 0},
                        "longUnregistered": 0,
                        "unregistered": max(g.target - g.registered, 0),
                    },
                    "cloudProviderTarget": g.target,
                    "minSize": g.min,
                    "maxSize": g.max,
                    "lastProbeTime": ts(updated_minutes_ago),
                    "lastTransitionTime": ts(3 * 24 * 60),
                },
                "scaleUp": scale_up,
                "scaleDown": {
                    "status": "NoCandidates",
                    "lastProbeTime": ts(updated_minutes_ago),
                    "lastTransitionTime": ts(3 * 24 * 60),
                },
            }
        )
    text: str = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    return text


def text_status(groups: list[Group], updated_minutes_ago: float = 0.1) -> str:
    """The status as cluster-autoscaler ≤ 1.29 writes it (`GetReadableString`)."""
    probe, long_ago = _go_time(updated_minutes_ago), _go_time(3 * 24 * 60)
    total = sum(g.registered for g in groups)
    lines = [
        f"Cluster-autoscaler status at {probe}:",
        "Cluster-wide:",
        f"  Health:      Healthy (ready={total} unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered={total} longUnregistered=0)",
        f"               LastProbeTime:      {probe} m=+912.003618571",
        f"               LastTransitionTime: {long_ago} m=+33.092221592",
        f"  ScaleUp:     NoActivity (ready={total} registered={total})",
        f"               LastProbeTime:      {probe} m=+912.003618571",
        f"               LastTransitionTime: {long_ago} m=+33.092221592",
        "  ScaleDown:   NoCandidates (candidates=0)",
        f"               LastProbeTime:      {probe} m=+912.003618571",
        f"               LastTransitionTime: {long_ago} m=+33.092221592",
        "",
        "NodeGroups:",
    ]
    for g in groups:
        lines += [
            f"  Name:        {g.id}",
            f"  Health:      Healthy (ready={g.registered} unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered={g.registered} longUnregistered=0 cloudProviderTarget={g.target} (minSize={g.min}, maxSize={g.max}))",
            f"               LastProbeTime:      {probe} m=+912.003618571",
            f"               LastTransitionTime: {long_ago} m=+33.092221592",
            f"  ScaleUp:     {g.scale_up} (ready={g.registered} cloudProviderTarget={g.target})",
            f"               LastProbeTime:      {probe} m=+912.003618571",
            f"               LastTransitionTime: {_go_time(g.since_minutes)} m=+33.092221592",
            "  ScaleDown:   NoCandidates (candidates=0)",
            f"               LastProbeTime:      {probe} m=+912.003618571",
            f"               LastTransitionTime: {long_ago} m=+33.092221592",
            "",
        ]
    return "\n".join(lines)


def nodepool(name: str, gpu_limit: int, gpu_used: int, taints: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {
            "creationTimestamp": ts(30 * 24 * 60),
            "generation": 1,
            "name": name,
            "resourceVersion": "5000",
            "uid": _uid("nodepool", name),
        },
        "spec": {
            "disruption": {
                "budgets": [{"nodes": "10%"}],
                "consolidateAfter": "0s",
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
            },
            "limits": {"nvidia.com/gpu": str(gpu_limit)},
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "expireAfter": "720h",
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [
                        {
                            "key": "karpenter.k8s.aws/instance-family",
                            "operator": "In",
                            "values": ["p5", "p4d"],
                        },
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    ],
                    "taints": taints
                    if taints is not None
                    else [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}],
                },
            },
        },
        "status": {
            "conditions": [
                {
                    "lastTransitionTime": ts(30 * 24 * 60),
                    "message": "",
                    "observedGeneration": 1,
                    "reason": "Ready",
                    "status": "True",
                    "type": t,
                }
                for t in ("NodeClassReady", "ValidationSucceeded", "Ready")
            ],
            "nodes": gpu_used // 8,
            "resources": {
                "cpu": str(192 * (gpu_used // 8)),
                "memory": f"{2 * (gpu_used // 8)}Ti",
                "nodes": str(gpu_used // 8),
                "nvidia.com/gpu": str(gpu_used),
            },
        },
    }


def nodeclaim(
    name: str, pool: str, minutes_ago: float, launched: tuple[str, str, str] = ("True", "Launched", "")
) -> Obj:
    state, reason, message = launched
    conditions = [
        {
            "lastTransitionTime": ts(minutes_ago - 0.5),
            "message": message,
            "observedGeneration": 1,
            "reason": reason,
            "status": state,
            "type": "Launched",
        }
    ]
    if state == "True":
        conditions += [
            {
                "lastTransitionTime": ts(minutes_ago - 0.5),
                "message": "Node not registered with cluster",
                "observedGeneration": 1,
                "reason": "NodeNotFound",
                "status": "Unknown",
                "type": "Registered",
            },
            {
                "lastTransitionTime": ts(minutes_ago - 0.5),
                "message": "Node not registered with cluster",
                "observedGeneration": 1,
                "reason": "NodeNotFound",
                "status": "Unknown",
                "type": "Initialized",
            },
        ]
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "annotations": {
                "karpenter.sh/nodepool-hash": "6821555240594823858",
                "karpenter.sh/nodepool-hash-version": "v3",
            },
            "creationTimestamp": ts(minutes_ago),
            "finalizers": ["karpenter.sh/termination"],
            "generation": 1,
            "labels": {
                KARPENTER: pool,
                "karpenter.sh/capacity-type": "on-demand",
                "node.kubernetes.io/instance-type": "p5.48xlarge",
            },
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": "karpenter.sh/v1",
                    "blockOwnerDeletion": True,
                    "kind": "NodePool",
                    "name": pool,
                    "uid": _uid("nodepool", pool),
                }
            ],
            "resourceVersion": "6000",
            "uid": _uid("nodeclaim", name),
        },
        "spec": {
            "expireAfter": "720h",
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
            ],
            "resources": {"requests": {"nvidia.com/gpu": "8", "pods": "1"}},
            "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}],
        },
        "status": {
            "conditions": conditions,
            **({"providerID": "aws:///us-east-1a/i-0a1b2c3d4e5f60718"} if state == "True" else {}),
        },
    }


def provisioning_request(name: str, conditions: Sequence[tuple[str, str, str, str, float]]) -> Obj:
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {
            "creationTimestamp": ts(40),
            "generation": 1,
            "name": name,
            "namespace": NS,
            "resourceVersion": "7000",
            "uid": _uid("provreq", name),
        },
        "spec": {
            "podSets": [{"count": 1, "podTemplateRef": {"name": f"ppt-{name}"}}],
            "provisioningClassName": "queued-provisioning.gke.io",
        },
        "status": {
            "conditions": [
                {
                    "lastTransitionTime": ts(ago),
                    "message": message,
                    "observedGeneration": 1,
                    "reason": reason,
                    "status": state,
                    "type": type_,
                }
                for type_, state, reason, message, ago in conditions
            ]
        },
    }


def workload(owner: Obj, check_state: str, message: str, minutes_ago: float) -> Obj:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "creationTimestamp": ts(30),
            "generation": 1,
            "name": f"pod-{owner['metadata']['name']}-3f1c2",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Pod",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                }
            ],
            "resourceVersion": "8000",
            "uid": _uid("workload", owner["metadata"]["name"]),
        },
        "spec": {
            "active": True,
            "podSets": [
                {
                    "count": 1,
                    "name": "main",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "image": "nvcr.io/nvidia/pytorch:24.10-py3",
                                    "resources": {
                                        "limits": {"nvidia.com/gpu": "8"},
                                        "requests": {"nvidia.com/gpu": "8"},
                                    },
                                }
                            ]
                        }
                    },
                }
            ],
            "priority": 0,
            "priorityClassSource": "",
            "queueName": "gpu-queue",
        },
        "status": {
            "admissionChecks": [
                {
                    "lastTransitionTime": ts(minutes_ago),
                    "message": message,
                    "name": "dws-prov",
                    "state": check_state,
                }
            ],
            "conditions": [
                {
                    "lastTransitionTime": ts(29),
                    "message": "Quota reserved in ClusterQueue gpu-cluster-queue",
                    "observedGeneration": 1,
                    "reason": "QuotaReserved",
                    "status": "True",
                    "type": "QuotaReserved",
                },
                {
                    "lastTransitionTime": ts(29),
                    "message": "The workload has not all checks ready",
                    "observedGeneration": 1,
                    "reason": "UnsatisfiedChecks",
                    "status": "False",
                    "type": "Admitted",
                },
            ],
        },
    }


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    objects: list[Obj]
    pod: str
    verdict: str
    state: str
    extra: list[Obj] = field(default_factory=list)


def _world(pool_key: str, pool: str) -> list[Obj]:
    """Two nodes: a GPU node of `pool` whose 8 GPUs a running pod holds, and a CPU node."""
    gpu = node(f"{pool}-node-1", pool_key, pool, 8)
    cpu = node("cpu-node-1", pool_key, "cpu-pool", 0)
    return [gpu, cpu, pod("holder-0", 8, 600, node_name=gpu["metadata"]["name"])]


def _gke(*objects: Obj) -> list[Obj]:
    return [*_world(GKE, "a3-pool"), *objects]


def _pending(name: str, gpus: int = 8, minutes_ago: float = 20, **more: Any) -> Obj:
    return pod(name, gpus, minutes_ago, **more)


GROUPS = [Group(MIG.format(pool="a3-pool"), 1, 1, 0, 4), Group(MIG.format(pool="cpu-pool"), 1, 1, 1, 3)]
AT_MAX = [Group(MIG.format(pool="a3-pool"), 4, 4, 0, 4), Group(MIG.format(pool="cpu-pool"), 1, 1, 1, 3)]
SCALING = [
    Group(MIG.format(pool="a3-pool"), 1, 2, 0, 4, "InProgress", since_minutes=3),
    Group(MIG.format(pool="cpu-pool"), 1, 1, 1, 3),
]


def _triggered(p: Obj, minutes_ago: float, pool: str = "a3-pool", size: int = 1) -> Obj:
    return ca_event(
        p,
        "TriggeredScaleUp",
        f"pod triggered scale-up: [{{{MIG.format(pool=pool)} {size}->{size + 1} (max: 4)}}]",
        minutes_ago,
    )


def _not_triggered(p: Obj, message: str, minutes_ago: float = 1, count: int = 3) -> Obj:
    return ca_event(p, "NotTriggerScaleUp", message, minutes_ago, count=count)


def scenarios() -> Iterator[Scenario]:
    yield from _cluster_autoscaler()
    yield from _gke_failures()
    yield from _karpenter()
    yield from _requests()
    yield from _on_their_objects()


def _cluster_autoscaler() -> Iterator[Scenario]:
    p = _pending("train-0")
    yield Scenario(
        "ca-triggered-yaml",
        "TriggeredScaleUp 3 min ago to a3-pool (MIG URL), YAML status InProgress",
        _gke(p, _triggered(p, 3), status_configmap(yaml_status(SCALING), 0.1)),
        "train-0",
        "exhausted",
        "coming",
    )
    yield Scenario(
        "ca-triggered-text",
        "TriggeredScaleUp 3 min ago, plain-text status (≤ 1.29)",
        _gke(p, _triggered(p, 3), status_configmap(text_status(SCALING), 0.1)),
        "train-0",
        "exhausted",
        "coming",
    )
    yield Scenario(
        "ca-triggered-timed-out",
        "TriggeredScaleUp 22 min ago and still no node: past the 15 min provision timeout",
        _gke(p, _triggered(p, 22), status_configmap(yaml_status(GROUPS), 0.1)),
        "train-0",
        "exhausted",
        "failed",
    )
    yield Scenario(
        "ca-max-size",
        "NotTriggerScaleUp (≥ 1.20 prefix): a3-pool at its max size 4",
        _gke(
            p,
            _not_triggered(
                p, "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient nvidia.com/gpu"
            ),
            status_configmap(yaml_status(AT_MAX), 0.1),
        ),
        "train-0",
        "exhausted",
        "not-coming",
    )
    big = _pending("train-16", 16)
    yield Scenario(
        "ca-too-big-1-19",
        "NotTriggerScaleUp, 1.12–1.19 prefix: no group's node has 16 GPUs",
        _gke(
            big,
            _not_triggered(
                big,
                "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient nvidia.com/gpu",
            ),
            status_configmap(text_status(GROUPS), 0.1),
        ),
        "train-16",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-old-prefix",
        "NotTriggerScaleUp, ≤ 1.2 prefix without reasons",
        _gke(
            big,
            _not_triggered(big, "pod didn't trigger scale-up (it wouldn't fit if a new node is added)"),
            status_configmap(text_status(GROUPS), 0.1),
        ),
        "train-16",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-gke-capital",
        "GKE's capitalised NotTriggerScaleUp",
        _gke(
            p,
            _not_triggered(
                p,
                "Pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, 1 max node group size reached",
            ),
            status_configmap(yaml_status(AT_MAX), 0.1),
        ),
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-limit-1-34",
        "cluster-wide resource limit, ≤ 1.34 wording",
        _gke(
            p,
            _not_triggered(p, "pod didn't trigger scale-up: 2 max cluster cpu, memory limit reached"),
            status_configmap(yaml_status(GROUPS), 0.1),
        ),
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-limit-1-35",
        "cluster-wide resource limit, ≥ 1.35 wording",
        _gke(
            p,
            _not_triggered(
                p, 'pod didn\'t trigger scale-up: 2 exceeded quota: "cluster-wide", resources: nvidia.com/gpu'
            ),
            status_configmap(yaml_status(GROUPS), 0.1),
        ),
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-empty-reasons",
        "NotTriggerScaleUp with no group listed (only auto-provisioned candidates)",
        _gke(p, _not_triggered(p, "pod didn't trigger scale-up: ")),
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-backoff-said",
        "NotTriggerScaleUp: a3-pool in backoff after a failed scale-up",
        _gke(
            p,
            _not_triggered(
                p,
                "pod didn't trigger scale-up: 1 in backoff after failed scale-up, 1 Insufficient nvidia.com/gpu",
            ),
            status_configmap(yaml_status(GROUPS), 0.1),
        ),
        "train-0",
        "exhausted",
        "failed",
    )
    backoff = [
        Group(
            MIG.format(pool="a3-pool"),
            1,
            1,
            0,
            4,
            "Backoff",
            "RESOURCE_POOL_EXHAUSTED",
            "Instance 'gke-prod-a3-pool-8f3c2a1d-x7k2' creation failed: The zone 'projects/ml-prod/zones/us-central1-a' does not have enough resources available to fulfill the request.",
            4,
        ),
        GROUPS[1],
    ]
    yield Scenario(
        "ca-backoff-status",
        "TriggeredScaleUp 10 min ago, then the YAML status puts a3-pool in backoff (RESOURCE_POOL_EXHAUSTED)",
        _gke(p, _triggered(p, 10), status_configmap(yaml_status(backoff), 0.1)),
        "train-0",
        "exhausted",
        "failed",
    )
    yield Scenario(
        "ca-newer-refusal",
        "TriggeredScaleUp 8 min ago, then NotTriggerScaleUp 1 min ago: the newer signal wins",
        _gke(
            p,
            _triggered(p, 8),
            _not_triggered(
                p,
                "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient nvidia.com/gpu",
                1,
                1,
            ),
            status_configmap(yaml_status(AT_MAX), 0.1),
        ),
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "ca-silent",
        "status written 6 s ago, no event on the pod",
        _gke(p, status_configmap(yaml_status(GROUPS), 0.1)),
        "train-0",
        "exhausted",
        "unknown",
    )
    young = _pending("train-young", minutes_ago=0.25)
    yield Scenario(
        "ca-gpu-buffer",
        "a GPU pod 15 s old: cluster-autoscaler waits 30 s",
        _gke(young, status_configmap(yaml_status(GROUPS), 0.05)),
        "train-young",
        "exhausted",
        "unknown",
    )
    yield Scenario(
        "ca-stale-text",
        "plain-text status last written 2 h ago: cluster-autoscaler is down",
        _gke(
            p,
            _not_triggered(p, "pod didn't trigger scale-up: 1 max node group size reached", 180),
            status_configmap(text_status(AT_MAX, 120), 120),
        ),
        "train-0",
        "exhausted",
        "unknown",
    )
    yield Scenario(
        "ca-stale-yaml",
        "YAML status last written 45 min ago",
        _gke(p, status_configmap(yaml_status(GROUPS, 45), 45)),
        "train-0",
        "exhausted",
        "unknown",
    )
    low = _pending("batch-low", priority=-20, spec={"priorityClassName": "batch-low"})
    yield Scenario(
        "ca-expendable",
        "priority -20, under the expendable cutoff -10",
        _gke(low, priority_class("batch-low", -20), status_configmap(yaml_status(GROUPS), 0.1)),
        "batch-low",
        "exhausted",
        "not-coming",
    )
    pinned = _pending("train-a3", spec={"nodeSelector": {GKE: "a3-pool"}})
    h100 = node("h100-pool-node-1", GKE, "h100-pool", 8)
    three = [*AT_MAX, Group(MIG.format(pool="h100-pool"), 1, 1, 0, 4)]
    yield Scenario(
        "ca-move-pool",
        "the pod pins a3-pool, at its max size; a new h100-pool node would take it (move fix)",
        _gke(
            h100,
            pod("holder-1", 8, 600, node_name="h100-pool-node-1"),
            pinned,
            _not_triggered(
                pinned,
                "pod didn't trigger scale-up: 1 max node group size reached, 2 node(s) didn't match Pod's node affinity/selector",
            ),
            status_configmap(yaml_status(three), 0.1),
        ),
        "train-a3",
        "exhausted",
        "not-coming",
    )
    eks = [*_world(EKS, "p5-ng"), p]
    asg = "eks-p5-ng-3ac6f1e2-9b1d-4c3e-8f7a-1d2e3f4a5b6c"
    yield Scenario(
        "ca-eks-triggered",
        "EKS: TriggeredScaleUp to an ASG",
        [*eks, ca_event(p, "TriggeredScaleUp", f"pod triggered scale-up: [{{{asg} 1->2 (max: 6)}}]", 2)],
        "train-0",
        "exhausted",
        "coming",
    )
    yield Scenario(
        "none",
        "no autoscaler: no status ConfigMap, no NodePool, no event",
        _gke(p),
        "train-0",
        "exhausted",
        "none",
    )


def _gke_failures() -> Iterator[Scenario]:
    p = _pending("train-0")
    stockout = "Node scale up in zones us-central1-a associated with this pod failed: GCE out of resources. Pod is at risk of not being scheduled."
    yield Scenario(
        "gke-stockout",
        "GKE FailedScaleUp 12 min ago: zone out of resources",
        _gke(p, _triggered(p, 14), ca_event(p, "FailedScaleUp", stockout, 12, "Warning")),
        "train-0",
        "exhausted",
        "failed",
    )
    quota = "Node scale up in zones us-central1-a, us-central1-b associated with this pod failed: GCE quota exceeded. Pod is at risk of not being scheduled."
    yield Scenario(
        "gke-quota",
        "GKE FailedScaleUp: GCE quota exceeded in two zones",
        _gke(p, ca_event(p, "FailedScaleUp", quota, 5, "Warning")),
        "train-0",
        "exhausted",
        "failed",
    )


def _karpenter() -> Iterator[Scenario]:
    p = _pending("train-0")
    world = _world(KARPENTER, "gpu")

    def nominated(claim: str, minutes_ago: float) -> Obj:
        return event(p, "Nominated", f"Pod should schedule on: nodeclaim/{claim}", minutes_ago, "karpenter")

    def failed(message: str) -> Obj:
        return event(
            p, "FailedScheduling", f"Failed to schedule pod, {message}", 1, "karpenter", "Warning", 4
        )

    yield Scenario(
        "karpenter-nominated",
        "Karpenter nominated a NodeClaim, launched, not yet registered",
        [*world, p, nodepool("gpu", 64, 8), nodeclaim("gpu-x7k2p", "gpu", 2), nominated("gpu-x7k2p", 2)],
        "train-0",
        "exhausted",
        "coming",
    )
    yield Scenario(
        "karpenter-limits",
        "Karpenter: the NodePool's nvidia.com/gpu limit is spent",
        [*world, p, nodepool("gpu", 8, 8), failed("all available instance types exceed limits for nodepool")],
        "train-0",
        "exhausted",
        "not-coming",
    )
    yield Scenario(
        "karpenter-taint",
        "Karpenter: no NodePool tolerated",
        [
            *world,
            p,
            nodepool("gpu", 64, 8, [{"effect": "NoSchedule", "key": "dedicated", "value": "inference"}]),
            failed("did not tolerate taint"),
        ],
        "train-0",
        "exhausted",
        "not-coming",
    )
    launch = (
        "Unknown",
        "LaunchFailed",
        "insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a).",
    )
    yield Scenario(
        "karpenter-launch-failed",
        "Karpenter: the nominated NodeClaim could not launch (insufficient capacity)",
        [
            *world,
            p,
            nodepool("gpu", 64, 8),
            nodeclaim("gpu-q9z4m", "gpu", 3, launch),
            nominated("gpu-q9z4m", 3),
        ],
        "train-0",
        "exhausted",
        "failed",
    )
    yield Scenario(
        "karpenter-silent",
        "Karpenter NodePool, no event on the pod yet",
        [*world, p, nodepool("gpu", 64, 8)],
        "train-0",
        "exhausted",
        "unknown",
    )


def _requests() -> Iterator[Scenario]:
    consume = {
        "annotations": {
            "autoscaling.x-k8s.io/consume-provisioning-request": "train-dws",
            "autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io",
        }
    }
    p = _pending("train-dws-0", metadata=consume)
    queued = [
        ("Accepted", "True", "SuccessfullyQueued", "Provisioning Request was successfully queued.", 30),
        ("Provisioned", "False", "NotProvisioned", "Provisioning Request wasn't provisioned.", 30),
    ]
    yield Scenario(
        "provreq-queued",
        "ProvisioningRequest accepted, waiting in the DWS queue",
        _gke(p, provisioning_request("train-dws", queued)),
        "train-dws-0",
        "exhausted",
        "queued",
    )
    provisioned = [
        queued[0],
        ("Provisioned", "True", "Provisioned", "Provisioning Request was successfully provisioned.", 2),
    ]
    yield Scenario(
        "provreq-provisioned",
        "ProvisioningRequest provisioned 2 min ago: the node is coming",
        _gke(p, provisioning_request("train-dws", provisioned)),
        "train-dws-0",
        "exhausted",
        "coming",
    )
    failed = [
        *queued,
        (
            "Failed",
            "True",
            "WaitTimeExceeded",
            "Provisioning Request could not provision queued instances in the allocated time.",
            5,
        ),
    ]
    yield Scenario(
        "provreq-failed",
        "ProvisioningRequest Failed (WaitTimeExceeded)",
        _gke(p, provisioning_request("train-dws", failed)),
        "train-dws-0",
        "exhausted",
        "failed",
    )
    revoked = [
        *provisioned,
        (
            "CapacityRevoked",
            "True",
            "CapacityRevoked",
            "Capacity provisioned for the Provisioning Request was reclaimed and is no longer available in the cluster.",
            1,
        ),
    ]
    yield Scenario(
        "provreq-revoked",
        "ProvisioningRequest CapacityRevoked",
        _gke(p, provisioning_request("train-dws", revoked)),
        "train-dws-0",
        "exhausted",
        "failed",
    )
    yield Scenario(
        "provreq-missing",
        "the pod consumes a ProvisioningRequest that does not exist",
        _gke(p),
        "train-dws-0",
        "exhausted",
        "not-coming",
    )
    gated = _pending(
        "llm-dws-0",
        spec={"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
        metadata={"labels": {"kueue.x-k8s.io/queue-name": "gpu-queue"}},
    )
    yield Scenario(
        "kueue-check-pending",
        "Kueue admission check (ProvisioningRequest) Pending",
        _gke(gated, workload(gated, "Pending", "Provisioning Request was successfully queued.", 25)),
        "llm-dws-0",
        "gated",
        "queued",
    )
    yield Scenario(
        "kueue-check-rejected",
        "Kueue admission check Rejected",
        _gke(
            gated,
            workload(
                gated,
                "Rejected",
                "Could not enqueue the Provisioning Request due to insufficient capacity in zone us-central1-a. Try different locations or hardware.",
                3,
            ),
        ),
        "llm-dws-0",
        "gated",
        "failed",
    )


def _on_their_objects() -> Iterator[Scenario]:
    """What the autoscalers write on their own objects, not on the pod: cluster-autoscaler on its
    status ConfigMap (kube-system), Karpenter on a NodeClaim (namespace `default`, as every event on
    a cluster-scoped object)."""
    p = _pending("train-0")
    status = status_configmap(yaml_status(SCALING, 0.3), 0.3)
    mig = MIG.format(pool="a3-pool")
    stockout = (
        f"Failed adding 1 nodes to group {mig} due to OutOfResource.RESOURCE_POOL_EXHAUSTED; source errors:"
        " Instance 'gke-prod-a3-pool-8f3c2a1d-x2lq' creation failed: The zone 'projects/ml-prod/zones/us-central1-a'"
        " does not have enough resources available to fulfill the request. Try a different zone, or try again later."
    )
    yield Scenario(
        "ca-status-scale-up-failed",
        "TriggeredScaleUp 3 min ago; ScaleUpFailed on the status ConfigMap since: a3-pool is out of resources",
        _gke(p, _triggered(p, 3), status, ca_event(status, "ScaleUpFailed", stockout, 0.1, "Warning")),
        "train-0",
        "exhausted",
        "failed",
    )
    timed_out = f"Nodes added to group {mig} failed to register within 10m0s"
    yield Scenario(
        "ca-status-timed-out",
        "TriggeredScaleUp 10 min ago; ScaleUpTimedOut on the status ConfigMap (--max-node-provision-time=10m)",
        _gke(p, _triggered(p, 10), status, ca_event(status, "ScaleUpTimedOut", timed_out, 0.1, "Warning")),
        "train-0",
        "exhausted",
        "failed",
    )
    other = stockout.replace("a3-pool", "cpu-pool")
    yield Scenario(
        "ca-status-other-group-failed",
        "TriggeredScaleUp to a3-pool 3 min ago; the ScaleUpFailed on the status ConfigMap is cpu-pool's",
        _gke(p, _triggered(p, 3), status, ca_event(status, "ScaleUpFailed", other, 0.1, "Warning")),
        "train-0",
        "exhausted",
        "coming",
    )
    world = _world(KARPENTER, "gpu")
    gone = nodeclaim("gpu-m3v8n", "gpu", 4)
    ice = event(
        gone,
        "InsufficientCapacityError",
        "NodeClaim gpu-m3v8n event: insufficient capacity, with fleet error(s), InsufficientInstanceCapacity:"
        " We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a).",
        3,
        "karpenter",
        "Warning",
    )
    nominated = event(p, "Nominated", "Pod should schedule on: nodeclaim/gpu-m3v8n", 4, "karpenter")
    yield Scenario(
        "karpenter-insufficient-capacity-event",
        "Karpenter nominated NodeClaim gpu-m3v8n, deleted on insufficient capacity: only its event in default says so",
        [*world, p, nodepool("gpu", 64, 8), nominated, ice],
        "train-0",
        "exhausted",
        "failed",
    )
    retried = event(p, "Nominated", "Pod should schedule on: nodeclaim/gpu-w5c9d", 1, "karpenter")
    yield Scenario(
        "karpenter-retried-after-capacity",
        "Karpenter's first NodeClaim failed on insufficient capacity; a newer one is launching",
        [*world, p, nodepool("gpu", 64, 8), nominated, ice, nodeclaim("gpu-w5c9d", "gpu", 1), retried],
        "train-0",
        "exhausted",
        "coming",
    )


def write() -> None:
    folder = CORPUS / "triage"
    entries = []
    for s in scenarios():
        path = folder / f"autoscaling-{s.name}.json"
        path.write_text(
            json.dumps(
                {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": s.objects},
                indent=1,
            )
            + "\n"
        )
        rel = path.relative_to(ROOT)
        entries.append(
            f"# {s.about}\n- snapshot: {rel}\n  namespace: {NS}\n  name: {s.pod}\n  verdict: {s.verdict}\n  autoscaling: {s.state}\n"
        )
    index = folder / "index.yaml"
    kept = index.read_text().split(INDEX_MARK)[0].rstrip("\n")
    index.write_text(f"{kept}\n\n{INDEX_MARK}\n" + "\n".join(entries))


if __name__ == "__main__":
    write()
