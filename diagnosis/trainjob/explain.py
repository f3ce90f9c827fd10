"""Why a TrainJob is stuck: `/jobset why NS NAME` when NAME is a TrainJob (Kubeflow Trainer v2.3.0).

The Trainer controller builds a JobSet named as the TrainJob from its runtime (a TrainingRuntime or
ClusterTrainingRuntime) and copies the JobSet's terminal conditions back. Its own states hide in
places its status does not show: a JobSet that could not be built or applied leaves only a
`TrainJobResourcesCreationFailed` event (the TrainJob has no condition for it, kubeflow/trainer#2351),
and a `Suspended` state column outlives the resume (#3666). So `CHECKS` reads the TrainJob's own states
first, in the order of the TrainJob table of ARCHITECTURE.md; past them, its JobSet's verdict is the
answer, with the runtime and what the TrainJob asked of it in front.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from diagnosis import events
from diagnosis.commands import collect, describe, events_about, kubectl, merge_patch
from diagnosis.gang import api_of, refusals, weigh
from diagnosis.jobset import commands as jobset_kubectl
from diagnosis.jobset.explain import explain as explain_jobset
from diagnosis.jobset.family import is_live
from diagnosis.jobset.keys import QUEUE_NAME_LABEL, REPLICATED_JOB_LABEL
from diagnosis.model import CAUSE_CHARS, Command, Diagnosis, Fix, JobSetVerdict, TrainJobVerdict, clipped
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
    labels,
    mapping,
    name,
    namespace,
    sequence,
    spec,
    status,
    text,
)
from diagnosis.views import TrainJobView

__all__ = ["explain"]

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
TRAINER_SYSTEM = "kubeflow-system"
CREATION_FAILED = "TrainJobResourcesCreationFailed"
_TRAINER_CONTROLLER = "trainer.kubeflow.org/trainjob-controller"
TRAINER_RELEASE = "2.3.0"
DEFAULT_RUNTIMES = (
    f"https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref=v{TRAINER_RELEASE}"
)
"""The kustomization of Trainer's default ClusterTrainingRuntimes (`manifests/overlays/runtimes`,
kubeflow/trainer@v2.3.0; `manifests/base/runtimes` lists them), as its install guide applies it."""
_BLOCKING = frozenset(JobSetVerdict) - {JobSetVerdict.STARTING, JobSetVerdict.RUNNING}
"""JobSet verdicts that name a block of their own: an initializer that cannot run is that, not a wait."""


def runtime_ref(trainjob: Object) -> tuple[str, str]:
    """(kind, name) of the TrainJob's runtime, as the webhook defaults `runtimeRef`: a
    `ClusterTrainingRuntime`, or a `TrainingRuntime` of the TrainJob's namespace."""
    ref = mapping(spec(trainjob).get("runtimeRef"))
    return text(ref.get("kind")) or "ClusterTrainingRuntime", text(ref.get("name"))


def gang_group(runtime: Object | None) -> str:
    """The API group of the PodGroup the runtime's `podGroupPolicy` makes, or ""."""
    policy = mapping(spec(runtime).get("podGroupPolicy")) if runtime is not None else {}
    if "coscheduling" in policy:
        return "scheduling.x-k8s.io"
    return "scheduling.volcano.sh" if "volcano" in policy else ""


@dataclass(frozen=True)
class TrainJob:
    """The view, with what several checks read of it."""

    view: TrainJobView

    @property
    def obj(self) -> Object:
        return self.view.trainjob

    @property
    def name(self) -> str:
        return name(self.obj)

    @property
    def namespace(self) -> str:
        return namespace(self.obj)

    @property
    def runtime_ref(self) -> tuple[str, str]:
        return runtime_ref(self.obj)

    @cached_property
    def failures(self) -> tuple[Object, ...]:
        """The controller's `TrainJobResourcesCreationFailed` events, newest first."""
        return tuple(e for e in events.newest_first(self.view.events) if events.reason(e) == CREATION_FAILED)

    @cached_property
    def jobset(self) -> Diagnosis | None:
        return explain_jobset(self.view.jobset) if self.view.jobset is not None else None


