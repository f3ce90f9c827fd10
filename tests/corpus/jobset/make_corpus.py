# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""Writes the JobSet corpus (`tests/corpus/jobset/*.json`, `index.yaml`) and the JobSet examples
(`examples/jobset-*.json`).

Each snapshot is a `kind: List` shaped as `kubectl get nodes,pods,events,jobs,jobsets,resourcequotas
-A -o json` prints it, with objects as the controllers write them: the JobSet after its webhook's
defaulting, child Jobs `<js>-<rj>-<i>` with JobSet's labels, annotations and ownerReferences, pods
named by the Job controller (`<job>-<index>-<5 chars>`) with completion-index annotations and labels,
events as the Job controller, the JobSet controller and the scheduler record them, and nodes with
GKE/EKS/AKS labels and taints. Everything is derived from a seed per snapshot, so running this again
writes the same files:

    .venv/bin/python tests/corpus/jobset/make_corpus.py
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
NOW = datetime(2026, 11, 29, 9, 0, 0, tzinfo=UTC)
"""The moment every snapshot was taken (tests use it as the view's `now`)."""

Obj = dict[str, Any]
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet of Kubernetes' generated name suffixes."""


def ts(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class World:
    """One snapshot being built; a seeded random source makes uids and suffixes repeatable."""

    seed: str
    items: list[Obj] = field(default_factory=list)
    rng: random.Random = field(init=False)
    version: int = 4_180_000

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(ALPHABET) for _ in range(n))

    def hexid(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def rv(self) -> str:
        self.version += self.rng.randint(3, 900)
        return str(self.version)

    def add(self, obj: Obj) -> Obj:
        self.items.append(obj)
        return obj

    def snapshot(self) -> Obj:
        order = {
            "Node": 0,
            "Pod": 1,
            "Event": 2,
            "Job": 3,
            "JobSet": 4,
            "ResourceQuota": 5,
            "RuntimeClass": 6,
            "Workload": 7,
        }
        items = sorted(self.items, key=lambda o: order[o["kind"]])
        return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# --- nodes ---------------------------------------------------------------------------------------

GKE_ZONE = ("us-central1", "us-central1-a")


def gke_node(
    w: World,
    cluster: str,
    pool: str,
    machine: str,
    extra: dict[str, str],
    capacity: dict[str, str],
    *,
    taints: list[Obj] | None = None,
    ready: str = "True",
    host: str | None = None,
    created: float = 4000,
    spot: bool = False,
    group: str | None = None,
) -> Obj:
    name = f"gke-{cluster}-{pool}-{group or w.hexid(8)}-{w.suffix(4)}"
    region, zone = GKE_ZONE
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": machine,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": "208" if machine.startswith("a3") else "24",
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": "110",
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-provisioning": "spot" if spot else "standard",
        "cloud.google.com/gke-stack-type": "IPV4",
        "cloud.google.com/machine-family": machine.split("-")[0],
        "cloud.google.com/private-node": "false",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": machine,
        "topology.gke.io/zone": zone,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        **({"cloud.google.com/gke-spot": "true"} if spot else {}),
        **({"cloud.google.com/gce-topology-host": host} if host else {}),
        **extra,
    }
    return node(
        w, name, labels, capacity, taints or [], ready, f"gce://ml-platform-prod/{zone}/{name}", created
    )


def plain_node(
    w: World,
    name: str,
    labels: dict[str, str],
    capacity: dict[str, str],
    provider: str,
    *,
    taints: list[Obj] | None = None,
) -> Obj:
    base = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    return node(w, name, {**base, **labels}, capacity, taints or [], "True", provider, 9000)


def node(
    w: World,
    name: str,
    labels: dict[str, str],
    extended: dict[str, str],
    taints: list[Obj],
    ready: str,
    provider: str,
    created: float,
) -> Obj:
    cpu, memory = (
        ("208", "1872855532Ki")
        if "208" in labels.get("cloud.google.com/gke-cpu-scaling-level", "")
        else ("96", "1056767976Ki")
    )
    capacity = {
        "cpu": cpu,
        "ephemeral-storage": "507904736Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
        **extended,
    }
    allocatable = {
        **capacity,
        "cpu": f"{int(cpu) * 1000 - 1930}m",
        "memory": "1809381356Ki" if cpu == "208" else "1000124392Ki",
    }
    beat = ts(0.4) if ready == "True" else ts(19)
    reasons = {
        "True": ("KubeletReady", "kubelet is posting ready status"),
        "False": ("KubeletNotReady", "container runtime network not ready: NetworkReady=false"),
        "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status."),
    }
    pressure = [
        {
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created),
            "message": f"kubelet has {m}",
            "reason": r,
            "status": "False" if ready != "Unknown" else "Unknown",
            "type": t,
        }
        for t, r, m in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "sufficient PID available"),
        )
    ]
    reason, message = reasons[ready]
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": ts(created),
                "labels": labels,
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "podCIDR": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.0/24",
                "podCIDRs": [f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.0/24"],
                "providerID": provider,
                **({"taints": taints} if taints else {}),
            },
            "status": {
                "addresses": [
                    {
                        "address": f"10.128.{w.rng.randint(0, 15)}.{w.rng.randint(2, 250)}",
                        "type": "InternalIP",
                    },
                    {"address": name, "type": "Hostname"},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": [
                    *pressure,
                    {
                        "lastHeartbeatTime": beat,
                        "lastTransitionTime": ts(created if ready == "True" else 19),
                        "message": message,
                        "reason": reason,
                        "status": ready,
                        "type": "Ready",
                    },
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": w.uid(),
                    "containerRuntimeVersion": "containerd://2.0.4",
                    "kernelVersion": "6.6.87+",
                    "kubeProxyVersion": "",
                    "machineID": w.hexid(32),
                    "kubeletVersion": "v1.34.7-gke.1049000" if provider.startswith("gce") else "v1.34.7",
                    "operatingSystem": "linux",
                    "systemUUID": w.uid(),
                    "osImage": "Container-Optimized OS from Google"
                    if provider.startswith("gce")
                    else "Ubuntu 24.04.2 LTS",
                },
            },
        }
    )


TPU_TAINT = {"effect": "NoSchedule", "key": "google.com/tpu", "value": "present"}
GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}


def tpu_v5e(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    extra = {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x4",
        "cloud.google.com/gke-placement-group": f"{pool}-pg",
    }
    return gke_node(
        w, cluster, pool, "ct5lp-hightpu-4t", extra, {"google.com/tpu": "4"}, taints=[TPU_TAINT], **kw
    )


def a3(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    extra = {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/gke-gpu-driver-version": "latest",
        **kw.pop("extra", {}),
    }
    return gke_node(
        w, cluster, pool, "a3-highgpu-8g", extra, {"nvidia.com/gpu": "8"}, taints=[GPU_TAINT], **kw
    )


def g2(w: World, cluster: str, pool: str, **kw: Any) -> Obj:
    extra = {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-gpu-driver-version": "default",
    }
    return gke_node(
        w, cluster, pool, "g2-standard-24", extra, {"nvidia.com/gpu": "2"}, taints=[GPU_TAINT], **kw
    )


def cpu_node(w: World, cluster: str) -> Obj:
    return gke_node(w, cluster, "default-pool", "e2-standard-8", {}, {})


def eks_p4d(w: World, i: int, **labels: str) -> Obj:
    name = f"ip-10-0-{40 + i}-{w.rng.randint(10, 250)}.us-west-2.compute.internal"
    return plain_node(
        w,
        name,
        {
            "eks.amazonaws.com/capacityType": "ON_DEMAND",
            "eks.amazonaws.com/nodegroup": "p4d-training",
            "node.kubernetes.io/instance-type": "p4d.24xlarge",
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
            "topology.kubernetes.io/region": "us-west-2",
            "topology.kubernetes.io/zone": "us-west-2b",
            **labels,
        },
        {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"},
        f"aws:///us-west-2b/i-0{w.hexid(16)}",
        taints=[GPU_TAINT],
    )


# --- JobSet, Jobs, pods ------------------------------------------------------------------------


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
    failure_policy: Obj | None = None,
    suspend: bool = False,
    labels: dict[str, str] | None = None,
    coordinator: Obj | None = None,
    in_order: bool = False,
    status: Obj | None = None,
) -> JS:
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
        spec["failurePolicy"] = failure_policy
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
    attempt: int = 0,
    created: float = 88,
    status: Obj | None = None,
    suspend: bool = False,
    deleting: float | None = None,
) -> Job:
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
        "ownerReferences": [
            {
                "apiVersion": JOBSET_API,
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "JobSet",
                "name": js.name,
                "uid": js.uid,
            }
        ],
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
            "status": status
            if status is not None
            else {"startTime": ts(created - 0.1), "terminating": 0, "uncountedTerminatedPods": {}},
        }
    )
    return Job(js, rj, index, obj, attempt)


