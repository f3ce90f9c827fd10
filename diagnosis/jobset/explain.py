"""Why a JobSet is stuck or restarting: the `/jobset why` explainer.

One ordered ladder, like kopf's `detect_changing_cause`: `CHECKS` is read top to bottom and the first
check that recognises the JobSet gives the verdict (the JobSet table of ARCHITECTURE.md, in its
order); `running` is what is left. Each check is a pure function of the objects in the view. The
checks on refused creates live in `jobset.creation`, the restart-loop analysis in `restarts`, the GKE
workflow in `gke`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from diagnosis.commands import collect, describe, describe_node, merge_patch
from diagnosis.gang import Gang, api_of, members, refusals, weigh
from diagnosis.jobset import commands as kubectl
from diagnosis.jobset import gke, restarts
from diagnosis.jobset.creation import (
    basics,
    blocked_by,
    create_rejected,
    leader_duplicate,
    leader_pending,
    pod_verdict,
    topology_label_missing,
    triage,
    webhook_unavailable,
)
from diagnosis.jobset.family import Family, integer, is_live, phase
from diagnosis.jobset.keys import QUEUE_NAME_LABEL
from diagnosis.model import (
    CAUSE_CHARS,
    Command,
    Diagnosis,
    Fix,
    Harm,
    JobSetVerdict,
    RestartCause,
    Snippet,
    Started,
    StartState,
    clipped,
)
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
    labels,
    mapping,
    meta,
    name,
    sequence,
    spec,
    status,
    text,
    timestamp,
    utc,
)
from diagnosis.relations import node_name, owned_by
from diagnosis.triage.started import line, started
from diagnosis.views import JobSetView

__all__ = ["explain"]

Check = Callable[[Family], Diagnosis | None]

_FIRST_FAILED = re.compile(r"first failed job: ([a-z0-9.-]{1,253})\)")
_WAITING_STARTED = ("ContainerCreating", "PodInitializing")
_JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"


def explain(view: JobSetView) -> Diagnosis:
    """The verdict on the view's JobSet, with the evidence and the next commands."""
    family = Family.of(view)
    found = next((d for check in CHECKS if (d := check(family)) is not None), None) or running(family)
    weighed = [line for gang in _gangs(view) for line in gang.lines if line not in found.evidence]
    return replace(found, evidence=(*found.evidence, *weighed), checked_at=view.now)


def _gangs(view: JobSetView) -> list[Gang]:
    """Each PodGroup its pods name, against its pods that exist and the nodes read (`diagnosis.gang`):
    a gang holds every pod of it until all it asks can be placed at once."""
    return [
        weigh(group, sum(1 for p in members(group, view.pods) if is_live(p)), view.nodes)
        for group in view.podgroups
    ]


def _most_pods(family: Family) -> int:
    """The pods the JobSet runs at once at most: each replicatedJob's replicas × its Jobs' parallelism."""
    total = 0
    for rj in map(mapping, sequence(spec(family.jobset).get("replicatedJobs"))):
        parallelism = integer(mapping(mapping(rj.get("template")).get("spec")).get("parallelism"))
        total += (integer(rj.get("replicas")) or 1) * (1 if parallelism is None else parallelism)
    return total