Check = Callable[[TrainJob], Diagnosis | None]


def explain(view: TrainJobView) -> Diagnosis:
    """The TrainJob's own verdict, else its JobSet's, with the runtime in front."""
    job = TrainJob(view)
    for check in CHECKS:
        found = check(job)
        if found is not None:
            return replace(found, checked_at=view.now)
    assert job.jobset is not None  # `jobset_not_created` answers a TrainJob without one
    found = job.jobset
    return replace(
        found,
        summary=f"TrainJob {job.name} ({_runtime_name(job)}): {found.summary}",
        evidence=(*_asked(job), *found.evidence),
        next_commands=collect(*found.next_commands, *_basics(job)),
        checked_at=view.now,
    )


def _fix(summary: str, changed: str, command: Command | None) -> Fix | None:
    """A change to the object `changed` (`kind/[namespace/]name`) that removes the TrainJob's cause,
    made by `command` (None: no fix)."""
    return Fix(summary, None, (), (command,), (changed,)) if command is not None else None


def _runtime_name(job: TrainJob) -> str:
    kind, runtime = job.runtime_ref
    return f"{kind} {runtime}"


def _asked(job: TrainJob) -> list[str]:
    """What the TrainJob asked, and of which runtime: the evidence every answer starts with."""
    trainer = mapping(spec(job.obj).get("trainer"))
    asks = [
        f"numNodes {trainer['numNodes']}" if "numNodes" in trainer else "",
        f"resourcesPerNode {_limits(trainer)}" if trainer.get("resourcesPerNode") else "",
        f"image {text(trainer.get('image'))}" if trainer.get("image") else "",
    ]
    lines = [
        f"TrainJob {job.name} runs on {_runtime_name(job)}"
        + (f"; it asks {', '.join(a for a in asks if a)}." if any(asks) else "; it overrides nothing.")
    ]
    runtime = job.view.runtime
    if runtime is None:
        return lines
    runtime_spec = spec(runtime)
    policy = mapping(runtime_spec.get("mlPolicy"))
    kinds = [k for k in ("torch", "mpi", "jax", "xgboost", "flux") if k in policy]
    gang = mapping(runtime_spec.get("podGroupPolicy"))
    steps = [
        text(mapping(rj).get("name"))
        + "".join(
            f" (after {text(mapping(d).get('name'))} {text(mapping(d).get('status'))})"
            for d in sequence(mapping(rj).get("dependsOn"))
        )
        for rj in sequence(mapping(mapping(runtime_spec.get("template")).get("spec")).get("replicatedJobs"))
    ]
    lines.append(
        f"The runtime's mlPolicy: numNodes {policy.get('numNodes', 1)}, {', '.join(kinds) or 'no policy'}; "
        f"gang scheduling: {', '.join(gang) or 'none'}; replicatedJobs: {', '.join(steps) or 'none'}."
    )
    return lines


def _limits(trainer: Mapping[str, Any]) -> str:
    limits = mapping(mapping(trainer.get("resourcesPerNode")).get("limits"))
    return ", ".join(f"{k}={v}" for k, v in sorted(limits.items())) or "(requests only)"


def _basics(job: TrainJob) -> tuple[Command | None, ...]:
    ns, tj = job.namespace, job.name
    kind, runtime = job.runtime_ref
    resource = "trainingruntimes" if kind == "TrainingRuntime" else "clustertrainingruntimes"
    runtime_read = (
        kubectl(
            f"The {kind} {runtime}: what it builds the JobSet from",
            "get",
            f"{resource}.trainer.kubeflow.org",
            runtime,
            *(("-n", ns) if kind == "TrainingRuntime" else ()),
            "-o",
            "yaml",
        )
        if job.view.runtime is not None
        else None
    )
    return (
        describe(TRAINJOBS, ns, tj, "The TrainJob's conditions, jobsStatus and events"),
        runtime_read,
    )


def _condition_line(obj: Object, type_: str) -> str:
    found = mapping(condition(obj, type_))
    return (
        f"Condition {type_}={text(found.get('status'))} {text(found.get('reason'))} since "
        f"{text(found.get('lastTransitionTime')) or '?'}: `{text(found.get('message'))}`."
    )