def job_status(
    active: int = 0,
    ready: int = 0,
    failed: int = 0,
    succeeded: int = 0,
    *,
    start: float = 88,
    conditions: list[Obj] | None = None,
    failed_indexes: str = "",
) -> Obj:
    status: Obj = {"active": active} if active else {}
    if conditions:
        status["conditions"] = conditions
    if failed:
        status["failed"] = failed
    if succeeded:
        status["completedIndexes"] = "0" if succeeded == 1 else f"0-{succeeded - 1}"
        status["succeeded"] = succeeded
    if failed_indexes:
        status["failedIndexes"] = failed_indexes
    status["ready"] = ready
    status["startTime"] = ts(start)
    status["terminating"] = 0
    status["uncountedTerminatedPods"] = {}
    return status


def cond(
    type_: str, reason: str, message: str, minutes_ago: float, status: str = "True", probe: bool = True
) -> Obj:
    found: Obj = {}
    if probe:
        found["lastProbeTime"] = ts(minutes_ago)
    found.update(
        {
            "lastTransitionTime": ts(minutes_ago),
            "message": message,
            "reason": reason,
            "status": status,
            "type": type_,
        }
    )
    return found


def jcond(type_: str, reason: str, message: str, minutes_ago: float, status: str = "True") -> Obj:
    """A metav1.Condition, as the JobSet controller and Kueue write them."""
    return {
        "lastTransitionTime": ts(minutes_ago),
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": type_,
    }


def pod(
    j: Job,
    index: int,
    phase: str,
    *,
    node: Obj | None = None,
    created: float = 87,
    started: float | None = None,
    ready: bool | None = None,
    waiting: tuple[str, str] | None = None,
    terminated: Obj | None = None,
    last_terminated: Obj | None = None,
    restarts: int = 0,
    unschedulable: str = "",
    gated: list[str] | None = None,
    deleting: float | None = None,
    disruption: tuple[str, str] | None = None,
    status_reason: tuple[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    js, rj, w = j.js, j.rj, j.js.w
    name = f"{j.name}-{index}-{w.suffix()}"
    keys = jobset_keys(js, rj, j.index, j.attempt, j.key)
    labels = {
        "batch.kubernetes.io/controller-uid": j.uid,
        "batch.kubernetes.io/job-completion-index": str(index),
        "batch.kubernetes.io/job-name": j.name,
        "controller-uid": j.uid,
        "job-name": j.name,
        **keys,
        "jobset.sigs.k8s.io/priority": "0",
    }
    annotations = {"batch.kubernetes.io/job-completion-index": str(index), **{k: v for k, v in keys.items()}}
    if js.topology:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = js.topology
    spec = json.loads(json.dumps(j.obj["spec"]["template"]["spec"]))
    spec["containers"][0]["env"] = [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']",
                }
            },
        }
    ]
    spec["containers"][0]["volumeMounts"] = [
        {
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": f"kube-api-access-{w.suffix()}",
            "readOnly": True,
        }
    ]
    spec["hostname"] = f"{j.name}-{index}"
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["priority"] = 0
    spec["serviceAccount"] = "default"
    spec["serviceAccountName"] = "default"
    spec.setdefault("tolerations", [])
    spec["tolerations"] += [
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
    ]
    if node_selector is not None:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **node_selector}
    if js.topology and index == 0:
        selector = {
            "matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [j.key]}]
        }
        others = {
            "matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [j.key]},
                {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
            ]
        }
        spec["affinity"] = {
            **spec.get("affinity", {}),
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": js.topology}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": others, "namespaceSelector": {}, "topologyKey": js.topology}
                ]
            },
        }
    if gated:
        spec["schedulingGates"] = [{"name": g} for g in gated]
    node_name = node["metadata"]["name"] if node is not None else ""
    if node_name:
        spec["nodeName"] = node_name
    meta: Obj = {
        "annotations": annotations,
        "creationTimestamp": ts(created),
        "generateName": f"{j.name}-{index}-",
        "labels": labels,
        "name": name,
        "namespace": js.ns,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Job",
                "name": j.name,
                "uid": j.uid,
            }
        ],
        "resourceVersion": w.rv(),
        "uid": w.uid(),
    }
    if phase != "Pending" or node_name:
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
        meta["deletionGracePeriodSeconds"] = 30
    status: Obj = {"phase": phase, "qosClass": "BestEffort"}
    conditions: list[Obj] = []
    if disruption:
        conditions.append(cond("DisruptionTarget", disruption[0], disruption[1], deleting or 10, probe=True))
    if node_name:
        began = started if started is not None else created - 0.2
        running = phase == "Running" and not waiting
        conditions += [
            cond(
                "PodReadyToStartContainers",
                "",
                "",
                began,
                "True" if phase != "Pending" else "False",
                probe=False,
            ),
            cond("Initialized", "", "", began, probe=False),
            cond(
                "Ready",
                "" if ready or running else "ContainersNotReady",
                "" if ready or running else f"containers with unready status: [{rj.container}]",
                began,
                "True" if (ready if ready is not None else running) else "False",
                probe=False,
            ),
            cond(
                "ContainersReady",
                "" if ready or running else "ContainersNotReady",
                "" if ready or running else f"containers with unready status: [{rj.container}]",
                began,
                "True" if (ready if ready is not None else running) else "False",
                probe=False,
            ),
            cond("PodScheduled", "", "", created - 0.05, probe=False),
        ]
        for c in conditions:
            if not c["reason"]:
                del c["reason"]
                del c["message"]
        status["hostIP"] = node["status"]["addresses"][0]["address"]  # type: ignore[index]
        status["hostIPs"] = [{"ip": status["hostIP"]}]
        if phase != "Pending" or waiting:
            status["podIP"] = f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}"
            status["podIPs"] = [{"ip": status["podIP"]}]
        status["startTime"] = ts(began)
        state: Obj
        if terminated is not None:
            state = {"terminated": terminated}
        elif waiting is not None:
            state = {"waiting": {"reason": waiting[0], **({"message": waiting[1]} if waiting[1] else {})}}
        elif phase == "Running":
            state = {"running": {"startedAt": ts(began - 0.5)}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        status["containerStatuses"] = [
            {
                "containerID": f"containerd://{w.suffix(16)}" if phase != "Pending" else None,
                "image": rj.image,
                "imageID": f"{rj.image.split(':')[0]}@sha256:{hashlib.sha256(rj.image.encode()).hexdigest()}",
                "lastState": {"terminated": last_terminated} if last_terminated else {},
                "name": rj.container,
                "ready": bool(ready if ready is not None else running),
                "restartCount": restarts,
                "started": bool(running),
                "state": state,
            }
        ]
        if status["containerStatuses"][0]["containerID"] is None:
            del status["containerStatuses"][0]["containerID"]
    elif gated:
        conditions.append(
            cond(
                "PodScheduled",
                "SchedulingGated",
                "Scheduling is blocked due to non-empty scheduling gates",
                created,
                "False",
                probe=True,
            )
        )
        conditions[-1]["lastProbeTime"] = None
    elif unschedulable:
        conditions.append(
            cond("PodScheduled", "Unschedulable", unschedulable, created - 0.1, "False", probe=True)
        )
        conditions[-1]["lastProbeTime"] = None
    if status_reason:
        status["reason"], status["message"] = status_reason
    if conditions:
        status["conditions"] = conditions
    request = rj.resource[0]
    if request in ("cpu", "memory"):
        status["qosClass"] = "Guaranteed"
    return w.add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})


def exited(code: int, reason: str, minutes_ago: float, ran: float = 20.0) -> Obj:
    return {
        "containerID": f"containerd://{hashlib.sha1(f'{code}{minutes_ago}'.encode()).hexdigest()[:16]}",
        "exitCode": code,
        "finishedAt": ts(minutes_ago),
        "reason": reason,
        "startedAt": ts(minutes_ago + ran),
    }


# --- events --------------------------------------------------------------------------------------


