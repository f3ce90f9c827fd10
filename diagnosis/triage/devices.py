"""One hop to the root cause of a node that serves no device: the device plugin, GPU Operator and
driver pods on it, and the state they are in.

They are recognised as their installers label them (the GPU Operator's operand DaemonSets, the NVIDIA
device plugin's Helm chart and static manifest, GKE's managed GPU and TPU DaemonSets, the ROCm device
plugin), or by their image when the labels were changed; a pod's own name never decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as attribute
from typing import Any

from diagnosis import commands
from diagnosis.commands import collect, valid_names
from diagnosis.model import Command
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status, text
from diagnosis.patch import merge_patch
from diagnosis.relations import node_name, workload
from diagnosis.triage import commands as kubectl
from diagnosis.triage.fixes import Change, hardware_count, node_change, toleration
from diagnosis.triage.funnel import SHOWN, Funnel
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.scheduling import Placement, Taint
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
    serves: str = ""
    """The prefix of the extended resources it registers with the kubelet (device plugins only)."""


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
        "GPU Feature Discovery",
        (("app", "gpu-feature-discovery"), ("app.kubernetes.io/name", "gpu-feature-discovery")),
        ("/gpu-feature-discovery:",),
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
        "nvidia.com/",
    ),
    Role(
        "GKE TPU device plugin",
        (("k8s-app", "tpu-device-plugin"),),
        ("/tpu-device-plugin",),
        "google.com/tpu",
    ),
    Role(
        "AMD GPU device plugin",
        (("name", "amdgpu-dp-ds"), ("app.kubernetes.io/name", "amd-gpu-device-plugin")),
        ("rocm/k8s-device-plugin",),
        "amd.com/",
    ),
)
"""In the order they come up on a node: the driver, the toolkit, the operator's validation, GPU
Feature Discovery (which labels the node; its image is the device plugin's since v0.15, so it is
told apart by its labels first), then the device plugin that registers the resource with the
kubelet (GPU Operator `controllers/state_manager.go`; GKE's `nvidia-gpu-device-plugin` and
`tpu-device-plugin` DaemonSets in kube-system)."""


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
        # Only a node whose hardware says the device is there is one a device plugin should serve.
        has = any(hardware_count(node, r, view.nodes) for r in effective_requests(view.pod))
        if has and (missing := unserved(view, node)) is not None:
            found.append(f"{host}: {missing.line()}")
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


DAEMON_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
"""The tolerations the DaemonSet controller adds to every pod it makes
(`pkg/controller/daemon/util/daemonset_util.go`, `AddOrUpdateDaemonPodTolerations`): a daemon pod
runs on a cordoned or pressured node."""


SAID = 80
"""Characters of why a DaemonSet does not select a node quoted in an evidence line."""


@dataclass(frozen=True)
class Unserved:
    """A device plugin DaemonSet that runs no pod on a node, and why: the DaemonSet controller places
    its pods by the template's nodeSelector, required node affinity and tolerations
    (`pkg/controller/daemon/daemon_controller.go`, `NodeShouldRunDaemonPod`)."""

    daemonset: Object
    role: Role
    mismatch: str | None
    """Why its nodeSelector or required affinity does not select the node."""
    labels: Mapping[str, str] = attribute(default_factory=dict, hash=False)
    """Its nodeSelector's labels that the node lacks or has with another value."""
    taints: tuple[Taint, ...] = ()
    """The node's taints it does not tolerate."""

    @property
    def key(self) -> tuple[object, ...]:
        """What a fix changes: the nodes with the same key are fixed by one change."""
        ds = (namespace(self.daemonset), name(self.daemonset))
        return (*ds, tuple(sorted(self.labels.items())), self.taints, self.mismatch)

    def line(self) -> str:
        """`DaemonSet gpu-operator/x (NVIDIA device plugin) runs no pod here: its nodeSelector …`."""
        owner = f"{namespace(self.daemonset)}/{name(self.daemonset)}"
        ds = f"DaemonSet {owner} ({self.role.title}) runs no pod here"
        if self.mismatch:
            said = self.mismatch if len(self.mismatch) <= SAID else self.mismatch[: SAID - 1] + "…"
            return f"{ds}: its template's node selection does not match ({said})"
        if self.taints:
            return f"{ds}: it does not tolerate {', '.join(map(str, self.taints))}"
        return f"{ds}, though it selects and tolerates the node: see its events"


