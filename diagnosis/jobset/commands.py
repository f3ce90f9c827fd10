"""The kubectl commands only the JobSet explainers suggest, with their wording, built with
`diagnosis.commands` (which says how every command is quoted and its names checked).
"""

from __future__ import annotations

from diagnosis.commands import describe, events_about, kubectl, label_selector, pods_on_node, valid_names
from diagnosis.jobset.keys import COMPLETION_INDEX_KEY, JOB_INDEX_LABEL, REPLICATED_JOB_LABEL
from diagnosis.model import Command
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value
from diagnosis.relations import JOBSET_NAME_LABEL

JOBSET_SYSTEM = "jobset-system"
"""Where the release manifests install the JobSet controller (Helm installs may differ)."""
JOBSETS = "jobsets.jobset.x-k8s.io"
WORKLOADS = "workloads.kueue.x-k8s.io"


def describe_jobset(namespace: str, name: str) -> Command | None:
    return describe(JOBSETS, namespace, name, "The JobSet's conditions, restarts and recent events")


def child_jobs(namespace: str, jobset: str) -> Command | None:
    selector = label_selector(**{JOBSET_NAME_LABEL: jobset})
    if selector is None or not valid_names(namespace):
        return None
    return kubectl("The JobSet's child Jobs", "get", "jobs", "-n", namespace, "-l", selector)


def child_pods(namespace: str, jobset: str) -> Command | None:
    selector = label_selector(**{JOBSET_NAME_LABEL: jobset})
    if selector is None or not valid_names(namespace):
        return None
    return kubectl(
        "The JobSet's pods and their nodes", "get", "pods", "-n", namespace, "-l", selector, "-o", "wide"
    )


def job_pods(namespace: str, jobset: str, replicated_job: str, index: str) -> Command | None:
    """The pods of one child Job, leader and followers, found as the webhook finds the leader."""
    selector = label_selector(
        **{JOBSET_NAME_LABEL: jobset, REPLICATED_JOB_LABEL: replicated_job, JOB_INDEX_LABEL: index}
    )
    if selector is None or not valid_names(namespace):
        return None
    return kubectl(
        f"Every pod of child Job {jobset}-{replicated_job}-{index}, leader (index 0) included",
        "get",
        "pods",
        "-n",
        namespace,
        "-l",
        selector,
        "-o",
        "wide",
    )


def events_of(namespace: str, name: str, what: str) -> Command | None:
    return events_about(namespace, name, f"The events about {what} {name}")


def logs(namespace: str, pod: str, container: str, previous: bool) -> Command | None:
    """The container's log; `previous` for the run before a restart, while the container runs again."""
    if not valid_names(namespace, pod) or not is_dns1123_label(container):
        return None
    args = ("logs", pod, "-n", namespace, "-c", container, *(("--previous",) if previous else ()))
    run = "its previous run" if previous else "its last run"
    return kubectl(f"The log of container {container} in {pod} ({run})", *args)


def workloads(namespace: str) -> Command | None:
    if not valid_names(namespace):
        return None
    return kubectl(
        "Kueue's Workloads in the namespace and whether they are admitted", "get", WORKLOADS, "-n", namespace
    )


def describe_workload(namespace: str, name: str) -> Command | None:
    return describe(
        WORKLOADS, namespace, name, "Why Kueue has not admitted the Workload (its conditions and events)"
    )


def webhook_pods(namespace: str) -> tuple[Command | None, ...]:
    """The controller pods that serve a webhook, and why they are not running."""
    if not valid_names(namespace):
        return ()
    return (
        kubectl(
            "The controller pods serving the webhook (kustomize: jobset-controller-manager-…, "
            "Helm: jobset-controller-…; Kueue: kueue-controller-manager-…) and whether they run",
            "get",
            "pods",
            "-n",
            namespace,
            "-o",
            "wide",
        ),
        kubectl(
            "Why those controller pods are not ready (events, conditions)",
            "describe",
            "pods",
            "-n",
            namespace,
        ),
    )


def jobset_version() -> Command:
    return kubectl(
        "The installed JobSet version (the image tag of the controller)",
        "get",
        "pods",
        "-n",
        JOBSET_SYSTEM,
        "-o",
        "jsonpath={.items[*].spec.containers[*].image}",
    )


def leaders_everywhere(phase: str) -> Command:
    return kubectl(
        f"JobSet leader pods (completion index 0) in phase {phase}, in every namespace",
        "get",
        "pods",
        "-A",
        "-l",
        f"{COMPLETION_INDEX_KEY}=0,{JOBSET_NAME_LABEL}",
        "--field-selector",
        f"status.phase={phase}",
        "-o",
        "wide",
    )


