"""The kubectl commands `/triage` suggests in more than one step, with its wording, built with
`diagnosis.commands` (a command only one step suggests lives in that step's module), and the helpers
the steps' own commands share.

Resource names are checked (only extended resources such as `nvidia.com/gpu` are put in a command)
and escaped for JSONPath; a builder given a name that could not exist returns None.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from diagnosis.commands import describe_node, kubectl, pods_on_node, valid_names
from diagnosis.model import Command
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage.resources import is_extended

GPU_OPERATOR_PLUGIN = ("gpu-operator", "app=nvidia-device-plugin-daemonset")
"""Namespace and label of the NVIDIA GPU Operator's device plugin pods (its default install)."""


def jsonpath_name(resource: str) -> str:
    """A resource name as a JSONPath field: its dots escaped (`nvidia\\.com/gpu`)."""
    return resource.replace(".", "\\.")


def extended_only(resources: Iterable[str]) -> tuple[str, ...]:
    return tuple(r for r in resources if is_extended(r))


def column_title(resource: str) -> str:
    """A column title from a resource name: `nvidia.com/mig-1g.5gb` → `MIG-1G.5GB`."""
    return resource.rpartition("/")[2].upper()


def pod_jsonpath(namespace: str, pod: str, template: str, purpose: str) -> Command | None:
    return pod_output(namespace, pod, f"jsonpath={template}", purpose)


def pod_output(namespace: str, pod: str, output: str, purpose: str) -> Command | None:
    """`kubectl get pod POD -n NS -o OUTPUT`."""
    if not valid_names(namespace, pod):
        return None
    return kubectl(purpose, "get", "pod", pod, "-n", namespace, "-o", output)


def kueue_workloads(namespace: str) -> Command | None:
    if not is_dns1123_label(namespace):
        return None
    return kubectl(
        "Kueue's workloads in the namespace: admitted or not, in which queue, and why not",
        "get",
        "workloads.kueue.x-k8s.io",
        "-n",
        namespace,
        "-o",
        "wide",
    )


def node_details(node: str) -> Command | None:
    return describe_node(node, f"{node}: conditions, taints, capacity, allocatable and what is allocated")


def nodes_offer(resources: Iterable[str]) -> Command | None:
    """Every node's capacity and allocatable for the resources, one line a node."""
    names = extended_only(resources)
    if not names:
        return None
    columns = ["NAME:.metadata.name"]
    for r in names:
        columns.append(f"{column_title(r)}_CAPACITY:.status.capacity.{jsonpath_name(r)}")
        columns.append(f"{column_title(r)}_ALLOCATABLE:.status.allocatable.{jsonpath_name(r)}")
    return kubectl(
        "which nodes report the resource at all, and how much of it is allocatable",
        "get",
        "nodes",
        "-o",
        "custom-columns=" + ",".join(columns),
    )


def nodes_with_labels(keys: Iterable[str]) -> Command:
    valid = sorted({k for k in keys if is_label_key(k)})
    if not valid:
        return kubectl("every node with its labels", "get", "nodes", "--show-labels")
    return kubectl(
        "the value each node has for the labels the pod selects on (blank: the node lacks it)",
        "get",
        "nodes",
        "-L",
        ",".join(valid),
    )


def device_plugin_pods(node: str) -> Command | None:
    return pods_on_node(
        node, f"every pod on {node}: is the device plugin (and the driver/validator pods) there and Running?"
    )


def device_plugin_logs(resources: Iterable[str]) -> Command | None:
    """The NVIDIA device plugin's logs, for NVIDIA resources only (other vendors install theirs in
    too many different ways to name)."""
    if not any(r.startswith("nvidia.com/") for r in resources):
        return None
    namespace, selector = GPU_OPERATOR_PLUGIN
    return kubectl(
        "the device plugin's view of each GPU (unhealthy devices, XID errors); "
        "the GPU Operator's default namespace: change -n if it is installed elsewhere",
        "logs",
        "-n",
        namespace,
        "-l",
        selector,
        "--prefix",
        "--tail=50",
    )


