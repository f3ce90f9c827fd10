"""Why a LeaderWorkerSet is not serving: the `kubewhy lws why` explainer.

One ordered ladder, as the JobSet explainer's: `CHECKS` is read top to bottom and the first check that
recognises the LWS gives the verdict (the LeaderWorkerSet table of ARCHITECTURE.md, in its order);
`running` is what is left. The placement checks live in `lws.placement`.

The `Available`, `Progressing` and `UpdateInProgress` conditions are read by status alone: the
controller flips one to False by status without touching its reason or message, so an `Available=False`
still reads `AllGroupsReady` / `All replicas are ready` (`upstream.SOURCE`,
`pkg/controllers/leaderworkerset_controller.go`, `updateConditions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from diagnosis import events
from diagnosis.commands import collect, describe
from diagnosis.jobset import commands as jobset_kubectl
from diagnosis.jobset.family import integer, phase
from diagnosis.jobset.restarts import Exit, exits
from diagnosis.lws import commands as kubectl
from diagnosis.lws.gang import gang_unsatisfiable
from diagnosis.lws.group import RECREATING_POLICIES, Group, Lws, is_ready, state_of
from diagnosis.lws.keys import REVISION_LABEL
from diagnosis.lws.placement import (
    basics,
    leader_pending,
    lws_fix,
    partial_groups,
    workers_not_created,
    workers_pending,
)
from diagnosis.model import Diagnosis, Fix, LwsVerdict, RestartCause, Snippet
from diagnosis.objects import Object, condition, labels, mapping, name, sequence, spec, status, text
from diagnosis.relations import node_name
from diagnosis.views import LwsView

__all__ = ["explain"]

Check = Callable[[Lws], Diagnosis | None]

RECREATE_REASONS = ("RecreateGroup", "RecreateGroupOnPodRestart")
"""The pod controller's event on recreating a group (v0.9+), and its name before (≤ v0.8)."""
_LOOP_WINDOW = timedelta(minutes=30)
"""A recreation older than this is history, not a loop in progress."""
_STUCK_MINUTES = 10.0
"""How long a rolling update may go without finishing before it is called stuck."""
_RECREATED_GROUP = re.compile(r"to recreate group (\d{1,6})")
_NOT_STARTED = ("ContainerCreating", "PodInitializing", "ErrImagePull", "ImagePullBackOff")


def explain(view: LwsView) -> Diagnosis:
    """The verdict on the view's LeaderWorkerSet, with the evidence and the next commands."""
    lws = Lws.of(view)
    for check in CHECKS:
        found = check(lws)
        if found is not None:
            return replace(found, checked_at=view.now)
    return replace(running(lws), checked_at=view.now)


def _condition(lws: Lws, type_: str) -> str:
    """`Type=Status since T`, without the reason and message the controller leaves stale."""
    found = condition(lws.obj, type_)
    if found is None:
        return f"{type_}: not set"
    since = text(found.get("lastTransitionTime"))
    return f"{type_}={text(found.get('status'))}" + (f" since {since}" if since else "")


def _replicas_line(lws: Lws) -> str:
    lws_status = status(lws.obj)
    return (
        f"replicas {lws.replicas} groups of size {lws.size}; "
        f"ready {integer(lws_status.get('readyReplicas')) or 0}, "
        f"updated {integer(lws_status.get('updatedReplicas')) or 0}; "
        + ", ".join(_condition(lws, t) for t in ("Available", "Progressing", "UpdateInProgress"))
        + "."
    )


def _recreations(lws: Lws) -> list[Object]:
    """The controller's group recreations, newest first, when they are a loop in progress: two or more,
    the last within `_LOOP_WINDOW`, under a policy that still recreates groups."""
    recreated = [e for e in lws.lws_events if events.reason(e) in RECREATE_REASONS]
    last = events.last_time(recreated[0]) if recreated else None
    in_progress = last is not None and lws.view.now - last <= _LOOP_WINDOW
    looping = sum(events.count(e) for e in recreated) >= 2 and in_progress
    return recreated if looping and lws.restart_policy in RECREATING_POLICIES else []


