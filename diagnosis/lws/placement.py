"""Why a LeaderWorkerSet's pods are not placed, or not even made: the checks on leaders, worker
StatefulSets and groups placed in part.

Nothing refuses an LWS's workers the way JobSet's webhook refuses followers: the pod controller just
does not create a group's worker StatefulSet while the leader is unscheduled under exclusive placement,
or not Ready under `startupPolicy: LeaderReady`, or while its node lacks the topology label — and
records no event for any of them (`upstream.SOURCE`, `pkg/controllers/pod_controller.go`,
`Reconcile`). So each check decides from the objects: the leader, its node, the StatefulSets there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diagnosis.commands import collect, describe, describe_node
from diagnosis.jobset import commands as jobset_kubectl
from diagnosis.jobset.creation import blocked_by, pod_verdict, triage_in
from diagnosis.lws import commands as kubectl
from diagnosis.lws import upstream
from diagnosis.lws.group import Group, Lws, is_ready, state_of, unschedulable
from diagnosis.lws.keys import EXCLUSIVE_TOPOLOGY_KEY, GANG_GROUP_KEY
from diagnosis.model import Command, Diagnosis, Fix, LwsVerdict, PodVerdict, Snippet
from diagnosis.objects import Object, labels, mapping, meta, name, sequence, spec, text
from diagnosis.objects import annotations as annotations_of  # the bare name is the __future__ import
from diagnosis.relations import node_name
from diagnosis.triage.fixes import pool_domain
from diagnosis.triage.scheduler_message import last_said, quoted

_SETTLING_MINUTES = 2.0
"""How long after its leader is placed a group's worker StatefulSet may still be on its way."""


def basics(lws: Lws) -> tuple[Command | None, ...]:
    """The commands every LeaderWorkerSet answer ends with."""
    ns, lw = lws.namespace, lws.name
    return kubectl.describe_lws(ns, lw), kubectl.statefulsets(ns, lw), kubectl.pods(ns, lw)


def _fix(summary: str, objects: tuple[str, ...], *commands: Command | None) -> Fix | None:
    """A change to the cluster that removes the cause, or None when no command could be built for
    it (a name that could not exist)."""
    made = collect(*commands)
    return Fix(summary, None, (), made, objects) if made else None


def lws_fix(lws: Lws, summary: str, command: Command | None) -> Fix | None:
    """A change to the LeaderWorkerSet's own spec."""
    return _fix(summary, (f"leaderworkerset/{lws.namespace}/{lws.name}",), command)


def triage(lws: Lws, pod: Object) -> Diagnosis:
    return triage_in(lws.view, pod, lws.events_about(pod))


def _groups(groups: Sequence[Group]) -> str:
    shown = ", ".join(str(g.index) for g in groups[:8]) + (" …" if len(groups) > 8 else "")
    return f"group{'s' if len(groups) > 1 else ''} {shown}"


def leader_pending(lws: Lws) -> Diagnosis | None:
    held = [g for g in lws.groups if g.leader is not None and unschedulable(g.leader)]
    if not held:
        return None
    group, leader = held[0], held[0].leader
    assert leader is not None
    about = lws.events_about(leader)
    said = last_said(leader, about, lws.view.now)
    found = triage(lws, leader)
    evidence = [
        f"Group {group.index}'s leader {name(leader)} is Pending, not scheduled; "
        f"{quoted(said) if said else 'the scheduler has said nothing yet'}.",
        f"Leaders not scheduled: {len(held)} of {len(lws.groups)} groups ({_groups(held)}).",
        *_why_no_workers(lws, group, found),
        f"Leader triage ({found.verdict}): {found.summary}",
        *(line for line in found.evidence if not said or line != quoted(said)),
    ]
    held_workers = lws.size > 1 and group.statefulset is None
    return Diagnosis(
        verdict=LwsVerdict.LEADER_PENDING,
        summary=f"LeaderWorkerSet {lws.name} waits on the leader of {_groups(held)}: {name(leader)} is not "
        f"scheduled ({found.verdict})"
        + ("; its workers are not created until it is." if held_workers else "."),
        evidence=tuple(evidence),
        next_commands=collect(
            describe("pod", lws.namespace, name(leader), f"The leader {name(leader)}: why it is Pending"),
            *found.next_commands[:4],
            kubectl.pods(lws.namespace, lws.name, group.index),
            *basics(lws),
        ),
        snippets=found.snippets,
        pod_verdict=pod_verdict(found),
        **blocked_by(found),
    )


