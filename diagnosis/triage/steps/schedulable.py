"""The `schedulable` answer: some node passes every Filter the funnel mirrors; the evidence says what
kubewhy does not check.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis import commands
from diagnosis.commands import collect
from diagnosis.model import Command
from diagnosis.objects import Object, name
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage import commands as kubectl
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.dra.evidence import per_node
from diagnosis.triage.funnel import Advice, Funnel, by_headroom, names, tightest
from diagnosis.triage.scheduler_message import last_said


def schedulable(funnel: Funnel) -> Advice:
    ask, kept = funnel.ask, funnel.last.kept
    best = by_headroom(ask, kept)[0]
    if ask.requests:
        resource, _ = tightest(ask, best)
        free = ask.offer(best, resource).allocatable - ask.used(name(best), resource)
        room = f"{name(best)} has {free} {resource} free"
    else:
        room = f"{name(best)} has devices for every claim"
    said = last_said(funnel.view.pod, funnel.view.events, funnel.view.now)
    summary = (
        f"Nothing in the objects blocks the pod: {len(kept)} node{'s pass' if len(kept) > 1 else ' passes'} "
        f"every check ({room}); "
        + ("see what the scheduler said" if said else "the scheduler has not reported on it yet")
    )
    evidence = (
        f"nodes that pass every check: {names(kept)}",
        *_claims_lines(ask.devices, kept),
        _UNCHECKED,
    )
    return Advice(summary, evidence, collect(kubectl.node_details(name(best)), repelling_pods()))


_UNCHECKED = (
    "not checked by kubewhy: inline in-tree disks (GCE PD, EBS, iSCSI, RBD: VolumeRestrictions); "
    "scheduler extenders or out-of-tree plugins; the required anti-affinity of pods on the nodes whose "
    "pods it did not read (those short of the free-slot check), where this pod's own terms do not select "
    "them. The scheduler's message names whichever holds the pod"
)


def _claims_lines(devices: Devices | None, kept: Sequence[Object]) -> tuple[str, ...]:
    if devices is None:
        return ()
    return tuple(per_node(devices, kept[:3]))


def repelling_pods() -> Command:
    """The bound pods of the cluster with a required pod anti-affinity, and their nodes."""
    template = (
        "{range .items[?(@.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution)]}"
        '{.metadata.namespace}/{.metadata.name}{"\\t"}{.spec.nodeName}{"\\n"}{end}'
    )
    return commands.kubectl(
        "every bound pod with a required anti-affinity, and its node: one on a node whose pods kubewhy did "
        "not read may refuse this pod in a domain they share",
        "get", "pods", "-A", "--field-selector", f"spec.nodeName!=,{NOT_TERMINAL}",
        "-o", f"jsonpath={template}",
    )
