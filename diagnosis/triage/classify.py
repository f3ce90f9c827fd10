"""Why an accelerator pod is not running: the `/triage` classifier.

One ordered ladder, like kopf's `detect_changing_cause`: the rungs before the funnel answer from the
pod (and its claims) alone; every other pod goes through the funnel over the candidate nodes
(`FUNNEL`). Each funnel step keeps the nodes that pass it; the verdict is the first step that leaves
none, and the evidence shows how many nodes each step kept and why it dropped the others. The
scheduler's own message is quoted beside it, never used to decide. Each rung and step is a module of
`diagnosis.triage.steps`, named after its verdict; `diagnosis.triage.runner` runs the funnel.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis import autoscaling
from diagnosis.dra_objects import Dra
from diagnosis.model import Diagnosis
from diagnosis.objects import Object
from diagnosis.triage import runner
from diagnosis.triage.findings import Findings
from diagnosis.triage.funnel import Funnel, Rung, Seen, Shared, Step
from diagnosis.triage.prepared import NOTHING, Prepared
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.runner import NodeReads
from diagnosis.triage.steps import (
    allocatable_zero,
    claim,
    exhausted,
    gated,
    host_port,
    label_mismatch,
    no_gpu_node,
    no_request,
    node_resources,
    ok,
    pod_affinity,
    preempting,
    schedulable,
    taint,
    topology_spread,
    volume,
)
from diagnosis.views import TriageView

__all__ = ["FUNNEL", "classify", "funnel_of", "node_reads", "passing", "usage_candidates"]


RUNGS: tuple[Rung, ...] = (
    # A pod that asks for no device starts without one: nothing below could explain a missing GPU.
    no_request.no_request,
    # A bound pod is past the scheduler; whatever holds it now is the kubelet's or the app's.
    ok.ok,
    # The scheduler does not look at a gated pod at all until the gates' owners remove them.
    gated.gated,
    # The scheduler already chose a node and evicts pods there: the wait is for them, not for a fit.
    preempting.preempting,
    # The scheduler does not try a pod whose claims are missing or unusable (PreEnqueue, PreFilter).
    claim.claim,
)
"""The rungs before the funnel, in order: the first that answers gives the verdict."""

FUNNEL: tuple[Step, ...] = (
    # Labels come before taints (the scheduler checks taints first) because the nodeSelector says
    # which nodes the pod is meant for: a taint on a node it never wanted is no answer.
    label_mismatch.STEP,
    taint.STEP,
    # The devices come before the other resources: they are what the pod is about.
    no_gpu_node.STEP,
    allocatable_zero.STEP,
    # The free-slot step: from here on the steps read the pods counted on the nodes
    # (`usage_candidates`), and the view's peers and storage.
    exhausted.STEP,
    node_resources.STEP,
    host_port.STEP,
    volume.STEP,
    topology_spread.STEP,
    pod_affinity.STEP,
)
"""The funnel, in order: the verdict is the first step that leaves no node."""

PASSED = schedulable.schedulable
"""What the funnel says when some node passes every step."""


def classify(view: TriageView, prepared: Prepared | None = None) -> Diagnosis:
    """The verdict on the view's pod, with the evidence and the next commands. `prepared`: what the
    reader worked out or keeps about the view's objects (`diagnosis.triage.prepared`); the answer is
    the same without it."""
    prepared = prepared or NOTHING
    shared = prepared.memo or Shared(kept=prepared.findings)
    seen = Seen(view, effective_requests(view.pod), shared)
    for rung in RUNGS:
        answer = rung(seen)
        if answer is not None:
            concluded = runner.conclude(FUNNEL, view, answer, prepared)
            return autoscaling.with_autoscaling(view, concluded, prepared.findings)
    # Only now do nodes matter: the funnel says which step leaves none.
    funneled = runner.funneled(FUNNEL, PASSED, seen, prepared)
    # Whether a node will come for a pod that waits for one (not for no-request, ok).
    concluded = runner.conclude(FUNNEL, view, funneled, prepared, shared)
    return autoscaling.with_autoscaling(view, concluded, prepared.findings)


def node_reads(
    pod: Object, nodes: Sequence[Object], dra: Dra | None = None, findings: Findings | None = None
) -> NodeReads:
    """What a reader needs to know before it reads any pod (`runner.node_reads` over `FUNNEL`)."""
    return runner.node_reads(FUNNEL, pod, nodes, dra, findings)


def usage_candidates(pod: Object, nodes: Sequence[Object], dra: Dra | None = None) -> tuple[str, ...]:
    """The names of the nodes that pass every funnel step before the free-slot step (when none does,
    up to `runner.FIX_NODES` of those the last step dropped, on which its fixes are checked), and the
    nodes an allocated claim pins the pod to: the nodes whose bound pods `classify` reads (it ignores
    pods bound elsewhere); for a pod waiting for the victims of
    its preemption, its nominated node. Empty when the pod does not need them (no request, already
    bound, gated). A pod that asks devices only by ResourceClaims finds them free or not in the DRA
    objects, not in the pods: given those (`dra`), the free-slot step is passed too."""
    return node_reads(pod, nodes, dra).usage


def serving_nothing(pod: Object, nodes: Sequence[Object]) -> tuple[str, ...]:
    """When the verdict is that no node left serves the pod's devices (no resource, or allocatable 0),
    the first nodes it names: a reader fetches their pods too, so the answer can quote the device
    plugin, operator and driver pods there (`diagnosis.triage.devices`)."""
    return node_reads(pod, nodes).serving


def passing(view: TriageView, shared: Shared | None = None) -> tuple[str, ...]:
    """The nodes on which the view's pod passes every check, by name (`runner.passing`)."""
    return runner.passing(FUNNEL, view, shared)


def funnel_of(view: TriageView) -> Funnel:
    """The funnel run over the view's candidate nodes: what each step kept and dropped."""
    return runner.funnel_of(FUNNEL, view)
