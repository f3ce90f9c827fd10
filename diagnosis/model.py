"""The vocabularies and result values every part of kubewhy speaks.

Verdict words are a contract (README, ARCHITECTURE.md); results are frozen values with tuples, so the same
objects always give an equal result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any


class PodVerdict(StrEnum):
    """Why an accelerator pod is not running, checked in this order (ARCHITECTURE.md)."""

    NO_REQUEST = "no-request"
    OK = "ok"
    GATED = "gated"
    PREEMPTING = "preempting"
    CLAIM = "claim"
    LABEL_MISMATCH = "label-mismatch"
    TAINT = "taint"
    NO_GPU_NODE = "no-gpu-node"
    ALLOCATABLE_ZERO = "allocatable-zero"
    EXHAUSTED = "exhausted"
    NODE_RESOURCES = "node-resources"
    HOST_PORT = "host-port"
    VOLUME = "volume"
    TOPOLOGY_SPREAD = "topology-spread"
    POD_AFFINITY = "pod-affinity"
    SCHEDULABLE = "schedulable"


class NodeComing(StrEnum):
    """Whether a node is on its way for a pending pod (DESIGN.md, *Will a node come?*)."""

    COMING = "coming"
    QUEUED = "queued"
    NOT_COMING = "not-coming"
    FAILED = "failed"
    UNKNOWN = "unknown"
    NONE = "none"


class PodState(StrEnum):
    """Where a placed pod is: `ok` only says the scheduler is done with it."""

    RUNNING = "running"
    """Phase Running and condition Ready True."""
    STARTING = "starting"
    """Pending or not Ready: pulling images, creating the sandbox, init containers, probes…"""
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class StartState(StrEnum):
    """Whether a placed pod runs (`started.state` in JSON): `ok` says only that it is placed."""

    RUNNING = "running"
    """Running and Ready, or Succeeded."""
    STARTING = "starting"
    """On its way: pulling, creating containers, running init containers, waiting to be Ready."""
    FAILING = "failing"
    """Held by something that does not pass by itself: an image, a crash loop, the kubelet's
    admission, the device plugin, the container runtime, a volume, the sandbox."""


class JobSetVerdict(StrEnum):
    """Why a JobSet is stuck or restarting, checked in this order (ARCHITECTURE.md).

    `unknown` is only given by the offline explainer of a pasted message.
    """

    COMPLETED = "completed"
    FAILED = "failed"
    SUSPENDED = "suspended"
    WEBHOOK_UNAVAILABLE = "webhook-unavailable"
    LEADER_DUPLICATE = "leader-duplicate"
    TOPOLOGY_LABEL_MISSING = "topology-label-missing"
    LEADER_PENDING = "leader-pending"
    CREATE_REJECTED = "create-rejected"
    RESTARTING = "restarting"
    GANG_UNSATISFIABLE = "gang-unsatisfiable"
    PODS_PENDING = "pods-pending"
    STARTING = "starting"
    RUNNING = "running"
    UNKNOWN = "unknown"


class LwsVerdict(StrEnum):
    """Why a LeaderWorkerSet is not serving, checked in this order (ARCHITECTURE.md)."""

    GANG_UNSATISFIABLE = "gang-unsatisfiable"
    LEADER_PENDING = "leader-pending"
    WORKERS_NOT_CREATED = "workers-not-created"
    RESTARTING = "restarting"
    PARTIAL_GROUPS = "partial-groups"
    WORKERS_PENDING = "workers-pending"
    UPDATE_STUCK = "update-stuck"
    STARTING = "starting"
    RUNNING = "running"


class TrainJobVerdict(StrEnum):
    """Why a TrainJob is stuck before its JobSet says anything, checked in this order (ARCHITECTURE.md);
    past these, its JobSet's verdict is the answer."""

    DEADLINE_EXCEEDED = "deadline-exceeded"
    RUNTIME_UNSUPPORTED = "runtime-unsupported"
    SUSPENDED = "suspended"
    RUNTIME_MISSING = "runtime-missing"
    JOBSET_NOT_CREATED = "jobset-not-created"
    GANG_UNSATISFIABLE = "gang-unsatisfiable"
    WAITING_INITIALIZER = "waiting-initializer"


