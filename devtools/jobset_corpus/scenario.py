# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""What the scenarios share: the registry each verdict family writes its scenarios into, and the
replicatedJobs, Jobs, pods and webhook messages several families build from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devtools.jobset_corpus.events import created_pod, failed_create, failed_scheduling, scheduled
from devtools.jobset_corpus.jobs import GPU_IMAGE, JS, RJ, TPU_IMAGE, Job, job
from devtools.jobset_corpus.pods import pod
from devtools.jobset_corpus.world import Obj, World

Build = Callable[[World], None]
"""Adds a snapshot's objects to its World."""


@dataclass(frozen=True)
class Scenario:
    """A snapshot to write and what `/jobset why` must answer about its JobSet."""

    build: Build
    seed: str
    path: str
    verdict: str
    pod_verdict: str | None
    cause: str | None
    target: str = ""
    """The JobSet asked about, when the snapshot holds several (else the first)."""


class Scenarios(list[Scenario]):
    """A verdict family's scenarios, in the order they are defined (their order in `index.yaml`)."""

    def scenario(
        self,
        seed: str,
        verdict: str,
        *,
        pod_verdict: str | None = None,
        cause: str | None = None,
        path: str = "",
        target: str = "",
    ) -> Callable[[Build], Build]:
        """Registers a scenario builder. `seed` names the snapshot and seeds its random source; the
        snapshot is written to `tests/corpus/jobset/<seed>.json` unless `path` (from the repository
        root) says otherwise."""

        def register(build: Build) -> Build:
            file = path or f"tests/corpus/jobset/{seed}.json"
            self.append(Scenario(build, seed, file, verdict, pod_verdict, cause, target))
            return build

        return register


class TriageCases(list[tuple[str, Build]]):
    """(seed, builder) of the snapshots written to `tests/corpus/triage/<seed>.json`; their entries in
    `tests/corpus/triage/index.yaml` are written by hand, with the rule each one shows."""

    def case(self, seed: str) -> Callable[[Build], Build]:
        def register(build: Build) -> Build:
            self.append((seed, build))
            return build

        return register


TPU_SELECTOR = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "4x4",
}
TPU_TOLERATION = [{"effect": "NoSchedule", "key": "google.com/tpu", "operator": "Exists"}]
GPU_TOLERATION = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
NODEPOOL = "cloud.google.com/gke-nodepool"
BLOCK = "cloud.google.com/gce-topology-block"
MISSING_SELECTOR = (
    'admission webhook "vpod.kb.io" denied the request: follower pod node selector for topology domain not found. '
    "missing selector: {key}"
)
NOT_SET = 'admission webhook "{webhook}" denied the request: follower pod node selector not set'
SHUTDOWN = "Pod was terminated in response to imminent node shutdown."


def tpu_slice(name: str = "slice", replicas: int = 2, backoff_limit: int = 0) -> RJ:
    """A replicatedJob of v5e 4x4 slices: 4 hosts of 4 chips each."""
    return RJ(
        name,
        replicas,
        4,
        ("google.com/tpu", "4"),
        TPU_IMAGE,
        "jax",
        dict(TPU_SELECTOR),
        list(TPU_TOLERATION),
        backoff_limit=backoff_limit,
    )


def gpu_rj(
    name: str, replicas: int, parallelism: int, gpus: str = "8", image: str = GPU_IMAGE, **kw: Any
) -> RJ:
    """A replicatedJob whose pods each take `gpus` GPUs and tolerate the GPU taint."""
    return RJ(
        name,
        replicas,
        parallelism,
        ("nvidia.com/gpu", gpus),
        image,
        kw.pop("container", "trainer"),
        tolerations=list(GPU_TOLERATION),
        **kw,
    )


def node_affinity(key: str, value: str) -> Obj:
    """A required node affinity: only nodes labelled `key=value`."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def follower_selector(j: Job, index: int, leader_node: Obj) -> dict[str, str] | None:
    """The nodeSelector `mpod.kb.io` gives a follower pod (index > 0) of an exclusive-placement Job:
    the leader node's value of the topology label. None for a leader or without exclusive placement."""
    topology = j.js.topology
    if not topology or not index:
        return None
    return {topology: leader_node["metadata"]["labels"][topology]}


def full_job(
    js: JS, rj: RJ, index: int, nodes: list[Obj], *, attempt: int = 0, created: float = 88, ready: bool = True
) -> Job:
    """A child Job with all its pods running, followers following the leader's domain."""
    n = rj.parallelism
    j = job(js, rj, index, attempt=attempt, created=created, active=n, ready=n if ready else 0)
    for i in range(n):
        node, selector = nodes[i % len(nodes)], follower_selector(j, i, nodes[0])
        pod(j, i, "Running", node=node, created=created - 0.1, ready=ready, node_selector=selector)
    return j


def exited_pod(j: Job, index: int, node: Obj, created: float, terminated: Obj, **kw: Any) -> Obj:
    """A pod whose container exited (`terminated`, from `exited`) and is not restarted: Succeeded on
    exit code 0, Failed otherwise."""
    phase = "Succeeded" if terminated["exitCode"] == 0 else "Failed"
    return pod(j, index, phase, node=node, created=created, ready=False, terminated=terminated, **kw)


def shut_down_pod(j: Job, index: int, node: Obj, created: float, terminated: Obj, **kw: Any) -> Obj:
    """A pod the kubelet's graceful node shutdown killed (a spot or maintenance shutdown): Failed, with
    a DisruptionTarget condition."""
    return exited_pod(
        j,
        index,
        node,
        created,
        terminated,
        disruption=("TerminationByKubelet", SHUTDOWN),
        status_reason=("Terminated", SHUTDOWN),
        **kw,
    )


def creating_pod(
    j: Job, index: int, node: Obj, created: float, started: float, *, scheduled_event: bool = True
) -> Obj:
    """A pod bound to `node` whose container is still being created (image pull, volumes), and the
    scheduler's Scheduled event 0.1 min after creation (`scheduled_event=False`: it has expired)."""
    p = pod(
        j, index, "Pending", node=node, created=created, started=started, waiting=("ContainerCreating", "")
    )
    if scheduled_event:
        scheduled(j.js.w, p, created - 0.1)
    return p


def new_leader(
    j: Job,
    created: float,
    *,
    node: Obj | None = None,
    started: float | None = None,
    unschedulable: str = "",
    attempts: int = 0,
) -> Obj:
    """A leader pod (index 0) the Job controller has just (re)created, with its SuccessfulCreate event:
    running on `node`, or Pending because `unschedulable`, with `attempts` FailedScheduling events."""
    phase = "Running" if node is not None else "Pending"
    leader = pod(j, 0, phase, node=node, created=created, started=started, unschedulable=unschedulable)
    created_pod(j, leader, created)
    if attempts:
        failed_scheduling(j.js.w, leader, unschedulable, attempts, first=created - 0.1)
    return leader


def refused_followers(js: JS, rj: RJ, created: float, message: str, attempts: int, refusals: int) -> None:
    """Every Job of `rj`, created `created` minutes ago, with its leader Pending because `message`
    (`attempts` FailedScheduling events), and `refusals` FailedCreate events of the pod webhook
    refusing its followers, which have no leader node to follow."""
    for i in range(rj.replicas):
        j = job(js, rj, i, created=created, active=1)
        new_leader(j, created - 0.1, unschedulable=message, attempts=attempts)
        failed_create(j, NOT_SET.format(webhook="vpod.kb.io"), refusals, first=created - 0.2, last=0.5 + i)
