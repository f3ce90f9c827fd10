"""What one autoscaler signal says, whichever autoscaler gave it: the unit the state is decided from.

Each reader of a signal (`events`, `status`, `karpenter`, `requests`) returns `Said` values; the
newest one decides (`diagnosis.autoscaling.decide`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from diagnosis.model import NodeComing, NodeGroup

CLUSTER_AUTOSCALER = "cluster-autoscaler"
KARPENTER = "karpenter"
PROVISIONING_REQUEST = "provisioning-request"
KUEUE = "kueue"

PROVISION_TIMEOUT = timedelta(minutes=15)
"""cluster-autoscaler's `--max-node-provision-time` default, and Karpenter's registration timeout."""


@dataclass(frozen=True)
class Said:
    """One signal: the state it implies, who gave it and when, its words and what they name."""

    state: NodeComing
    by: str
    since: datetime | None
    quote: str
    headline: str
    """The first-screen line, with `{ago}` where the signal's age goes."""
    reasons: tuple[tuple[str, int], ...] = ()
    groups: tuple[NodeGroup, ...] = ()
    count: int = 1
    """How many times the autoscaler said it (an event's count)."""


_MIG = re.compile(r"/instanceGroups/(?P<name>[^/\s]+)$")
_GKE_MIG = re.compile(r"^gke-.+?-(?P<pool>[a-z0-9-]+?)-[0-9a-f]{8}-grp$")


def group_name(group_id: str, pools: Iterable[str] = ()) -> str:
    """A node group's name as people call it: on GKE the id is a MIG URL
    (`…/instanceGroups/gke-c-a3-pool-1a2b3c4d-grp`), shown as its node pool (`a3-pool`); an AWS
    ASG or another provider's id is matched against the known pool names, else kept."""
    found = _MIG.search(group_id)
    mig = found.group("name") if found else group_id
    known = sorted((p for p in pools if p and f"-{p}-" in f"-{mig}-"), key=len, reverse=True)
    if known:
        return known[0]
    gke = _GKE_MIG.match(mig)
    return gke.group("pool") if gke else mig


def counted(text: str) -> tuple[tuple[str, int], ...]:
    """cluster-autoscaler's `ReasonsMessage`: `2 Insufficient nvidia.com/gpu, 1 max node group size
    reached`, parts in any order, each a count of node groups. A reason may itself hold `, ` (`max
    cluster cpu, memory limit reached`): a part that does not begin with a count continues the last."""
    parts: list[list[str]] = []
    for piece in text.strip().split(", "):
        head = piece.split(" ", 1)
        if len(head) == 2 and head[0].isdigit():
            parts.append([head[0], head[1]])
        elif parts:
            parts[-1][1] += f", {piece}"
    return tuple((reason, int(number)) for number, reason in parts)


def minutes(since: datetime | None, now: datetime) -> str:
    """`3 min ago`, `2 h 5 min ago`, or `just now`."""
    if since is None:
        return ""
    total = max(int((now - since).total_seconds() // 60), 0)
    if total == 0:
        return "just now"
    hours, mins = divmod(total, 60)
    return (f"{hours} h {mins} min" if hours and mins else f"{hours} h" if hours else f"{mins} min") + " ago"