def event(
    w: World,
    about: Obj,
    reason: str,
    message: str,
    *,
    kind: str = "Warning",
    source: str = "job-controller",
    count: int = 1,
    first: float = 30,
    last: float = 1,
    new_style: bool = False,
) -> Obj:
    """An event as `kubectl get events -o json` shows it: legacy recorders fill `source`, `count` and
    the timestamps; `events.k8s.io` recorders (JobSet ≥ v0.12, the scheduler) fill `eventTime`,
    `reportingComponent`, `action` and `series`."""
    meta = about["metadata"]
    name = f"{meta['name']}.{w.rng.getrandbits(64):016x}"
    involved = {
        "apiVersion": about["apiVersion"],
        "kind": about["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace", "default"),
        "resourceVersion": meta["resourceVersion"],
        "uid": meta["uid"],
    }
    base: Obj = {
        "apiVersion": "v1",
        "involvedObject": involved,
        "kind": "Event",
        "message": message,
        "metadata": {
            "creationTimestamp": ts(first),
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "resourceVersion": w.rv(),
            "uid": w.uid(),
        },
        "reason": reason,
        "type": kind,
    }
    if new_style:
        base.update(
            {
                "action": {"default-scheduler": "Scheduling", "jobset": "Reconciling"}.get(
                    source, "Reconciling"
                ),
                "eventTime": (NOW - timedelta(minutes=first)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "firstTimestamp": None,
                "lastTimestamp": None,
                "reportingComponent": source,
                "reportingInstance": f"{source}-{w.suffix(10)}",
                "source": {},
            }
        )
        if count > 1:
            base["series"] = {
                "count": count,
                "lastObservedTime": (NOW - timedelta(minutes=last)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            }
    else:
        base.update(
            {
                "count": count,
                "eventTime": None,
                "firstTimestamp": ts(first),
                "lastTimestamp": ts(last),
                "reportingComponent": source,
                "reportingInstance": "",
                "source": {"component": source},
            }
        )
    return w.add(base)


def failed_create(w: World, j: Job, error: str, count: int, *, first: float = 60, last: float = 1) -> Obj:
    return event(w, j.obj, "FailedCreate", f"Error creating: {error}", count=count, first=first, last=last)


def created_pod(w: World, j: Job, p: Obj, minutes_ago: float) -> Obj:
    return event(
        w,
        j.obj,
        "SuccessfulCreate",
        f"Created pod: {p['metadata']['name']}",
        kind="Normal",
        first=minutes_ago,
        last=minutes_ago,
    )


def scheduled(w: World, p: Obj, minutes_ago: float) -> Obj:
    node = p["spec"]["nodeName"]
    return event(
        w,
        p,
        "Scheduled",
        f"Successfully assigned {p['metadata']['namespace']}/{p['metadata']['name']} to {node}",
        kind="Normal",
        source="default-scheduler",
        first=minutes_ago,
        last=minutes_ago,
        new_style=True,
    )


def failed_scheduling(w: World, p: Obj, message: str, count: int, first: float, last: float = 0.5) -> Obj:
    return event(
        w,
        p,
        "FailedScheduling",
        message,
        source="default-scheduler",
        count=count,
        first=first,
        last=last,
        new_style=True,
    )


# --- Kueue, quota, runtime classes, controller pods ------------------------------------------------


def workload(w: World, js: JS, queue: str, conditions: list[Obj], admitted_flavor: str = "") -> Obj:
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
                "ownerReferences": [
                    {
                        "apiVersion": JOBSET_API,
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "JobSet",
                        "name": js.name,
                        "uid": js.uid,
                    }
                ],
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


def runtime_class(w: World, name: str, handler: str) -> Obj:
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


def controller_pod(w: World, ns: str, deployment: str, message: str) -> Obj:
    """A Pending controller-manager pod of a webhook's Deployment."""
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
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "ReplicaSet",
                        "name": name[:-6],
                        "uid": w.uid(),
                    }
                ],
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
                "qosClass": "Guaranteed",
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
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": owner[0],
                        "name": owner[1],
                        "uid": w.uid(),
                    }
                ],
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
                "qosClass": "BestEffort",
                "startTime": ts(599),
            },
        }
    )


def pool(w: World, count: int, make: Any) -> list[Obj]:
    """`count` nodes of one GKE node pool (one instance group: one hash in their names)."""
    group = w.hexid(8)
    return [make(group) for _ in range(count)]


def rj_status(
    name: str, ready: int = 0, active: int = 0, succeeded: int = 0, failed: int = 0, suspended: int = 0
) -> Obj:
    return {
        "active": active,
        "failed": failed,
        "name": name,
        "ready": ready,
        "succeeded": succeeded,
        "suspended": suspended,
    }


TPU_IMAGE = "us-central1-docker.pkg.dev/ml-platform-prod/train/maxtext:2026.11.20"
GPU_IMAGE = "nvcr.io/nvidia/pytorch:25.10-py3"
TPU_SELECTOR = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "4x4",
}
TPU_TOLERATION = [{"effect": "NoSchedule", "key": "google.com/tpu", "operator": "Exists"}]
GPU_TOLERATION = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
RESTART_POLICY = {"maxRestarts": 10, "restartStrategy": "Recreate"}
MISSING_SELECTOR = (
    'admission webhook "vpod.kb.io" denied the request: follower pod node selector for topology domain not found. '
    "missing selector: {key}"
)
NOT_SET = 'admission webhook "{webhook}" denied the request: follower pod node selector not set'


def tpu_slice(name: str = "slice", replicas: int = 2) -> RJ:
    return RJ(
        name,
        replicas,
        4,
        ("google.com/tpu", "4"),
        TPU_IMAGE,
        "jax",
        dict(TPU_SELECTOR),
        list(TPU_TOLERATION),
        backoff_limit=0,
    )


def gpu_rj(name: str, replicas: int, parallelism: int, gpus: str = "8", **kw: Any) -> RJ:
    return RJ(
        name,
        replicas,
        parallelism,
        ("nvidia.com/gpu", gpus),
        GPU_IMAGE,
        kw.pop("container", "trainer"),
        tolerations=list(GPU_TOLERATION),
        **kw,
    )


def leader_affinity(js: JS, j: Job, node: Obj) -> dict[str, str]:
    """The nodeSelector `mpod.kb.io` gives a follower: the leader node's topology value."""
    return {js.topology: node["metadata"]["labels"][js.topology]}


def full_job(
    js: JS, rj: RJ, index: int, nodes: list[Obj], *, attempt: int = 0, created: float = 88, ready: bool = True
) -> Job:
    """A child Job with all its pods running, followers following the leader's domain."""
    j = job(
        js,
        rj,
        index,
        attempt=attempt,
        created=created,
        status=job_status(rj.parallelism, rj.parallelism if ready else 0, start=created),
    )
    for i in range(rj.parallelism):
        extra = leader_affinity(js, j, nodes[0]) if js.topology and i else None
        pod(
            j,
            i,
            "Running",
            node=nodes[i % len(nodes)],
            created=created - 0.1,
            ready=ready,
            node_selector=extra,
        )
    return j


# --- the scenarios -----------------------------------------------------------------------------


def completed_gpu() -> World:
    w = World("completed-gpu")
    nodes = pool(w, 2, lambda g: g2(w, "ml-prod", "l4-pool", group=g))
    cpu_node(w, "ml-prod")
    rj = gpu_rj("workers", 2, 1, "2")
    js = jobset(
        w,
        "bert-finetune",
        "ml-train",
        [rj],
        created=300,
        status={
            "conditions": [jcond("Completed", "AllJobsCompleted", "jobset completed successfully", 12)],
            "replicatedJobsStatus": [rj_status("workers", succeeded=2)],
            "restarts": 0,
            "terminalState": "Completed",
        },
    )
    for i, n in enumerate(nodes):
        done = [
            cond(
                "Complete", "CompletionsReached", "Reached expected number of succeeded pods", 12, probe=True
            ),
            cond(
                "SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", 12.1
            ),
        ]
        j = job(
            js,
            rj,
            i,
            created=299,
            status={**job_status(0, 0, succeeded=1, start=299, conditions=done), "completionTime": ts(12)},
        )
        pod(
            j,
            0,
            "Succeeded",
            node=n,
            created=298.9,
            ready=False,
            terminated=exited(0, "Completed", 12.2, 280),
        )
    event(
        w,
        js.obj,
        "AllJobsCompleted",
        "jobset completed successfully",
        kind="Normal",
        source="jobset",
        first=12,
        last=12,
        new_style=True,
    )
    return w


