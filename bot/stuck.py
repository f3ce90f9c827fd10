"""What the sentinel finds stuck in a sweep: the accelerator pods of one JobSet, Deployment, Job…
(`diagnosis.relations.workload`) waiting for a node, or a JobSet restarting, whether that is worth
an incident, and what blocks it (`blocked_by`: workloads blocked by the same cause share an incident);
a node on its way for one (`node_on_its_way`) is waited for before its incident is posted. Pure: the
pods and restart counts are read by `bot.sentinel`, the time passed in.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from bot.settings import ChannelConfig, MentionConfig, SentinelConfig
from diagnosis.autoscaling import PROVISION_TIMEOUT
from diagnosis.model import JobSetVerdict, NodeComing
from diagnosis.objects import Object, labels, meta, name, namespace
from diagnosis.relations import waiting_since, workload
from handlers.reply import Reply
from handlers.requests import Target

if TYPE_CHECKING:
    from bot.checks import Check

Cause = Literal["pending", "restarts"]
Key = tuple[str, str, str, str, str]
"""(cluster, namespace, workload kind, workload name, cause); a TrainJob is keyed as its JobSet
(`keyed_kind`)."""

EXPLAINED: dict[str, Literal["jobset", "leaderworkerset"]] = {
    "JobSet": "jobset",
    "TrainJob": "jobset",
    "LeaderWorkerSet": "leaderworkerset",
}
"""Workloads diagnosed whole, by their explainer (a TrainJob by `/jobset why` on its name, which
explains it, then its JobSet); any other is diagnosed through its oldest waiting pod."""


def keyed_kind(kind: str) -> str:
    """The kind a workload is keyed by. The pods the sentinel reads name a TrainJob's JobSet (named as
    the TrainJob), and only its answer says a TrainJob owns it: both are one workload, one key."""
    return "JobSet" if kind == "TrainJob" else kind


@dataclass(frozen=True)
class Stuck:
    """A workload found stuck in this sweep."""

    cluster: str
    namespace: str
    kind: str
    name: str
    cause: Cause
    since: float
    target: Target
    """What is diagnosed: the JobSet, or the workload's oldest waiting pod."""
    pods: int = 0
    restarts: int = 0
    labels: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The labels of the pod diagnosed (none for a restart loop): `sentinel.mention` reads them."""

    @property
    def key(self) -> Key:
        return (self.cluster, self.namespace, keyed_kind(self.kind), self.name, self.cause)

    def named_by(self, check: Check) -> Stuck:
        """The workload as its answer names it: a JobSet whose answer is about the TrainJob of its name
        is that TrainJob (an incident names the TrainJob, not its child)."""
        about = check.outcome.target if isinstance(check.outcome, Reply) else None
        if self.kind == "JobSet" and about is not None and about.kind == "trainjob":
            return replace(self, kind="TrainJob")
        return self

    @property
    def path(self) -> str:
        """How the summary line of the incidents past the hourly limit names it."""
        return f"{self.cluster}/{self.namespace}/{self.kind}/{self.name}"

    def group(self, mention: MentionConfig | None) -> str | None:
        """The Slack user group to mention for this workload, if the channel names one for its label."""
        value = self.labels.get(mention.label) if mention is not None else None
        return mention.groups.get(value) if mention is not None and value is not None else None

    def due(self, sentinel: SentinelConfig, now: float) -> bool:
        if self.cause == "restarts":
            return self.restarts >= sentinel.restarts
        return now - self.since >= sentinel.pending_minutes * 60

    def worth_posting(self, check: Check, sentinel: SentinelConfig) -> bool:
        """A diagnosis (not a cluster error), not an ignored verdict, and still stuck: a pending
        workload whose pod was placed meanwhile is not, while a JobSet seen restarting is, whatever
        the explainer calls it now (running between two restarts, failed past maxRestarts), unless it
        completed."""
        if not isinstance(check.outcome, Reply) or _words(check) & set(sentinel.ignore):
            return False
        if self.cause == "restarts":
            return check.verdict != JobSetVerdict.COMPLETED
        return not check.settled


def node_on_its_way(check: Check) -> bool:
    """A node is coming or queued for the diagnosed pod, asked for less than the provision timeout
    ago: the sentinel waits for it before it posts an incident whose workloads all wait so."""
    found = check.outcome.diagnosis.autoscaling if isinstance(check.outcome, Reply) else None
    if found is None or found.state not in (NodeComing.COMING, NodeComing.QUEUED):
        return False
    return found.since is None or check.at - found.since < PROVISION_TIMEOUT


def waiting_workloads(cluster: str, pods: Iterable[Object]) -> dict[Key, Stuck]:
    """The unscheduled pods grouped by workload: how many, since when, and which one to diagnose."""
    groups: dict[tuple[str, str, str], list[tuple[float, Object]]] = {}
    for pod in pods:
        began = waiting_since(pod)
        if began is not None and not meta(pod).get("deletionTimestamp"):
            groups.setdefault((namespace(pod), *workload(pod)), []).append((began.timestamp(), pod))
    found: dict[Key, Stuck] = {}
    for (ns, kind, owner), waiting in groups.items():
        since, oldest = min(waiting, key=lambda pair: (pair[0], name(pair[1])))
        explained = EXPLAINED.get(kind)
        target = Target(
            kind=explained or "pod",
            namespace=ns,
            name=owner if explained else name(oldest),
            cluster=cluster,
        )
        stuck = Stuck(
            cluster, ns, kind, owner, "pending", since, target, pods=len(waiting), labels=labels(oldest)
        )
        found[stuck.key] = stuck
    return found


def blocked_by(stuck: Stuck, check: Check) -> str:
    """What blocks a stuck workload, as a short key: the workloads blocked by the same cause on the
    same nodes share it, and with it one incident. It is drawn from the diagnosis, never from the
    workload's own names: the verdict words, then who or what blocks it: the workloads holding the
    devices on the nodes it needs (`holders`, its own pods left out); else the cluster objects whose
    change would open nodes to it, with those nodes (its fixes that change the cluster, not the pod,
    nor a wait for a node on its way, which changes nothing); else, when the diagnosis names neither,
    its summary."""
    assert isinstance(check.outcome, Reply)
    diagnosis = check.outcome.diagnosis
    words = [stuck.cluster, stuck.cause, str(diagnosis.verdict), str(diagnosis.pod_verdict or "")]
    words.append(str(diagnosis.cause or ""))
    holders = sorted([h.kind, h.namespace, h.name, *h.nodes] for h in diagnosis.holders if not h.own)
    changing = (f for f in diagnosis.fixes if f.pod_patch is None and (f.commands or f.opens))
    changes = sorted([*f.objects, "->", *f.opens] for f in changing)
    blocking = holders or changes or [[" ".join(diagnosis.summary.split())]]
    return hashlib.sha256(json.dumps([words, blocking]).encode()).hexdigest()[:16]


class RestartCounter:
    """The restarts of each JobSet seen by this replica within a window: `status.restarts` read at each
    sweep, its increases kept with the time they were seen."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str], int] = {}
        self._bumps: dict[tuple[str, str, str], deque[tuple[float, int]]] = {}

    def observe(self, cluster: str, counts: Mapping[tuple[str, str], int], now: float) -> None:
        for (ns, jobset), restarts in counts.items():
            key = (cluster, ns, jobset)
            before = self._last.get(key)
            self._last[key] = restarts
            if before is not None and restarts > before:
                self._bumps.setdefault(key, deque()).append((now, restarts - before))

    def loops(self, cluster: str, window: float, now: float) -> dict[Key, Stuck]:
        """The JobSets of `cluster` that restarted within `window` seconds, with how often."""
        found: dict[Key, Stuck] = {}
        for (in_cluster, ns, jobset), bumps in self._bumps.items():
            recent = [(at, n) for at, n in bumps if now - at <= window]
            if in_cluster != cluster or not recent:
                continue
            target = Target(kind="jobset", namespace=ns, name=jobset, cluster=cluster)
            stuck = Stuck(
                cluster,
                ns,
                "JobSet",
                jobset,
                "restarts",
                recent[0][0],
                target,
                restarts=sum(n for _, n in recent),
            )
            found[stuck.key] = stuck
        return found

    def forget_before(self, horizon: float) -> None:
        for bumps in self._bumps.values():
            while bumps and bumps[0][0] < horizon:
                bumps.popleft()


def stuck_in(
    channel: ChannelConfig,
    clusters: Iterable[str],
    found: Mapping[str, Sequence[Object]],
    restarts: RestartCounter,
    now: float,
) -> dict[Key, Stuck]:
    """The stuck workloads of a channel: in its `clusters` that were read (`found`: their unscheduled
    pods), and in its namespaces."""
    window = channel.sentinel.restarts_window_minutes * 60

    def watched(ns: str) -> bool:
        return channel.namespaces is None or ns in channel.namespaces

    stuck: dict[Key, Stuck] = {}
    for cluster in clusters:
        if cluster not in found:
            continue
        stuck |= waiting_workloads(cluster, [p for p in found[cluster] if watched(namespace(p))])
        stuck |= {
            key: loop for key, loop in restarts.loops(cluster, window, now).items() if watched(loop.namespace)
        }
    return stuck


def _words(check: Check) -> set[str]:
    """The verdict words `ignore` is matched against: the workload's, and its blocking pod's."""
    words = {check.verdict}
    if isinstance(check.outcome, Reply) and check.outcome.diagnosis.pod_verdict:
        words.add(str(check.outcome.diagnosis.pod_verdict))
    return words
