"""What every builder shares: the moment of the snapshots, the snapshot being built (`World`, with
its seeded random source), and the metadata and conditions every controller writes alike."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

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
    revisions: dict[tuple[str, str, int], str] = field(default_factory=dict)
    """(namespace, Deployment, revision) → its ReplicaSet's pod-template-hash: one per revision."""

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
        """The object, kept for the snapshot; a pod with the QoS class the API server gives it."""
        if obj["kind"] == "Pod":
            obj["status"]["qosClass"] = qos_class(obj["spec"])
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
            "PersistentVolumeClaim": 8,
            "PersistentVolume": 9,
            "StorageClass": 10,
            "CSINode": 11,
            "CSIDriver": 12,
            "CSIStorageCapacity": 13,
            "Namespace": 14,
            "StatefulSet": 15,
            "LeaderWorkerSet": 16,
            "TrainJob": 17,
            "ClusterTrainingRuntime": 18,
            "TrainingRuntime": 19,
            "PodGroup": 20,
        }
        items = sorted(self.items, key=lambda o: order[o["kind"]])
        return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def qos_class(spec: Obj) -> str:
    """The pod's QoS class as the API server sets it (`pkg/apis/core/helper/qos`, which refuses any
    other): Guaranteed when every container limits cpu and memory and requests no less, BestEffort when
    none asks either, else Burstable. Extended resources do not count."""
    containers = [*spec.get("initContainers", []), *spec["containers"]]
    compute = ("cpu", "memory")

    def asks(container: Obj, kind: str) -> dict[str, str]:
        return dict(container.get("resources", {}).get(kind, {}))

    if not any(k in compute for c in containers for kind in ("limits", "requests") for k in asks(c, kind)):
        return "BestEffort"

    def guaranteed(container: Obj) -> bool:
        limits, requests = asks(container, "limits"), asks(container, "requests")
        return all(k in limits and requests.get(k, limits[k]) == limits[k] for k in compute)

    return "Guaranteed" if all(map(guaranteed, containers)) else "Burstable"


def owner_ref(api_version: str, kind: str, name: str, uid: str) -> Obj:
    """The controller ownerReference a controller sets on the objects it creates."""
    return {
        "apiVersion": api_version,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": name,
        "uid": uid,
    }


def cond(
    type_: str, reason: str, message: str, minutes_ago: float, status: str = "True", probe: bool = True
) -> Obj:
    """A core/v1 pod or Job condition (`probe`: with a lastProbeTime)."""
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