def completed_tpu_after_restart() -> World:
    w = World("completed-tpu")
    nodes = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-1", group=g))
    driver = RJ("driver", 1, 1, ("cpu", "4"), TPU_IMAGE, "driver")
    workers = tpu_slice("workers", 1)
    js = jobset(
        w,
        "gemma-eval",
        "llm",
        [driver, workers],
        created=500,
        topology="cloud.google.com/gke-nodepool",
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [
                jcond("RestartingJobSet", "JobsReady", "all jobs are ready", 300, "False"),
                jcond("Completed", "AllJobsCompleted", "jobset completed successfully", 4),
            ],
            "replicatedJobsStatus": [rj_status("driver", succeeded=1), rj_status("workers", succeeded=1)],
            "restarts": 1,
            "restartsCountTowardsMax": 1,
            "terminalState": "Completed",
        },
    )
    done = [
        cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods", 4, probe=True)
    ]
    j = job(
        js,
        driver,
        0,
        attempt=1,
        created=320,
        status={**job_status(succeeded=1, start=320, conditions=done), "completionTime": ts(4)},
    )
    pod(
        j,
        0,
        "Succeeded",
        node=nodes[0],
        created=319,
        ready=False,
        terminated=exited(0, "Completed", 4.5, 300),
    )
    j = job(
        js,
        workers,
        0,
        attempt=1,
        created=320,
        status={**job_status(succeeded=4, start=320, conditions=done), "completionTime": ts(4)},
    )
    for i in range(4):
        extra = leader_affinity(js, j, nodes[0]) if i else None
        pod(
            j,
            i,
            "Succeeded",
            node=nodes[i],
            created=319,
            ready=False,
            terminated=exited(0, "Completed", 4.6, 300),
            node_selector=extra,
        )
    return w


def failed_no_policy() -> World:
    w = World("failed-no-policy")
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1, restart_policy="Never", container="pytorch")
    js = jobset(
        w,
        "resnet-train",
        "vision",
        [rj],
        created=240,
        status={
            "conditions": [
                jcond(
                    "Failed",
                    "FailedJobs",
                    "jobset failed due to one or more job failures (first failed job: resnet-train-workers-1)",
                    35,
                )
            ],
            "replicatedJobsStatus": [rj_status("workers", failed=1)],
            "restarts": 0,
            "terminalState": "Failed",
        },
    )
    failed = [
        cond("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 35.2),
        cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 35.1),
    ]
    j = job(
        js,
        rj,
        1,
        created=239,
        status=job_status(0, 0, failed=1, start=239, conditions=failed, failed_indexes=""),
    )
    pod(j, 0, "Failed", node=nodes[1], created=238.9, ready=False, terminated=exited(1, "Error", 35.3, 200))
    event(
        w,
        j.obj,
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
        source="job-controller",
        first=35,
        last=35,
    )
    event(
        w,
        js.obj,
        "FailedJobs",
        "jobset failed due to one or more job failures (first failed job: resnet-train-workers-1)",
        source="jobset",
        first=35,
        last=35,
    )
    return w


def failed_max_restarts() -> World:
    w = World("failed-max-restarts")
    nodes = pool(w, 2, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    rj = gpu_rj("workers", 2, 1)
    js = jobset(
        w,
        "llama-pretrain",
        "llm",
        [rj],
        created=400,
        failure_policy={"maxRestarts": 3, "restartStrategy": "Recreate"},
        status={
            "conditions": [
                jcond("RestartingJobSet", "JobSetFailed", "jobset failed", 20, "False"),
                jcond(
                    "Failed",
                    "ReachedMaxRestarts",
                    "jobset failed due to reaching max number of restarts (first failed job: llama-pretrain-workers-0)",
                    20,
                ),
            ],
            "replicatedJobsStatus": [rj_status("workers", failed=1)],
            "restarts": 3,
            "restartsCountTowardsMax": 3,
            "terminalState": "Failed",
        },
    )
    failed = [cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 20.2)]
    j = job(js, rj, 0, attempt=3, created=60, status=job_status(0, 0, failed=1, start=60, conditions=failed))
    pod(
        j,
        0,
        "Failed",
        node=nodes[0],
        created=59.9,
        ready=False,
        terminated=exited(137, "OOMKilled", 20.4, 35),
    )
    event(
        w,
        js.obj,
        "ReachedMaxRestarts",
        "jobset failed due to reaching max number of restarts (first failed job: llama-pretrain-workers-0)",
        source="jobset",
        first=20,
        last=20,
        new_style=True,
    )
    return w


def suspended_kueue() -> World:
    w = World("suspended-kueue")
    pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-1", group=g))
    rj = tpu_slice("workers", 4)
    js = jobset(
        w,
        "gemma-tune",
        "team-a",
        [rj],
        created=45,
        suspend=True,
        labels={"kueue.x-k8s.io/queue-name": "tpu-queue"},
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [jcond("Suspended", "SuspendedJobs", "jobset is suspended", 45)],
            "replicatedJobsStatus": [rj_status("workers", suspended=4)],
            "restarts": 0,
        },
    )
    for i in range(4):
        job(
            js,
            rj,
            i,
            created=44.9,
            suspend=True,
            status={
                **job_status(
                    start=44.9, conditions=[cond("Suspended", "JobSuspended", "Job suspended", 44.9)]
                ),
                "ready": 0,
            },
        )
    workload(
        w,
        js,
        "tpu-queue",
        [
            jcond(
                "QuotaReserved",
                "Pending",
                "couldn't assign flavors to pod set workers: insufficient unused quota for google.com/tpu in flavor v5e-4x4, 48 more needed",
                44,
                "False",
            )
        ],
    )
    event(
        w,
        js.obj,
        "SuspendedJobs",
        "jobset is suspended",
        kind="Normal",
        source="jobset",
        first=45,
        last=45,
        new_style=True,
    )
    return w


def suspended_by_hand() -> World:
    w = World("suspended-by-hand")
    nodes = pool(w, 2, lambda g: g2(w, "research", "l4-pool", group=g))
    rj = gpu_rj("trial", 6, 1, "1")
    js = jobset(
        w,
        "sweep-lr",
        "research",
        [rj],
        created=900,
        suspend=True,
        status={
            "conditions": [jcond("Suspended", "SuspendedJobs", "jobset is suspended", 400)],
            "replicatedJobsStatus": [rj_status("trial", suspended=4, succeeded=2)],
            "restarts": 0,
        },
    )
    for i in range(6):
        done = i < 2
        status = (
            job_status(
                succeeded=1,
                start=899,
                conditions=[
                    cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods", 600)
                ],
            )
            if done
            else {
                **job_status(start=899, conditions=[cond("Suspended", "JobSuspended", "Job suspended", 400)]),
                "ready": 0,
            }
        )
        j = job(js, rj, i, created=899, suspend=not done, status=status)
        if done:
            pod(
                j,
                0,
                "Succeeded",
                node=nodes[i],
                created=898,
                ready=False,
                terminated=exited(0, "Completed", 600, 280),
            )
    return w


def webhook_unavailable_jobset() -> World:
    w = World("webhook-unavailable-jobset")
    pool(w, 4, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "mixtral-sft",
        "ml-train",
        [rj],
        created=40,
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers")], "restarts": 0},
    )
    error = (
        'Internal error occurred: failed calling webhook "mpod.kb.io": failed to call webhook: Post '
        '"https://jobset-webhook-service.jobset-system.svc:443/mutate--v1-pod?timeout=10s": no endpoints available '
        'for service "jobset-webhook-service"'
    )
    for i in range(2):
        j = job(js, rj, i, created=39.9)
        failed_create(w, j, error, 14, first=39.8, last=2 + i)
    controller_pod(
        w,
        "jobset-system",
        "jobset-controller-manager",
        "0/4 nodes are available: 4 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/4 nodes are available: "
        "4 Preemption is not helpful for scheduling.",
    )
    return w


