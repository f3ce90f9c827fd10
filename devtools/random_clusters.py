"""Small random GPU clusters, to check kubewhy's funnel against kube-scheduler's own Filter plugins
(`python -m devtools.oracle --random N`) and its readers against one another.

`scenario(seed)` is a snapshot (a `v1 List`) of 1–5 nodes, up to 8 pods bound to them, up to 2 pods
nominated to them, and the pending pod `ml/trainer-0` asking GPUs, with every field a Filter plugin
reads drawn at random: zones and other labels, taints, cordons (some not tainted yet), allocatable (a
GPU node may have 0), the pod limit; requests from limits, init containers and sidecars, overhead,
priority; host ports (protocol, hostIP); nodeSelector, node affinity (`Gt`/`Lt` included),
tolerations (key-less ones too); pod affinity and anti-affinity of the pod and of bound and nominated
pods, by hostname or zone, with namespaces or a namespaceSelector; a topology spread constraint with
its policies, minDomains and matchLabelKeys; PVCs bound (zonal disks, local volumes), unbound
(Immediate or WaitForFirstConsumer, allowedTopologies) or missing, sometimes used by a bound pod too;
running pods being resized in place (the cpu and memory the kubelet reports in
`containerStatuses[].resources` and `allocatedResources` above or below the spec's, with the
`PodResizeInProgress` condition, or a resize it defers or finds infeasible). The same seed gives the
same snapshot.
"""

from __future__ import annotations

import json
import random
import sys
import uuid
from typing import Any

Obj = dict[str, Any]

NAMESPACE, POD = "ml", "trainer-0"
GPU = "nvidia.com/gpu"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("us-central1-a", "us-central1-b", "us-central1-c")
CREATED = "2026-11-30T08:00:00Z"
PENDING_SINCE = "2026-12-01T09:00:00Z"
DRIVER = "pd.csi.storage.gke.io"


