"""The kubectl commands `/triage` suggests, each one complete invocation that is safe to paste.

Every name is checked against the API's own rules before it is put in a command, and every argument
is shell-quoted: a name that could not exist in a cluster yields no command rather than a surprising
one. Read commands use only get/describe/logs with flags kubectl accepts; commands that change the
cluster are marked `changes=True`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from diagnosis.model import Command
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage.resources import is_extended

"""The scheduler's own pod filter (facts §3.2): the pods that hold a node's resources."""

GPU_OPERATOR_PLUGIN = ("gpu-operator", "app=nvidia-device-plugin-daemonset")
"""Namespace and label of the NVIDIA GPU Operator's device plugin pods (its default install)."""


def _kubectl(*args: str) -> str:
    return shlex.join(("kubectl", *args))


def _pod_ok(namespace: str, pod: str) -> bool:
    return is_dns1123_label(namespace) and is_dns1123_subdomain(pod)


def _path(resource: str) -> str:
    """A resource name as a JSONPath field: its dots escaped (`nvidia\\.com/gpu`)."""
    return resource.replace(".", "\\.")


def _resources(resources: Iterable[str]) -> tuple[str, ...]:
    return tuple(r for r in resources if is_extended(r))


def _header(resource: str) -> str:
    """A column title from a resource name: `nvidia.com/mig-1g.5gb` → `MIG-1G.5GB`."""
    return resource.rpartition("/")[2].upper()