def webhook_unavailable_kueue() -> World:
    w = World("webhook-unavailable-kueue")
    pool(w, 2, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    driver = RJ("driver", 1, 1, ("cpu", "2"), GPU_IMAGE, "driver")
    workers = gpu_rj("workers", 2, 1)
    js = jobset(
        w,
        "t5-distill",
        "team-b",
        [driver, workers],
        created=25,
        labels={"kueue.x-k8s.io/queue-name": "gpu-queue"},
        status={
            "conditions": [jcond("Suspended", "ResumeJobs", "jobset is resumed", 24, "False")],
            "restarts": 0,
        },
    )
    workload(
        w,
        js,
        "gpu-queue",
        [
            jcond("QuotaReserved", "QuotaReserved", "Quota reserved in ClusterQueue gpu-cluster-queue", 24),
            jcond("Admitted", "Admitted", "The workload is admitted", 24),
        ],
        admitted_flavor="h100-on-demand",
    )
    message = (
        'job "t5-distill-driver-0" creation failed with error: Internal error occurred: failed calling webhook '
        '"mjob.kb.io": failed to call webhook: Post "https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s": '
        'no endpoints available for service "kueue-webhook-service"'
    )
    event(w, js.obj, "JobCreationFailed", message, source="jobset", count=9, first=23.5, last=1.5)
    controller_pod(
        w,
        "kueue-system",
        "kueue-controller-manager",
        "0/2 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.",
    )
    return w


def leader_duplicate_tpu() -> World:
    w = World("leader-duplicate-tpu")
    p1 = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-1", group=g))
    p2 = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-2", group=g))
    rj = RJ(
        "slice",
        2,
        4,
        ("google.com/tpu", "4"),
        TPU_IMAGE,
        "jax",
        dict(TPU_SELECTOR),
        list(TPU_TOLERATION),
        backoff_limit=4,
    )
    js = jobset(
        w,
        "llm-pretrain",
        "llm",
        [rj],
        created=200,
        topology="cloud.google.com/gke-nodepool",
        failure_policy={"maxRestarts": 4, "restartStrategy": "Recreate"},
        status={"replicatedJobsStatus": [rj_status("slice", ready=1, active=2)], "restarts": 0},
    )
    full_job(js, rj, 0, p1, created=199)
    j = job(js, rj, 1, created=199, status=job_status(2, 1, failed=3, start=199))
    shutdown = ("Terminated", "Pod was terminated in response to imminent node shutdown.")
    killed = exited(143, "Error", 41, 150)
    old_leader = pod(
        j,
        0,
        "Failed",
        node=p2[0],
        created=198.9,
        ready=False,
        terminated=killed,
        disruption=("TerminationByKubelet", "Pod was terminated in response to imminent node shutdown."),
        status_reason=shutdown,
    )
    old_leader["status"]["conditions"][0]["lastTransitionTime"] = ts(41)
    for i in (1, 2):
        pod(
            j,
            i,
            "Failed",
            node=p2[i],
            created=198.9,
            ready=False,
            terminated=killed,
            disruption=("TerminationByKubelet", "Pod was terminated in response to imminent node shutdown."),
            status_reason=shutdown,
            node_selector=leader_affinity(js, j, p2[0]),
        )
    pod(j, 3, "Running", node=p2[3], created=198.9, node_selector=leader_affinity(js, j, p2[0]))
    leader = pod(j, 0, "Running", node=p2[0], created=38, started=36)
    created_pod(w, j, leader, 38)
    failed_create(w, j, MISSING_SELECTOR.format(key="cloud.google.com/gke-nodepool"), 31, first=38, last=0.8)
    return w


def leader_duplicate_gpu() -> World:
    w = World("leader-duplicate-gpu")
    block = "b-7c1d3e"
    nodes = pool(
        w,
        4,
        lambda g: a3(
            w,
            "ml-prod",
            "a3-compact",
            group=g,
            extra={
                "cloud.google.com/gce-topology-block": block,
                "cloud.google.com/gce-topology-subblock": "sb-02",
            },
        ),
    )
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "cloud.google.com/gke-accelerator",
                                "operator": "In",
                                "values": ["nvidia-h100-80gb"],
                            }
                        ]
                    }
                ]
            }
        }
    }
    rj = gpu_rj("workers", 1, 4, restart_policy="Never", backoff_limit=6, affinity=affinity)
    js = jobset(
        w,
        "sd-train",
        "vision",
        [rj],
        created=150,
        topology="cloud.google.com/gce-topology-block",
        failure_policy={"maxRestarts": 2},
        status={"replicatedJobsStatus": [rj_status("workers", active=1)], "restarts": 0},
    )
    j = job(js, rj, 0, created=149, status=job_status(3, 3, failed=2, start=149))
    follow = {js.topology: block}
    pod(j, 0, "Failed", node=nodes[0], created=148.9, ready=False, terminated=exited(1, "Error", 22, 120))
    pod(j, 1, "Running", node=nodes[1], created=148.9, node_selector=follow)
    pod(
        j,
        2,
        "Failed",
        node=nodes[2],
        created=148.9,
        ready=False,
        terminated=exited(1, "Error", 22, 120),
        node_selector=follow,
    )
    pod(j, 3, "Running", node=nodes[3], created=148.9, node_selector=follow)
    leader = pod(j, 0, "Running", node=nodes[0], created=21.5, started=20)
    created_pod(w, j, leader, 21.5)
    failed_create(w, j, NOT_SET.format(webhook="validate--v1-pod.x-k8s.io"), 19, first=21.4, last=0.6)
    return w


def topology_label_missing_event() -> World:
    w = World("topology-label-missing-event")
    nodes = pool(w, 4, lambda g: a3(w, "ml-prod", "a3-ondemand", group=g))
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "phi-pretrain",
        "ml-train",
        [rj],
        created=35,
        topology="cloud.google.com/gce-topology-block",
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers", active=2)], "restarts": 0},
    )
    for i in range(2):
        j = job(js, rj, i, created=34.9, status=job_status(1, 1, start=34.9))
        leader = pod(j, 0, "Running", node=nodes[2 * i], created=34.8, started=33)
        created_pod(w, j, leader, 34.8)
        failed_create(
            w,
            j,
            'admission webhook "mpod.kb.io" denied the request: node does not have topology label: cloud.google.com/gce-topology-block',
            17,
            first=34.7,
            last=0.9 + i,
        )
    return w


def topology_label_missing_node() -> World:
    w = World("topology-label-missing-node")
    key = "topology.k8s.aws/network-node-layer-3"
    nodes = [eks_p4d(w, i, **({key: f"nn-{w.hexid(17)}"} if i >= 2 else {})) for i in range(4)]
    rj = gpu_rj("trainer", 1, 2, restart_policy="OnFailure")
    js = jobset(
        w,
        "nemo-sft",
        "nlp",
        [rj],
        created=180,
        topology=key,
        status={"replicatedJobsStatus": [rj_status("trainer", active=1)], "restarts": 0},
    )
    j = job(js, rj, 0, created=179.9, status=job_status(1, 1, start=179.9))
    pod(j, 0, "Running", node=nodes[0], created=179.8, started=178)
    return w


def leader_pending_tpu() -> World:
    w = World("leader-pending-tpu")
    for _ in range(2):
        cpu_node(w, "ml-prod")
    p1 = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-1", group=g))
    p2 = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-2", group=g))
    rj = tpu_slice()
    js = jobset(
        w,
        "maxtext-v5e",
        "llm",
        [rj],
        created=52,
        topology="cloud.google.com/gke-nodepool",
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("slice", ready=1, active=2)], "restarts": 0},
    )
    for i, n in enumerate(p2):
        other_pod(
            w, "serving", f"gemma-serve-{i}", n, ("google.com/tpu", "4"), ("StatefulSet", "gemma-serve")
        )
    full_job(js, rj, 0, p1, created=51.9)
    j = job(js, rj, 1, created=51.9, status=job_status(1, 0, start=51.9))
    message = (
        "0/10 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 8 Insufficient google.com/tpu. "
        "preemption: 0/10 nodes are available: 10 No preemption victims found for incoming pod."
    )
    leader = pod(j, 0, "Pending", created=51.8, unschedulable=message)
    created_pod(w, j, leader, 51.8)
    failed_scheduling(w, leader, message, 19, first=51.7)
    failed_create(
        w, j, MISSING_SELECTOR.format(key="cloud.google.com/gke-nodepool"), 23, first=51.7, last=0.7
    )
    return w