def gang_unsatisfiable(family: Family) -> Diagnosis | None:
    """A PodGroup its pods name (scheduler-plugins' coscheduling, where people make the PodGroup and
    label the pods; Volcano) that can never be met: `minResources` above what every node read allocates
    together, or `minMember` above the pods the JobSet ever runs at once (a JobSet scaled down, its
    PodGroup not)."""
    most = _most_pods(family)
    for gang in _gangs(family.view):
        beyond = gang.min_member > most
        if not gang.short and not beyond:
            continue
        group = gang.group
        said = refusals(members(group, family.view.pods), family.view.events)
        why = (
            f"minResources asks more {', '.join(gang.short)} than every node read allocates together"
            if gang.short
            else f"minMember {gang.min_member} is more than the {most} pods it runs at once"
        )
        lower = (
            merge_patch(
                f"podgroups.{api_of(group)}",
                family.namespace,
                name(group),
                {"spec": {"minMember": most}},
                f"Lower the PodGroup's minMember to the {most} pods the JobSet runs",
            )
            if beyond and not gang.short
            else None
        )
        fix = (
            Fix(
                f"lower PodGroup {name(group)}'s minMember to {most}, the pods JobSet {family.name} runs at "
                "once: the gang can then form",
                None,
                (),
                (lower,),
                (f"podgroup/{family.namespace}/{name(group)}",),
            )
            if lower is not None
            else None
        )
        return Diagnosis(
            verdict=JobSetVerdict.GANG_UNSATISFIABLE,
            summary=f"The gang of JobSet {family.name} (PodGroup {name(group)}) can never be scheduled: "
            f"{why}.",
            evidence=(
                *gang.lines,
                *(
                    [
                        f"The JobSet runs at most {most} pods at once (replicas × parallelism of its "
                        f"replicatedJobs): minMember {gang.min_member} is never reached, so the scheduler "
                        "places none of them."
                    ]
                    if beyond
                    else []
                ),
                *said,
            ),
            next_commands=collect(
                describe(
                    f"podgroups.{api_of(group)}",
                    family.namespace,
                    name(group),
                    "The PodGroup's minMember, minResources and status",
                ),
                lower,
                *basics(family),
            ),
            fixes=(fix,) if fix is not None else (),
        )
    return None


def _condition_line(obj: Object, type_: str) -> str:
    """`Type=Status Reason (since T): message` of a condition, or ""."""
    found = condition(obj, type_)
    if found is None:
        return ""
    since = text(found.get("lastTransitionTime"))
    message = text(found.get("message"))
    return (
        f"Condition {type_}={text(found.get('status'))} {text(found.get('reason'))}".rstrip()
        + (f" since {since}" if since else "")
        + (f": `{message}`" if message else "")
        + "."
    )


def _replicated_status(family: Family) -> list[str]:
    """One line per replicatedJob from `status.replicatedJobsStatus` (counts of child Jobs)."""
    lines = []
    for entry in map(mapping, sequence(status(family.jobset).get("replicatedJobsStatus"))):
        counts = ", ".join(f"{key} {entry.get(key, 0)}" for key in ("ready", "active", "succeeded", "failed"))
        lines.append(f"replicatedJob {text(entry.get('name'))}: Jobs {counts}.")
    return lines


def _finished(family: Family, state: str) -> bool:
    return condition_true(family.jobset, state) or status(family.jobset).get("terminalState") == state


def completed(family: Family) -> Diagnosis | None:
    if not _finished(family, "Completed"):
        return None
    evidence = [
        _condition_line(family.jobset, "Completed") or "status.terminalState is Completed.",
        *_replicated_status(family),
        *([f"It needed {family.restarts} restarts on the way."] if family.restarts else []),
    ]
    return Diagnosis(
        verdict=JobSetVerdict.COMPLETED,
        summary=f"JobSet {family.name} completed: every child Job it needed succeeded.",
        evidence=tuple(evidence),
        next_commands=collect(*basics(family)),
    )


def failed(family: Family) -> Diagnosis | None:
    if not _finished(family, "Failed"):
        return None
    jobset = family.jobset
    reason = text(mapping(condition(jobset, "Failed")).get("reason"))
    evidence = [_condition_line(jobset, "Failed") or "status.terminalState is Failed."]
    evidence.append(_policy_line(family, reason))
    job = _first_failed_job(family)
    commands: list[Command | None] = []
    ended: list[restarts.Exit] = []
    if job is not None:
        evidence.append(
            f"First failed Job: {name(job)} — "
            + (_condition_line(job, "Failed") or "no Failed condition recorded on it.")
        )
        pods = [p for p in family.view.pods if owned_by(p, job) and phase(p) == "Failed"]
        ended = [e for p in pods for e in restarts.exits(p)]
        evidence += [f"Why: {e}." for e in ended[:3]]
        evidence += [
            f"Why: pod {name(p)} ended by {restarts.disruption(p)}." for p in pods if restarts.disruption(p)
        ][:2]
        if ended:
            commands.append(
                kubectl.logs(family.namespace, name(ended[0].pod), ended[0].container, ended[0].running_again)
            )
        commands.append(describe("job", family.namespace, name(job), f"Child Job {name(job)}: why it failed"))
    if reason == "ReachedMaxRestarts":
        finding = restarts.cause(family)
        evidence += [f"What ended the attempts ({finding.cause}): {finding.evidence[0]}"]
    # A failed JobSet stays failed: what its container said is fixed in the spec it is created from.
    fixes = (_exit_fix(family, ended[0]),) if ended else ()
    return Diagnosis(
        verdict=JobSetVerdict.FAILED,
        summary=clipped(
            f"JobSet {family.name} failed ({reason or 'terminal state Failed'})"
            + (f": child Job {name(job)} failed first" if job is not None else "")
            + (f": `{ended[0].container}` {ended[0].said}." if ended and ended[0].message else "."),
            CAUSE_CHARS,
        ),
        evidence=tuple(evidence),
        next_commands=collect(
            *commands, kubectl.events_of(family.namespace, family.name, "JobSet"), *basics(family)
        ),
        fixes=fixes,
    )