def _failed(job: TrainJob, reason: str) -> bool:
    failed = condition(job.obj, "Failed")
    return failed is not None and failed.get("status") == "True" and failed.get("reason") == reason


def deadline_exceeded(job: TrainJob) -> Diagnosis | None:
    if not _failed(job, "DeadlineExceeded"):
        return None
    deadline = spec(job.obj).get("activeDeadlineSeconds")
    return Diagnosis(
        verdict=TrainJobVerdict.DEADLINE_EXCEEDED,
        summary=f"TrainJob {job.name} ran past its activeDeadlineSeconds ({deadline} s): Trainer failed it "
        "and deleted its JobSet.",
        evidence=(
            _condition_line(job.obj, "Failed"),
            *_asked(job),
            "The deadline counts from the TrainJob's start, time spent waiting for nodes included; it is "
            "immutable: a new TrainJob with a longer deadline (or none) is the way on.",
        ),
        next_commands=collect(*_basics(job)),
    )


def runtime_unsupported(job: TrainJob) -> Diagnosis | None:
    if not _failed(job, "TrainingRuntimeNotSupported"):
        return None
    ref = mapping(spec(job.obj).get("runtimeRef"))
    return Diagnosis(
        verdict=TrainJobVerdict.RUNTIME_UNSUPPORTED,
        summary=f"TrainJob {job.name} names a runtime kind Trainer does not serve: "
        f"{text(ref.get('kind'))}.{text(ref.get('apiGroup'))}.",
        evidence=(
            _condition_line(job.obj, "Failed"),
            "Only TrainingRuntime and ClusterTrainingRuntime of trainer.kubeflow.org are runtimes; the "
            "webhook refuses any other, so this one was created past it. runtimeRef is immutable.",
        ),
        next_commands=collect(*_basics(job)),
    )


def suspended(job: TrainJob) -> Diagnosis | None:
    if spec(job.obj).get("suspend") is not True:
        return None
    ns = job.namespace
    queue = labels(job.obj).get(QUEUE_NAME_LABEL, "")
    evidence = [
        _condition_line(job.obj, "Suspended") if condition(job.obj, "Suspended") else "spec.suspend is true.",
        *_asked(job),
    ]
    if queue:
        evidence.append(
            f"Kueue queue: label `{QUEUE_NAME_LABEL}={queue}`. Kueue keeps the TrainJob suspended until it "
            "admits its Workload."
        )
    for workload in sorted(job.view.workloads, key=name)[:2]:
        evidence += [
            f"Workload {name(workload)}: {line}"
            for type_ in ("QuotaReserved", "Admitted", "Evicted")
            if condition(workload, type_) is not None and (line := _condition_line(workload, type_))
        ]
        if condition_true(workload, "Admitted"):
            evidence.append(
                "Admitted, yet the TrainJob is still suspended: Kueue could not resume it (kueue#11931; "
                "Kueue needs Trainer ≥ v2.2.0)."
            )
    if queue and not job.view.workloads:
        evidence.append(
            f"No Workload exists for it: is Kueue's trainjob integration enabled, and LocalQueue {queue} "
            f"in {ns}?"
        )
    by_hand = not queue and not job.view.workloads
    if by_hand:
        evidence.append(
            "No Kueue queue label and no Workload: spec.suspend was set by hand or by another tool."
        )
    resume = _fix(
        f"resume TrainJob {job.name} (spec.suspend false): no Kueue queue holds it, so nothing else will",
        f"trainjob/{job.namespace}/{job.name}",
        merge_patch(
            TRAINJOBS,
            job.namespace,
            job.name,
            {"spec": {"suspend": False}},
            "Resume the TrainJob (no Kueue queue or Workload suspends it)",
        )
        if by_hand
        else None,
    )
    return Diagnosis(
        verdict=TrainJobVerdict.SUSPENDED,
        summary=f"TrainJob {job.name} is suspended"
        + (f", waiting in Kueue queue {queue} for admission." if queue else "."),
        evidence=tuple(evidence),
        next_commands=collect(
            jobset_kubectl.workloads(ns) if queue or job.view.workloads else None,
            *(jobset_kubectl.describe_workload(ns, name(w)) for w in job.view.workloads[:1]),
            *(resume.commands if resume is not None else ()),
            *_basics(job),
        ),
        fixes=(resume,) if resume is not None else (),
    )


