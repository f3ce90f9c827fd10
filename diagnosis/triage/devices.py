"""One hop to the root cause of a node that serves no device: the device plugin, GPU Operator and
driver pods on it, and the state they are in.

They are recognised as their installers label them (the GPU Operator's operand DaemonSets, the NVIDIA
device plugin's Helm chart and static manifest, GKE's managed GPU and TPU DaemonSets, the ROCm device
plugin), or by their image when the labels were changed; a pod's own name never decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from diagnosis.commands import collect
from diagnosis.model import Command
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status, text
from diagnosis.relations import node_name
from diagnosis.triage import commands as kubectl
from diagnosis.triage.fixes import Change, node_change
from diagnosis.triage.funnel import SHOWN, Funnel
from diagnosis.views import TriageView

SHOWN_NODES = 3
"""Nodes whose device pods are quoted: the pattern shows in a few; the commands list the rest."""


@dataclass(frozen=True)
class Role:
    """What a pod does for a node's devices, and how to recognise it."""

    title: str
    labels: tuple[tuple[str, str], ...]
    """Any one of these label pairs marks the pod."""
    images: tuple[str, ...]
    """Or an image whose repository path contains one of these."""


ROLES: tuple[Role, ...] = (
    Role(
        "NVIDIA driver",
        (("app", "nvidia-driver-daemonset"), ("k8s-app", "nvidia-driver-installer")),
        ("/nvidia/driver:", "nvidia-driver-installer", "/cos-nvidia-installer"),
    ),
    Role(
        "NVIDIA container toolkit",
        (("app", "nvidia-container-toolkit-daemonset"),),
        ("/k8s/container-toolkit:", "/container-toolkit:"),
    ),
    Role(
        "GPU Operator validator",
        (("app", "nvidia-operator-validator"),),
        ("/gpu-operator-validator:",),
    ),
    Role(
        "NVIDIA device plugin",
        (
            ("app", "nvidia-device-plugin-daemonset"),
            ("app.kubernetes.io/name", "nvidia-device-plugin"),
            ("name", "nvidia-device-plugin-ds"),
            ("k8s-app", "nvidia-gpu-device-plugin"),
        ),
        ("/k8s-device-plugin:", "/nvidia-gpu-device-plugin"),
    ),
    Role("GKE TPU device plugin", (("k8s-app", "tpu-device-plugin"),), ("/tpu-device-plugin",)),
    Role(
        "AMD GPU device plugin",
        (("name", "amdgpu-dp-ds"), ("app.kubernetes.io/name", "amd-gpu-device-plugin")),
        ("rocm/k8s-device-plugin",),
    ),
)
"""In the order they come up on a node: the driver, the toolkit, the operator's validation, then the
device plugin that registers the resource with the kubelet (GPU Operator `controllers/state_manager.go`;
GKE's `nvidia-gpu-device-plugin` and `tpu-device-plugin` DaemonSets in kube-system)."""


def role_of(pod: Object) -> Role | None:
    pod_labels = labels(pod)
    images = [
        text(mapping(c).get("image"))
        for f in ("initContainers", "containers")
        for c in sequence(spec(pod).get(f))
    ]
    for role in ROLES:
        if any(pod_labels.get(k) == v for k, v in role.labels):
            return role
        if any(part in image for image in images for part in role.images):
            return role
    return None


@dataclass(frozen=True)
class DevicePod:
    role: Role
    pod: Object

    @property
    def healthy(self) -> bool:
        return status(self.pod).get("phase") == "Running" and not _trouble(self.pod)

    @property
    def trouble(self) -> str:
        """What keeps it from serving, quoted; empty when it serves."""
        return _trouble(self.pod) or ("" if self.healthy else f"phase {text(status(self.pod).get('phase'))}")

    def line(self) -> str:
        """`NVIDIA device plugin gpu-operator/x on lab-node-1: Running, container nvidia-device-plugin
        waiting (CrashLoopBackOff), 14 restarts, last exit 1 (Error)`."""
        where = f"{namespace(self.pod)}/{name(self.pod)} on {node_name(self.pod)}"
        phase = text(status(self.pod).get("phase")) or "no phase"
        said = _trouble(self.pod)
        return f"{self.role.title} {where}: {phase}" + (f", {said}" if said else ", its containers Ready")


def failing(view: TriageView, node: str) -> DevicePod | None:
    """The first device pod on the node that does not serve (bring-up order: the root of the chain)."""
    return next((d for d in device_pods(node, view.bound_pods) if not d.healthy), None)


