"""The vocabularies and result values every part of kubewhy speaks.

Verdict words are a contract (README, ARCHITECTURE.md); results are frozen values with tuples, so the same
objects always give an equal result.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PodVerdict(StrEnum):
    """Why an accelerator pod is not running, checked in this order (ARCHITECTURE.md)."""

    NO_REQUEST = "no-request"
    OK = "ok"
    GATED = "gated"
    LABEL_MISMATCH = "label-mismatch"
    TAINT = "taint"
    NO_GPU_NODE = "no-gpu-node"
    ALLOCATABLE_ZERO = "allocatable-zero"
    EXHAUSTED = "exhausted"
    VOLUME = "volume"
    TOPOLOGY_SPREAD = "topology-spread"
    POD_AFFINITY = "pod-affinity"
    SCHEDULABLE = "schedulable"


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
    PODS_PENDING = "pods-pending"
    STARTING = "starting"
    RUNNING = "running"
    UNKNOWN = "unknown"


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


@dataclass(frozen=True)
class Diagnosis:
    """A verdict with the evidence behind it and what to run next."""

    verdict: PodVerdict | JobSetVerdict
    summary: str
    evidence: tuple[str, ...]
    next_commands: tuple[Command, ...]
    snippets: tuple[Snippet, ...] = ()
    cause: RestartCause | None = None
    """Only for `restarting`."""
    pod_verdict: PodVerdict | None = None
    """The triage verdict of the pod that blocks a JobSet, where one applies."""