def _why_no_workers(lws: Lws, group: Group, found: Diagnosis) -> list[str]:
    """What a pending leader does to its group's workers, by the LWS's placement and startup policy."""
    key = lws.topology_key
    if lws.size < 2:
        return ["size 1: each group is its leader alone."]
    if group.statefulset is not None:
        pending = sum(1 for w in group.workers if unschedulable(w))
        return [
            f"startupPolicy {lws.startup_policy}, no exclusive placement: its worker StatefulSet exists, "
            "with "
            f"{len(group.workers)} of {lws.size - 1} workers ({pending} of them unschedulable too)."
        ]
    lines = []
    if key:
        lines.append(
            f"Exclusive placement by node label `{key}` (annotation `{EXCLUSIVE_TOPOLOGY_KEY}`): the LWS "
            "controller creates a group's worker StatefulSet only once the leader is scheduled, to copy the "
            f"`{key}` of the leader's node into the workers' nodeSelector. Until then the group has no "
            f"workers (`kubectl get statefulset {lws.name}-{group.index}`: NotFound), and no event says why."
        )
        if found.verdict is PodVerdict.POD_AFFINITY:
            lines.append(
                "The leader's injected anti-affinity (`leaderworkerset.sigs.k8s.io/group-key` Exists, NotIn "
                f"its own) keeps it out of every `{key}` domain that holds a pod of another group — of any "
                f"LeaderWorkerSet in namespace {lws.namespace}, exclusive or not, since every LWS pod "
                "carries that label (lws#539, open)."
            )
    if lws.startup_policy == "LeaderReady":
        lines.append(
            "startupPolicy LeaderReady: the workers are created only once the leader is Ready, so none "
            "exist while it waits to be scheduled."
        )
    return lines or [f"Its worker StatefulSet {lws.name}-{group.index} does not exist yet."]


@dataclass(frozen=True)
class _Missing:
    """Why one group's worker StatefulSet was not created."""

    summary: str
    evidence: tuple[str, ...]
    commands: tuple[Command | None, ...]
    snippets: tuple[Snippet, ...] = ()
    fix: Fix | None = None
    """The change that lets the controller create the workers; its commands follow `commands`."""


def workers_not_created(lws: Lws) -> Diagnosis | None:
    if lws.size < 2:
        return None
    for group in lws.groups:
        leader = group.leader
        if leader is None or group.statefulset is not None or not node_name(leader):
            continue
        missing = _missing_workers(lws, group, leader)
        if missing is not None:
            return _not_created(lws, group, leader, missing)
    return None


def _missing_workers(lws: Lws, group: Group, leader: Object) -> _Missing | None:
    """The first gate of the pod controller that stops at this group, in its order."""
    if lws.startup_policy == "LeaderReady" and not is_ready(leader):
        return _not_ready(lws, leader)
    key = lws.topology_key
    node = lws.node(node_name(leader))
    if key and node is None:
        return _node_gone(lws, leader, key)
    if key and node is not None and key not in labels(node):
        return _no_topology_label(lws, leader, node, key)
    refusals = [e for e in lws.lws_events if "worker statefulset" in text(e.get("message")).lower()]
    placed_for = lws.minutes_since(meta(leader).get("creationTimestamp"))
    if refusals or (placed_for is not None and placed_for > _SETTLING_MINUTES):
        said = [f"Event {text(e.get('reason'))}: `{text(e.get('message'))}`." for e in refusals[:2]]
        return _Missing(
            "the LWS controller has not created it",
            (
                *said,
                "No gate of the pod controller holds it (startup policy, placement, node labels): the "
                "controller failed or is not reconciling — read its log.",
            ),
            (kubectl.controller_log(),),
        )
    return None


def _not_ready(lws: Lws, leader: Object) -> _Missing:
    state = state_of(leader)
    probes = [
        text(mapping(c).get("name"))
        for c in sequence(spec(leader).get("containers"))
        if mapping(c).get("readinessProbe")
    ]
    evidence = (
        f"startupPolicy LeaderReady: the pod controller creates the workers only once leader {name(leader)} "
        f"is Ready; it runs on {node_name(leader)} but is not Ready ({state}). No event, no condition says "
        "so (only a V(2) log line `defer the creation of the worker statefulset because leader pod is not "
        "ready.`).",
        (
            f"Readiness probe on container {', '.join(probes)}: if it waits for the workers to join (a "
            "serving engine ready once every worker is up), the leader is never Ready and the workers "
            "never come."
            if probes
            else "The leader has no readiness probe: Ready follows its containers running."
        ),
    )
    containers = [text(mapping(c).get("name")) for c in sequence(spec(leader).get("containers"))]
    return _Missing(
        f"startupPolicy LeaderReady and its leader {name(leader)} is not Ready ({state})",
        evidence,
        (
            describe("pod", lws.namespace, name(leader), f"The leader {name(leader)}: probes and events"),
            *(jobset_kubectl.logs(lws.namespace, name(leader), c, False) for c in containers[:1]),
        ),
        fix=lws_fix(
            lws,
            "set startupPolicy LeaderCreated: the workers are then created with the leader, not once it is "
            "Ready (for a leader whose readiness waits for its workers)",
            kubectl.patch(
                lws.namespace,
                lws.name,
                {"spec": {"startupPolicy": "LeaderCreated"}},
                "Create the workers with the leader (only if the leader's readiness needs its workers)",
            ),
        ),
    )