def root_cause(view: TriageView, nodes: Iterable[Object]) -> list[str]:
    """For the nodes that serve no device (the first few): their device pods that do not serve, quoted;
    else that none runs there, where the node's pods were read; healthy ones are left out."""
    found = []
    for node in list(nodes)[:SHOWN_NODES]:
        host = name(node)
        pods = device_pods(host, view.bound_pods)
        found += [d.line() for d in pods if not d.healthy]
        if not pods and (view.bound_nodes is None or host in view.bound_nodes):
            found.append(f"{host}: no device plugin, operator or driver pod is bound to it")
    return found


def logs(device: DevicePod) -> Command | None:
    """The failing container's last words: `kubectl logs -n NS POD -c C --previous`."""
    container = _failing_container(device.pod)
    return kubectl.previous_logs(namespace(device.pod), name(device.pod), container)


def _failing_container(pod: Object) -> str:
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(status(pod).get(field))):
            terminated = mapping(mapping(item.get("state")).get("terminated"))
            if item.get("ready") is not True and not (terminated and terminated.get("exitCode") == 0):
                return text(item.get("name"))
    return ""


def device_pods(node: str, pods: Iterable[Object]) -> tuple[DevicePod, ...]:
    """The device pods bound to `node`, in bring-up order."""
    found = [DevicePod(role, pod) for pod in pods if node_name(pod) == node and (role := role_of(pod))]
    return tuple(sorted(found, key=lambda d: (ROLES.index(d.role), name(d.pod))))


def _trouble(pod: Object) -> str:
    """The first container that keeps the pod from serving, quoted: the failing init container
    first (the ones after it never start), then an app container that waits or is not ready."""
    pod_status = status(pod)
    for item in map(mapping, sequence(pod_status.get("initContainerStatuses"))):
        state = mapping(item.get("state"))
        terminated = mapping(state.get("terminated"))
        if terminated and terminated.get("exitCode") == 0:
            continue
        return f"init container {text(item.get('name'))} {_state(item)}"
    for item in map(mapping, sequence(pod_status.get("containerStatuses"))):
        if item.get("ready") is not True:
            return f"container {text(item.get('name'))} {_state(item)}"
    return ""


def _state(item: Mapping[str, object]) -> str:
    state = mapping(item.get("state"))
    words = []
    if waiting := mapping(state.get("waiting")):
        words.append(f"waiting ({text(waiting.get('reason')) or 'no reason'})")
    elif terminated := mapping(state.get("terminated")):
        words.append(f"exited {terminated.get('exitCode')} ({text(terminated.get('reason')) or 'no reason'})")
    elif mapping(state.get("running")):
        words.append("running, not ready")
    restarts = item.get("restartCount")
    if isinstance(restarts, int) and restarts:
        words.append(f"{restarts} restart{'s' if restarts > 1 else ''}")
    last = mapping(mapping(item.get("lastState")).get("terminated"))
    if last:
        why = text(last.get("message")) or text(last.get("reason"))
        words.append(
            f"last exit {last.get('exitCode')}" + (f" ({' '.join(why.split())[:160]})" if why else "")
        )
    return ", ".join(words)


def repair(funnel: Funnel, patches: Mapping[str, Mapping[str, Any]], why: str) -> Change:
    """Repair what serves the devices on these nodes: the failing device pod where one is found (its
    last words first), else the device plugin in general."""
    shown = sorted(patches)
    listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
    broken = [d for node in shown if (d := failing(funnel.view, node))]
    if broken:
        first = broken[0]
        what = f"{first.role.title} {namespace(first.pod)}/{name(first.pod)}"
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        commands = collect(logs(first), kubectl.device_plugin_pods(shown[0]))
        summary = f"repair the {what}{more} on {listed} ({first.trouble}): opens {{opens}}"
        return node_change(
            summary, patches, commands, (f"pod/{namespace(d.pod)}/{name(d.pod)}" for d in broken)
        )
    commands = collect(
        *(kubectl.device_plugin_pods(node) for node in shown[:2]),
        kubectl.device_plugin_logs(funnel.ask.requests),
    )
    return node_change(
        f"repair the device plugin or driver on {listed} (they {why}): opens {{opens}}", patches, commands
    )


def failing_note(view: TriageView, nodes: tuple[Object, ...]) -> str:
    """`; on lab-node-1 the NVIDIA device plugin is failing (…)`: the root cause, when one node shows it."""
    found = [(node, device) for node in nodes[:SHOWN] if (device := failing(view, name(node)))]
    if not found:
        return ""
    node, device = found[0]
    more = f" (and on {len(found) - 1} more node{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return f"; on {name(node)} the {device.role.title} is failing{more}"