def delete_pod(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        f"end {namespace}/{pod} to free what it holds (its controller, if any, makes a new one)",
        "delete",
        "pod",
        pod,
        "-n",
        namespace,
        changes=True,
    )


def deletion_cost(namespace: str, pod: str, owner: str) -> Command | None:
    """Mark the pod its ReplicaSet ends first on a scale-down (annotation
    `controller.kubernetes.io/pod-deletion-cost`:
    https://kubernetes.io/docs/reference/labels-annotations-taints/#pod-deletion-cost)."""
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        f"make {pod} the pod {owner} ends first when scaled down",
        "annotate",
        "pod",
        pod,
        "-n",
        namespace,
        "controller.kubernetes.io/pod-deletion-cost=-2147483648",
        "--overwrite",
        changes=True,
    )


def scale_down(kind: str, namespace: str, workload: str, replicas: int, by: int) -> Command | None:
    """Scale a workload down by `by` from `replicas`, refused by kubectl if it has another count now."""
    if not valid_names(namespace, workload):
        return None
    return kubectl(
        f"scale {kind} {namespace}/{workload} down by {by} (refused if it no longer has {replicas} "
        "replicas: then scale from its count)",
        "scale",
        kind.lower(),
        workload,
        "-n",
        namespace,
        f"--current-replicas={replicas}",
        f"--replicas={replicas - by}",
        changes=True,
    )


def deployment_strategy(
    namespace: str, deployment: str, strategy: Mapping[str, Any], purpose: str
) -> Command | None:
    """Give the Deployment this `spec.strategy` (a merge patch: `rollingUpdate` None drops it)."""
    if not valid_names(namespace, deployment):
        return None
    patch = json.dumps({"spec": {"strategy": strategy}}, separators=(",", ":"))
    return kubectl(
        purpose,
        "patch",
        "deployment",
        deployment,
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        patch,
        changes=True,
    )


def force_delete_pod(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        f"remove {namespace}/{pod} past its grace period, only once its containers are known to have "
        "stopped (its node gone, its kubelet stuck): a forced delete does not stop them",
        "delete",
        "pod",
        pod,
        "-n",
        namespace,
        "--grace-period=0",
        "--force",
        changes=True,
    )


def previous_logs(namespace: str, pod: str, container: str) -> Command | None:
    """The last words of a container that keeps failing (its previous run)."""
    if not valid_names(namespace, pod):
        return None
    pick = ("-c", container) if is_dns1123_label(container) else ("--all-containers",)
    return kubectl(
        f"why {namespace}/{pod} keeps failing: its last run's output",
        "logs",
        pod,
        "-n",
        namespace,
        *pick,
        "--previous",
        "--tail=50",
    )


def pods_matching(namespace: str | None, selector: str) -> Command | None:
    """The bound pods a label selector picks (in one namespace, or all when None), with their nodes."""
    if not selector or (namespace is not None and not is_dns1123_label(namespace)):
        return None
    scope = ("-n", namespace) if namespace is not None else ("-A",)
    return kubectl(
        "the pods the selector matches, and the nodes they are on",
        "get",
        "pods",
        *scope,
        "-l",
        selector,
        "--field-selector",
        NOT_TERMINAL,
        "-o",
        "wide",
    )


_WHO = ("NAMESPACE:.metadata.namespace", "NAME:.metadata.name")


def pod_columns_on_node(node: str, columns: Iterable[str], purpose: str) -> Command | None:
    """The pods counted on a node (the scheduler's own filter, terminating ones included), in columns."""
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        purpose,
        "get",
        "pods",
        "-A",
        "--field-selector",
        f"spec.nodeName={node},{NOT_TERMINAL}",
        "-o",
        "custom-columns=" + ",".join((*_WHO, *columns)),
    )


def victims_on_node(node: str) -> Command | None:
    """Each pod's priority and whether it is being deleted."""
    return pod_columns_on_node(
        node,
        (
            "PRIORITY:.spec.priority",
            "DELETING_SINCE:.metadata.deletionTimestamp",
            "GRACE:.metadata.deletionGracePeriodSeconds",
        ),
        f"the pods on {node}, their priority and which are still terminating (the preemption's victims)",
    )


