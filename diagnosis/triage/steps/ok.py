"""The `ok` rung: the pod is placed (`spec.nodeName` set): past the scheduler (its Bind), whatever
holds it now is the kubelet's or the app's.
"""

from __future__ import annotations

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.model import CAUSE_CHARS, Command, PodState, PodVerdict, Started, StartState, clipped
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, status, text
from diagnosis.relations import node_name
from diagnosis.triage import commands as kubectl
from diagnosis.triage.evidence import asks_lines, claim_devices, phase, pod_state
from diagnosis.triage.fixes import Change
from diagnosis.triage.funnel import Advice, Answer, Seen
from diagnosis.triage.started import line, started, trouble


def ok(seen: Seen) -> Answer | None:
    view, requests = seen.view, seen.requests
    pod = view.pod
    if not node_name(pod):
        return None
    host, phase_now, state = node_name(pod), phase(pod), pod_state(pod)
    start = started(pod, view.events)
    states = container_states(pod)
    failing = start.state is StartState.FAILING
    if failing:
        outcome = line(start)
    elif state is PodState.RUNNING:
        outcome = "it runs and is Ready"
    elif state is PodState.STARTING:
        outcome = f"it is not Ready yet ({_starting(states)})"
    else:
        outcome = "it has ended"
    summary = (
        clipped(f"The pod is placed on {host} but does not run: {outcome}", CAUSE_CHARS)
        if failing
        else f"The pod is placed on {host} and {phase_now}: {outcome}"
    )
    evidence = (
        *asks_lines(pod, requests, claim_devices(view)),
        f"spec.nodeName: {host}; phase: {phase_now}",
        *states,
        *((f"not running: {line(start, cut=False)}",) if failing else ()),
    )
    ns, pod_name = namespace(pod), name(pod)
    commands = collect(
        kubectl.previous_logs(ns, pod_name, start.container or "") if failing and start.restarts else None,
        pod_logs(ns, pod_name) if _logged(pod) else None,
        kubectl.node_details(host) if failing else None,
    )
    advice = Advice(summary, commands=commands, fixes=_fixes(pod, host, start) if failing else ())
    return Answer(PodVerdict.OK, advice, evidence, pod_state=state, started=start)


def _fixes(pod: Object, host: str, start: Started) -> tuple[Change, ...]:
    """What removes a failing placed pod's cause, in the cluster (nothing the funnel can check)."""
    ns, pod_name, cause = namespace(pod), name(pod), trouble(start)
    again = kubectl.delete_pod(ns, pod_name) if phase(pod) == "Failed" else None
    commands: tuple[Command | None, ...]
    if cause == "image":
        summary = (
            f"check the image name and its pull secret: container {start.container} cannot pull "
            f"{_image(pod, start.container)} ({start.reason})"
        )
        commands, touched = (_images(ns, pod_name),), f"pod/{ns}/{pod_name}"
    elif cause == "device-plugin":
        summary = (
            f"restart the device plugin on {host}: the kubelet could not hand the pod its devices "
            f"({start.reason}); then recreate the pod"
        )
        commands, touched = (kubectl.device_plugin_pods(host), _restart_plugin(host), again), f"node/{host}"
    elif cause == "driver":
        summary = (
            f"cordon {host}: its NVIDIA driver does not load, so no GPU container starts there; "
            "then recreate the pod elsewhere"
        )
        commands = (_cordon(host), again or kubectl.delete_pod(ns, pod_name))
        touched = f"node/{host}"
    else:
        return ()
    return (Change(summary, commands=collect(*commands), objects=(touched,), checkable=False),)


def _image(pod: Object, container: str | None) -> str:
    for field in ("initContainers", "containers"):
        for item in map(mapping, sequence(spec(pod).get(field))):
            if text(item.get("name")) == container:
                return text(item.get("image")) or "its image"
    return "its image"


def _images(namespace: str, pod: str) -> Command | None:
    columns = (
        "IMAGES:.spec.containers[*].image,INIT-IMAGES:.spec.initContainers[*].image,"
        "PULL-SECRETS:.spec.imagePullSecrets[*].name,SERVICE-ACCOUNT:.spec.serviceAccountName"
    )
    return kubectl.pod_output(
        namespace,
        pod,
        f"custom-columns={columns}",
        "the pod's images and the pull secrets it names (its service account's are added to them)",
    )


def _restart_plugin(node: str) -> Command | None:
    """The GPU Operator's device plugin pod on the node, deleted: its DaemonSet starts a new one."""
    if not is_dns1123_subdomain(node):
        return None
    namespace, selector = kubectl.GPU_OPERATOR_PLUGIN
    return commands.kubectl(
        f"restart the device plugin on {node} (the GPU Operator's default namespace and label: "
        "change them if it is installed otherwise)",
        "delete",
        "pod",
        "-n",
        namespace,
        "-l",
        selector,
        "--field-selector",
        f"spec.nodeName={node}",
        changes=True,
    )


def _cordon(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return commands.kubectl(
        f"place no new pod on {node} until its driver is repaired", "cordon", node, changes=True
    )


def _starting(states: list[str]) -> str:
    """What the containers of a pod that is not Ready are doing, in a few words."""
    waiting = [s for s in states if "waiting" in s or "not ready" in s]
    return "; ".join(waiting[:2]) or "no container status reported yet"


def _logged(pod: Object) -> bool:
    """Every container has a log to read (`kubectl logs --all-containers` fails on the first that has
    none: the kubelet's `validateContainerLogStatus`): it runs, or a run of it ended."""
    items = [
        mapping(item)
        for field in ("initContainerStatuses", "containerStatuses")
        for item in sequence(status(pod).get(field))
    ]
    return bool(items) and all(
        mapping(mapping(item.get("state")).get("running"))
        or mapping(mapping(item.get("state")).get("terminated")).get("containerID")
        or mapping(mapping(item.get("lastState")).get("terminated")).get("containerID")
        for item in items
    )


def pod_logs(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return commands.kubectl(
        "what the pod's containers print (a framework that finds no device says so here)",
        "logs",
        pod,
        "-n",
        namespace,
        "--all-containers",
        "--tail=100",
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
