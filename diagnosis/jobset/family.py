"""A JobSet's family as the explainer reads it: the child Jobs of the current restart attempt, each
with its own pods and the events about it, and whatever earlier attempts left behind.

The JobSet controller names child Jobs `<jobset>-<replicatedJob>-<index>` and labels them and their
pods (kubernetes-sigs/jobset `pkg/controllers/jobset_controller.go`, `labelAndAnnotateObject`). A
restart deletes the Jobs of older attempts and recreates them under the same names, so Jobs are told
apart by their `restart-attempt` label, pods by their owner's uid and events by the uid they carry —
never by name alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from diagnosis import events
from diagnosis.jobset import admission
from diagnosis.jobset.keys import (
    COMPLETION_INDEX_KEY,
    EXCLUSIVE_TOPOLOGY_KEY,
    JOB_INDEX_LABEL,
    NODE_SELECTOR_STRATEGY_KEY,
    REPLICATED_JOB_LABEL,
    RESTART_ATTEMPT_LABEL,
)
from diagnosis.model import JobSetVerdict
from diagnosis.objects import (
    Object,
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
)
from diagnosis.objects import annotations as annotations_of  # the bare name is the __future__ import
from diagnosis.relations import JOBSET_NAME_LABEL, is_terminal, owned_by
from diagnosis.views import JobSetView


def integer(value: object) -> int | None:
    """A count as JSON carries it (an int, or a label's digits), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        return int(value)
    return None


def completion_index(pod: Object) -> str:
    return annotations_of(pod).get(COMPLETION_INDEX_KEY) or labels(pod).get(COMPLETION_INDEX_KEY, "")


def is_live(pod: Object) -> bool:
    """The pod counts for its Job: not finished and not being deleted (the Job controller replaces
    terminating pods, and JobSet's webhook ignores them when it looks for a leader)."""
    return not is_terminal(pod) and not meta(pod).get("deletionTimestamp")


def phase(pod: Object) -> str:
    return text(status(pod).get("phase")) or "Unknown"


def topology_key(job: Object) -> str:
    """The child Job's node label of exclusive placement, or "" when it is not placed exclusively (the
    node-selector strategy makes JobSet's pod webhooks step aside)."""
    keys = {**annotations_of(mapping(spec(job).get("template"))), **annotations_of(job)}
    return "" if NODE_SELECTOR_STRATEGY_KEY in keys else keys.get(EXCLUSIVE_TOPOLOGY_KEY, "")


@dataclass(frozen=True)
class Child:
    """One child Job of the current attempt, its pods (any phase) and the events about it."""

    job: Object
    pods: tuple[Object, ...]
    events: tuple[Object, ...]
    """Newest first."""

    @property
    def name(self) -> str:
        return name(self.job)

    @property
    def replicated_job(self) -> str:
        return labels(self.job).get(REPLICATED_JOB_LABEL, "")

    @property
    def index(self) -> str:
        return labels(self.job).get(JOB_INDEX_LABEL, "")

    @cached_property
    def live(self) -> tuple[Object, ...]:
        return tuple(p for p in self.pods if is_live(p))

    @cached_property
    def leaders(self) -> tuple[Object, ...]:
        """Every pod of index 0, any phase: the webhook's leader candidates (JobSet's
        `leaderPodForFollower`, `pkg/webhooks/pod_webhook.go`, finds the leader by name among them)."""
        return tuple(p for p in self.pods if completion_index(p) == "0")

    @property
    def leader(self) -> Object | None:
        """The live leader, if there is one."""
        return next((p for p in self.leaders if is_live(p)), None)

    @property
    def finished(self) -> bool:
        return condition_true(self.job, "Complete") or condition_true(self.job, "Failed")

    @property
    def wanted(self) -> int:
        """How many pods the Job controller wants running now: min(parallelism, completions left)."""
        job_spec = spec(self.job)
        if self.finished or job_spec.get("suspend") is True:
            return 0
        parallelism = integer(job_spec.get("parallelism"))
        parallelism = 1 if parallelism is None else parallelism
        completions = integer(job_spec.get("completions"))
        left = (parallelism if completions is None else completions) - (
            integer(status(self.job).get("succeeded")) or 0
        )
        return max(0, min(parallelism, left))

    @property
    def missing(self) -> int:
        """Pods the Job wants but does not have: the ones whose creation is failing or pending."""
        return max(0, self.wanted - len(self.live))

    @property
    def topology_key(self) -> str:
        return topology_key(self.job)

    @cached_property
    def failed_creates(self) -> tuple[Object, ...]:
        """The Job controller's refusals to create this Job's pods, newest first."""
        return tuple(e for e in self.events if events.reason(e) == "FailedCreate")


@dataclass(frozen=True)
class Refusal:
    """A create the API server refused: a child's pod (a FailedCreate event on the Job) or a child
    Job (a JobCreationFailed event on the JobSet), and the admission rule its message matches."""

    event: Object
    found: admission.Match | None
    child: Child | None
    """The Job whose pod was refused; None for a refused Job."""

    @property
    def verdict(self) -> JobSetVerdict:
        """What the message implies; a refusal no rule knows is still a refusal."""
        return self.found.rule.verdict if self.found else JobSetVerdict.CREATE_REJECTED

    @property
    def message(self) -> str:
        return admission.excerpt(events.message(self.event))

    @property
    def denial(self) -> str:
        """The refusal without the API server's wrapping (`admission webhook "…" denied the request:`)."""
        return self.message.rpartition("denied the request: ")[2]

    @property
    def what(self) -> str:
        """What could not be created: the pods of a child Job, or a child Job."""
        if self.child is not None:
            return f"the pods of child Job {self.child.name}"
        return f"child Job {_refused_job(self.event) or '?'}"

    def __str__(self) -> str:
        where = (
            f"Child Job {self.child.name} has {len(self.child.live)} of {self.child.wanted} pods"
            if self.child
            else "The JobSet controller could not create a child Job"
        )
        return f"{where}: {events.reason(self.event)} {stamp(self.event)}: `{self.message}`"


def stamp(event: Object) -> str:
    """`(×N, last 2026-11-29T08:41:07Z)` for an event, as evidence."""
    last = events.last_time(event)
    return f"(×{events.count(event)}, last {last.strftime('%Y-%m-%dT%H:%M:%SZ') if last else 'time unknown'})"


@dataclass(frozen=True)
class Family:
    """The view, sorted into the JobSet's current children and what earlier attempts left."""

    view: JobSetView
    restarts: int
    children: tuple[Child, ...]
    """Child Jobs of the current attempt, in spec order of their replicatedJob, then by index."""
    earlier_jobs: tuple[Object, ...]
    """Jobs of earlier restart attempts that still exist (being deleted)."""
    earlier_pods: tuple[Object, ...]
    """Pods of earlier restart attempts that still exist (being deleted)."""
    events_by_name: Mapping[str, tuple[Object, ...]]
    """The view's events by the name of the object they are about (a JobSet of a thousand pods is
    read in one pass, not one per object)."""

    @property
    def jobset(self) -> Object:
        return self.view.jobset

    @property
    def name(self) -> str:
        return name(self.view.jobset)

    @property
    def namespace(self) -> str:
        return namespace(self.view.jobset)

    @cached_property
    def jobset_events(self) -> tuple[Object, ...]:
        return self.events_about(self.view.jobset)

    def events_about(self, obj: Object) -> tuple[Object, ...]:
        """The events about `obj`, newest first."""
        return _about(self.events_by_name, obj)

    def node(self, node: str) -> Object | None:
        return self._nodes.get(node) if node else None

    @cached_property
    def _nodes(self) -> Mapping[str, Object]:
        return {name(n): n for n in reversed(self.view.nodes)}

    @cached_property
    def replicated_jobs(self) -> tuple[tuple[str, int], ...]:
        """(name, replicas) of each replicatedJob, in spec order."""
        return _replicated_jobs(self.view.jobset)

    @cached_property
    def current_pods(self) -> tuple[Object, ...]:
        return tuple(p for child in self.children for p in child.pods)

    @cached_property
    def refusals(self) -> tuple[Refusal, ...]:
        """The refused creates that still matter: those of children short of pods (a Job that has
        all its pods is past them), then those of child Jobs that do not exist."""
        of_pods = (
            Refusal(event, admission.match(events.message(event)), child)
            for child in self.children
            if child.missing
            for event in child.failed_creates
        )
        present = {child.name for child in self.children}
        of_jobs = (
            Refusal(event, admission.match(events.message(event)), None)
            for event in self.jobset_events
            if events.reason(event) == "JobCreationFailed" and _refused_job(event) not in present
        )
        return (*of_pods, *of_jobs)

    @classmethod
    def of(cls, view: JobSetView) -> Family:
        jobset = view.jobset
        restarts = integer(status(jobset).get("restarts")) or 0
        jobs = [j for j in _members(view.jobs, jobset) if _attempt(j) in (None, restarts)]
        pods = _members(view.pods, jobset)
        order = {rj: i for i, (rj, _) in enumerate(_replicated_jobs(jobset))}

        def rank(job: Object) -> tuple[int, int, str]:
            index = integer(labels(job).get(JOB_INDEX_LABEL))
            return order.get(labels(job).get(REPLICATED_JOB_LABEL, ""), len(order)), index or 0, name(job)

        by_owner = _index(pods, _owner_names)
        by_name = _index(view.events, lambda e: (text(events.regarding(e).get("name")),))
        children = tuple(
            Child(
                job,
                tuple(sorted((p for p in by_owner.get(name(job), ()) if owned_by(p, job)), key=_pod_rank)),
                _about(by_name, job),
            )
            for job in sorted(jobs, key=rank)
        )
        earlier = _earlier(view.jobs, jobset, restarts), _earlier(pods, jobset, restarts)
        return cls(view, restarts, children, *earlier, by_name)


def _replicated_jobs(jobset: Object) -> tuple[tuple[str, int], ...]:
    found: list[tuple[str, int]] = []
    for entry in map(mapping, sequence(spec(jobset).get("replicatedJobs"))):
        replicas = integer(entry.get("replicas"))
        found.append((text(entry.get("name")), 1 if replicas is None else replicas))
    return tuple(found)


def _index(
    objects: Iterable[Object], keys: Callable[[Object], Iterable[str]]
) -> dict[str, tuple[Object, ...]]:
    """`objects` grouped under each of their keys, in their order."""
    found: dict[str, list[Object]] = {}
    for obj in objects:
        for key in dict.fromkeys(keys(obj)):
            found.setdefault(key, []).append(obj)
    return {key: tuple(group) for key, group in found.items()}


def _owner_names(obj: Object) -> Iterable[str]:
    return (text(mapping(ref).get("name")) for ref in sequence(meta(obj).get("ownerReferences")))


def _about(by_name: Mapping[str, tuple[Object, ...]], obj: Object) -> tuple[Object, ...]:
    """The events about `obj`, newest first."""
    return tuple(events.newest_first(e for e in by_name.get(name(obj), ()) if events.is_about(e, obj)))


def _members(objects: Iterable[Object], jobset: Object) -> list[Object]:
    """The objects the JobSet controller made for this JobSet (its name label, same namespace)."""
    return [
        o
        for o in objects
        if labels(o).get(JOBSET_NAME_LABEL) == name(jobset) and namespace(o) == namespace(jobset)
    ]


def _attempt(obj: Object) -> int | None:
    return integer(labels(obj).get(RESTART_ATTEMPT_LABEL))


def _earlier(objects: Iterable[Object], jobset: Object, restarts: int) -> tuple[Object, ...]:
    return tuple(
        o for o in _members(objects, jobset) if (attempt := _attempt(o)) is not None and attempt < restarts
    )


def _pod_rank(pod: Object) -> tuple[int, str]:
    index = integer(completion_index(pod))
    return (-1 if index is None else index), name(pod)


_REFUSED_JOB = re.compile(r'job "([^"]{1,253})" creation failed')


def _refused_job(event: Object) -> str:
    found = _REFUSED_JOB.search(events.message(event))
    return found.group(1) if found else ""
