"""Events as the Job controller, the JobSet controller and the scheduler record them."""

from __future__ import annotations

from datetime import timedelta

from devtools.jobset_corpus.jobs import JS, RESTART_ACTION, Job
from devtools.jobset_corpus.world import NOW, Obj, World, ts


def event(
    w: World,
    about: Obj,
    reason: str,
    message: str,
    *,
    kind: str = "Warning",
    source: str = "job-controller",
    count: int = 1,
    first: float = 30,
    last: float = 1,
    new_style: bool = False,
) -> Obj:
    """An event as `kubectl get events -o json` shows it: legacy recorders fill `source`, `count` and
    the timestamps; `events.k8s.io` recorders (JobSet ≥ v0.12, the scheduler) fill `eventTime`,
    `reportingComponent`, `action` and `series`."""
    meta = about["metadata"]
    name = f"{meta['name']}.{w.rng.getrandbits(64):016x}"
    involved = {
        "apiVersion": about["apiVersion"],
        "kind": about["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace", "default"),
        "resourceVersion": meta["resourceVersion"],
        "uid": meta["uid"],
    }
    base: Obj = {
        "apiVersion": "v1",
        "involvedObject": involved,
        "kind": "Event",
        "message": message,
        "metadata": {
            "creationTimestamp": ts(first),
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "resourceVersion": w.rv(),
            "uid": w.uid(),
        },
        "reason": reason,
        "type": kind,
    }
    if new_style:
        base.update(
            {
                "action": {"default-scheduler": "Scheduling", "jobset": "Reconciling"}.get(
                    source, "Reconciling"
                ),
                "eventTime": (NOW - timedelta(minutes=first)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "firstTimestamp": None,
                "lastTimestamp": None,
                "reportingComponent": source,
                "reportingInstance": f"{source}-{w.suffix(10)}",
                "source": {},
            }
        )
        if count > 1:
            base["series"] = {
                "count": count,
                "lastObservedTime": (NOW - timedelta(minutes=last)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            }
    else:
        base.update(
            {
                "count": count,
                "eventTime": None,
                "firstTimestamp": ts(first),
                "lastTimestamp": ts(last),
                "reportingComponent": source,
                "reportingInstance": "",
                "source": {"component": source},
            }
        )
    return w.add(base)


def failed_create(j: Job, error: str, count: int, *, first: float, last: float) -> Obj:
    """The Job controller's series of failed pod creations (`error`: what the API server answered)."""
    return event(
        j.js.w, j.obj, "FailedCreate", f"Error creating: {error}", count=count, first=first, last=last
    )


def created_pod(j: Job, p: Obj, minutes_ago: float) -> Obj:
    """The Job controller's record of creating pod `p`."""
    name = p["metadata"]["name"]
    return event(
        j.js.w,
        j.obj,
        "SuccessfulCreate",
        f"Created pod: {name}",
        kind="Normal",
        first=minutes_ago,
        last=minutes_ago,
    )


def scheduled(w: World, p: Obj, minutes_ago: float) -> Obj:
    """The scheduler's record of binding `p` to its node."""
    node = p["spec"]["nodeName"]
    return event(
        w,
        p,
        "Scheduled",
        f"Successfully assigned {p['metadata']['namespace']}/{p['metadata']['name']} to {node}",
        kind="Normal",
        source="default-scheduler",
        first=minutes_ago,
        last=minutes_ago,
        new_style=True,
    )


def failed_scheduling(w: World, p: Obj, message: str, count: int, first: float, last: float = 0.5) -> Obj:
    """The scheduler's series of failed attempts to place `p`."""
    return event(
        w,
        p,
        "FailedScheduling",
        message,
        source="default-scheduler",
        count=count,
        first=first,
        last=last,
        new_style=True,
    )


def jobset_event(
    js: JS,
    reason: str,
    message: str,
    *,
    first: float,
    last: float | None = None,
    count: int = 1,
    kind: str = "Warning",
    new_style: bool = True,
) -> Obj:
    """An event the JobSet controller records about its JobSet (`new_style=False`: as a JobSet
    controller older than v0.12 records it)."""
    last = first if last is None else last
    return event(
        js.w,
        js.obj,
        reason,
        message,
        kind=kind,
        source="jobset",
        count=count,
        first=first,
        last=last,
        new_style=new_style,
    )


def restart_events(
    js: JS,
    first_failed: str,
    *,
    first: float,
    last: float,
    count: int = 1,
    reasons: tuple[str, ...] = ("RestartJobSetFailurePolicyAction",),
    new_style: bool = True,
) -> None:
    """The JobSet controller's series of restarts: `count` times (the first `first` minutes ago), a
    Job failed and the failure policy restarted the JobSet."""
    for reason in reasons:
        jobset_event(
            js,
            reason,
            RESTART_ACTION.format(first_failed),
            first=first,
            last=last,
            count=count,
            new_style=new_style,
        )


def job_creation_failed(
    js: JS, job_name: str, error: str, count: int, *, first: float, last: float, new_style: bool = True
) -> Obj:
    """The JobSet controller's series of failed attempts to create child Job `job_name`."""
    message = f'job "{job_name}" creation failed with error: {error}'
    return jobset_event(
        js, "JobCreationFailed", message, count=count, first=first, last=last, new_style=new_style
    )