def preempted_events() -> Command:
    """The scheduler's Preempted events (recorded on each victim)."""
    return kubectl(
        "the pods the scheduler preempted, and for whom (Preempted by pod <uid> on node <node>)",
        "get",
        "events",
        "-A",
        "--field-selector",
        "reason=Preempted",
    )


def kueue_workload(namespace: str, workload: str) -> Command | None:
    """A Workload's conditions, one a line."""
    if not valid_names(namespace, workload):
        return None
    template = '{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}'
    return kubectl(
        "the Workload's admission conditions: why Kueue has not admitted it",
        "get",
        "workloads.kueue.x-k8s.io",
        workload,
        "-n",
        namespace,
        "-o",
        f"jsonpath={template}",
    )


def kueue_cluster_queue(queue: str) -> Command | None:
    """A ClusterQueue's quota per flavor and what is used of it."""
    if not is_dns1123_subdomain(queue):
        return None
    return kubectl(
        f"ClusterQueue {queue}: nominal quota per flavor and resource, and what admitted workloads use",
        "get",
        "clusterqueues.kueue.x-k8s.io",
        queue,
        "-o",
        "yaml",
    )


# — Dynamic Resource Allocation (`resource.k8s.io`) —


def resource_claim(namespace: str, claim: str) -> Command | None:
    if not valid_names(namespace, claim):
        return None
    return kubectl(
        f"claim {claim}: its requests, allocation (devices, nodeSelector) and reservedFor pods",
        "get",
        "resourceclaim",
        claim,
        "-n",
        namespace,
        "-o",
        "yaml",
    )


def resource_slices(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        f"the devices DRA drivers publish on {node}, with their attributes, capacity and taints",
        "get",
        "resourceslices",
        "--field-selector",
        f"spec.nodeName={node}",
        "-o",
        "yaml",
    )


def device_class(name: str) -> Command | None:
    if not is_dns1123_subdomain(name):
        return None
    return kubectl(
        f"device class {name}: the selectors every device of the class must match",
        "get",
        "deviceclass",
        name,
        "-o",
        "yaml",
    )


def recreate(kind: str, namespace: str, name: str, patch: Sequence[Mapping[str, Any]]) -> tuple[Command, ...]:
    """A ResourceClaim or ResourceClaimTemplate recreated with a JSON patch (RFC 6902) applied: their
    spec cannot be updated in place. `kubectl patch --dry-run=client` writes the object as patched to
    a file; `kubectl replace --force` deletes the object and creates it from the file."""
    if kind not in ("resourceclaim", "resourceclaimtemplate") or not valid_names(namespace, name):
        return ()
    saved = f"{name}.yaml"
    body = json.dumps(list(patch), separators=(",", ":"))
    written = shlex.join(
        (
            "kubectl",
            "patch",
            kind,
            name,
            "-n",
            namespace,
            "--type",
            "json",
            "-p",
            body,
            "--dry-run=client",
            "-o",
            "yaml",
        )
    )
    return (
        Command(
            f"{written} > {shlex.quote(saved)}",
            f"{kind} {name} as it would read with the change, written to {saved}",
            changes=True,
        ),
        kubectl(
            f"delete {kind} {name}, then create it from {saved}",
            "replace",
            "--force",
            "-f",
            saved,
            changes=True,
        ),
    )


def label_nodes(nodes: Sequence[str], pairs: Mapping[str, str], overwrite: bool = False) -> Command | None:
    """`kubectl label node A B k=v`: give these nodes the labels (`overwrite`: replacing the values
    some have; else none of them has the keys yet)."""
    if not nodes or not all(is_dns1123_subdomain(n) for n in nodes):
        return None
    if not all(is_label_key(k) and is_label_value(v) for k, v in pairs.items()):
        return None
    return kubectl(
        f"give {', '.join(nodes)} the label{'s' if len(pairs) > 1 else ''} {', '.join(sorted(pairs))}",
        "label",
        "node",
        *nodes,
        *(f"{k}={v}" for k, v in sorted(pairs.items())),
        *(("--overwrite",) if overwrite else ()),
        changes=True,
    )