def _node_gone(lws: Lws, leader: Object, key: str) -> _Missing:
    node = node_name(leader)
    return _Missing(
        f"its leader {name(leader)} is bound to node {node}, which no longer exists",
        (
            f"Exclusive placement by `{key}`: the controller reads the leader's node for its `{key}` value. "
            f"Node {node} is gone, so it cannot: on {upstream.EMPTY_SELECTOR_RELEASES} it then creates the "
            f'workers with nodeSelector `{key}: ""`, which no node matches; from '
            f"{upstream.EMPTY_SELECTOR_CHANGE} it stops with `getting node "
            f'"{node}"` in its log.',
            "The leader stays bound to a node that is gone until it is deleted (the pod GC deletes it in "
            "time); deleting it recreates the group.",
        ),
        (jobset_kubectl.bound_pods(node),),
        fix=_fix(
            f"delete leader {name(leader)}, bound to a node that is gone: the LWS recreates it, and its "
            "group, on a node that exists",
            (f"pod/{lws.namespace}/{name(leader)}",),
            jobset_kubectl.delete_pod(
                lws.namespace,
                name(leader),
                f"Delete the orphaned leader {name(leader)}: the group is recreated",
            ),
        ),
    )


def _no_topology_label(lws: Lws, leader: Object, node: Object, key: str) -> _Missing:
    value = pool_domain(lws.view.nodes, node, key)
    having = sum(1 for n in lws.view.nodes if key in labels(n))
    return _Missing(
        f"its leader {name(leader)}'s node {name(node)} has no `{key}` label",
        (
            f"Exclusive placement by `{key}`: the controller copies the leader's node's `{key}` into the "
            f"workers' nodeSelector. Node {name(node)} has no such label ({having} of the "
            f"{len(lws.view.nodes)} nodes read have it), so it fails with `node does not have topology "
            "label: ` in its log, records no event, and creates no workers.",
        ),
        (
            jobset_kubectl.nodes_with_label(key),
            describe_node(name(node), f"Node {name(node)}: its labels"),
            kubectl.controller_log(),
        ),
        fix=_fix(
            f"label node {name(node)} {key}={value} (its pool's domain): the controller then creates "
            "the workers in that domain",
            (f"node/{name(node)}",),
            jobset_kubectl.label_node(name(node), key, value),
        ),
    )


def _not_created(lws: Lws, group: Group, leader: Object, missing: _Missing) -> Diagnosis:
    return Diagnosis(
        verdict=LwsVerdict.WORKERS_NOT_CREATED,
        summary=f"The workers of group {group.index} of LeaderWorkerSet {lws.name} are not created: "
        f"{missing.summary}.",
        evidence=(
            f"Group {group.index}: leader {name(leader)} on {node_name(leader)}, no worker StatefulSet "
            f"{lws.name}-{group.index} (it would hold {lws.size - 1} worker{'s' if lws.size > 2 else ''}).",
            *missing.evidence,
        ),
        next_commands=collect(
            *missing.commands,
            *(missing.fix.commands if missing.fix is not None else ()),
            kubectl.pods(lws.namespace, lws.name, group.index),
            *basics(lws),
        ),
        snippets=missing.snippets,
        fixes=(missing.fix,) if missing.fix is not None else (),
    )


def gang_scheduled(lws: Lws) -> bool:
    """Whether a gang scheduler places the groups whole: LWS's Volcano provider names each pod's
    PodGroup (`scheduling.k8s.io/group-name`); without it, nothing does (lws#167, #810)."""
    return any(GANG_GROUP_KEY in annotations_of(p) for g in lws.groups for p in g.pods)