SAID = 90
"""Characters of a container's own words quoted in a fix's one line (the evidence quotes them whole)."""


def _exit_fix(family: Family, ended: restarts.Exit) -> Fix:
    """Fix what the failing container says, in the JobSet's pod template: its log first, then how
    the pod ended. An OOMKilled container needs a higher memory limit, whatever it logged."""
    ns, pod = family.namespace, name(ended.pod)
    if ended.reason == "OOMKilled":
        summary = (
            f"raise the memory limit of container {ended.container} in the JobSet's template: "
            f"it was OOMKilled (exit {ended.code}) in pod {pod}"
        )
    else:
        said = ended.message if len(ended.message) <= SAID else ended.message[: SAID - 1] + "…"
        summary = f"fix what container {ended.container} of pod {pod} says: exit {ended.code} " + (
            f'"{said}"' if said else f"({ended.reason or 'no reason given'})"
        )
    return _read_fix(family, summary, kubectl.logs(ns, pod, ended.container, ended.running_again), ended.pod)


def _read_fix(family: Family, summary: str, logs: Command | None, pod: Object) -> Fix:
    """A fix made in the JobSet's own spec, shown by the commands that say what to change."""
    ns = family.namespace
    commands = collect(logs, describe("pod", ns, name(pod), f"Pod {name(pod)}: how it ended"))
    return Fix(summary, None, (), commands, (f"jobset/{ns}/{family.name}",))


def _policy_line(family: Family, reason: str) -> str:
    policy = spec(family.jobset).get("failurePolicy")
    if not isinstance(policy, Mapping):
        return (
            "The JobSet has no failurePolicy: the first failed child Job fails the whole JobSet, so no "
            "restart was ever possible (set spec.failurePolicy.maxRestarts to allow restarts)."
        )
    counted = status(family.jobset).get("restartsCountTowardsMax", family.restarts)
    line = (
        f"failurePolicy: maxRestarts {policy.get('maxRestarts', 0)}; "
        f"restarts {family.restarts} ({counted} counted)."
    )
    if reason == "ReachedMaxRestarts":
        return line + " The restarts were used up."
    if reason == "FailJobSetFailurePolicyAction":
        return line + " A failurePolicy rule with action FailJobSet matched the failed Job."
    return line


def _first_failed_job(family: Family) -> Object | None:
    """The Job the Failed condition names, else the earliest child Job with Failed=True."""
    said = _FIRST_FAILED.search(text(mapping(condition(family.jobset, "Failed")).get("message")))
    jobs = family.view.jobs
    named = [j for j in jobs if said and name(j) == said.group(1)]
    failed_jobs = sorted(
        (j for j in named or jobs if condition_true(j, "Failed")),
        key=lambda j: text(mapping(condition(j, "Failed")).get("lastTransitionTime")),
    )
    return failed_jobs[0] if failed_jobs else (named[0] if named else None)