def _failure_lines(job: TrainJob) -> list[str]:
    return [f"Event {CREATION_FAILED} (×{events.count(e)}): `{events.message(e)}`." for e in job.failures[:2]]


def runtime_missing(job: TrainJob) -> Diagnosis | None:
    if job.view.runtime is not None or job.view.jobset is not None:
        return None
    kind, runtime = job.runtime_ref
    resource = "trainingruntimes" if kind == "TrainingRuntime" else "clustertrainingruntimes"
    create = _fix(
        f"create ClusterTrainingRuntime {runtime} again: Trainer's default runtimes (v{TRAINER_RELEASE}) "
        "if it was one of them, else from where it was defined",
        f"clustertrainingruntime/{runtime}",
        kubectl(
            f"Install Trainer v{TRAINER_RELEASE}'s default ClusterTrainingRuntimes (creates {runtime} if it "
            "is one of them)",
            "apply",
            "--server-side",
            "-k",
            DEFAULT_RUNTIMES,
            changes=True,
        )
        if kind == "ClusterTrainingRuntime"
        else None,
    )
    return Diagnosis(
        verdict=TrainJobVerdict.RUNTIME_MISSING,
        summary=f"TrainJob {job.name} names {kind} {runtime}, which does not exist: its JobSet cannot be "
        "built.",
        evidence=(
            *_asked(job),
            *_failure_lines(job),
            f"The validating webhook refuses a TrainJob whose runtime is missing (`specified "
            f"{kind[0].lower()}{kind[1:]} must be created before the TrainJob is created`): this one was "
            "deleted afterwards, or the webhook was bypassed. runtimeRef is immutable: create the "
            "runtime again (Trainer ≥ v2.3.0 then snapshots it) or a new TrainJob.",
        ),
        next_commands=collect(
            kubectl(
                f"The {kind}s that exist",
                "get",
                f"{resource}.trainer.kubeflow.org",
                *(("-n", job.namespace) if kind == "TrainingRuntime" else ()),
            ),
            events_about(job.namespace, job.name, f"The events about TrainJob {job.name}"),
            *(create.commands if create is not None else ()),
            *_basics(job),
        ),
        fixes=(create,) if create is not None else (),
    )


def jobset_not_created(job: TrainJob) -> Diagnosis | None:
    if job.view.jobset is not None:
        return None
    managed_by = text(spec(job.obj).get("managedBy"))
    evidence = [*_asked(job), *_failure_lines(job)]
    if managed_by and managed_by != _TRAINER_CONTROLLER:
        evidence.append(f"spec.managedBy is {managed_by}: this cluster's Trainer controller leaves it alone.")
    elif not job.failures:
        evidence.append(
            "No TrainJobResourcesCreationFailed event is left (events expire after an hour): read the "
            f"Trainer controller's log (namespace {TRAINER_SYSTEM}); `JobSet CRDs must be installed in "
            "advance` means JobSet is not installed."
        )
    said = events.message(job.failures[0]) if job.failures else ""
    why = said.removeprefix("TrainJob resources reconciliation failed: ")
    return Diagnosis(
        verdict=TrainJobVerdict.JOBSET_NOT_CREATED,
        summary=clipped(
            f"TrainJob {job.name} has no JobSet: "
            + (f"Trainer could not build or apply it ({why})." if why else "Trainer has not created it."),
            CAUSE_CHARS,
        ),
        evidence=tuple(evidence),
        next_commands=collect(
            events_about(job.namespace, job.name, f"The events about TrainJob {job.name}"),
            kubectl(
                "The Trainer controller's log: why the JobSet was not built",
                "logs",
                "-n",
                TRAINER_SYSTEM,
                "-l",
                "app.kubernetes.io/name=trainer",
                "--tail",
                "200",
            ),
            *_basics(job),
        ),
    )