@dataclass(frozen=True)
class Plugin:
    """A DaemonSet that runs a device plugin, and where its controller places its pods."""

    daemonset: Object
    role: Role
    placement: Placement
    """Its template's nodeSelector, required affinity and tolerations (the controller's own added)."""
    selector: Mapping[str, str] = attribute(hash=False)

    @classmethod
    def of(cls, daemonset: Object) -> Plugin | None:
        template = mapping(spec(daemonset).get("template"))
        role = role_of(template)
        if role is None or not role.serves:
            return None
        pod_spec = mapping(template.get("spec"))
        tolerations = [*sequence(pod_spec.get("tolerations")), *DAEMON_TOLERATIONS]
        selector = {k: v for k, v in mapping(pod_spec.get("nodeSelector")).items() if isinstance(v, str)}
        placement = Placement.of({"spec": {**pod_spec, "tolerations": tolerations}})
        return cls(daemonset, role, placement, selector)

    def missing(self, node: Object) -> Unserved:
        """Why it runs no pod on the node (as `NodeShouldRunDaemonPod` decides)."""
        wanted = {k: v for k, v in self.selector.items() if labels(node).get(k) != v}
        relabelled = merge_patch(node, {"metadata": {"labels": wanted}}) if wanted else node
        return Unserved(
            self.daemonset,
            self.role,
            self.placement.mismatch(node),
            wanted if self.placement.mismatch(relabelled) is None else {},
            self.placement.untolerated(node),
        )


def plugins(view: TriageView) -> tuple[Plugin, ...]:
    """The DaemonSets read that run a device plugin for a resource the pod asks (recognised by their
    pod template, as pods are by `role_of`)."""
    asked = effective_requests(view.pod)
    found = (Plugin.of(d) for d in view.daemonsets)
    return tuple(p for p in found if p is not None and any(r.startswith(p.role.serves) for r in asked))


def unserved(view: TriageView, node: Object, serving: tuple[Plugin, ...] | None = None) -> Unserved | None:
    """Why no device plugin pod serves the node, from the plugin DaemonSets (`plugins`, or `serving`
    when the caller has them): the one nearest to serving it (selecting it and missing a toleration,
    before one that does not select it). None when a device plugin pod is bound there (it is quoted
    as it is), or no DaemonSet read runs a plugin for these resources."""
    if any(d.role.serves for d in device_pods(name(node), view.bound_pods)):
        return None
    found = [p.missing(node) for p in (plugins(view) if serving is None else serving)]
    return min(found, key=lambda u: (u.mismatch is not None, not u.labels, len(u.taints)), default=None)


def serve(patches: Mapping[str, Mapping[str, Any]], missing: Unserved) -> Change:
    """Let the DaemonSet run its device plugin on these nodes: give them the labels its nodeSelector
    asks, or add the tolerations it lacks to its template; once it runs, they report the devices."""
    ds_ns, ds = namespace(missing.daemonset), name(missing.daemonset)
    shown = sorted(patches)
    # One node named: the DaemonSet's and the label's names are long, and a fix is one line.
    listed = shown[0] + (f" and {len(shown) - 1} more" if len(shown) > 1 else "")
    what = f"DaemonSet {ds_ns}/{ds}"
    if missing.labels and not missing.taints:
        pairs = ", ".join(f"{k}={v}" for k, v in sorted(missing.labels.items()))
        summary = f"label {listed} {pairs}, which {what} selects: opens {{opens}}"
        relabel = {"metadata": {"labels": missing.labels}}
        labelled = {n: merge_patch(patch, relabel) for n, patch in patches.items()}
        command = kubectl.label_nodes(shown, missing.labels, overwrite=True)
        return node_change(summary, labelled, collect(command))
    if missing.taints and missing.mismatch is None:
        taints = ", ".join(map(str, missing.taints))
        summary = f"let {what} tolerate {taints} on {listed}: opens {{opens}}"
        added = _tolerating(missing)
        return node_change(summary, patches, collect(added), (f"daemonset/{ds_ns}/{ds}",))
    summary = f"make {what} select {listed} ({missing.mismatch or 'no pod made there'}): opens {{opens}}"
    shown_placement = collect(_daemonset_placement(ds_ns, ds))
    return node_change(summary, patches, shown_placement, (f"daemonset/{ds_ns}/{ds}",))


