"""The cluster while it is built: one random source for every identifier, the objects made so far,
and what each node already holds. Every builder takes the `World` and adds to it, in a fixed order,
so the same seed gives the same cluster."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from devtools.cluster.catalog import KUBE_ALPHABET, Obj


@dataclass
class Workload:
    """A controller (DaemonSet, ReplicaSet, Job) whose pods share one template."""

    namespace: str
    kind: str
    name: str
    uid: str
    labels: dict[str, str]
    spec: Obj
    """The pod spec without `nodeName`."""
    requests: dict[str, int]
    """cpu (millicores), memory (MiB) and extended resources of one pod."""
    created: datetime
    conditions: list[Obj] = field(default_factory=list)
    """Shared by its pods: they were created and started together."""
    job: Obj | None = None
    """The Job object, for `kind == "Job"`."""
    pods: int = 0
    finished: bool = False


@dataclass
class World:
    rng: random.Random
    names: set[tuple[str, str]] = field(default_factory=set)
    """(namespace, name) of every object named so far (`""`: cluster-scoped)."""
    nodes: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    jobs: list[Obj] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)
    used: dict[str, Counter[str]] = field(default_factory=dict)
    """Node name → the requests of the pods bound there, and their count under `pods`."""
    host_ip: dict[str, str] = field(default_factory=dict)
    job_workloads: list[Workload] = field(default_factory=list)
    """The plain Jobs, whose counts `settle_jobs` fills in at the end."""
    daemonsets: dict[str, Workload] = field(default_factory=dict)
    cpu_workloads: list[Workload] = field(default_factory=list)
    finished_jobs: list[Workload] = field(default_factory=list)
    resource_version: int = 48_000_000

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def rv(self) -> str:
        """The next resourceVersion: increasing, with the gaps other writes leave."""
        self.resource_version += self.rng.randrange(1, 40)
        return str(self.resource_version)

    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choices(KUBE_ALPHABET, k=length))

    def hex(self, length: int) -> str:
        return f"{self.rng.getrandbits(4 * length):0{length}x}"

    def unique(self, namespace: str, prefix: str, alphabet: str = KUBE_ALPHABET, length: int = 5) -> str:
        """`prefix` and a random suffix, a name not yet used in `namespace` (`""`: cluster-scoped)."""
        while (namespace, name := prefix + "".join(self.rng.choices(alphabet, k=length))) in self.names:
            pass
        self.names.add((namespace, name))
        return name
