"""A LeaderWorkerSet as the explainer reads it: its groups, each a leader pod, the worker StatefulSet
the leader owns and that StatefulSet's pods.

The LWS controller makes one leader StatefulSet named as the LWS, whose pods `<lws>-<i>` lead the
groups; the pod controller, reconciling leader `<lws>-<i>`, makes the worker StatefulSet `<lws>-<i>`
owned by that leader pod, whose pods are `<lws>-<i>-<j>` (j = 1 … size-1). Every one of them carries
the `leaderworkerset.sigs.k8s.io/name`, `group-index` and `worker-index` labels (`upstream.SOURCE`,
`pkg/controllers/leaderworkerset_controller.go`, `pod_controller.go`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from diagnosis import events
from diagnosis.jobset.family import integer, is_live, phase
from diagnosis.lws.keys import (
    EXCLUSIVE_TOPOLOGY_KEY,
    GROUP_INDEX_LABEL,
    RECREATE_AFTER_START_KEY,
    WORKER_INDEX_LABEL,
)
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
    labels,
    mapping,
    meta,
    name,
    namespace,
    sequence,
    spec,
    status,
    text,
    timestamp,
)
from diagnosis.objects import annotations as annotations_of  # the bare name is the __future__ import
from diagnosis.relations import node_name
from diagnosis.views import LwsView

RECREATING_POLICIES = ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart")
"""The restart policies under which one pod's restart recreates its whole group."""


def is_ready(pod: Object) -> bool:
    return phase(pod) == "Running" and condition_true(pod, "Ready")


def unschedulable(pod: Object) -> bool:
    """The scheduler tried and could not place the pod, or gates keep it from trying."""
    scheduled = condition(pod, "PodScheduled")
    tried = scheduled is not None and scheduled.get("status") == "False"
    return is_live(pod) and not node_name(pod) and (tried or bool(spec(pod).get("schedulingGates")))


def state_of(pod: Object) -> str:
    """What a pod is doing, in a few words: its first container waiting (and why), running but not
    ready, or its phase."""
    for entry in map(mapping, sequence(status(pod).get("containerStatuses"))):
        waiting = mapping(mapping(entry.get("state")).get("waiting"))
        if waiting:
            message = text(waiting.get("message"))
            return f"container {text(entry.get('name'))} waiting: {text(waiting.get('reason')) or '?'}" + (
                f" (`{message}`)" if message else ""
            )
        if not entry.get("ready"):
            return f"container {text(entry.get('name'))} running, not ready"
    return f"phase {phase(pod)}" + ("" if node_name(pod) else ", not scheduled yet")


def topology_key(lws: Object) -> str:
    """The LeaderWorkerSet's node label of exclusive placement, or ""."""
    return text(annotations_of(lws).get(EXCLUSIVE_TOPOLOGY_KEY))


@dataclass(frozen=True)
class Group:
    """Group `index`: its live leader, its worker StatefulSet and its live workers."""

    index: int
    leader: Object | None
    statefulset: Object | None
    """The worker StatefulSet the leader owns; None until the pod controller creates it."""
    workers: tuple[Object, ...]
    size: int

    @property
    def pods(self) -> tuple[Object, ...]:
        return (self.leader, *self.workers) if self.leader is not None else self.workers

    @property
    def placed(self) -> tuple[Object, ...]:
        return tuple(p for p in self.pods if node_name(p))

    @property
    def pending(self) -> tuple[Object, ...]:
        return tuple(p for p in self.pods if unschedulable(p))

    @property
    def ready(self) -> bool:
        return len(self.pods) == self.size and all(map(is_ready, self.pods))

    def __str__(self) -> str:
        return f"group {self.index}"