def suspended(family: Family) -> Diagnosis | None:
    if spec(family.jobset).get("suspend") is not True:
        return None
    ns = family.namespace
    queue = labels(family.jobset).get(QUEUE_NAME_LABEL, "")
    workloads = sorted(family.view.workloads, key=name)
    evidence = [_condition_line(family.jobset, "Suspended") or "spec.suspend is true."]
    if queue:
        evidence.append(
            f"Kueue queue: label `{QUEUE_NAME_LABEL}={queue}`. Kueue keeps the JobSet suspended until it "
            "admits its Workload (quota in the ClusterQueue behind that LocalQueue)."
        )
    managed_by = text(spec(family.jobset).get("managedBy"))
    if managed_by and managed_by != _JOBSET_CONTROLLER:
        evidence.append(f"spec.managedBy is {managed_by}: this cluster's JobSet controller leaves it alone.")
    for workload in workloads[:3]:
        evidence.append(f"Workload {name(workload)} (queue {text(spec(workload).get('queueName')) or '?'}):")
        evidence += [
            f"  {line}"
            for type_ in ("QuotaReserved", "Admitted", "Evicted", "Preempted", "Requeued")
            if (line := _condition_line(workload, type_))
        ]
        if condition_true(workload, "Admitted"):
            evidence.append(
                "  Admitted, yet the JobSet is still suspended: Kueue could not unsuspend it (see the "
                "Workload's events; kueue#3349 and jobset#553 were version mismatches)."
            )
    if not workloads and queue:
        evidence.append(
            "No Workload exists for it: Kueue has not picked it up (is Kueue's jobset integration enabled, "
            f"and does LocalQueue {queue} exist in {ns}?)."
        )
    held_by_hand = not queue and not workloads
    if held_by_hand:
        evidence.append(
            "No Kueue queue label and no Workload: spec.suspend was set by hand or by another "
            "controller, and nothing will resume the JobSet on its own."
        )
    return Diagnosis(
        verdict=JobSetVerdict.SUSPENDED,
        summary=f"JobSet {family.name} is suspended"
        + (f", waiting in Kueue queue {queue} for admission." if queue else "."),
        evidence=tuple(evidence),
        next_commands=collect(
            None if held_by_hand else kubectl.workloads(ns),
            *(kubectl.describe_workload(ns, name(w)) for w in workloads[:2]),
            kubectl.resume(ns, family.name) if held_by_hand else None,
            *basics(family),
        ),
    )


def restarting(family: Family) -> Diagnosis | None:
    loop = restarts.loop(family)
    if loop is None:
        return None
    ns = family.namespace
    finding = restarts.cause(family)
    evidence = [*loop.signs, *finding.evidence]
    # An application failure's logs come first: the failing container says why.
    logs = _failure_logs(family, finding) if finding.cause is RestartCause.APP_FAILURE else []
    commands: list[Command | None] = [*logs, kubectl.events_of(ns, family.name, "JobSet")]
    quoted = next((e for p in finding.pods for e in restarts.exits(p) if e.message), None)
    commands += [describe("pod", ns, name(p), f"Pod {name(p)}: how it ended") for p in finding.pods[:1]]
    isolate = [fix for n in finding.nodes[:2] if (fix := _isolate_fix(n, n in finding.repeat_nodes))]
    commands = [*(c for fix in isolate for c in fix.commands), *commands]
    commands += [describe_node(n, f"Node {n}: conditions and events") for n in finding.nodes[:2]]
    snippets: tuple[Snippet, ...] = ()
    if gke.is_gke(family.view.nodes):
        evidence += _gke_lines(family, finding)
        coordinator_pod = _coordinator_prefix(family)
        cluster = gke.cluster_name(family.view.nodes)
        snippets = gke.restart_snippets(
            cluster[0] if cluster else None, ns, family.name, coordinator_pod, loop.last_restart
        )
    failing = quoted or next((e for p in finding.pods for e in restarts.exits(p)), None)
    app = finding.cause is RestartCause.APP_FAILURE and failing is not None
    exits = [_exit_fix(family, failing)] if app and failing is not None else []
    fixes = (*exits, *isolate)
    return Diagnosis(
        verdict=JobSetVerdict.RESTARTING,
        summary=clipped(
            f"JobSet {family.name} keeps restarting ({_restarts_of_max(family)})"
            + (f": `{quoted.container}` {quoted.said}." if quoted is not None else "."),
            CAUSE_CHARS,
        ),
        evidence=tuple(evidence),
        next_commands=collect(*commands, *basics(family)),
        snippets=snippets,
        cause=finding.cause,
        fixes=fixes,
    )