class RestartCause(StrEnum):
    """What drives a JobSet restart loop."""

    NODE_PREEMPTION = "node-preemption"
    NODE_FAILURE = "node-failure"
    POD_PREEMPTION = "pod-preemption"
    APP_FAILURE = "app-failure"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Command:
    """A complete shell command, safe to paste, with the real names filled in."""

    text: str
    purpose: str
    changes: bool = False
    """True when running it changes the cluster (cordon, delete, patch…): tests never run these,
    and every rendering marks them."""


@dataclass(frozen=True)
class Snippet:
    """Text to copy that is not a shell command: YAML to add, a PromQL or Cloud Logging query."""

    title: str
    language: str
    """`yaml`, `promql`, `mql` or `logging`."""
    text: str


CAUSE_CHARS = 200
"""The most a cause line (a Diagnosis's summary) holds: the fact a person needs, lists folded; the
identifiers are in the evidence."""
EVIDENCE_CHARS = 240
"""The most a line of evidence holds (`folded` splits a longer one into lines)."""


def folded(line: str, width: int = EVIDENCE_CHARS) -> str:
    """A line of evidence longer than `width` split into lines that fit, each at the last break before
    `width`: a clause (`; `), else a list item (`, `), else a word; a word longer than `width` is cut.
    A line keeps its break's `;` or `,`: the lines joined with spaces read as the line did."""
    lines = []
    for rest in line.split("\n"):
        while len(rest) > width:
            for mark, kept in (("; ", 1), (", ", 1), (" ", 0)):
                at = rest.rfind(mark, width // 3, width)
                if at > 0:
                    lines.append(rest[: at + kept])
                    rest = rest[at + len(mark) :]
                    break
            else:
                lines.append(rest[:width])
                rest = rest[width:]
        lines.append(rest)
    return "\n".join(lines)


def clipped(text: str, width: int) -> str:
    """The text cut at its last word before `width`, ending in `…` when cut: a quoted message in a
    cause line (the evidence quotes it whole)."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width)
    return text[: cut if cut > width // 2 else width - 1].rstrip(" ,;:") + "…"


class Harm(IntEnum):
    """How far a fix reaches beyond the pod asked about, least first: the order fixes are offered in."""

    KEEPS = 0
    """Keeps what the pod asks and touches no one else's workload: wait for capacity, move to another
    pool with the same device, repair or label a node, raise a limit."""
    OTHERS = 1
    """Touches other workloads (ends or scales down their pods), named by their workload."""
    SHRINKS = 2
    """Shrinks what the pod asks: fewer devices, less of another resource."""


@dataclass(frozen=True)
class Fix:
    """A change that removes a verdict's cause, checked by running the funnel on the changed objects.

    `pod_patch` is a JSON merge patch (RFC 7386) to the pod (to its template, for a pod a controller
    owns), or None when the change is in the cluster; `opens` names the nodes on which the pod passes
    every check once the change is made (never empty: a change that opens nothing is not offered).
    A fix to a LeaderWorkerSet or a TrainJob (its spec, its leader, its node's label, its runtime)
    opens no node of its own: its `opens` is empty, and the tests run the explainer on the changed
    objects instead."""

    summary: str
    pod_patch: Mapping[str, Any] | None = field(hash=False)
    opens: tuple[str, ...]
    commands: tuple[Command, ...] = ()
    """The commands that make a cluster-side change (each `changes=True`)."""
    objects: tuple[str, ...] = ()
    """The objects a cluster-side change touches, as `kind/name` or `kind/namespace/name`."""
    harm: Harm = Harm.KEEPS


def ranked(fixes: tuple[Fix, ...]) -> tuple[Fix, ...]:
    """Fixes by harm, least first (`Harm`); within a class, in the order proposed."""
    return tuple(sorted(fixes, key=lambda fix: fix.harm))


@dataclass(frozen=True)
class Started:
    """Whether a placed pod runs and, if not, why, from its own status and events (the `started`
    key of JSON)."""

    state: StartState
    container: str | None = None
    """The container at fault (or still starting), None when the pod as a whole is."""
    reason: str | None = None
    """The kubelet's or the runtime's word: `ImagePullBackOff`, `CrashLoopBackOff`,
    `UnexpectedAdmissionError`, `OutOfnvidia.com/gpu`, `FailedMount`, `FailedCreatePodSandBox`…"""
    message: str | None = None
    """Their message, with a crash loop's last termination (reason, exit code, message)."""
    since: datetime | None = None
    restarts: int = 0
    """The container's restart count (the pod's total when no one container is at fault)."""


@dataclass(frozen=True)
class Holding:
    """Pods of one workload that hold devices on the nodes a pod needs, grouped by their top owner
    (a pod of a Job of a JobSet is the JobSet's)."""

    kind: str
    """The top owner's kind (`JobSet`, `Deployment`, `LeaderWorkerSet`…), or `Pod` for a bare pod."""
    namespace: str
    name: str
    pods: tuple[str, ...]
    nodes: tuple[str, ...]
    devices: Mapping[str, int] = field(hash=False)
    """Resource → how many the group's pods hold there."""
    priority_class: str
    priority: int
    preemptible: bool
    """The pod asked about may preempt these: its priority is higher and its preemptionPolicy is
    not Never."""
    own: bool = False
    """The group is the JobSet asked about (its own pods hold the devices)."""
    terminating: int = 0
    """How many of the pods are already being deleted."""


@dataclass(frozen=True)
class NodeGroup:
    """A node group as the autoscaler and kubewhy's own template check see it."""

    name: str
    size: int | None = None
    """Nodes it has now (registered), where known."""
    target: int | None = None
    """The size it is being brought to, where known."""
    max: int | None = None
    fits: bool | None = None
    """Whether a new, empty node of the group would take the pod (None: not checked)."""
    why: str = ""
    """The first step that stops such a node, in plain words (or why it was not checked)."""


@dataclass(frozen=True)
class Autoscaling:
    """Whether a node will come for a pending pod: the autoscaler's word, parsed, beside kubewhy's
    own check of each node group."""

    state: NodeComing
    by: str | None = None
    """`cluster-autoscaler`, `karpenter`, `provisioning-request` or `kueue`; None for `none`."""
    since: datetime | None = None
    """When the signal the state is decided from was given."""
    groups: tuple[NodeGroup, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()
    """The autoscaler's reasons, parsed: (reason, how many node groups gave it)."""
    quote: str = ""
    """The autoscaler's own words, verbatim."""
    headline: str = ""
    """The first-screen line (empty for `none`)."""


@dataclass(frozen=True)
class Diagnosis:
    """A verdict with the evidence behind it and what to run next."""

    verdict: PodVerdict | JobSetVerdict | LwsVerdict | TrainJobVerdict
    summary: str
    evidence: tuple[str, ...]
    next_commands: tuple[Command, ...]
    """What to run next, those of the first fix first."""
    snippets: tuple[Snippet, ...] = ()
    cause: RestartCause | None = None
    """Only for `restarting`."""
    pod_verdict: PodVerdict | None = None
    """The triage verdict of the pod that blocks a JobSet or a LeaderWorkerSet, where one applies."""
    fixes: tuple[Fix, ...] = ()
    """Least harm first (`ranked`: a Diagnosis keeps them in that order, whoever proposes them)."""
    holders: tuple[Holding, ...] = ()
    """Who holds the devices on the nodes the pod needs, where that is the answer."""
    competing: tuple[str, ...] = ()
    """Other pending pods (`namespace/name`) that ask for the same devices on the same nodes."""
    pending_since: datetime | None = None
    """Since when the pod (or the JobSet's blocking pod) has waited to be scheduled."""
    checked_at: datetime | None = None
    """The time of the reading the diagnosis was made from."""
    pod_state: PodState | None = None
    """For `ok`: whether the placed pod runs (Running and Ready), is still starting, or has ended."""
    started: Started | None = None
    """For `ok`: whether the placed pod runs and, if not, why."""
    autoscaling: Autoscaling | None = None
    """For a pod that waits for a node (not `no-request`, not `ok`): whether one is on its way."""

    def __post_init__(self) -> None:
        # One rule for every answer, whoever proposes its fixes: least harm first, and the commands of
        # the first fix (the one the first screen shows) first among the next commands; evidence lines
        # that fit a screen.
        fixes = ranked(self.fixes)
        first = {c.text for c in fixes[0].commands} if fixes else set()
        leading = [c for c in self.next_commands if c.text in first]
        object.__setattr__(self, "fixes", fixes)
        object.__setattr__(self, "evidence", tuple(map(folded, self.evidence)))
        object.__setattr__(
            self, "next_commands", (*leading, *(c for c in self.next_commands if c.text not in first))
        )
