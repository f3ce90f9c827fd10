"""A LeaderWorkerSet group whose gang can never be met: with LWS's Volcano provider each group has a
PodGroup (`scheduling.k8s.io/group-name` on its pods), `minMember` = size under LeaderCreated (1 under
LeaderReady) and `minResources` = the whole group's requests (`upstream.SOURCE`,
`pkg/schedulerprovider/volcano_provider.go`). Volcano places none of the group's pods until all of
`minResources` fit at once and `minMember` pods exist, so the group waits forever when the nodes
together allocate less than it asks, or when the pods it counts are never made: under exclusive
placement the workers are created only once the leader is scheduled (`pod_controller.go`), and the
leader waits for the gang. Pods that name a coscheduling PodGroup are weighed the same way.
"""

from __future__ import annotations

from diagnosis.commands import collect, describe
from diagnosis.gang import Gang, api_of, members, refusals, weigh
from diagnosis.jobset.family import integer, is_live
from diagnosis.lws import commands as kubectl
from diagnosis.lws.group import Group, Lws
from diagnosis.lws.keys import GROUP_INDEX_LABEL
from diagnosis.lws.placement import basics
from diagnosis.model import Diagnosis, LwsVerdict
from diagnosis.objects import labels, name
from diagnosis.relations import node_name


def _withheld(lws: Lws, gang: Gang, group: Group | None) -> str:
    """Why the pods `minMember` counts are never made, or ""."""
    if group is None or gang.min_member <= gang.pods:
        return ""
    if gang.min_member > lws.size:
        return (
            f"minMember {gang.min_member} is more than the group's size {lws.size}: the group never has "
            "that many pods."
        )
    leader = group.leader
    if lws.topology_key and group.statefulset is None and leader is not None and not node_name(leader):
        return (
            f"minMember {gang.min_member} counts the group's workers, but under exclusive placement "
            f"(`{lws.topology_key}`) they are created only once leader {name(leader)} is scheduled, and "
            "the leader waits for the gang: the group can never reach minMember."
        )
    return ""


def gang_unsatisfiable(lws: Lws) -> Diagnosis | None:
    groups = {g.index: g for g in lws.groups}
    for podgroup in lws.view.podgroups:
        mine = [p for p in members(podgroup, lws.view.pods) if is_live(p)]
        indexes = {integer(labels(p).get(GROUP_INDEX_LABEL)) for p in mine} - {None}
        group = groups.get(indexes.pop() or 0) if len(indexes) == 1 else None
        gang = weigh(podgroup, len(mine), lws.view.nodes)
        withheld = _withheld(lws, gang, group)
        if not gang.short and not withheld:
            continue
        what = f"group {group.index}" if group is not None else f"PodGroup {name(podgroup)}"
        said = refusals(mine, lws.view.events)
        why = (
            f"minResources asks more {', '.join(gang.short)} than every node read allocates together"
            if gang.short
            else "the pods minMember counts are never created"
        )
        return Diagnosis(
            verdict=LwsVerdict.GANG_UNSATISFIABLE,
            summary=f"The gang of {what} of LeaderWorkerSet {lws.name} can never be scheduled: {why}.",
            evidence=(*gang.lines, *([withheld] if withheld else []), *said),
            next_commands=collect(
                describe(
                    f"podgroups.{api_of(podgroup)}",
                    lws.namespace,
                    name(podgroup),
                    "The PodGroup's minMember, minResources and status",
                ),
                kubectl.pods(lws.namespace, lws.name, group.index if group is not None else None),
                *basics(lws),
            ),
        )
    return None