def leader_pending_taint() -> World:
    w = World("leader-pending-taint")
    system = plain_node(
        w,
        "aks-system-38117962-vmss000000",
        {
            "agentpool": "system",
            "kubernetes.azure.com/agentpool": "system",
            "kubernetes.azure.com/mode": "system",
            "node.kubernetes.io/instance-type": "Standard_D8ds_v5",
            "topology.kubernetes.io/zone": "eastus-1",
        },
        {},
        "azure:///subscriptions/6f1c0a7e-2f3b-4d55-9c2e-0e8b1f7d9a11/resourceGroups/mc_ml_aks-ml_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-system-38117962-vmss/virtualMachines/0",
    )
    del system
    nodes = [
        plain_node(
            w,
            f"aks-gpupool-21504838-vmss00000{i}",
            {
                "agentpool": "gpupool",
                "kubernetes.azure.com/accelerator": "nvidia",
                "kubernetes.azure.com/agentpool": "gpupool",
                "kubernetes.azure.com/mode": "user",
                "node.kubernetes.io/instance-type": "Standard_ND96asr_v4",
                "topology.kubernetes.io/zone": "eastus-1",
            },
            {"nvidia.com/gpu": "8"},
            f"azure:///subscriptions/6f1c0a7e-2f3b-4d55-9c2e-0e8b1f7d9a11/resourceGroups/mc_ml_aks-ml_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpupool-21504838-vmss/virtualMachines/{i}",
            taints=[{"effect": "NoSchedule", "key": "sku", "value": "gpu"}],
        )
        for i in range(3)
    ]
    del nodes
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["gpupool"]}
                        ]
                    }
                ]
            }
        }
    }
    rj = gpu_rj("trainer", 2, 2, "4", affinity=affinity)
    js = jobset(
        w,
        "vit-huge",
        "vision",
        [rj],
        created=28,
        topology="kubernetes.io/hostname",
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("trainer", active=2)], "restarts": 0},
    )
    message = (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 node(s) had untolerated taint {sku: gpu}. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    for i in range(2):
        j = job(js, rj, i, created=27.9, status=job_status(1, 0, start=27.9))
        leader = pod(j, 0, "Pending", created=27.8, unschedulable=message)
        created_pod(w, j, leader, 27.8)
        failed_scheduling(w, leader, message, 11, first=27.7)
        failed_create(w, j, NOT_SET.format(webhook="vpod.kb.io"), 15, first=27.7, last=0.5 + i)
    return w


def leader_pending_expired() -> World:
    w = World("leader-pending-expired")
    pool(w, 3, lambda g: g2(w, "research", "l4-pool", group=g))
    rj = gpu_rj("actor", 1, 4, "2", node_selector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    js = jobset(
        w,
        "rl-rollout",
        "research",
        [rj],
        created=200,
        topology="cloud.google.com/gke-nodepool",
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("actor", active=1)], "restarts": 0},
    )
    j = job(js, rj, 0, created=199.9, status=job_status(1, 0, start=199.9))
    pod(
        j,
        0,
        "Pending",
        created=199.8,
        unschedulable="0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    )
    return w


def create_rejected_quota() -> World:
    w = World("create-rejected-quota")
    nodes = pool(w, 4, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "whisper-ft",
        "team-a",
        [rj],
        created=33,
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers", ready=1, active=1)], "restarts": 0},
    )
    full_job(js, rj, 0, nodes[:2], created=32.9)
    j = job(js, rj, 1, created=32.9)
    quota(w, "gpu-quota", "team-a", {"requests.nvidia.com/gpu": "16"}, {"requests.nvidia.com/gpu": "16"})
    failed_create(
        w,
        j,
        f'pods "whisper-ft-workers-1-0-{w.suffix()}" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8, '
        "used: requests.nvidia.com/gpu=16, limited: requests.nvidia.com/gpu=16",
        12,
        first=32.8,
        last=1.2,
    )
    return w


def create_rejected_runtimeclass() -> World:
    w = World("create-rejected-runtimeclass")
    pool(w, 2, lambda g: g2(w, "ml-prod", "l4-pool", group=g))
    runtime_class(w, "nvidia", "nvidia")
    rj = gpu_rj("server", 1, 1, "1", runtime_class="nvidia-cdi", container="vllm")
    rj.image = "vllm/vllm-openai:v0.11.2"
    js = jobset(
        w,
        "vllm-bench",
        "inference",
        [rj],
        created=18,
        status={"replicatedJobsStatus": [rj_status("server")], "restarts": 0},
    )
    j = job(js, rj, 0, created=17.9)
    failed_create(
        w,
        j,
        'pods "vllm-bench-server-0-0-" is forbidden: pod rejected: RuntimeClass "nvidia-cdi" not found',
        9,
        first=17.8,
        last=0.7,
    )
    return w


def create_rejected_job_quota() -> World:
    w = World("create-rejected-job-quota")
    nodes = [cpu_node(w, "data") for _ in range(2)]
    rj = RJ("shard", 4, 1, ("cpu", "4"), "us-docker.pkg.dev/ml-platform-prod/etl/beam-worker:2.61", "worker")
    js = jobset(
        w,
        "etl-shards",
        "batch",
        [rj],
        created=14,
        status={"replicatedJobsStatus": [rj_status("shard", ready=3, active=3)], "restarts": 0},
    )
    for i in range(3):
        j = job(js, rj, i, created=13.9, status=job_status(1, 1, start=13.9))
        pod(j, 0, "Running", node=nodes[i % 2], created=13.8)
    quota(w, "job-count", "batch", {"count/jobs.batch": "3"}, {"count/jobs.batch": "3"})
    event(
        w,
        js.obj,
        "JobCreationFailed",
        'job "etl-shards-shard-3" creation failed with error: jobs.batch "etl-shards-shard-3" is forbidden: exceeded quota: job-count, '
        "requested: count/jobs.batch=1, used: count/jobs.batch=3, limited: count/jobs.batch=3",
        source="jobset",
        count=11,
        first=13.8,
        last=0.4,
        new_style=True,
    )
    return w


def preemption_restarts() -> World:
    """Spot nodes shut down under slice workers-1 (attempt 3); its Job is still being deleted, so the
    Recreate strategy has recreated only workers-0 for attempt 4 so far."""
    w = World("preemption-restarts")
    for _ in range(2):
        cpu_node(w, "ml-prod")
    nodes = pool(w, 4, lambda g: a3(w, "ml-prod", "a3-spot-pool", spot=True, group=g))
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "llama3-70b-ft",
        "llm",
        [rj],
        created=240,
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [
                jcond(
                    "RestartingJobSet",
                    "DefaultFailurePolicy",
                    "applying RestartJobSet failure policy action (first failed job: llama3-70b-ft-workers-1)",
                    6,
                )
            ],
            "replicatedJobsStatus": [rj_status("workers", active=1)],
            "restarts": 4,
            "restartsCountTowardsMax": 4,
        },
    )
    shutdown = "Pod was terminated in response to imminent node shutdown."
    old = job(
        js,
        rj,
        1,
        attempt=3,
        created=48,
        deleting=6,
        status=job_status(
            0,
            0,
            failed=2,
            start=48,
            conditions=[
                cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 6.5)
            ],
        ),
    )
    gone = {
        "metadata": {
            "name": "gke-ml-prod-a3-spot-pool-" + nodes[0]["metadata"]["name"].split("-")[-2] + "-wq4z"
        },
        "status": {"addresses": [{"address": "10.128.3.17"}]},
    }
    for i in range(2):
        pod(
            old,
            i,
            "Failed",
            node=gone,
            created=47.9,
            ready=False,
            terminated=exited(143, "Error", 7, 40),
            deleting=6,
            disruption=("TerminationByKubelet", shutdown),
            status_reason=("Terminated", shutdown),
        )
    j = job(js, rj, 0, attempt=4, created=5.5, status=job_status(2, 0, start=5.5))
    for k in range(2):
        p = pod(j, k, "Pending", node=nodes[k], created=5.4, started=5, waiting=("ContainerCreating", ""))
        scheduled(w, p, 5.3)
    event(
        w,
        js.obj,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: llama3-70b-ft-workers-1)",
        source="jobset",
        count=4,
        first=178,
        last=6,
        new_style=True,
    )
    event(
        w,
        js.obj,
        "RestartingJobSet",
        "applying RestartJobSet failure policy action (first failed job: llama3-70b-ft-workers-1)",
        source="jobset",
        count=4,
        first=178,
        last=6,
        new_style=True,
    )
    return w


def restarting_app_failure() -> World:
    w = World("restarting-app-failure")
    nodes = pool(
        w,
        3,
        lambda g: gke_node(
            w,
            "nlp-cluster",
            "a100-pool",
            "a2-highgpu-8g",
            {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"},
            {"nvidia.com/gpu": "8"},
            taints=[GPU_TAINT],
            group=g,
        ),
    )
    driver = gpu_rj("driver", 1, 1, "8")
    workers = gpu_rj("workers", 2, 1, "8")
    js = jobset(
        w,
        "bert-large-mlm",
        "nlp",
        [driver, workers],
        created=130,
        failure_policy={"maxRestarts": 5},
        coordinator={"replicatedJob": "driver", "jobIndex": 0, "podIndex": 0},
        status={
            "replicatedJobsStatus": [rj_status("driver", active=1), rj_status("workers", ready=2, active=2)],
            "restarts": 2,
            "restartsCountTowardsMax": 2,
        },
    )
    j = job(js, driver, 0, attempt=2, created=16, status=job_status(1, 0, failed=0, start=16))
    pod(
        j,
        0,
        "Running",
        node=nodes[0],
        created=15.9,
        started=15.5,
        ready=False,
        waiting=("CrashLoopBackOff", f"back-off 40s restarting failed container=trainer pod={j.name}-0-x"),
        last_terminated=exited(1, "Error", 1.5, 3),
        restarts=2,
    )
    w.items[-1]["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = (
        f"back-off 40s restarting failed container=trainer pod={w.items[-1]['metadata']['name']}_nlp({w.items[-1]['metadata']['uid']})"
    )
    for i in range(2):
        full_job(js, workers, i, [nodes[1 + i]], attempt=2, created=16)
    event(
        w,
        js.obj,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: bert-large-mlm-driver-0)",
        source="jobset",
        count=2,
        first=55,
        last=16.2,
    )
    return w