def partial_groups(lws: Lws) -> Diagnosis | None:
    partial = [g for g in lws.groups if g.placed and g.pending]
    if len(partial) < 2 or gang_scheduled(lws):
        return None
    pod = partial[0].pending[0]
    found = triage(lws, pod)
    placed = sum(len(g.placed) for g in lws.groups)
    whole = placed // lws.size
    evidence = [
        *(
            f"Group {g.index}: {len(g.placed)} of {lws.size} pods placed, {len(g.pending)} unschedulable "
            f"({', '.join(name(p) for p in g.pending[:3])})."
            for g in partial[:6]
        ),
        "Nothing schedules a group as one: without a gang scheduler (LWS's Volcano provider) each pod is "
        "placed alone, so every group holds part of the capacity and none gets all it needs (lws#167, "
        "#810). A group serves only whole.",
        f"The {placed} placed pods would hold {whole} whole group{'s' if whole != 1 else ''} of {lws.size}.",
        f"Triage of {name(pod)} ({found.verdict}): {found.summary}",
        *found.evidence,
    ]
    gang = Snippet(
        "Gang scheduling with Volcano (the LWS controller's configuration, and the pods' scheduler)",
        "yaml",
        "# lws-controller-manager config (Helm: --set gangSchedulingManagement.schedulerProvider=volcano)\n"
        "gangSchedulingManagement:\n  schedulerProvider: volcano\n---\n"
        "# in both leaderTemplate and workerTemplate of the LeaderWorkerSet\n"
        "spec:\n  schedulerName: volcano\n",
    )
    taken = blocked_by(found)
    scale = lws_fix(
        lws,
        f"scale {lws.name} to {whole} group{'s' if whole != 1 else ''}: the nodes its pods hold then hold "
        "each group whole, and serve",
        kubectl.scale(lws.namespace, lws.name, whole) if 0 < whole < lws.replicas else None,
    )
    return Diagnosis(
        verdict=LwsVerdict.PARTIAL_GROUPS,
        summary=f"LeaderWorkerSet {lws.name} is placed in part: {len(partial)} groups each hold some nodes "
        f"and wait for more ({found.verdict}); none can serve.",
        evidence=tuple(evidence),
        next_commands=collect(
            *(scale.commands if scale is not None else ()),
            *found.next_commands[:3],
            *basics(lws),
        ),
        snippets=(gang,),
        pod_verdict=pod_verdict(found),
        **{**taken, "fixes": (*found.fixes, *((scale,) if scale is not None else ()))},
    )


def workers_pending(lws: Lws) -> Diagnosis | None:
    pending = [(g, w) for g in lws.groups for w in g.workers if unschedulable(w)]
    if not pending:
        return None
    group, pod = pending[0]
    found = triage(lws, pod)
    shown = ", ".join(name(w) for _, w in pending[:5]) + (" …" if len(pending) > 5 else "")
    evidence = [
        f"{len(pending)} workers are unschedulable: {shown} "
        f"({_groups(list({g.index: g for g, _ in pending}.values()))}).",
        *_empty_selector(lws, group, pod),
        f"Triage of {name(pod)} ({found.verdict}): {found.summary}",
        *found.evidence,
    ]
    return Diagnosis(
        verdict=LwsVerdict.WORKERS_PENDING,
        summary=f"{len(pending)} workers of LeaderWorkerSet {lws.name} cannot be scheduled; {name(pod)}: "
        f"{found.verdict}.",
        evidence=tuple(evidence),
        next_commands=collect(
            *found.next_commands, kubectl.pods(lws.namespace, lws.name, group.index), *basics(lws)
        ),
        snippets=found.snippets,
        pod_verdict=pod_verdict(found),
        **blocked_by(found),
    )


def _empty_selector(lws: Lws, group: Group, worker: Object) -> list[str]:
    """The bug of `upstream.EMPTY_SELECTOR_RELEASES`: the leader's node was gone when the workers were
    made, so they select `<key>: ""`, which no node has (`upstream.EMPTY_SELECTOR_CHANGE`)."""
    key = lws.topology_key
    if not key or mapping(spec(worker).get("nodeSelector")).get(key) != "":
        return []
    leader = group.leader
    node = node_name(leader) if leader is not None else "?"
    return [
        f'Worker {name(worker)} selects `{key}: ""`: the controller read no `{key}` from the leader\'s node '
        f"{node}" + (", which no longer exists" if lws.node(node) is None else "") + " and made the workers "
        f"anyway ({upstream.EMPTY_SELECTOR_RELEASES}; {upstream.EMPTY_SELECTOR_CHANGE} makes it stop "
        "instead). Deleting the leader recreates the group."
    ]