OPERATOR_POLICY = "ClusterPolicy"
"""The NVIDIA GPU Operator's custom resource, which owns its DaemonSets and writes their templates
again from its `spec.daemonsets` (`api/nvidia/v1/clusterpolicy_types.go`): a change made to one of
its DaemonSets is undone, so its tolerations are changed there."""


def _tolerating(missing: Unserved) -> Command | None:
    """`kubectl patch … --type=json`: the tolerations appended to the DaemonSet's pod template, or to
    the GPU Operator's ClusterPolicy that writes it."""
    ds_ns, ds = namespace(missing.daemonset), name(missing.daemonset)
    owner_kind, owner = workload(missing.daemonset)
    if not valid_names(ds_ns, ds, owner):
        return None
    operated = owner_kind == OPERATOR_POLICY
    path = "/spec/daemonsets/tolerations" if operated else "/spec/template/spec/tolerations"
    have = sequence(mapping(mapping(spec(missing.daemonset).get("template")).get("spec")).get("tolerations"))
    added = [toleration(t) for t in missing.taints]
    ops = (
        [{"op": "add", "path": f"{path}/-", "value": t} for t in added]
        if have
        else [{"op": "add", "path": path, "value": added}]
    )
    target = ("clusterpolicy", owner) if operated else ("daemonset", ds, "-n", ds_ns)
    said = f"DaemonSet {ds_ns}/{ds}"
    if operated:
        said = f"{OPERATOR_POLICY} {owner}, which writes {said},"
    return commands.kubectl(
        f"let the pods of {said} run on nodes with these taints",
        "patch",
        *target,
        "--type=json",
        "-p",
        json.dumps(ops, separators=(",", ":")),
        changes=True,
    )


def _daemonset_placement(namespace: str, daemonset: str) -> Command | None:
    if not valid_names(namespace, daemonset):
        return None
    template = '{.spec.template.spec.nodeSelector}{"\\n"}{.spec.template.spec.affinity}{"\\n"}'
    return commands.kubectl(
        f"where DaemonSet {namespace}/{daemonset} may run: its template's nodeSelector and affinity",
        "get",
        "daemonset",
        daemonset,
        "-n",
        namespace,
        "-o",
        f"jsonpath={template}",
    )


def repairs(funnel: Funnel, patches: Mapping[str, Mapping[str, Any]], why: str) -> tuple[Change, ...]:
    """The changes that make these nodes serve their devices again: one per device plugin DaemonSet
    cause on the nodes it runs no pod on (`unserved`, `serve`), then `repair` for the others (a
    failing device pod, or nothing the objects show)."""
    view, nodes = funnel.view, {name(drop.node): drop.node for drop in funnel.last.dropped}
    serving = plugins(view)
    causes: dict[tuple[object, ...], tuple[Unserved, dict[str, Mapping[str, Any]]]] = {}
    rest: dict[str, Mapping[str, Any]] = {}
    for host, patch in patches.items():
        node = nodes.get(host)
        missing = unserved(view, node, serving) if node is not None and not failing(view, host) else None
        if missing is None:
            rest[host] = patch
            continue
        causes.setdefault(missing.key, (missing, {}))[1][host] = patch
    served = [serve(grouped, missing) for missing, grouped in causes.values()]
    return (*served, *((repair(funnel, rest, why),) if rest else ()))


def failing_note(view: TriageView, nodes: tuple[Object, ...]) -> str:
    """`; on lab-node-1 the NVIDIA device plugin is failing (…)`: the root cause, when one node shows it."""
    found = [(node, device) for node in nodes[:SHOWN] if (device := failing(view, name(node)))]
    if not found:
        return ""
    node, device = found[0]
    more = f" (and on {len(found) - 1} more node{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return f"; on {name(node)} the {device.role.title} is failing{more}"
