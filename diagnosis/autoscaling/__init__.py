"""Will a node come for a pending pod? (DESIGN.md, *Will a node come?*)

Beside the funnel's "why no node takes it now", what the autoscalers say about adding one: each
signal is read into a `Said` (cluster-autoscaler's and GKE's events on the pod and its status
ConfigMap, Karpenter's events and NodeClaims, the ProvisioningRequest the pod consumes, its Kueue
Workload's admission checks), and the newest decides the state. Beside it, kubewhy's own check of
each node group's template node (`groups`). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cache, partial
from typing import TYPE_CHECKING

from diagnosis.autoscaling import events, groups, karpenter, requests
from diagnosis.autoscaling.advice import fixes, lines, read_commands
from diagnosis.autoscaling.said import (
    CLUSTER_AUTOSCALER,
    KARPENTER,
    PROVISION_TIMEOUT,
    Said,
    group_name,
    minutes,
)
from diagnosis.autoscaling.status import STALE, Status, parse
from diagnosis.commands import collect
from diagnosis.events import regarding
from diagnosis.model import Autoscaling, Diagnosis, NodeComing, NodeGroup, PodVerdict
from diagnosis.objects import Object, meta, namespace, spec, text, timestamp
from diagnosis.views import STATUS_CONFIGMAP, Capacity, TriageView

if TYPE_CHECKING:
    from diagnosis.triage.findings import Findings

__all__ = ["PROVISION_TIMEOUT", "EventsRead", "assess", "events_to_read", "heard", "with_autoscaling"]

GPU_BUFFER = timedelta(seconds=30)
"""cluster-autoscaler does not consider a GPU pod younger than this (`unschedulablePodWithGpuTimeBuffer`)."""
EXPENDABLE = -10
"""`--expendable-pods-priority-cutoff`: pods of a lower priority never cause a scale-up."""

_WAITS_FOR_NO_NODE = (PodVerdict.NO_REQUEST, PodVerdict.OK)


def with_autoscaling(view: TriageView, diagnosis: Diagnosis, kept: Findings | None = None) -> Diagnosis:
    """The diagnosis with whether a node will come: the state, its evidence after the funnel's, its
    fixes (wait, raise a limit) before the ones that change the pod's ask. Unchanged for a pod that
    waits for no node. `kept`: what a reader keeps between questions (`Prepared.findings`)."""
    if diagnosis.verdict in _WAITS_FOR_NO_NODE:
        return diagnosis
    pooled = cache(partial(groups.pools_of, view, kept))
    found = assess(view, pooled)
    return replace(
        diagnosis,
        autoscaling=found,
        evidence=(*diagnosis.evidence, *lines(found, view.now)),
        fixes=(*fixes(found, view, pooled), *diagnosis.fixes),
        next_commands=collect(*diagnosis.next_commands, *read_commands(view)),
    )


def assess(view: TriageView, pools: Callable[[], Mapping[str, Object]] | None = None) -> Autoscaling:
    """The state, decided from the newest signal; `none` when no autoscaler is seen. `pools()`: the
    node groups' templates (`groups.pools_of`), worked out only where an autoscaler is seen."""
    if not heard(view.pod, view.events, view.workloads, view.capacity):
        return Autoscaling(NodeComing.NONE)
    status = parse(view.capacity.status)
    pooled = (pools or partial(groups.pools_of, view))()
    named = tuple(pooled)
    said = sorted(_signals(view, status, named), key=_newest, reverse=True)
    chosen = said[0] if said else _silent(view, status)
    found = _merged(groups.checked(view, pooled), status, said, named)
    headline = _in_groups(chosen, found) or chosen.headline
    return Autoscaling(
        state=chosen.state,
        by=chosen.by,
        since=chosen.since,
        groups=found,
        reasons=chosen.reasons,
        quote=chosen.quote,
        headline=headline.replace("{ago}", minutes(chosen.since, view.now)),
    )


def _in_groups(said: Said, found: tuple[NodeGroup, ...]) -> str:
    """A refusal told by the groups that explain it: those at their max size (cluster-autoscaler's
    `max node group size reached`), the NodePools at their limits (Karpenter's); "" otherwise."""
    if said.state is not NodeComing.NOT_COMING:
        return ""
    if said.by == CLUSTER_AUTOSCALER and events.MAX_SIZE in {reason for reason, _ in said.reasons}:
        full = [g for g in found if g.max is not None and max(g.size or 0, g.target or 0) >= g.max]
        if full:
            return "No node will come: " + "; ".join(f"{g.name} is at its max size ({g.max})" for g in full)
    if said.by == KARPENTER:
        limited = [g.why for g in found if g.fits is False and g.why.startswith("NodePool ")]
        if limited:
            return "No node will come: " + "; ".join(limited)
    return ""


def heard(pod: Object, about: Iterable[Object], workloads: Iterable[Object], capacity: Capacity) -> bool:
    """Whether any autoscaler is seen: its status, a NodePool, an event of one on the pod (`about`),
    the ProvisioningRequest the pod consumes, its Workload's admission checks. (Asked before the node
    groups are worked out or read: a cluster without one pays nothing.)"""
    return (
        capacity.status is not None
        or bool(capacity.nodepools)
        or bool(requests.consumed(pod))
        or any(events.component(e) in (CLUSTER_AUTOSCALER, KARPENTER) for e in about)
        or any(True for _ in requests.admission_checks(pod, workloads))
    )