class _Draw:
    """One seeded random source, and the objects it makes."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.resizes = random.Random(f"resize-{seed}")
        """Resizes are drawn apart, so that a seed's other objects are those it drew before."""
        self.items: list[Obj] = []

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def uid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def meta(self, name: str, namespace: str = "", **more: Any) -> Obj:
        found: Obj = {"name": name, "uid": self.uid(), "creationTimestamp": CREATED, **more}
        if namespace:
            found["namespace"] = namespace
        return found

    # — nodes —

    def node(self, index: int) -> Obj:
        name = f"gke-ml-gpu-pool-{index}"
        gpus = self.r.choice((0, 2, 4, 8, 8))
        labels = {HOSTNAME: name, ZONE: self.r.choice(ZONES), "kubernetes.io/os": "linux"}
        labels["cloud.google.com/gke-nodepool"] = self.r.choice(("a100", "a100", "cpu", "h100"))
        if self.chance(0.4):
            labels["example.com/rack-tier"] = str(self.r.randint(1, 5))
        if gpus:
            labels["nvidia.com/gpu.present"] = "true"
        cpu, memory = self.r.choice((8, 16, 32, 96)), self.r.choice((32, 64, 128, 1360))
        capacity = {
            "cpu": str(cpu),
            "memory": f"{memory}Gi",
            "pods": str(self.r.choice((110, 110, 3, 5))),
            "ephemeral-storage": f"{self.r.choice((100, 375, 3000))}Gi",
        }
        if gpus:
            capacity[GPU] = str(gpus)
        if self.chance(0.2):
            capacity["hugepages-2Mi"] = self.r.choice(("0", "1Gi", "2Gi"))
        allocatable = dict(capacity, cpu=f"{cpu * 1000 - self.r.choice((0, 100, 940))}m")
        if gpus and self.chance(0.15):
            allocatable[GPU] = "0"  # the device plugin is not serving
        spec: Obj = {}
        taints = []
        if self.chance(0.35):
            taints.append(
                {
                    "key": self.r.choice((GPU, "dedicated", "cloud.google.com/gke-spot")),
                    "value": self.r.choice(("present", "ml", "true")),
                    "effect": self.r.choice(("NoSchedule", "NoExecute", "PreferNoSchedule")),
                }
            )
        if self.chance(0.08):
            spec["unschedulable"] = True
            if self.chance(0.7):  # else caught before the node controller adds the taint
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if taints:
            spec["taints"] = taints
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": self.meta(name, labels=labels),
            "spec": spec,
            "status": {
                "capacity": capacity,
                "allocatable": allocatable,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                "nodeInfo": {"kubeletVersion": "v1.34.1-gke.1000"},
            },
        }

    # — pods —

    def resources(self, gpus: int) -> Obj:
        asks: dict[str, str] = {}
        if self.chance(0.8):
            millis = self.r.choice((self.r.randint(1, 40) * 1000, self.r.randint(100, 40000)))
            asks["cpu"] = f"{millis}m" if millis % 1000 else str(millis // 1000)
        if self.chance(0.7):
            asks["memory"] = f"{self.r.randint(1, 160)}Gi"
        if gpus:
            asks[GPU] = str(gpus)
        if self.chance(0.1):
            asks["ephemeral-storage"] = f"{self.r.randint(1, 400)}Gi"
        if self.chance(0.05):
            asks["hugepages-2Mi"] = "1Gi"
        if not asks:
            return {}
        if self.chance(0.3):  # limits only: the API server copies them into requests
            return {"limits": asks}
        return {"requests": asks, **({"limits": {GPU: asks[GPU]}} if GPU in asks else {})}

    def container(self, name: str, gpus: int) -> Obj:
        found: Obj = {
            "name": name,
            "image": "nvcr.io/nvidia/pytorch:24.10-py3",
            "resources": self.resources(gpus),
        }
        if self.chance(0.15):
            port: Obj = {
                "containerPort": 8000 + self.r.randint(0, 2),
                "hostPort": 8000 + self.r.randint(0, 2),
            }
            if self.chance(0.3):
                port["protocol"] = self.r.choice(("TCP", "UDP"))
            if self.chance(0.2):
                port["hostIP"] = self.r.choice(("0.0.0.0", "10.0.0.1", "10.0.0.2"))
            found["ports"] = [port]
        return found

    def labels(self) -> dict[str, str]:
        return {
            "app": self.r.choice(("llama", "sdxl", "whisper")),
            "team": self.r.choice(("research", "prod")),
        }

    def terms(self) -> list[Obj]:
        found = []
        for _ in range(self.r.randint(1, 2)):
            if self.chance(0.6):
                selector: Obj = {"matchLabels": {"app": self.r.choice(("llama", "sdxl", "whisper"))}}
            else:
                operator = self.r.choice(("In", "NotIn", "Exists"))
                expression: Obj = {"key": "team", "operator": operator}
                if operator != "Exists":
                    expression["values"] = [self.r.choice(("research", "prod"))]
                selector = {"matchExpressions": [expression]}
            term: Obj = {"labelSelector": selector, "topologyKey": self.r.choice((HOSTNAME, ZONE))}
            if self.chance(0.15):
                term["namespaces"] = [self.r.choice((NAMESPACE, "serving"))]
            if self.chance(0.1):
                term["namespaceSelector"] = self.r.choice(
                    ({}, {"matchLabels": {"kubernetes.io/metadata.name": "serving"}})
                )
            found.append(term)
        return found

    def pod(self, name: str, namespace: str, gpus: int) -> Obj:
        spec: Obj = {
            "containers": [self.container("main", gpus)],
            "restartPolicy": "Never",
            "schedulerName": "default-scheduler",
            "priority": self.r.choice((0, 0, 100, 1000)),
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        }
        if self.chance(0.15):
            init: Obj = {"name": "prepare", "image": "busybox:1.36", "resources": self.resources(0)}
            if self.chance(0.4):
                init["restartPolicy"] = "Always"  # a sidecar
            spec["initContainers"] = [init]
        if self.chance(0.1):
            spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(name, namespace, labels=self.labels()),
            "spec": spec,
            "status": {"phase": "Pending"},
        }

    def bound(self, index: int, nodes: list[Obj]) -> Obj:
        found = self.pod(
            f"worker-{index}", self.r.choice((NAMESPACE, NAMESPACE, "serving")), self.r.choice((0, 1, 2, 4))
        )
        node = self.r.choice(nodes)
        found["spec"]["nodeName"] = node["metadata"]["name"]
        if self.chance(0.15):
            found["spec"]["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": self.terms()}
            }
        phase = self.r.choice(("Running",) * 8 + ("Succeeded", "Pending"))
        found["status"] = {"phase": phase, "startTime": CREATED}
        if phase == "Running":
            found["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True"},
            ]
            self.resize(found, node)
        if self.chance(0.05):
            found["metadata"]["deletionTimestamp"] = "2026-12-01T09:59:00Z"
        return found

    def resize(self, pod: Obj, node: Obj) -> None:
        """Often, the running pod being resized in place (InPlacePodVerticalScaling): its main
        container's status reports what it holds now (`resources.requests`) and what the kubelet
        admitted (`allocatedResources`): its spec's requests, with cpu and memory each the spec's or
        another amount up to the node's capacity. The kubelet is applying the resize
        (`PodResizeInProgress`), or defers it or finds it infeasible (`PodResizePending`)."""
        r = self.resizes
        container = pod["spec"]["containers"][0]
        resources = container["resources"]
        spec_asks = resources.get("requests") or resources.get("limits") or {}
        resizable = {k: v for k, v in spec_asks.items() if k in ("cpu", "memory")}
        if not resizable or r.random() >= 0.6:
            return
        capacity = node["status"]["capacity"]
        cores, gibibytes = int(capacity["cpu"]), int(capacity["memory"].removesuffix("Gi"))
        drawn = {"cpu": lambda: str(r.randint(1, cores)), "memory": lambda: f"{r.randint(1, gibibytes)}Gi"}
        applied = {k: r.choice((v, drawn[k]())) for k, v in resizable.items()}
        allocated = {k: r.choice((v, applied[k], drawn[k]())) for k, v in resizable.items()}
        pod["status"]["containerStatuses"] = [
            {
                "name": container["name"],
                "image": container["image"],
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": CREATED}},
                "allocatedResources": {**spec_asks, **allocated},
                "resources": {"requests": {**spec_asks, **applied}},
            }
        ]
        reason = r.choice(("", "", "Deferred", "Infeasible"))
        kind = "PodResizePending" if reason else "PodResizeInProgress"
        pod["status"]["conditions"].append(
            {
                "type": kind,
                "status": "True",
                "lastTransitionTime": CREATED,
                **({"reason": reason} if reason else {}),
            }
        )

    def nominated(self, index: int, nodes: list[Obj]) -> Obj:
        found = self.pod(f"preemptor-{index}", self.r.choice((NAMESPACE, "serving")), self.r.randint(1, 4))
        found["spec"]["priority"] = self.r.choice((0, 100, 1000, 5000))
        if self.chance(0.3):
            found["spec"]["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": self.terms()}
            }
        found["status"]["nominatedNodeName"] = self.r.choice(nodes)["metadata"]["name"]
        return found

    def pending(self) -> Obj:
        found = self.pod(POD, NAMESPACE, self.r.choice((1, 1, 2, 4, 8)))
        spec = found["spec"]
        if self.chance(0.3):
            spec["nodeSelector"] = {"cloud.google.com/gke-nodepool": self.r.choice(("a100", "h100"))}
        if self.chance(0.3):
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [self.node_requirement()]}]
                    }
                }
            }
        if self.chance(0.5):
            for _ in range(self.r.randint(1, 2)):
                spec["tolerations"].append(self.toleration())
        rules = spec.setdefault("affinity", {})
        if self.chance(0.25):
            rules["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": self.terms()}
        if self.chance(0.25):
            rules["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": self.terms()}
        if not rules:
            del spec["affinity"]
        if self.chance(0.25):
            spec["topologySpreadConstraints"] = [self.spread(found["metadata"]["labels"]["app"])]
        found["status"]["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/5 nodes are available: 5 Insufficient nvidia.com/gpu.",
                "lastTransitionTime": PENDING_SINCE,
            }
        ]
        return found

    def node_requirement(self) -> Obj:
        operator = self.r.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
        if operator in ("Gt", "Lt"):
            return {
                "key": "example.com/rack-tier",
                "operator": operator,
                "values": [str(self.r.randint(0, 5))],
            }
        key = self.r.choice((ZONE, "cloud.google.com/gke-nodepool", "example.com/rack-tier"))
        if operator in ("Exists", "DoesNotExist"):
            return {"key": key, "operator": operator}
        return {"key": key, "operator": operator, "values": [self.r.choice((*ZONES, "a100", "h100"))]}

    def toleration(self) -> Obj:
        if self.chance(0.1):  # no key: every taint (of the effect, if given)
            return {"operator": "Exists", **({"effect": "NoSchedule"} if self.chance(0.5) else {})}
        operator = self.r.choice(("Equal", "Exists"))
        found: Obj = {
            "key": self.r.choice((GPU, "dedicated", "cloud.google.com/gke-spot")),
            "operator": operator,
        }
        if operator == "Equal":
            found["value"] = self.r.choice(("present", "ml", "true"))
        if self.chance(0.7):
            found["effect"] = self.r.choice(("NoSchedule", "NoExecute"))
        return found

    def spread(self, app: str) -> Obj:
        found: Obj = {
            "maxSkew": self.r.choice((1, 1, 2)),
            "topologyKey": self.r.choice((ZONE, HOSTNAME)),
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
        if self.chance(0.2):
            found["minDomains"] = self.r.randint(2, 4)
        if self.chance(0.15):
            found["matchLabelKeys"] = ["team"]
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if self.chance(0.2):
                found[policy] = self.r.choice(("Honor", "Ignore"))
        return found

    # — volumes —

    def volumes(self, pod: Obj, nodes: list[Obj]) -> None:
        mode = self.r.choice(("WaitForFirstConsumer", "Immediate"))
        storage_class: Obj = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": self.meta("premium-rwo"),
            "provisioner": DRIVER,
            "volumeBindingMode": mode,
            "reclaimPolicy": "Delete",
        }
        if self.chance(0.3):
            storage_class["allowedTopologies"] = [
                {"matchLabelExpressions": [{"key": ZONE, "values": [self.r.choice(ZONES)]}]}
            ]
        self.items.append(storage_class)
        listed = []
        for index in range(self.r.randint(1, 2)):
            claim_name = f"{POD}-data-{index}"
            listed.append({"name": f"data-{index}", "persistentVolumeClaim": {"claimName": claim_name}})
            how = self.r.choice(("bound", "bound", "unbound", "missing", "local"))
            if how != "missing":
                self.claim(claim_name, how, nodes)
        pod["spec"]["volumes"] = listed

    def share_claim(self, pending: Obj) -> None:
        """Sometimes a bound pod of the namespace uses the pending pod's first claim too."""
        users = [p for p in self.items if p["kind"] == "Pod" and p["metadata"]["namespace"] == NAMESPACE]
        if users and self.chance(0.3):
            self.r.choice(users)["spec"]["volumes"] = pending["spec"]["volumes"][:1]

    def claim(self, name: str, how: str, nodes: list[Obj]) -> None:
        access = [self.r.choice(("ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"))]
        claim: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": self.meta(name, NAMESPACE),
            "spec": {
                "accessModes": access,
                "resources": {"requests": {"storage": "100Gi"}},
                "storageClassName": "premium-rwo",
            },
            "status": {"phase": "Pending"},
        }
        self.items.append(claim)
        if how == "unbound":
            return
        volume_name = f"pvc-{claim['metadata']['uid']}"
        claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        claim["spec"]["volumeName"] = volume_name
        claim["status"] = {"phase": "Bound", "accessModes": access, "capacity": {"storage": "100Gi"}}
        volume_spec: Obj = {
            "accessModes": access,
            "capacity": {"storage": "100Gi"},
            "storageClassName": "premium-rwo",
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": NAMESPACE,
                "name": name,
                "uid": claim["metadata"]["uid"],
            },
        }
        labels: dict[str, str] = {}
        if how == "local":
            host = self.r.choice(nodes)["metadata"]["name"]
            volume_spec["local"] = {"path": "/mnt/nvme0"}
            volume_spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [host]}]}
                    ]
                }
            }
        else:
            zone = self.r.choice(ZONES)
            volume_spec["csi"] = {
                "driver": DRIVER,
                "volumeHandle": f"projects/ml/zones/{zone}/disks/{volume_name}",
            }
            if self.chance(0.5):
                volume_spec["nodeAffinity"] = {
                    "required": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                        ]
                    }
                }
            else:
                labels[ZONE] = zone
        self.items.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": self.meta(volume_name, labels=labels),
                "spec": volume_spec,
                "status": {"phase": "Bound"},
            }
        )


def scenario(seed: int) -> Obj:
    """The random cluster of this seed, as a `v1 List` snapshot."""
    draw = _Draw(seed)
    nodes = [draw.node(i) for i in range(draw.r.randint(1, 5))]
    draw.items += nodes
    draw.items += [draw.bound(i, nodes) for i in range(draw.r.randint(0, 8))]
    draw.items += [draw.nominated(i, nodes) for i in range(draw.r.choice((0, 0, 0, 1, 2)))]
    pending = draw.pending()
    if draw.chance(0.4):
        draw.volumes(pending, nodes)
        draw.share_claim(pending)
    draw.items.append(pending)
    for name in (NAMESPACE, "serving"):
        draw.items.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": draw.meta(name, labels={"kubernetes.io/metadata.name": name}),
                "status": {"phase": "Active"},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": draw.items}


if __name__ == "__main__":
    json.dump(scenario(int(sys.argv[1])), sys.stdout, indent=1)