def restarting_node_failure() -> World:
    """Node `bad` stopped reporting: the taint manager evicted workers-1's pod (attempt 2), whose Job
    failed and restarted the JobSet. That pod is stuck Terminating on the unreachable node, so its Job
    is not gone and workers-1 of attempt 3 cannot be created yet (jobset#576)."""
    w = World("restarting-node-failure")
    nodes = [
        a3(
            w,
            "ml-prod",
            "a3-pool",
            group="3e8f1a7c",
            host=f"h-{w.hexid(12)}",
            extra={
                "cloud.google.com/gce-topology-block": "b-91f2",
                "cloud.google.com/gce-topology-subblock": "sb-01",
            },
        )
        for _ in range(5)
    ]
    bad = nodes[1]
    cond_ready = next(c for c in bad["status"]["conditions"] if c["type"] == "Ready")
    cond_ready.update(
        {
            "lastTransitionTime": ts(9),
            "message": "Kubelet stopped posting node status.",
            "reason": "NodeStatusUnknown",
            "status": "Unknown",
        }
    )
    bad["spec"]["taints"] = [
        GPU_TAINT,
        {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": ts(9)},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": ts(9)},
    ]
    rj = gpu_rj("workers", 4, 1)
    js = jobset(
        w,
        "palm-tune",
        "llm",
        [rj],
        created=320,
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [
                jcond(
                    "RestartingJobSet",
                    "DefaultFailurePolicy",
                    "applying RestartJobSet failure policy action (first failed job: palm-tune-workers-1)",
                    3,
                )
            ],
            "replicatedJobsStatus": [rj_status("workers", active=3)],
            "restarts": 3,
            "restartsCountTowardsMax": 3,
        },
    )
    old = job(
        js,
        rj,
        1,
        attempt=2,
        created=130,
        deleting=3,
        status=job_status(
            0,
            0,
            failed=1,
            start=130,
            conditions=[
                cond(
                    "Failed",
                    "PodFailurePolicy",
                    "Container trainer for pod llm/palm-tune-workers-1-0 failed with exit code 137 matching FailJob rule at index 0",
                    3.5,
                )
            ],
        ),
    )
    stuck = pod(
        old,
        0,
        "Running",
        node=bad,
        created=129.9,
        ready=False,
        deleting=4,
        disruption=("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"),
    )
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
    for i, n in ((0, nodes[0]), (2, nodes[2]), (3, nodes[3])):
        j = job(js, rj, i, attempt=3, created=2.5, status=job_status(1, 0, start=2.5))
        p = pod(j, 0, "Pending", node=n, created=2.4, started=2.2, waiting=("ContainerCreating", ""))
        scheduled(w, p, 2.3)
    event(
        w,
        js.obj,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: palm-tune-workers-1)",
        source="jobset",
        count=3,
        first=215,
        last=3,
        new_style=True,
    )
    return w


def restarting_pod_preemption() -> World:
    """A higher-priority Deployment preempted workers-0 (attempt 0); workers-1 was recreated for
    attempt 1 and waits for GPUs, workers-0's old Job is still being deleted."""
    w = World("restarting-pod-preemption")
    nodes = [
        plain_node(
            w,
            f"gpu-node-{i:02d}.lab.internal",
            {
                "nvidia.com/gpu.count": "8",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.present": "true",
                "node-role.kubernetes.io/worker": "",
            },
            {"nvidia.com/gpu": "8"},
            "",
        )
        for i in range(2)
    ]
    for n in nodes:
        del n["spec"]["providerID"]
    rj = gpu_rj("workers", 2, 1, "4")
    js = jobset(
        w,
        "ablation-small",
        "research",
        [rj],
        created=70,
        failure_policy={"maxRestarts": 3},
        status={
            "conditions": [
                jcond(
                    "RestartingJobSet",
                    "DefaultFailurePolicy",
                    "applying RestartJobSet failure policy action (first failed job: ablation-small-workers-0)",
                    2,
                )
            ],
            "replicatedJobsStatus": [rj_status("workers", active=1)],
            "restarts": 1,
            "restartsCountTowardsMax": 1,
        },
    )
    old = job(js, rj, 0, attempt=0, created=69, deleting=2, status=job_status(0, 0, failed=1, start=69))
    victim = pod(
        old,
        0,
        "Running",
        node=nodes[0],
        created=68.9,
        ready=False,
        deleting=2.2,
        disruption=(
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        ),
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
    j = job(js, rj, 1, attempt=1, created=1.5, status=job_status(1, 0, start=1.5))
    pod(
        j,
        0,
        "Pending",
        created=1.4,
        unschedulable="0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    )
    for i, n in enumerate(nodes):
        other_pod(
            w, "prod-inference", f"llm-gateway-{i}", n, ("nvidia.com/gpu", "8"), ("Deployment", "llm-gateway")
        )
    event(
        w,
        js.obj,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: ablation-small-workers-0)",
        source="jobset",
        first=2,
        last=2,
        new_style=True,
    )
    return w


def restarting_unknown() -> World:
    w = World("restarting-unknown")
    nodes = [eks_p4d(w, i) for i in range(2)]
    rj = gpu_rj("workers", 2, 1)
    js = jobset(
        w,
        "dlrm-train",
        "ml-train",
        [rj],
        created=400,
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [
                jcond(
                    "RestartingJobSet",
                    "DefaultFailurePolicy",
                    "applying RestartJobSet failure policy action (first failed job: dlrm-train-workers-0)",
                    1.5,
                )
            ],
            "replicatedJobsStatus": [rj_status("workers", active=2)],
            "restarts": 1,
            "restartsCountTowardsMax": 1,
        },
    )
    for i in range(2):
        j = job(js, rj, i, attempt=1, created=1.2, status=job_status(1, 0, start=1.2))
        pod(j, 0, "Pending", node=nodes[i], created=1.1, started=1, waiting=("ContainerCreating", ""))
    return w


def pods_pending_exhausted() -> World:
    w = World("pods-pending-exhausted")
    nodes = pool(w, 3, lambda g: g2(w, "ml-prod", "l4-pool", group=g))
    for i, n in enumerate(nodes):
        other_pod(
            w,
            "inference",
            f"sdxl-serve-{w.suffix(10)}-{w.suffix()}",
            n,
            ("nvidia.com/gpu", "2"),
            ("ReplicaSet", f"sdxl-serve-{i}"),
        )
    rj = gpu_rj("workers", 1, 2, "2")
    js = jobset(
        w,
        "sdxl-finetune",
        "ml-train",
        [rj],
        created=26,
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers", active=1)], "restarts": 0},
    )
    j = job(js, rj, 0, created=25.9, status=job_status(2, 0, start=25.9))
    message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    for i in range(2):
        p = pod(j, i, "Pending", created=25.8, unschedulable=message)
        failed_scheduling(w, p, message, 9, first=25.7)
    return w


def pods_pending_gated() -> World:
    w = World("pods-pending-gated")
    pool(
        w,
        4,
        lambda g: a3(
            w,
            "ml-prod",
            "a3-pool",
            group=g,
            extra={
                "cloud.google.com/gce-topology-block": "b-1a",
                "cloud.google.com/gce-topology-subblock": "sb-1",
            },
        ),
    )
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "bert-serve-eval",
        "team-a",
        [rj],
        created=10,
        labels={"kueue.x-k8s.io/queue-name": "tas-queue"},
        status={
            "conditions": [jcond("Suspended", "ResumeJobs", "jobset is resumed", 9, "False")],
            "replicatedJobsStatus": [rj_status("workers", active=2)],
            "restarts": 0,
        },
    )
    workload(
        w,
        js,
        "tas-queue",
        [
            jcond("QuotaReserved", "QuotaReserved", "Quota reserved in ClusterQueue tas-cluster-queue", 9),
            jcond("Admitted", "Admitted", "The workload is admitted", 9),
        ],
        admitted_flavor="h100-tas",
    )
    for i in range(2):
        j = job(js, rj, i, created=8.9, status=job_status(2, 0, start=8.9))
        for k in range(2):
            pod(j, k, "Pending", created=8.8, gated=["kueue.x-k8s.io/topology"])
    return w