@dataclass(frozen=True)
class EventsRead:
    """Events an autoscaler writes on one of its own objects, in the namespace they are written to:
    a LIST with a field selector (`Capacity.events`)."""

    namespace: str
    kind: str
    name: str = ""
    """"": every object of the kind."""

    @property
    def field_selector(self) -> str:
        return f"involvedObject.kind={self.kind}" + (f",involvedObject.name={self.name}" if self.name else "")

    def holds(self, event: Object) -> bool:
        ref = regarding(event)
        return (
            namespace(event) == self.namespace
            and text(ref.get("kind")) == self.kind
            and (not self.name or text(ref.get("name")) == self.name)
        )


def events_to_read(about: Iterable[Object]) -> tuple[EventsRead, ...]:
    """What the pod's events (`about`) lead to: Karpenter's events on NodeClaims (in `default`, as on
    every cluster-scoped object) when it nominated one for the pod, cluster-autoscaler's on its status
    ConfigMap when it triggered a scale-up for the pod. None for another pod: it pays nothing."""
    found = tuple(about)
    status_ns, status_name = STATUS_CONFIGMAP
    return (
        *((EventsRead("default", "NodeClaim"),) if karpenter.nominates_claims(found) else ()),
        *((EventsRead(status_ns, "ConfigMap", status_name),) if events.triggered(found) else ()),
    )


def _newest(said: Said) -> tuple[bool, object]:
    return said.since is not None, said.since


def _signals(view: TriageView, status: Status | None, named: tuple[str, ...]) -> Iterator[Said]:
    pod = view.pod
    yield from requests.admission_checks(pod, view.workloads)
    # cluster-autoscaler never scales up for a pod that consumes a ProvisioningRequest: it decides.
    if (asked := requests.provisioning(pod, view.capacity.requests)) is not None:
        yield asked
        return
    ca = tuple(events.cluster_autoscaler(view.events, named, view.now))
    yield from ca
    yield from events.on_status(view.capacity.events, ca, named)
    yield from events.karpenter(view.events)
    yield from karpenter.nominated(view.events, view.capacity.nodeclaims, view.capacity.events, view.now)
    if status is not None:
        yield from _from_status(status, ca, named, view)
    if (status is not None or ca) and _priority(pod) < EXPENDABLE:
        line = (
            f"No node will come: the pod's priority {_priority(pod)} is below cluster-autoscaler's"
            f" expendable cutoff ({EXPENDABLE})"
        )
        yield Said(NodeComing.NOT_COMING, CLUSTER_AUTOSCALER, None, "", line)


def _from_status(
    status: Status, ca: tuple[Said, ...], named: tuple[str, ...], view: TriageView
) -> Iterator[Said]:
    """A status not written for minutes (cluster-autoscaler is down), and the backoff of a group a
    scale-up for the pod went to."""
    if status.updated is not None and view.now - status.updated > STALE:
        line = "Node: unknown — cluster-autoscaler's status was last written {ago}: it is not running"
        quote = f"cluster-autoscaler-status last-updated {status.updated:%Y-%m-%d %H:%M:%S} UTC"
        yield Said(NodeComing.UNKNOWN, CLUSTER_AUTOSCALER, status.updated, quote, line)
        return
    triggered = {g.name for s in ca for g in s.groups}
    for group in status.groups:
        pool = group_name(group.id, named)
        if group.scale_up == "Backoff" and pool in triggered:
            error = f"{group.error_code}: {group.error_message}" if group.error_message else group.error_code
            code = group.error_code or "after a failed scale-up"
            line = f"Scale-up failed {{ago}}: {pool} is in backoff ({code})"
            yield Said(NodeComing.FAILED, CLUSTER_AUTOSCALER, group.since or status.updated, error, line)


def _silent(view: TriageView, status: Status | None) -> Said:
    """An autoscaler is there and has not spoken about the pod (yet)."""
    by = CLUSTER_AUTOSCALER if status is not None else KARPENTER
    created = timestamp(meta(view.pod).get("creationTimestamp"))
    if by == CLUSTER_AUTOSCALER and created is not None and view.now - created < GPU_BUFFER:
        line = "Node: unknown — cluster-autoscaler waits until a GPU pod is 30 s old before it considers it"
    else:
        line = f"Node: unknown — {by} has not said anything about this pod yet"
    return Said(NodeComing.UNKNOWN, by, None, "", line)


def _merged(
    checked: tuple[NodeGroup, ...], status: Status | None, said: list[Said], named: tuple[str, ...]
) -> tuple[NodeGroup, ...]:
    """kubewhy's groups with the sizes the autoscaler gives: its status first, else the scale-up."""
    sizes = {g.name: g for s in reversed(said) for g in s.groups}
    for group in status.groups if status is not None else ():
        sizes[group_name(group.id, named)] = NodeGroup(
            group_name(group.id, named), group.registered, group.target, group.max
        )
    by_name = {g.name: g for g in checked}
    for pool, known in sizes.items():
        mine = by_name.get(pool, NodeGroup(pool, why="no node of the group to take as a template"))
        by_name[pool] = replace(mine, size=known.size, target=known.target, max=known.max)
    return tuple(by_name[n] for n in sorted(by_name))


def _priority(pod: Object) -> int:
    value = spec(pod).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