@dataclass(frozen=True)
class Lws:
    """The view, sorted into groups."""

    view: LwsView
    groups: tuple[Group, ...]
    events_by_name: Mapping[str, tuple[Object, ...]]

    @property
    def obj(self) -> Object:
        return self.view.lws

    @property
    def name(self) -> str:
        return name(self.view.lws)

    @property
    def namespace(self) -> str:
        return namespace(self.view.lws)

    @property
    def template(self) -> Mapping[str, object]:
        return mapping(spec(self.obj).get("leaderWorkerTemplate"))

    @property
    def size(self) -> int:
        return _size(self.obj)

    @property
    def replicas(self) -> int:
        replicas = integer(spec(self.obj).get("replicas"))
        return 1 if replicas is None else replicas

    @property
    def startup_policy(self) -> str:
        return text(spec(self.obj).get("startupPolicy")) or "LeaderCreated"

    @property
    def restart_policy(self) -> str:
        """As the webhook defaults it: `RecreateGroupOnPodRestart`, and the deprecated `Default` is
        `None`; v0.8's annotation still turns on `RecreateGroupAfterStart`."""
        if RECREATE_AFTER_START_KEY in annotations_of(self.obj):
            return "RecreateGroupAfterStart"
        said = text(self.template.get("restartPolicy")) or "RecreateGroupOnPodRestart"
        return "None" if said == "Default" else said

    @property
    def topology_key(self) -> str:
        return topology_key(self.obj)

    def events_about(self, obj: Object) -> tuple[Object, ...]:
        """The events about `obj`, newest first."""
        return tuple(
            events.newest_first(e for e in self.events_by_name.get(name(obj), ()) if events.is_about(e, obj))
        )

    @cached_property
    def lws_events(self) -> tuple[Object, ...]:
        return self.events_about(self.obj)

    def node(self, node: str) -> Object | None:
        return self._nodes.get(node) if node else None

    @cached_property
    def _nodes(self) -> Mapping[str, Object]:
        return {name(n): n for n in reversed(self.view.nodes)}

    def minutes_since(self, value: object) -> float | None:
        """Minutes from a timestamp (as JSON carries it) to the reading."""
        when = timestamp(value)
        return None if when is None else (self.view.now - when).total_seconds() / 60

    @classmethod
    def of(cls, view: LwsView) -> Lws:
        lws = view.lws
        size = _size(lws)
        live = [p for p in view.pods if is_live(p)]
        groups: dict[int, list[Object]] = {}
        for pod in live:
            index = integer(labels(pod).get(GROUP_INDEX_LABEL))
            if index is not None:
                groups.setdefault(index, []).append(pod)
        replicas = integer(spec(lws).get("replicas"))
        indexes = sorted({*range(min(1 if replicas is None else replicas, 10_000)), *groups})
        by_name: dict[str, list[Object]] = {}
        for event in view.events:
            by_name.setdefault(text(events.regarding(event).get("name")), []).append(event)
        return cls(
            view,
            tuple(_group(lws, i, groups.get(i, []), view.statefulsets, size) for i in indexes),
            {k: tuple(v) for k, v in by_name.items()},
        )


def _size(lws: Object) -> int:
    size = integer(mapping(spec(lws).get("leaderWorkerTemplate")).get("size"))
    return 1 if size is None else size


def _group(lws: Object, index: int, pods: list[Object], statefulsets: tuple[Object, ...], size: int) -> Group:
    leader = next((p for p in pods if labels(p).get(WORKER_INDEX_LABEL) == "0"), None)
    workers = sorted(
        (p for p in pods if labels(p).get(WORKER_INDEX_LABEL) not in (None, "0")),
        key=lambda p: integer(labels(p).get(WORKER_INDEX_LABEL)) or 0,
    )
    # Named after its leader pod and owned by it; one of an earlier leader is being deleted with it.
    wanted = f"{name(lws)}-{index}"
    statefulset = next(
        (s for s in statefulsets if name(s) == wanted and not meta(s).get("deletionTimestamp")), None
    )
    return Group(index, leader, statefulset, tuple(workers), size)