def restarting(lws: Lws) -> Diagnosis | None:
    recreated = _recreations(lws)
    if not recreated:
        return None
    total = sum(events.count(e) for e in recreated)
    ended = [e for g in lws.groups for p in g.pods for e in exits(p)]
    starting = [p for g in lws.groups for p in g.pods if _not_started(p)]
    fix = _after_start(lws) if lws.restart_policy == "RecreateGroupOnPodRestart" and starting else None
    if fix is not None:
        why = (
            "Pods of the group were still starting when another's restart recreated the group (lws#726): "
            "under RecreateGroupOnPodRestart a slow start is recreated with the rest."
        )
    elif ended:
        why = (
            "The container fails on its own: the fix is in it (its log, above). RecreateGroupAfterStart "
            "would not help once the group has started; restartPolicy None restarts only the failed pod."
        )
    else:
        why = "No container exit is recorded: a deleted pod (eviction, a node drain) recreates the group too."
    return Diagnosis(
        verdict=LwsVerdict.RESTARTING,
        summary=f"LeaderWorkerSet {lws.name} keeps recreating its groups ({total} recreations); "
        + (f"{_exit_line(ended[0]).rstrip('.')}." if ended else "no container exit is recorded."),
        evidence=(*_recreation_lines(lws, recreated, total), *_pod_lines(ended, starting), why),
        next_commands=collect(
            jobset_kubectl.events_of(lws.namespace, lws.name, "LeaderWorkerSet"),
            *(
                jobset_kubectl.logs(lws.namespace, name(e.pod), e.container, e.running_again)
                for e in ended[:2]
            ),
            *(fix[0].commands if fix is not None else ()),
            *basics(lws),
        ),
        snippets=(fix[1],) if fix is not None else (),
        cause=RestartCause.APP_FAILURE if ended else RestartCause.UNKNOWN,
        fixes=(fix[0],) if fix is not None else (),
    )


def _recreation_lines(lws: Lws, recreated: list[Object], total: int) -> list[str]:
    last = events.last_time(recreated[0])
    groups = sorted({int(m) for e in recreated for m in _RECREATED_GROUP.findall(events.message(e))})
    return [
        f"{total} group recreations ({', '.join(sorted({events.reason(e) for e in recreated}))}, last "
        f"{last.strftime('%Y-%m-%dT%H:%M:%SZ') if last else '?'}): `{events.message(recreated[0])}`.",
        *([f"Groups recreated: {', '.join(map(str, groups))}."] if groups else []),
        f"restartPolicy {lws.restart_policy}: a restart of any container of a group (restartCount > 0) "
        "or the deletion of any of its pods deletes the group's leader, and with it the whole group — "
        "no backoff, no limit, no counter on the LWS.",
    ]


def _pod_lines(ended: list[Exit], starting: list[Object]) -> list[str]:
    return [
        *(_exit_line(e) for e in ended[:3]),
        *(f"Pod {name(p)} has not started: {state_of(p)}." for p in starting[:3]),
    ]


def _after_start(lws: Lws) -> tuple[Fix, Snippet] | None:
    """The change that ends a loop starting pods feed (lws#726), and its YAML: with restartPolicy
    RecreateGroupAfterStart a group is recreated only once every pod in it has started."""
    change = {"spec": {"leaderWorkerTemplate": {"restartPolicy": "RecreateGroupAfterStart"}}}
    fix = lws_fix(
        lws,
        "set restartPolicy RecreateGroupAfterStart (LWS ≥ v0.9): a group is then recreated only once all "
        "its pods have started, so a slow start (an image pull) no longer restarts it (lws#726)",
        kubectl.patch(lws.namespace, lws.name, change, "Recreate groups only after all their pods started"),
    )
    if fix is None:
        return None
    return fix, Snippet(
        "Recreate a group only once all its pods have started",
        "yaml",
        "spec:\n  leaderWorkerTemplate:\n    restartPolicy: RecreateGroupAfterStart\n",
    )


def _exit_line(ended: Exit) -> str:
    again = f", restarted {ended.restarts}×" if ended.restarts else ""
    return (
        f"Container `{ended.container}` of pod {name(ended.pod)} exited {ended.code} "
        f"({ended.reason or 'no reason given'}){again}."
    )


def _not_started(pod: Object) -> bool:
    if not node_name(pod):
        return False
    reasons = (
        text(mapping(mapping(entry).get("state")).get("waiting", {}).get("reason"))
        for entry in sequence(status(pod).get("containerStatuses"))
    )
    return phase(pod) == "Pending" or any(r in _NOT_STARTED for r in reasons)