def describe_pod(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    return (Command(_kubectl("describe", "pod", pod, "-n", namespace), "the pod, its conditions and events"),)


def pod_events(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    return (
        Command(
            _kubectl("get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={pod}"),
            "everything recorded about the pod, oldest first",
        ),
    )


def pod_logs(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    return (
        Command(
            _kubectl("logs", pod, "-n", namespace, "--all-containers", "--tail=100"),
            "what the pod's containers print (a framework that finds no device says so here)",
        ),
    )


def pod_resources(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    template = '{range .spec.containers[*]}{.name}{": "}{.resources}{"\\n"}{end}'
    return (
        Command(
            _kubectl("get", "pod", pod, "-n", namespace, "-o", f"jsonpath={template}"),
            "each container's resources as stored (limits and requests)",
        ),
    )


def pod_placement(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    template = (
        '{"nodeSelector: "}{.spec.nodeSelector}{"\\n"}'
        '{"required affinity: "}'
        '{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution}{"\\n"}'
    )
    return (
        Command(
            _kubectl("get", "pod", pod, "-n", namespace, "-o", f"jsonpath={template}"),
            "the pod's nodeSelector and required node affinity, as stored",
        ),
    )


def pod_gates(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    return (
        Command(
            _kubectl("get", "pod", pod, "-n", namespace, "-o", "jsonpath={.spec.schedulingGates}"),
            "the scheduling gates still on the pod",
        ),
    )


def kueue_workloads(namespace: str) -> tuple[Command, ...]:
    if not is_dns1123_label(namespace):
        return ()
    return (
        Command(
            _kubectl("get", "workloads.kueue.x-k8s.io", "-n", namespace, "-o", "wide"),
            "Kueue's workloads in the namespace: admitted or not, in which queue, and why not",
        ),
    )


def describe_node(node: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(node):
        return ()
    return (
        Command(
            _kubectl("describe", "node", node),
            f"{node}: conditions, taints, capacity, allocatable and what is allocated",
        ),
    )


def node_taints(node: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(node):
        return ()
    template = (
        '{"unschedulable: "}{.spec.unschedulable}{"\\n"}'
        '{range .spec.taints[*]}{.key}={.value}:{.effect}{"\\n"}{end}'
    )
    return (
        Command(_kubectl("get", "node", node, "-o", f"jsonpath={template}"), f"{node}: cordon and taints"),
    )


def uncordon(node: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(node):
        return ()
    return (
        Command(
            _kubectl("uncordon", node),
            f"let pods be scheduled on {node} again, once whoever cordoned it is done",
            changes=True,
        ),
    )


def node_offer(node: str, resources: Iterable[str]) -> tuple[Command, ...]:
    """Capacity beside allocatable on one node, for each resource."""
    names = _resources(resources)
    if not (is_dns1123_subdomain(node) and names):
        return ()
    template = "".join(
        f'{{"{r} capacity="}}{{.status.capacity.{_path(r)}}}'
        f'{{" allocatable="}}{{.status.allocatable.{_path(r)}}}{{"\\n"}}'
        for r in names
    )
    return (
        Command(
            _kubectl("get", "node", node, "-o", f"jsonpath={template}"),
            f"{node}: devices present (capacity) against devices healthy and served (allocatable)",
        ),
    )


def nodes_offer(resources: Iterable[str]) -> tuple[Command, ...]:
    """Every node's capacity and allocatable for the resources, one line a node."""
    names = _resources(resources)
    if not names:
        return ()
    columns = ["NAME:.metadata.name"]
    for r in names:
        columns.append(f"{_header(r)}_CAPACITY:.status.capacity.{_path(r)}")
        columns.append(f"{_header(r)}_ALLOCATABLE:.status.allocatable.{_path(r)}")
    return (
        Command(
            _kubectl("get", "nodes", "-o", "custom-columns=" + ",".join(columns)),
            "which nodes report the resource at all, and how much of it is allocatable",
        ),
    )


def nodes_with_labels(keys: Iterable[str]) -> tuple[Command, ...]:
    valid = sorted({k for k in keys if is_label_key(k)})
    if not valid:
        return (Command(_kubectl("get", "nodes", "--show-labels"), "every node with its labels"),)
    return (
        Command(
            _kubectl("get", "nodes", "-L", ",".join(valid)),
            "the value each node has for the labels the pod selects on (blank: the node lacks it)",
        ),
    )


def pods_on_node(node: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(node):
        return ()
    return (
        Command(
            _kubectl("get", "pods", "-A", "--field-selector", f"spec.nodeName={node}", "-o", "wide"),
            f"every pod on {node}: is the device plugin (and the driver/validator pods) there and Running?",
        ),
    )


def consumers(node: str, resources: Iterable[str]) -> tuple[Command, ...]:
    """The pods holding the resources on a node, as the scheduler counts them."""
    names = _resources(resources)
    if not (is_dns1123_subdomain(node) and names):
        return ()
    columns = [
        "NAMESPACE:.metadata.namespace",
        "NAME:.metadata.name",
        "PHASE:.status.phase",
        "DELETING:.metadata.deletionTimestamp",
    ]
    columns += [f"{_header(r)}:.spec.containers[*].resources.limits.{_path(r)}" for r in names]
    return (
        Command(
            _kubectl(
                "get", "pods", "-A",
                "--field-selector", f"spec.nodeName={node},{NOT_TERMINAL}",
                "-o", "custom-columns=" + ",".join(columns),
            ),
            f"the pods that count against {node}'s allocatable (terminating ones too)",
        ),
    )


def device_plugin_logs(resources: Iterable[str]) -> tuple[Command, ...]:
    """The NVIDIA device plugin's logs, for NVIDIA resources only (other vendors install theirs in
    too many different ways to name)."""
    if not any(r.startswith("nvidia.com/") for r in resources):
        return ()
    namespace, selector = GPU_OPERATOR_PLUGIN
    return (
        Command(
            _kubectl("logs", "-n", namespace, "-l", selector, "--prefix", "--tail=50"),
            "the device plugin's view of each GPU (unhealthy devices, XID errors); "
            "the GPU Operator's default namespace: change -n if it is installed elsewhere",
        ),
    )


# — Dynamic Resource Allocation (`resource.k8s.io`) —


def resource_claim(namespace: str, claim: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, claim):
        return ()
    return (
        Command(
            _kubectl("get", "resourceclaim", claim, "-n", namespace, "-o", "yaml"),
            f"claim {claim}: its requests, allocation (devices, nodeSelector) and reservedFor pods",
        ),
    )


def resource_claims(namespace: str) -> tuple[Command, ...]:
    if not is_dns1123_label(namespace):
        return ()
    return (
        Command(
            _kubectl("get", "resourceclaims", "-n", namespace),
            "the namespace's claims and their state (pending, allocated, reserved, deleted)",
        ),
    )


def claim_template(namespace: str, template: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, template):
        return ()
    return (
        Command(
            _kubectl("get", "resourceclaimtemplate", template, "-n", namespace, "-o", "yaml"),
            f"template {template}: what the claim made from it asks for",
        ),
    )


def pod_claims(namespace: str, pod: str) -> tuple[Command, ...]:
    if not _pod_ok(namespace, pod):
        return ()
    template = '{.spec.resourceClaims}{"\\n"}{.status.resourceClaimStatuses}{"\\n"}'
    return (
        Command(
            _kubectl("get", "pod", pod, "-n", namespace, "-o", f"jsonpath={template}"),
            "the claims the pod names and the ones made for it from templates",
        ),
    )


def resource_slices(node: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(node):
        return ()
    return (
        Command(
            _kubectl("get", "resourceslices", "--field-selector", f"spec.nodeName={node}", "-o", "yaml"),
            f"the devices DRA drivers publish on {node}, with their attributes, capacity and taints",
        ),
    )


def resource_slices_of(driver: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(driver):
        return ()
    return (
        Command(
            _kubectl("get", "resourceslices", "--field-selector", f"spec.driver={driver}", "-o", "wide"),
            f"every slice of driver {driver}: which nodes publish its devices",
        ),
    )


def device_class(device_class: str) -> tuple[Command, ...]:
    if not is_dns1123_subdomain(device_class):
        return ()
    return (
        Command(
            _kubectl("get", "deviceclass", device_class, "-o", "yaml"),
            f"device class {device_class}: the selectors every device of the class must match",
        ),
    )


def device_classes() -> tuple[Command, ...]:
    return (Command(_kubectl("get", "deviceclasses"), "the device classes the cluster has"),)