def _isolate_fix(node: str, repeated: bool) -> Fix | None:
    """A node that failed the JobSet's pods, taken out of service: the next attempt lands elsewhere.
    Draining it evicts every other pod there too."""
    commands = collect(*kubectl.isolate_node(node, repeated))
    if not commands:
        return None
    why = "it failed pods of two or more attempts" if repeated else "it failed the attempt's pods"
    return Fix(
        f"take node {node} out of service ({why}): cordon it, then drain it, and the next attempt "
        "lands on other nodes",
        None,
        (),
        commands,
        (f"node/{node}",),
        Harm.OTHERS,
    )


def _restarts_of_max(family: Family) -> str:
    """`restarts 3 of maxRestarts 10`: how many of its restarts the JobSet has used (those that count
    toward the limit, `status.restartsCountTowardsMax`, where the controller reports it)."""
    policy = mapping(spec(family.jobset).get("failurePolicy"))
    counted = integer(status(family.jobset).get("restartsCountTowardsMax"))
    used = family.restarts if counted is None else counted
    limit = integer(policy.get("maxRestarts")) or 0
    return f"restarts {used} of maxRestarts {limit}" + (
        f", {family.restarts} in all" if used != family.restarts else ""
    )


def _failure_logs(family: Family, finding: restarts.Finding) -> list[Command | None]:
    """The logs to read for an application failure: the coordinator's first (its first error usually
    explains the others), else the failed containers'."""
    ns = family.namespace
    lead = restarts.coordinator(family)
    if lead is None:
        failing = [e for p in finding.pods for e in restarts.exits(p)]
        return [kubectl.logs(ns, name(e.pod), e.container, e.running_again) for e in failing[:2]]
    failing = list(restarts.exits(lead))
    if failing:
        return [kubectl.logs(ns, name(lead), e.container, e.running_again) for e in failing[:1]]
    containers = sequence(spec(lead).get("containers"))
    first = text(mapping(containers[0]).get("name")) if containers else ""
    return [kubectl.logs(ns, name(lead), first, False)]


def _gke_lines(family: Family, finding: restarts.Finding) -> list[str]:
    cluster = gke.cluster_name(family.view.nodes)
    lines = [
        f"GKE cluster `{cluster[0]}`, read from node {cluster[1]}'s name (GKE shortens long names: check it)."
        if cluster
        else "GKE: the cluster's name is not in its nodes' names, so the monitoring queries are left out."
    ]
    if finding.cause in (RestartCause.NODE_PREEMPTION, RestartCause.POD_PREEMPTION):
        lines.append(gke.REMEDY_CAPACITY)
    if finding.cause is RestartCause.NODE_FAILURE:
        lines.append(gke.REMEDY_HOST)
    return lines


def _coordinator_prefix(family: Family) -> str:
    """`<jobset>-<replicatedJob>-<jobIndex>-<podIndex>-`: the name every attempt's coordinator pod
    starts with (`spec.coordinator`, else worker 0 of the first replicatedJob's Job 0)."""
    wanted = mapping(spec(family.jobset).get("coordinator"))
    first = family.replicated_jobs[0][0] if family.replicated_jobs else ""
    rj = text(wanted.get("replicatedJob")) or first
    job_index, pod_index = integer(wanted.get("jobIndex")) or 0, integer(wanted.get("podIndex")) or 0
    return f"{family.name}-{rj}-{job_index}-{pod_index}-"


def _unschedulable(pod: Object) -> bool:
    """The scheduler tried and could not place the pod, or gates keep it from trying."""
    scheduled = condition(pod, "PodScheduled")
    tried = scheduled is not None and scheduled.get("status") == "False"
    return not node_name(pod) and (tried or bool(sequence(spec(pod).get("schedulingGates"))))