def update_stuck(lws: Lws) -> Diagnosis | None:
    update = condition(lws.obj, "UpdateInProgress")
    if update is None or update.get("status") != "True":
        return None
    minutes = lws.minutes_since(update.get("lastTransitionTime"))
    if minutes is None or minutes < _STUCK_MINUTES:
        return None
    rollout = mapping(mapping(spec(lws.obj).get("rolloutStrategy")).get("rollingUpdateConfiguration"))
    unready = [g for g in lws.groups if not g.ready]
    revisions = sorted(
        {labels(g.leader).get(REVISION_LABEL, "?") for g in lws.groups if g.leader is not None}
    )
    evidence = [
        f"UpdateInProgress=True for {int(minutes)} min. {_replicas_line(lws)}",
        f"rollingUpdateConfiguration: maxUnavailable {rollout.get('maxUnavailable', 1)}, maxSurge "
        f"{rollout.get('maxSurge', 0)}, partition {rollout.get('partition', 0)}. The rollout moves on only "
        "as updated groups become ready.",
        f"Template revisions of the leaders: {', '.join(revisions) or 'none'}.",
        *(_group_line(g) for g in unready[:4]),
    ]
    if any(sequence(spec(p).get("schedulingGates")) for g in unready for p in g.pods):
        evidence.append(
            "A pod of an unready group is scheduling-gated: a Kueue that does not admit surge groups keeps "
            "the rollout from finishing (kueue#8769, fixed in Kueue v0.16)."
        )
    return Diagnosis(
        verdict=LwsVerdict.UPDATE_STUCK,
        summary=f"The rolling update of LeaderWorkerSet {lws.name} has not finished in {int(minutes)} min: "
        f"{len(unready)} groups are not ready.",
        evidence=tuple(evidence),
        next_commands=collect(
            *(kubectl.pods(lws.namespace, lws.name, g.index) for g in unready[:2]),
            jobset_kubectl.events_of(lws.namespace, lws.name, "LeaderWorkerSet"),
            *basics(lws),
        ),
    )


def _group_line(group: Group) -> str:
    """`Group 1: leader X Running, Ready; 1 of 3 workers; Y: container … waiting`."""
    leader = group.leader
    head = (
        f"leader {name(leader)} {phase(leader)}{', Ready' if is_ready(leader) else ', not Ready'}"
        if leader is not None
        else "no leader pod"
    )
    unready = [p for p in group.pods if not is_ready(p)]
    detail = "; ".join(f"{name(p)}: {state_of(p)}" for p in unready[:2])
    return (
        f"Group {group.index}: {head}; {len(group.workers)} of {group.size - 1} workers"
        + (f"; {detail}" if detail else "")
        + "."
    )


def starting(lws: Lws) -> Diagnosis | None:
    unready = [g for g in lws.groups if not g.ready]
    if not unready:
        return None
    leader_set = next((s for s in lws.view.statefulsets if name(s) == lws.name), None)
    failed = (
        [e for e in lws.events_about(leader_set) if events.reason(e) == "FailedCreate"] if leader_set else []
    )
    lines = [
        *(_group_line(g) for g in unready[:6]),
        *(f"Leader StatefulSet {lws.name}: {events.reason(e)}: `{events.message(e)}`." for e in failed[:2]),
        _replicas_line(lws),
    ]
    return Diagnosis(
        verdict=LwsVerdict.STARTING,
        summary=f"LeaderWorkerSet {lws.name} is starting: {len(unready)} of {len(lws.groups)} groups are not "
        "ready yet, and nothing blocks them.",
        evidence=tuple(lines),
        next_commands=collect(
            *(
                describe("pod", lws.namespace, name(p), f"Pod {name(p)}: what it waits for")
                for g in unready[:1]
                for p in g.pods
                if not is_ready(p)
            ),
            jobset_kubectl.events_of(lws.namespace, lws.name, "LeaderWorkerSet"),
            *basics(lws),
        ),
    )


def running(lws: Lws) -> Diagnosis:
    """Nothing above applies: every group is whole and ready."""
    pods = [p for g in lws.groups for p in g.pods]
    nodes = {node_name(p) for p in pods if node_name(p)}
    return Diagnosis(
        verdict=LwsVerdict.RUNNING,
        summary=f"LeaderWorkerSet {lws.name} is running: {len(lws.groups)} groups, {len(pods)} pods ready on "
        f"{len(nodes)} nodes.",
        evidence=(_replicas_line(lws),),
        next_commands=collect(*basics(lws)),
    )


CHECKS: tuple[Check, ...] = (
    # A group's gang that can never be met holds every pod of it, the leader first.
    gang_unsatisfiable,
    # A leader not scheduled holds its whole group: under exclusive placement or LeaderReady its workers
    # are not even created, so anything said about them would be a symptom.
    leader_pending,
    # The leader is placed, but a gate of the pod controller keeps the workers from being created.
    workers_not_created,
    # A recreation loop deletes and recreates every pod of a group: pending or starting pods are its symptoms.
    restarting,
    # Several groups each hold part of the capacity: the pending workers' own triage only says "full".
    partial_groups,
    # Workers that exist but cannot be placed, for a reason of their own.
    workers_pending,
    # Every pod placed, yet the rollout does not finish.
    update_stuck,
    # Pods on their way: created, pulled, started, probed.
    starting,
)
