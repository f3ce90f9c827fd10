"""The kubectl commands only `/triage` suggests, with its wording, built with `diagnosis.commands`.

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
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage.resources import is_extended

GPU_OPERATOR_PLUGIN = ("gpu-operator", "app=nvidia-device-plugin-daemonset")
"""Namespace and label of the NVIDIA GPU Operator's device plugin pods (its default install)."""


def _path(resource: str) -> str:
    """A resource name as a JSONPath field: its dots escaped (`nvidia\\.com/gpu`)."""
    return resource.replace(".", "\\.")


def _resources(resources: Iterable[str]) -> tuple[str, ...]:
    return tuple(r for r in resources if is_extended(r))


def _header(resource: str) -> str:
    """A column title from a resource name: `nvidia.com/mig-1g.5gb` → `MIG-1G.5GB`."""
    return resource.rpartition("/")[2].upper()


def pod_logs(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        "what the pod's containers print (a framework that finds no device says so here)",
        "logs", pod, "-n", namespace, "--all-containers", "--tail=100",
    )


def _pod_jsonpath(namespace: str, pod: str, template: str, purpose: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(purpose, "get", "pod", pod, "-n", namespace, "-o", f"jsonpath={template}")


def pod_resources(namespace: str, pod: str) -> Command | None:
    return _pod_jsonpath(
        namespace,
        pod,
        '{range .spec.containers[*]}{.name}{": "}{.resources}{"\\n"}{end}',
        "each container's resources as stored (limits and requests)",
    )


def pod_placement(namespace: str, pod: str) -> Command | None:
    template = (
        '{"nodeSelector: "}{.spec.nodeSelector}{"\\n"}'
        '{"required affinity: "}'
        '{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution}{"\\n"}'
    )
    return _pod_jsonpath(
        namespace, pod, template, "the pod's nodeSelector and required node affinity, as stored"
    )


def pod_gates(namespace: str, pod: str) -> Command | None:
    return _pod_jsonpath(namespace, pod, "{.spec.schedulingGates}", "the scheduling gates still on the pod")


def kueue_workloads(namespace: str) -> Command | None:
    if not is_dns1123_label(namespace):
        return None
    return kubectl(
        "Kueue's workloads in the namespace: admitted or not, in which queue, and why not",
        "get", "workloads.kueue.x-k8s.io", "-n", namespace, "-o", "wide",
    )


def node_details(node: str) -> Command | None:
    return describe_node(node, f"{node}: conditions, taints, capacity, allocatable and what is allocated")


def node_taints(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    template = (
        '{"unschedulable: "}{.spec.unschedulable}{"\\n"}'
        '{range .spec.taints[*]}{.key}={.value}:{.effect}{"\\n"}{end}'
    )
    return kubectl(f"{node}: cordon and taints", "get", "node", node, "-o", f"jsonpath={template}")


def uncordon(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        f"let pods be scheduled on {node} again, once whoever cordoned it is done",
        "uncordon", node, changes=True,
    )


def node_offer(node: str, resources: Iterable[str]) -> Command | None:
    """Capacity beside allocatable on one node, for each resource."""
    names = _resources(resources)
    if not (is_dns1123_subdomain(node) and names):
        return None
    template = "".join(
        f'{{"{r} capacity="}}{{.status.capacity.{_path(r)}}}'
        f'{{" allocatable="}}{{.status.allocatable.{_path(r)}}}{{"\\n"}}'
        for r in names
    )
    return kubectl(
        f"{node}: devices present (capacity) against devices healthy and served (allocatable)",
        "get", "node", node, "-o", f"jsonpath={template}",
    )


def nodes_offer(resources: Iterable[str]) -> Command | None:
    """Every node's capacity and allocatable for the resources, one line a node."""
    names = _resources(resources)
    if not names:
        return None
    columns = ["NAME:.metadata.name"]
    for r in names:
        columns.append(f"{_header(r)}_CAPACITY:.status.capacity.{_path(r)}")
        columns.append(f"{_header(r)}_ALLOCATABLE:.status.allocatable.{_path(r)}")
    return kubectl(
        "which nodes report the resource at all, and how much of it is allocatable",
        "get", "nodes", "-o", "custom-columns=" + ",".join(columns),
    )


def nodes_with_labels(keys: Iterable[str]) -> Command:
    valid = sorted({k for k in keys if is_label_key(k)})
    if not valid:
        return kubectl("every node with its labels", "get", "nodes", "--show-labels")
    return kubectl(
        "the value each node has for the labels the pod selects on (blank: the node lacks it)",
        "get", "nodes", "-L", ",".join(valid),
    )


def device_plugin_pods(node: str) -> Command | None:
    return pods_on_node(
        node, f"every pod on {node}: is the device plugin (and the driver/validator pods) there and Running?"
    )


def consumers(node: str, resources: Iterable[str]) -> Command | None:
    """The pods holding the resources on a node, as the scheduler counts them."""
    names = _resources(resources)
    if not (is_dns1123_subdomain(node) and names):
        return None
    columns = [
        "NAMESPACE:.metadata.namespace",
        "NAME:.metadata.name",
        "PHASE:.status.phase",
        "DELETING:.metadata.deletionTimestamp",
    ]
    columns += [f"{_header(r)}:.spec.containers[*].resources.limits.{_path(r)}" for r in names]
    return kubectl(
        f"the pods that count against {node}'s allocatable (terminating ones too)",
        "get", "pods", "-A",
        "--field-selector", f"spec.nodeName={node},{NOT_TERMINAL}",
        "-o", "custom-columns=" + ",".join(columns),
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
        "logs", "-n", namespace, "-l", selector, "--prefix", "--tail=50",
    )


def delete_pod(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        f"end {namespace}/{pod} to free what it holds (its controller, if any, makes a new one)",
        "delete", "pod", pod, "-n", namespace,
        changes=True,
    )


def recreate_strategy(namespace: str, deployment: str) -> Command | None:
    """The Deployment's `Recreate` strategy: its old pods end before new ones start."""
    if not valid_names(namespace, deployment):
        return None
    strategy = '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}'
    return kubectl(
        f"make Deployment {deployment} end its old pods before it starts new ones: a ReadWriteOncePod "
        "volume serves one pod at a time, so a rolling update that starts the new pod first waits for ever",
        "patch", "deployment", deployment, "-n", namespace, "--type", "merge", "-p", strategy,
        changes=True,
    )


def force_delete_pod(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(
        f"remove {namespace}/{pod} past its grace period, only once its containers are known to have "
        "stopped (its node gone, its kubelet stuck): a forced delete does not stop them",
        "delete", "pod", pod, "-n", namespace, "--grace-period=0", "--force",
        changes=True,
    )


def previous_logs(namespace: str, pod: str, container: str) -> Command | None:
    """The last words of a container that keeps failing (its previous run)."""
    if not valid_names(namespace, pod):
        return None
    pick = ("-c", container) if is_dns1123_label(container) else ("--all-containers",)
    return kubectl(
        f"why {namespace}/{pod} keeps failing: its last run's output",
        "logs", pod, "-n", namespace, *pick, "--previous", "--tail=50",
    )


def pod_spread(namespace: str, pod: str) -> Command | None:
    return _pod_jsonpath(
        namespace,
        pod,
        "{.spec.topologySpreadConstraints}",
        "the pod's topology spread constraints, as stored (matchLabelKeys already merged)",
    )


def pod_affinity(namespace: str, pod: str) -> Command | None:
    purpose = f"the pod affinity and anti-affinity of {namespace}/{pod}, as stored"
    return _pod_jsonpath(namespace, pod, "{.spec.affinity}", purpose)


def repelling_pods() -> Command:
    """The bound pods of the cluster with a required pod anti-affinity, and their nodes."""
    template = (
        "{range .items[?(@.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution)]}"
        '{.metadata.namespace}/{.metadata.name}{"\\t"}{.spec.nodeName}{"\\n"}{end}'
    )
    return kubectl(
        "every bound pod with a required anti-affinity, and its node: one on a node whose pods kubewhy did "
        "not read may refuse this pod in a domain they share",
        "get", "pods", "-A", "--field-selector", f"spec.nodeName!=,{NOT_TERMINAL}",
        "-o", f"jsonpath={template}",
    )


def pods_matching(namespace: str | None, selector: str) -> Command | None:
    """The bound pods a label selector picks (in one namespace, or all when None), with their nodes."""
    if not selector or (namespace is not None and not is_dns1123_label(namespace)):
        return None
    scope = ("-n", namespace) if namespace is not None else ("-A",)
    return kubectl(
        "the pods the selector matches, and the nodes they are on",
        "get", "pods", *scope, "-l", selector, "--field-selector", NOT_TERMINAL, "-o", "wide",
    )


def claims(namespace: str, names: Iterable[str]) -> Command | None:
    """The PVCs named (they exist), or, with no name, every PVC of the namespace."""
    valid = [n for n in dict.fromkeys(names) if is_dns1123_subdomain(n)]
    if not is_dns1123_label(namespace):
        return None
    if not valid:
        return kubectl(
            "the namespace's PersistentVolumeClaims: is the one the pod names there under another name?",
            "get", "pvc", "-n", namespace, "-o", "wide",
        )
    return kubectl(
        "the pod's PersistentVolumeClaims: status, volume, StorageClass",
        "get", "pvc", *valid, "-n", namespace, "-o", "wide",
    )


def persistent_volume(volume: str) -> Command | None:
    if not is_dns1123_subdomain(volume):
        return None
    return kubectl(
        f"where PV {volume} may be used: its zone labels and node affinity",
        "get", "pv", volume, "-o", 'jsonpath={.metadata.labels}{"\\n"}{.spec.nodeAffinity}',
    )


def storage_classes(names: Iterable[str]) -> Command | None:
    valid = [n for n in dict.fromkeys(names) if is_dns1123_subdomain(n)]
    if not valid:
        return None
    return kubectl(
        "the StorageClasses: provisioner, volumeBindingMode, allowedTopologies",
        "get", "storageclass", *valid, "-o", "yaml",
    )


def storage_capacities() -> Command:
    return kubectl(
        "the capacity each CSI driver publishes, per StorageClass and node topology (the scheduler "
        "provisions a claim only where one has room for it)",
        "get", "csistoragecapacities", "-A",
        "-o", "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,CLASS:.storageClassName,"
        "CAPACITY:.capacity,MAXIMUM:.maximumVolumeSize,TOPOLOGY:.nodeTopology",
    )


def csinode(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        f"the CSI drivers on {node} and how many volumes each may attach",
        "get", "csinode", node, "-o", "jsonpath={.spec.drivers}",
    )


_WHO = ("NAMESPACE:.metadata.namespace", "NAME:.metadata.name")


def _on_node(node: str, columns: Iterable[str], purpose: str) -> Command | None:
    """The pods counted on a node (the scheduler's own filter, terminating ones included), in columns."""
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        purpose,
        "get", "pods", "-A",
        "--field-selector", f"spec.nodeName={node},{NOT_TERMINAL}",
        "-o", "custom-columns=" + ",".join((*_WHO, *columns)),
    )


def pod_requests_on_node(node: str) -> Command | None:
    """What each pod on the node requests of cpu, memory and ephemeral storage."""
    return _on_node(
        node,
        (
            "CPU:.spec.containers[*].resources.requests.cpu",
            "MEMORY:.spec.containers[*].resources.requests.memory",
            "EPHEMERAL:.spec.containers[*].resources.requests.ephemeral-storage",
            "INIT_CPU:.spec.initContainers[*].resources.requests.cpu",
            "INIT_MEMORY:.spec.initContainers[*].resources.requests.memory",
        ),
        f"what each pod counted on {node} requests (the node's allocatable is in describe node)",
    )


def host_ports_on_node(node: str) -> Command | None:
    """The host ports each pod on the node holds."""
    return _on_node(
        node,
        (
            "HOSTNETWORK:.spec.hostNetwork",
            "HOSTPORTS:.spec.containers[*].ports[*].hostPort",
            "PROTOCOLS:.spec.containers[*].ports[*].protocol",
            "HOSTIPS:.spec.containers[*].ports[*].hostIP",
        ),
        f"the host ports the pods on {node} hold (hostNetwork pods hold their container ports)",
    )


def victims_on_node(node: str) -> Command | None:
    """Each pod's priority and whether it is being deleted."""
    return _on_node(
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
        "get", "events", "-A", "--field-selector", "reason=Preempted",
    )


def kueue_workload(namespace: str, workload: str) -> Command | None:
    """A Workload's conditions, one a line."""
    if not valid_names(namespace, workload):
        return None
    template = '{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}'
    return kubectl(
        "the Workload's admission conditions: why Kueue has not admitted it",
        "get", "workloads.kueue.x-k8s.io", workload, "-n", namespace, "-o", f"jsonpath={template}",
    )


def kueue_cluster_queue(queue: str) -> Command | None:
    """A ClusterQueue's quota per flavor and what is used of it."""
    if not is_dns1123_subdomain(queue):
        return None
    return kubectl(
        f"ClusterQueue {queue}: nominal quota per flavor and resource, and what admitted workloads use",
        "get", "clusterqueues.kueue.x-k8s.io", queue, "-o", "yaml",
    )
# — Dynamic Resource Allocation (`resource.k8s.io`) —


def resource_claim(namespace: str, claim: str) -> Command | None:
    if not valid_names(namespace, claim):
        return None
    return kubectl(
        f"claim {claim}: its requests, allocation (devices, nodeSelector) and reservedFor pods",
        "get", "resourceclaim", claim, "-n", namespace, "-o", "yaml",
    )


def resource_claims(namespace: str) -> Command | None:
    if not is_dns1123_label(namespace):
        return None
    return kubectl(
        "the namespace's claims and their state (pending, allocated, reserved, deleted)",
        "get", "resourceclaims", "-n", namespace,
    )


def claim_template(namespace: str, template: str) -> Command | None:
    if not valid_names(namespace, template):
        return None
    return kubectl(
        f"template {template}: what the claim made from it asks for",
        "get", "resourceclaimtemplate", template, "-n", namespace, "-o", "yaml",
    )


def pod_claims(namespace: str, pod: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    template = '{.spec.resourceClaims}{"\\n"}{.status.resourceClaimStatuses}{"\\n"}'
    return kubectl(
        "the claims the pod names and the ones made for it from templates",
        "get", "pod", pod, "-n", namespace, "-o", f"jsonpath={template}",
    )


def resource_slices(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(
        f"the devices DRA drivers publish on {node}, with their attributes, capacity and taints",
        "get", "resourceslices", "--field-selector", f"spec.nodeName={node}", "-o", "yaml",
    )


def device_class(name: str) -> Command | None:
    if not is_dns1123_subdomain(name):
        return None
    return kubectl(
        f"device class {name}: the selectors every device of the class must match",
        "get", "deviceclass", name, "-o", "yaml",
    )


def device_classes() -> Command:
    return kubectl("the device classes the cluster has", "get", "deviceclasses")


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
            "kubectl", "patch", kind, name, "-n", namespace, "--type", "json", "-p", body,
            "--dry-run=client", "-o", "yaml",
        )
    )
    return (
        Command(
            f"{written} > {shlex.quote(saved)}",
            f"{kind} {name} as it would read with the change, written to {saved}",
            changes=True,
        ),
        kubectl(
            f"delete {kind} {name}, then create it from {saved}", "replace", "--force", "-f", saved,
            changes=True,
        ),
    )