def pods_pending(family: Family) -> Diagnosis | None:
    pending = [p for p in family.current_pods if is_live(p) and _unschedulable(p)]
    if not pending:
        return None
    pod = pending[0]
    found = triage(family, pod)
    shown = ", ".join(name(p) for p in pending[:5]) + (" …" if len(pending) > 5 else "")
    evidence = [
        f"{len(pending)} of the JobSet's {sum(1 for p in family.current_pods if is_live(p))} live pods are "
        f"Pending and unschedulable: {shown}.",
        f"Triage of {name(pod)} ({found.verdict}): {found.summary}",
        *found.evidence,
    ]
    return Diagnosis(
        verdict=JobSetVerdict.PODS_PENDING,
        summary=f"{len(pending)} pods of JobSet {family.name} cannot be scheduled; "
        f"{name(pod)}: {found.verdict}.",
        evidence=tuple(evidence),
        next_commands=collect(*found.next_commands, *basics(family)),
        snippets=found.snippets,
        pod_verdict=pod_verdict(found),
        **blocked_by(found),
    )


def starting(family: Family) -> Diagnosis | None:
    failing = _not_starting(family)
    reasons = [*_missing_jobs(family), *_pods_coming(family)]
    if not reasons:
        return None
    commands: list[Command | None] = []
    fixes: tuple[Fix, ...] = ()
    if failing is not None:
        # A placed pod the kubelet or its app keeps from running is the cause, whatever else is on its way.
        pod, seen = failing
        who = f"container {seen.container} " if seen.container else ""
        reasons[:0] = [
            f"Pod {name(pod)} on {node_name(pod)} does not start: {who}{seen.reason or 'not Ready'}.",
            f"Why: {line(seen)}.",
        ]
        fixes = _start_fixes(family, pod)
        commands += [c for fix in fixes[:1] for c in fix.commands]
    if not family.children:
        commands += kubectl.webhook_pods(kubectl.JOBSET_SYSTEM)
    return Diagnosis(
        verdict=JobSetVerdict.STARTING,
        summary=f"JobSet {family.name} is starting: {reasons[0][0].lower() + reasons[0][1:]}",
        evidence=tuple(reasons),
        next_commands=collect(
            *commands, kubectl.events_of(family.namespace, family.name, "JobSet"), *basics(family)
        ),
        fixes=fixes,
    )


def _not_starting(family: Family) -> tuple[Object, Started] | None:
    """The first placed pod of the current attempt that fails to start, and why (`triage.started`)."""
    for pod in family.current_pods:
        if is_live(pod) and node_name(pod):
            seen = started(pod, family.events_about(pod))
            if seen.state is StartState.FAILING:
                return pod, seen
    return None


def _start_fixes(family: Family, pod: Object) -> tuple[Fix, ...]:
    """The pod's own fixes as `/triage` gives them (the image, the device plugin, the node's driver),
    else what its failing container said, its log first."""
    own = triage(family, pod).fixes
    ended = restarts.exits(pod)
    return own or ((_exit_fix(family, ended[0]),) if ended else ())


def _missing_jobs(family: Family) -> list[str]:
    """Child Jobs the spec asks for that do not exist yet, and what holds them back."""
    present = {c.name for c in family.children}
    missing = [
        f"{family.name}-{rj}-{i}"
        for rj, replicas in family.replicated_jobs
        for i in range(min(replicas, 10_000))
        if f"{family.name}-{rj}-{i}" not in present
    ]
    if not missing:
        return []
    lines = [
        f"{len(missing)} child Jobs do not exist yet: "
        f"{', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}."
    ]
    in_order = _condition_line(family.jobset, "StartupPolicyInProgress")
    if condition_true(family.jobset, "StartupPolicyInProgress"):
        lines.append(
            in_order + " The next replicatedJob is created once every Job of the one before is ready."
        )
    for entry in map(mapping, sequence(spec(family.jobset).get("replicatedJobs"))):
        for dependency in map(mapping, sequence(entry.get("dependsOn"))):
            lines.append(
                f"replicatedJob {text(entry.get('name'))} waits for {text(dependency.get('name'))} to be "
                f"{text(dependency.get('status')) or 'Ready'} (dependsOn)."
            )
    managed_by = text(spec(family.jobset).get("managedBy"))
    if not family.children and managed_by and managed_by != _JOBSET_CONTROLLER:
        lines.append(
            f"spec.managedBy is {managed_by}: this cluster's JobSet controller skips the JobSet (MultiKueue "
            "runs it on a worker cluster)."
        )
    elif not family.children:
        lines.append(_age_line(family))
    return lines


