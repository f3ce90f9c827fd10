"""The `ok` rung: the pod is placed (`spec.nodeName` set): past the scheduler (its Bind), whatever
holds it now is the kubelet's or the app's.
"""

from __future__ import annotations

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.model import Command, PodState, PodVerdict
from diagnosis.objects import Object, mapping, name, namespace, sequence, status, text
from diagnosis.relations import node_name
from diagnosis.triage import commands as kubectl
from diagnosis.triage.evidence import asks_lines, claim_devices, phase, pod_state
from diagnosis.triage.funnel import Advice, Answer, Seen


def ok(seen: Seen) -> Answer | None:
    view, requests = seen.view, seen.requests
    pod = view.pod
    if not node_name(pod):
        return None
    host, phase_now, state = node_name(pod), phase(pod), pod_state(pod)
    problems = pod_problems(pod)
    states = container_states(pod)
    if problems:
        outcome = problems[0]
    elif state is PodState.RUNNING:
        outcome = "it runs and is Ready"
    elif state is PodState.STARTING:
        outcome = f"it is not Ready yet ({_starting(states)})"
    else:
        outcome = "it has ended"
    summary = f"The pod is placed on {host} and {phase_now}: {outcome}"
    evidence = (
        *asks_lines(pod, requests, claim_devices(view)),
        f"spec.nodeName: {host}; phase: {phase_now}",
        *states,
        *problems,
    )
    commands = collect(
        pod_logs(namespace(pod), name(pod)) if _has_run(pod) else None,
        kubectl.node_details(host) if problems else None,
    )
    return Answer(PodVerdict.OK, Advice(summary, commands=commands), evidence, pod_state=state)


def _starting(states: list[str]) -> str:
    """What the containers of a pod that is not Ready are doing, in a few words."""
    waiting = [s for s in states if "waiting" in s or "not ready" in s]
    return "; ".join(waiting[:2]) or "no container status reported yet"


def _has_run(pod: Object) -> bool:
    """Some container was started at least once, so there are logs to read."""
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(status(pod).get(field))):
            for state in (item.get("state"), item.get("lastState")):
                ran = mapping(mapping(state).get("running")) or mapping(mapping(state).get("terminated"))
                if ran:
                    return True
    return False


def pod_logs(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return commands.kubectl(
        "what the pod's containers print (a framework that finds no device says so here)",
        "logs", pod, "-n", namespace, "--all-containers", "--tail=100",
    )


def container_states(pod: Object) -> list[str]:
    """Each container's state as the kubelet reports it: `container cuda: running, ready, 3 restarts`,
    `init container warmup: waiting (ContainerCreating)`, `container main: terminated (Error, exit 1)`."""
    found = []
    for field, kind in (("initContainerStatuses", "init container"), ("containerStatuses", "container")):
        for item in map(mapping, sequence(status(pod).get(field))):
            state = mapping(item.get("state"))
            words = []
            if running := mapping(state.get("running")):
                since = text(running.get("startedAt"))
                words.append(f"running since {since}" if since else "running")
            elif waiting := mapping(state.get("waiting")):
                words.append(f"waiting ({text(waiting.get('reason')) or 'no reason given'})")
            elif terminated := mapping(state.get("terminated")):
                code = terminated.get("exitCode")
                words.append(f"terminated ({text(terminated.get('reason')) or 'no reason'}, exit {code})")
            else:
                words.append("no state reported yet")
            if kind == "container":
                words.append("ready" if item.get("ready") is True else "not ready")
            restarts = item.get("restartCount")
            if isinstance(restarts, int) and restarts:
                words.append(f"{restarts} restart{'s' if restarts > 1 else ''}")
            found.append(f"{kind} {text(item.get('name'))}: {', '.join(words)}")
    return found


def pod_problems(pod: Object) -> list[str]:
    """What holds a placed pod: a kubelet rejection (`UnexpectedAdmissionError`, `OutOfnvidia.com/gpu`)
    or a container that cannot start."""
    found = []
    pod_status = status(pod)
    reason, message = text(pod_status.get("reason")), text(pod_status.get("message"))
    if reason or message:
        found.append(f"{reason}: {message}" if reason and message else reason or message)
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(pod_status.get(field))):
            waiting = mapping(mapping(item.get("state")).get("waiting"))
            why = text(waiting.get("reason"))
            if why and why not in ("ContainerCreating", "PodInitializing"):
                said = text(waiting.get("message"))
                detail = f": {said}" if said else ""
                found.append(f"container {text(item.get('name'))} waiting: {why}{detail}")
    return found