def _podgroup_lines(job: TrainJob, live: int) -> tuple[list[str], bool]:
    """Evidence about each PodGroup, and whether one can never be met: `minMember` above what the
    dependsOn steps let exist, or `minResources` above what every node read allocates together."""
    lines: list[str] = []
    never = False
    nodes = job.view.jobset.nodes if job.view.jobset is not None else ()
    waiting = _waiting_steps(job)
    for group in job.view.podgroups:
        gang = weigh(group, live, nodes)
        lines += gang.lines
        never = never or bool(gang.short)
        if gang.min_member > live and waiting:
            never = True
            lines.append(
                f"minMember {gang.min_member} counts the pods of every replicatedJob, but "
                f"{', '.join(waiting)} are created only after the steps before them finish (dependsOn): "
                "the pods that exist can never reach minMember."
            )
    return lines, never


def _waiting_steps(job: TrainJob) -> list[str]:
    """replicatedJobs of the JobSet that wait on a dependsOn and have no Job yet."""
    view = job.view.jobset
    if view is None:
        return []
    made = {labels(j).get(REPLICATED_JOB_LABEL) for j in view.jobs}
    return [
        text(mapping(rj).get("name"))
        for rj in sequence(spec(view.jobset).get("replicatedJobs"))
        if mapping(rj).get("dependsOn") and text(mapping(rj).get("name")) not in made
    ]


def gang_unsatisfiable(job: TrainJob) -> Diagnosis | None:
    view = job.view.jobset
    if not job.view.podgroups or view is None:
        return None
    live = sum(1 for p in view.pods if is_live(p))
    lines, never = _podgroup_lines(job, live)
    if not never:
        return None
    said = refusals(view.pods, view.events)
    return Diagnosis(
        verdict=TrainJobVerdict.GANG_UNSATISFIABLE,
        summary=f"TrainJob {job.name}'s gang can never be scheduled: {lines[-1].split(':')[0]}.",
        evidence=(*_asked(job), *lines, *said),
        next_commands=collect(
            *(
                describe(
                    f"podgroups.{api_of(g)}",
                    job.namespace,
                    name(g),
                    "The PodGroup's minMember, minResources and status",
                )
                for g in job.view.podgroups[:1]
            ),
            *jobset_kubectl_basics(job),
        ),
    )


def jobset_kubectl_basics(job: TrainJob) -> tuple[Command | None, ...]:
    return (jobset_kubectl.child_pods(job.namespace, job.name), *_basics(job))


def waiting_initializer(job: TrainJob) -> Diagnosis | None:
    waiting = _waiting_steps(job)
    if not waiting or job.jobset is None or job.jobset.verdict in _BLOCKING:
        return None
    view = job.view.jobset
    assert view is not None
    running = [
        f"Pod {name(p)} ({labels(p).get(REPLICATED_JOB_LABEL, '?')}): {text(status(p).get('phase'))}."
        for p in view.pods
        if is_live(p)
    ][:4]
    return Diagnosis(
        verdict=TrainJobVerdict.WAITING_INITIALIZER,
        summary=f"TrainJob {job.name} waits for its initializers: {', '.join(waiting)} start once the steps "
        "they depend on finish.",
        evidence=(*_asked(job), *job.jobset.evidence[:3], *running),
        next_commands=collect(*jobset_kubectl_basics(job)),
    )


CHECKS: tuple[Check, ...] = (
    # Terminal states of the TrainJob's own: nothing below can change them.
    deadline_exceeded,
    runtime_unsupported,
    # Suspended on purpose (Kueue): no JobSet pods run, by design.
    suspended,
    # Nothing to build the JobSet from.
    runtime_missing,
    # The JobSet was never created: only an event says why.
    jobset_not_created,
    # A gang that can never be met keeps every pod Pending, whatever the JobSet says.
    gang_unsatisfiable,
    # The JobSet waits on a dependsOn step, and nothing blocks that step.
    waiting_initializer,
)