def _age_line(family: Family) -> str:
    created = timestamp(meta(family.jobset).get("creationTimestamp"))
    if created is None:
        return "If no Job appears, the JobSet controller is not reconciling: check its pods and log."
    minutes = int((utc(family.view.now) - created).total_seconds() // 60)
    return (
        f"It was created at {created.strftime('%Y-%m-%dT%H:%M:%SZ')} ({minutes} min before this reading): "
        "if no Job appears, the JobSet controller is not reconciling it — check its pods and log "
        "(troubleshooting §2)."
    )


def _pods_coming(family: Family) -> list[str]:
    """Pods still to be created, scheduled, or started."""
    lines = [
        f"Child Job {c.name} has {len(c.live)} of {c.wanted} pods; the Job controller is creating the rest."
        for c in family.children
        if c.missing
    ][:3]
    for pod in (p for p in family.current_pods if is_live(p)):
        waiting = _waiting(pod)
        if phase(pod) == "Pending" and not node_name(pod):
            lines.append(f"Pod {name(pod)} is Pending, not yet tried by the scheduler.")
        elif waiting:
            lines.append(f"Pod {name(pod)} on {node_name(pod) or '?'}: {waiting}.")
        elif phase(pod) == "Running" and not condition_true(pod, "Ready"):
            lines.append(f"Pod {name(pod)} runs on {node_name(pod) or '?'} but is not Ready yet.")
    return lines[:8]


def _waiting(pod: Object) -> str:
    """`container X waiting: Reason (message)` for the first container that is not running."""
    for entry in map(mapping, sequence(status(pod).get("containerStatuses"))):
        waiting = mapping(mapping(entry.get("state")).get("waiting"))
        if waiting:
            why = text(waiting.get("reason")) or "waiting"
            message = text(waiting.get("message"))
            hint = "" if why in _WAITING_STARTED else " — not a normal start; see the pod's events"
            return (
                f"container {text(entry.get('name'))} {why}" + (f" (`{message}`)" if message else "") + hint
            )
    return ""


def running(family: Family) -> Diagnosis:
    """Nothing above applies: every child Job is active or done."""
    live = [p for p in family.current_pods if is_live(p)]
    nodes = {node_name(p) for p in live if node_name(p)}
    evidence = [
        f"{len(family.children)} child Jobs, {len(live)} pods running on {len(nodes)} nodes.",
        *_replicated_status(family),
    ]
    if family.restarts:
        evidence.append(
            f"It restarted {family.restarts} times before; no restart is in progress now "
            + (
                f"({line})"
                if (line := _condition_line(family.jobset, "RestartingJobSet"))
                else "(no restart events left)"
            )
            + "."
        )
    return Diagnosis(
        verdict=JobSetVerdict.RUNNING,
        summary=f"JobSet {family.name} is running: {len(live)} pods on {len(nodes)} nodes; "
        "nothing blocks it.",
        evidence=tuple(evidence),
        next_commands=collect(*basics(family)),
    )


CHECKS: tuple[Check, ...] = (
    # A finished JobSet is what it is, whatever its children still show.
    completed,
    failed,
    # A suspended JobSet has no pods on purpose (e.g. queued in Kueue): nothing below can apply.
    suspended,
    # A webhook that cannot be called refuses every create, hiding whatever else is wrong.
    webhook_unavailable,
    # Its refusals read like a pending leader's, but the Failed leader beside a live one decides.
    leader_duplicate,
    # The leader is scheduled, on a node without the label: not a pending leader.
    topology_label_missing,
    # Follower refusals that mask an unscheduled leader.
    leader_pending,
    # Any other refusal (quota, RuntimeClass, LimitRange, validation) names its own cause.
    create_rejected,
    # A restart loop recreates every pod: pending or starting pods are its symptoms.
    restarting,
    # A gang that can never be met holds every pod of it, whatever each pod's own triage says.
    gang_unsatisfiable,
    # Pods that exist but cannot be placed, for a reason of their own.
    pods_pending,
    # Jobs or pods on their way, or an in-order startup waiting on an earlier replicatedJob.
    starting,
)