def starting_containers() -> World:
    w = World("starting-containers")
    nodes = pool(w, 2, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    rj = gpu_rj("workers", 2, 1)
    js = jobset(
        w,
        "yolo-train",
        "vision",
        [rj],
        created=3,
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers", active=2)], "restarts": 0},
    )
    for i in range(2):
        j = job(js, rj, i, created=2.9, status=job_status(1, 0, start=2.9))
        p = pod(j, 0, "Pending", node=nodes[i], created=2.8, started=2.5, waiting=("ContainerCreating", ""))
        scheduled(w, p, 2.7)
        event(
            w,
            p,
            "Pulling",
            f'Pulling image "{GPU_IMAGE}"',
            kind="Normal",
            source="kubelet",
            first=2.4,
            last=2.4,
        )
    return w


def starting_in_order() -> World:
    w = World("starting-in-order")
    nodes = pool(w, 3, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    reward = gpu_rj("reward-model", 1, 1)
    policy = gpu_rj("policy", 2, 1)
    js = jobset(
        w,
        "rlhf-pipeline",
        "llm",
        [reward, policy],
        created=6,
        in_order=True,
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [
                jcond(
                    "StartupPolicyInProgress",
                    "InOrderStartupPolicyInProgress",
                    "in order startup policy is in progress",
                    6,
                )
            ],
            "replicatedJobsStatus": [rj_status("reward-model", active=1), rj_status("policy")],
            "restarts": 0,
        },
    )
    j = job(js, reward, 0, created=5.9, status=job_status(1, 0, start=5.9))
    pod(j, 0, "Running", node=nodes[0], created=5.8, ready=False)
    return w


def running_steady() -> World:
    w = World("running-steady")
    nodes = pool(w, 4, lambda g: a3(w, "ml-prod", "a3-pool", group=g))
    rj = gpu_rj("workers", 2, 2)
    js = jobset(
        w,
        "gpt-neox-20b",
        "ml-train",
        [rj],
        created=600,
        failure_policy=dict(RESTART_POLICY),
        status={"replicatedJobsStatus": [rj_status("workers", ready=2, active=2)], "restarts": 0},
    )
    for i in range(2):
        full_job(js, rj, i, nodes[2 * i : 2 * i + 2], created=599)
    return w


def running_after_restarts() -> World:
    w = World("running-after-restarts")
    nodes = pool(w, 4, lambda g: tpu_v5e(w, "ml-prod", "tpu-v5e-pool-1", group=g))
    rj = tpu_slice("slice", 1)
    js = jobset(
        w,
        "gemma-pretrain",
        "llm",
        [rj],
        created=1500,
        topology="cloud.google.com/gke-nodepool",
        failure_policy=dict(RESTART_POLICY),
        status={
            "conditions": [jcond("RestartingJobSet", "JobsReady", "all jobs are ready", 410, "False")],
            "replicatedJobsStatus": [rj_status("slice", ready=1, active=1)],
            "restarts": 2,
            "restartsCountTowardsMax": 2,
        },
    )
    full_job(js, rj, 0, nodes, attempt=2, created=420)
    return w


@dataclass(frozen=True)
class Case:
    build: Any
    path: str
    namespace: str
    name: str
    verdict: str
    pod_verdict: str | None = None
    cause: str | None = None


CASES = (
    Case(completed_gpu, "tests/corpus/jobset/completed-gpu.json", "ml-train", "bert-finetune", "completed"),
    Case(
        completed_tpu_after_restart,
        "tests/corpus/jobset/completed-tpu-after-restart.json",
        "llm",
        "gemma-eval",
        "completed",
    ),
    Case(failed_no_policy, "tests/corpus/jobset/failed-no-policy.json", "vision", "resnet-train", "failed"),
    Case(
        failed_max_restarts, "tests/corpus/jobset/failed-max-restarts.json", "llm", "llama-pretrain", "failed"
    ),
    Case(suspended_kueue, "tests/corpus/jobset/suspended-kueue.json", "team-a", "gemma-tune", "suspended"),
    Case(
        suspended_by_hand, "tests/corpus/jobset/suspended-by-hand.json", "research", "sweep-lr", "suspended"
    ),
    Case(
        webhook_unavailable_jobset,
        "tests/corpus/jobset/webhook-unavailable-jobset.json",
        "ml-train",
        "mixtral-sft",
        "webhook-unavailable",
    ),
    Case(
        webhook_unavailable_kueue,
        "tests/corpus/jobset/webhook-unavailable-kueue.json",
        "team-b",
        "t5-distill",
        "webhook-unavailable",
    ),
    Case(
        leader_duplicate_tpu,
        "examples/jobset-leader-duplicate.json",
        "llm",
        "llm-pretrain",
        "leader-duplicate",
    ),
    Case(
        leader_duplicate_gpu,
        "tests/corpus/jobset/leader-duplicate-gpu.json",
        "vision",
        "sd-train",
        "leader-duplicate",
    ),
    Case(
        topology_label_missing_event,
        "tests/corpus/jobset/topology-label-missing-event.json",
        "ml-train",
        "phi-pretrain",
        "topology-label-missing",
    ),
    Case(
        topology_label_missing_node,
        "tests/corpus/jobset/topology-label-missing-node.json",
        "nlp",
        "nemo-sft",
        "topology-label-missing",
    ),
    Case(
        leader_pending_tpu,
        "examples/jobset-leader-pending-tpu.json",
        "llm",
        "maxtext-v5e",
        "leader-pending",
        pod_verdict="exhausted",
    ),
    Case(
        leader_pending_taint,
        "tests/corpus/jobset/leader-pending-taint.json",
        "vision",
        "vit-huge",
        "leader-pending",
        pod_verdict="taint",
    ),
    Case(
        leader_pending_expired,
        "tests/corpus/jobset/leader-pending-expired-events.json",
        "research",
        "rl-rollout",
        "leader-pending",
        pod_verdict="label-mismatch",
    ),
    Case(
        create_rejected_quota,
        "tests/corpus/jobset/create-rejected-quota.json",
        "team-a",
        "whisper-ft",
        "create-rejected",
    ),
    Case(
        create_rejected_runtimeclass,
        "tests/corpus/jobset/create-rejected-runtimeclass.json",
        "inference",
        "vllm-bench",
        "create-rejected",
    ),
    Case(
        create_rejected_job_quota,
        "tests/corpus/jobset/create-rejected-job-quota.json",
        "batch",
        "etl-shards",
        "create-rejected",
    ),
    Case(
        preemption_restarts,
        "examples/jobset-preemption-restarts.json",
        "llm",
        "llama3-70b-ft",
        "restarting",
        cause="node-preemption",
    ),
    Case(
        restarting_app_failure,
        "tests/corpus/jobset/restarting-app-failure.json",
        "nlp",
        "bert-large-mlm",
        "restarting",
        cause="app-failure",
    ),
    Case(
        restarting_node_failure,
        "tests/corpus/jobset/restarting-node-failure.json",
        "llm",
        "palm-tune",
        "restarting",
        cause="node-failure",
    ),
    Case(
        restarting_pod_preemption,
        "tests/corpus/jobset/restarting-pod-preemption.json",
        "research",
        "ablation-small",
        "restarting",
        cause="pod-preemption",
    ),
    Case(
        restarting_unknown,
        "tests/corpus/jobset/restarting-unknown.json",
        "ml-train",
        "dlrm-train",
        "restarting",
        cause="unknown",
    ),
    Case(
        pods_pending_exhausted,
        "tests/corpus/jobset/pods-pending-exhausted.json",
        "ml-train",
        "sdxl-finetune",
        "pods-pending",
        pod_verdict="exhausted",
    ),
    Case(
        pods_pending_gated,
        "tests/corpus/jobset/pods-pending-gated.json",
        "team-a",
        "bert-serve-eval",
        "pods-pending",
        pod_verdict="gated",
    ),
    Case(
        starting_containers,
        "tests/corpus/jobset/starting-containers.json",
        "vision",
        "yolo-train",
        "starting",
    ),
    Case(starting_in_order, "tests/corpus/jobset/starting-in-order.json", "llm", "rlhf-pipeline", "starting"),
    Case(running_steady, "tests/corpus/jobset/running-steady.json", "ml-train", "gpt-neox-20b", "running"),
    Case(
        running_after_restarts,
        "tests/corpus/jobset/running-after-restarts.json",
        "llm",
        "gemma-pretrain",
        "running",
    ),
)


def index_entry(case: Case) -> str:
    lines = [
        f"- snapshot: {case.path}",
        f"  namespace: {case.namespace}",
        f"  name: {case.name}",
        f"  verdict: {case.verdict}",
    ]
    if case.pod_verdict:
        lines.append(f"  pod_verdict: {case.pod_verdict}")
    if case.cause:
        lines.append(f"  cause: {case.cause}")
    return "\n".join(lines)


def main() -> None:
    for case in CASES:
        world = case.build()
        (ROOT / case.path).write_text(json.dumps(world.snapshot(), indent=4) + "\n")
    header = (
        "# JobSet corpus: snapshot files and what `/jobset why` must answer (format in tests/corpus.py).\n"
        "# Written by tests/corpus/jobset/make_corpus.py; edit the generator, not the files.\n"
    )
    (HERE / "index.yaml").write_text(header + "\n".join(index_entry(c) for c in CASES) + "\n")


if __name__ == "__main__":
    main()
