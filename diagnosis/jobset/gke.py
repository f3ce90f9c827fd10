"""GKE's restart-loop workflow for JobSets (Google Cloud's diagnostic workflow for JobSet training
workloads that keep restarting: confirm the loop with `kube_jobset_restarts`, node-pool interruptions,
node-to-host mapping, then the coordinator's logs), filled in from the objects.

The queries run in Cloud Monitoring and Cloud Logging, not in the cluster, so they are `Snippet`s. What
the objects tell is filled in — the cluster name (when node names reveal it), the JobSet, the ±30 min
window around the last restart — and anything unknown keeps its `{placeholder}`, as the workflow says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta

from diagnosis.model import Snippet
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain
from diagnosis.objects import Object, labels, name, utc

NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
WINDOW = timedelta(minutes=30)

REMEDY_CAPACITY = (
    "Remedy 1 (low risk), for preemption: run long, critical training on GKE reserved or on-demand VMs "
    "instead of Spot, or use a compact placement policy to cut defragmentation interruptions."
)
REMEDY_HOST = (
    "Remedy 2 (high risk, destructive), only when the same gce-topology-host fails across attempts: "
    "cordon and drain the node, delete its VM (`gcloud compute instances delete NODE --zone ZONE`) so "
    "GKE recreates it on a healthy host, and open a support case naming the physical host."
)


def is_gke(nodes: Iterable[Object]) -> bool:
    return any(NODEPOOL_LABEL in labels(node) for node in nodes)


def cluster_name(nodes: Iterable[Object]) -> tuple[str, str] | None:
    """(cluster, node) when a node's name has GKE's form `gke-<cluster>-<pool>-<8 hex>-<4>` for its own
    `gke-nodepool` label; GKE shortens long names, in which case the form does not match."""
    for node in nodes:
        pool = labels(node).get(NODEPOOL_LABEL, "")
        form = re.fullmatch(
            rf"gke-(?P<cluster>[a-z0-9-]+?)-{re.escape(pool)}-[0-9a-f]{{8}}-[a-z0-9]{{4}}", name(node)
        )
        if pool and form and is_dns1123_label(form.group("cluster")):
            return form.group("cluster"), name(node)
    return None


def restart_snippets(
    cluster: str | None, namespace: str, jobset: str, coordinator_prefix: str, last_restart: datetime | None
) -> tuple[Snippet, ...]:
    """The workflow's queries, steps 1 to 4, those whose placeholders are all filled (the cluster's
    name, the JobSet's, its namespace, the window around the last restart): a query left with a
    placeholder is left out.

    `coordinator_prefix` is `<jobset>-<replicatedJob>-<jobIndex>-<podIndex>-`, the name every attempt's
    coordinator pod starts with."""
    c = cluster if cluster and is_dns1123_label(cluster) else "{cluster_name}"
    w = jobset if is_dns1123_subdomain(jobset) else "{workload_name}"
    ns = namespace if is_dns1123_label(namespace) else "{namespace}"
    start, end = (
        ("{start_time}", "{end_time}")
        if last_restart is None
        else (
            _rfc3339(last_restart - WINDOW),
            _rfc3339(last_restart + WINDOW),
        )
    )
    window = f'timestamp >= "{start}" AND timestamp <= "{end}"'
    coordinator = (
        f' AND resource.labels.pod_name:"{coordinator_prefix}"'
        if is_dns1123_subdomain(coordinator_prefix[:-1])
        else ""
    )
    queries = (
        Snippet(
            "Step 1 — is the JobSet really restarting in a loop? (needs GKE's JobSet metrics package)",
            "promql",
            f'kube_jobset_restarts{{jobset_name="{w}", cluster="{c}"}}',
        ),
        Snippet(
            "Step 2 — node-pool interruptions (PreemptionEvent, MaintenanceEvent, TerminationEvent)",
            "promql",
            "sum by (interruption_type, interruption_reason, node_pool_name, cluster_name) "
            f'( avg_over_time(kubernetes_io:node_pool_interruption_count{{cluster_name="{c}"}}[10m]) )',
        ),
        Snippet(
            "Step 2 — node-pool lifecycle logs around the last restart",
            "logging",
            f'resource.type="gke_nodepool" AND resource.labels.cluster_name="{c}" AND {window}',
        ),
        Snippet(
            "Step 3 — nodes that were not Ready",
            "promql",
            "sum by (status, condition, node_pool_name) "
            f'( kubernetes_io:node_status_condition{{cluster_name="{c}", condition="Ready", '
            'status="False"} )',
        ),
        Snippet(
            "Step 3 — map nodes to physical hosts (gce_topology_host)",
            "mql",
            "fetch k8s_node | metric 'kubernetes.io/node/cpu/total_cores' | "
            f"filter cluster_name == '{c}' | align next_older(1m) | every 1m | "
            "group_by [node_name, metadata.user.gce_topology_host, metadata.user.gke_nodepool], "
            "[val: max(value)]",
        ),
        Snippet(
            "Step 3 — host errors in the node logs around the last restart",
            "logging",
            f'resource.type="k8s_node" AND resource.labels.cluster_name="{c}" AND (textPayload:"host error" '
            'OR textPayload:"kernel panic" OR textPayload:"hardware failure" OR textPayload:"NodeNotReady") '
            f"AND {window}",
        ),
        Snippet(
            "Step 4A — the JobSet's pods by phase",
            "promql",
            f'sum by (phase) ( avg_over_time(kube_pod_status_phase{{cluster="{c}", pod=~"{w}.*"}}[10m]) )',
        ),
        Snippet(
            "Step 4B — the JobSet's unschedulable pods",
            "mql",
            "fetch k8s_pod | metric 'kubernetes.io/pod/status/unschedulable' | "
            f"filter cluster_name == '{c}' && pod_name ==~ '{w}.*' | align next_older(10m) | every 10m | "
            "group_by [pod_name], [val: max(value)]",
        ),
        Snippet(
            "Step 4C — the coordinator's container logs around the last restart (worker 0 of slice 0)",
            "logging",
            f'resource.type="k8s_container" AND resource.labels.cluster_name="{c}" AND '
            f'resource.labels.namespace_name="{ns}" AND labels."k8s-pod/jobset_sigs_k8s_io/jobset-name"="{w}"'
            f"{coordinator} AND {window}",
        ),
    )
    return tuple(q for q in queries if not any(p in q.text for p in PLACEHOLDERS))


PLACEHOLDERS = ("{cluster_name}", "{workload_name}", "{namespace}", "{start_time}", "{end_time}")
"""What stands in a query for a name or time that is not known (or not safe to quote)."""


def _rfc3339(when: datetime) -> str:
    return utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")