def failed_creates_everywhere() -> Command:
    return kubectl(
        "Every FailedCreate event (the Job controller's pod-create refusals), in every namespace",
        "get",
        "events",
        "-A",
        "--field-selector",
        "reason=FailedCreate",
    )


def jobsets_everywhere() -> Command:
    return kubectl("Every JobSet and its state", "get", JOBSETS, "-A")


def nodes_with_label(key: str) -> Command | None:
    if not is_label_key(key):
        return None
    return kubectl(
        f"Which nodes carry the topology label {key} (empty column: missing)", "get", "nodes", "-L", key
    )


def bound_pods(node: str) -> Command | None:
    return pods_on_node(node, f"The pods still bound to node {node}")


def quota_everywhere(quota: str) -> Command | None:
    if not is_dns1123_subdomain(quota):
        return None
    return kubectl(
        f"ResourceQuota {quota}: used and hard limits",
        "get",
        "resourcequotas",
        "-A",
        "--field-selector",
        f"metadata.name={quota}",
        "-o",
        "wide",
    )


def endpoints(namespace: str) -> Command | None:
    """The namespace's Endpoints: a webhook service without addresses refuses what it covers."""
    if not valid_names(namespace):
        return None
    return kubectl(
        "The webhook services' endpoints: the ready pods behind them (none: every create is refused)",
        "get",
        "endpoints",
        "-n",
        namespace,
        "-o",
        "wide",
    )


def describe_quota(namespace: str, quota: str) -> Command | None:
    return describe("resourcequota", namespace, quota, f"ResourceQuota {quota}: used and hard limits")


def runtimeclasses() -> Command:
    return kubectl(
        "The RuntimeClasses that exist (the missing one is not among them)", "get", "runtimeclasses"
    )


def limitranges(namespace: str) -> Command | None:
    if not valid_names(namespace):
        return None
    return kubectl(
        "The LimitRanges of the namespace and their bounds", "describe", "limitranges", "-n", namespace
    )


def delete_pod(namespace: str, pod: str, purpose: str) -> Command | None:
    if not valid_names(namespace, pod):
        return None
    return kubectl(purpose, "delete", "pod", pod, "-n", namespace, changes=True)


def resume(namespace: str, jobset: str) -> Command | None:
    if not valid_names(namespace, jobset):
        return None
    return kubectl(
        "Resume the JobSet (only if nothing is meant to hold it, such as a Kueue queue)",
        "patch",
        JOBSETS,
        jobset,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"suspend":false}}',
        changes=True,
    )


def isolate_node(node: str, proven: bool) -> tuple[Command | None, ...]:
    """Remedy 2 of the GKE restart-loop workflow: take a host that keeps failing out of service.
    `proven` when the objects show it failing again; otherwise the purpose says to check first."""
    if not is_dns1123_subdomain(node):
        return ()
    when = "it fails again and again" if proven else "only once its conditions show it failing again"
    return (
        kubectl(f"DESTRUCTIVE ({when}): stop scheduling on {node}", "cordon", node, changes=True),
        kubectl(
            f"DESTRUCTIVE ({when}): evict every pod from {node} before its VM is recreated",
            "drain",
            node,
            "--ignore-daemonsets",
            "--delete-emptydir-data",
            changes=True,
        ),
    )


def label_node(node: str, key: str, value: str) -> Command | None:
    if not (is_dns1123_subdomain(node) and is_label_key(key) and is_label_value(value)):
        return None
    return kubectl(
        f"Give node {node} the topology label {key}={value}",
        "label",
        "node",
        node,
        f"{key}={value}",
        changes=True,
    )


def pending_everywhere() -> Command:
    return kubectl(
        "The pods waiting to be scheduled, in every namespace: the one the message is about is among them",
        "get",
        "pods",
        "-A",
        "--field-selector",
        "spec.nodeName=,status.phase=Pending",
    )


def scale_to_zero(kind: str, namespace: str, name: str) -> Command | None:
    """Scale a Deployment or StatefulSet to zero: deleting its pods would only have them made again."""
    if kind not in ("Deployment", "StatefulSet") or not valid_names(namespace, name):
        return None
    return kubectl(
        f"Scale {kind} {namespace}/{name} to zero to free its devices (note its replicas to restore them)",
        "scale",
        kind.lower(),
        name,
        "-n",
        namespace,
        "--replicas=0",
        changes=True,
    )
