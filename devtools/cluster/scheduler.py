"""Pending pods and what kube-scheduler says about them: each node counted under the first Filter
plugin that rejects it (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit, in the
default plugin order), the `PodScheduled=False` condition and the `FailedScheduling` event."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from devtools.cluster.catalog import CLUSTER, MAX_PODS, NOW, PENDING_SHAPES, PENDING_SHARE, Obj
from devtools.cluster.pods import add_pod
from devtools.cluster.units import micro_ts, ts
from devtools.cluster.workloads import job, workload
from devtools.cluster.world import Workload, World


def add_pending_pods(world: World, pending: int | None = None) -> tuple[tuple[str, str], tuple[str, str]]:
    """`pending` pods (None: `PENDING_SHARE` of all pods), pending for five reasons; returns the pinned
    and unpinned targets."""
    wanted = round(len(world.pods) * PENDING_SHARE) if pending is None else pending
    total = max(len(PENDING_SHAPES), wanted)
    firsts: list[tuple[str, str]] = []
    for share, namespace, kind, shape in PENDING_SHAPES:
        created = NOW - timedelta(minutes=20 + world.rng.randrange(30))
        if kind == "Job":
            wl = job(world, namespace, f"{shape.name}-{world.hex(4)}", shape, created=created)
        else:
            wl = workload(world, namespace, kind, f"{shape.name}-{world.suffix(10)}", shape, created=created)
        message = unschedulable(world, wl)
        for i in range(max(1, round(share * total))):
            pod = add_pod(world, wl, None)
            world.events.append(failed_scheduling(world, pod, message, created))
            if i == 0:
                firsts.append((namespace, pod["metadata"]["name"]))
    return firsts[0], firsts[1]


def unschedulable(world: World, wl: Workload) -> str:
    """Mark the pods of `wl` unschedulable (`PodScheduled=False`) with the scheduler's message, and
    return the message."""
    message = scheduler_message(world, wl)
    wl.conditions.append(
        {
            "lastProbeTime": None,
            "lastTransitionTime": ts(wl.created),
            "message": message,
            "reason": "Unschedulable",
            "status": "False",
            "type": "PodScheduled",
        }
    )
    return message


def scheduler_message(world: World, wl: Workload) -> str:
    """What kube-scheduler v1.33 writes for a pod of `wl` against the nodes as they are: each node
    counted under the first filter that rejects it, then the preemption summary (all pods here run
    at priority 0, so no node has victims)."""
    reasons: Counter[str] = Counter()
    unresolvable = 0
    for node in world.nodes:
        failed, final = filter_reasons(wl.spec, wl.requests, node, world.used[node["metadata"]["name"]])
        reasons.update(failed)
        unresolvable += final
    n = len(world.nodes)
    histogram = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
    preemption = [
        f"{count} {text}"
        for count, text in (
            (n - unresolvable, "No preemption victims found for incoming pod"),
            (unresolvable, "Preemption is not helpful for scheduling"),
        )
        if count
    ]
    return (
        f"0/{n} nodes are available: {histogram}. "
        f"preemption: 0/{n} nodes are available: {', '.join(sorted(preemption))}."
    )


def filter_reasons(
    spec: Obj, requests: dict[str, int], node: Obj, used: Counter[str]
) -> tuple[list[str], bool]:
    """The reasons kube-scheduler's first failing Filter plugin gives for `node` (default plugin
    order) and whether preemption cannot help there. A node the pod fits gives ([], False)."""
    tolerations = spec.get("tolerations", [])
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    if node["spec"].get("unschedulable") and not _tolerated(cordon, tolerations):
        return ["node(s) were unschedulable"], True
    for taint in node["spec"].get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute") and not _tolerated(taint, tolerations):
            return [f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"], True
    labels = node["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in spec.get("nodeSelector", {}).items()):
        return ["node(s) didn't match Pod's node affinity/selector"], True
    if used["pods"] >= MAX_PODS:
        return ["Too many pods"], False
    short = [f"Insufficient {r}" for r, want in requests.items() if allocatable(node, r) - used[r] < want]
    return short, False


def _tolerated(taint: Obj, tolerations: list[Obj]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def allocatable(node: Obj, resource: str) -> int:
    """Allocatable in the generator's units: millicores, MiB, or a count."""
    value = node["status"]["allocatable"].get(resource, "0")
    if resource == "cpu":
        return int(value[:-1]) if value.endswith("m") else int(value) * 1000
    if resource == "memory":
        return int(value.removesuffix("Ki")) // 1024
    return int(value)


def failed_scheduling(world: World, pod: Obj, message: str, since: datetime) -> Obj:
    """The scheduler's Warning event (events.k8s.io recorder, as the core v1 API shows it)."""
    meta = pod["metadata"]
    last = NOW - timedelta(seconds=world.rng.randrange(5, 300))
    return {
        "action": "Scheduling",
        "apiVersion": "v1",
        "eventTime": micro_ts(since + timedelta(microseconds=world.rng.randrange(10**6))),
        "firstTimestamp": None,
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "resourceVersion": meta["resourceVersion"],
            "uid": meta["uid"],
        },
        "kind": "Event",
        "lastTimestamp": None,
        "message": message,
        "metadata": {
            "creationTimestamp": ts(since),
            "name": f"{meta['name']}.{world.hex(16)}",
            "namespace": meta["namespace"],
            "resourceVersion": world.rv(),
            "uid": world.uid(),
        },
        "reason": "FailedScheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": f"default-scheduler-gke-{CLUSTER}-control-plane",
        "series": {
            "count": 1 + int((NOW - since).total_seconds()) // 60,
            "lastObservedTime": micro_ts(last),
        },
        "source": {},
        "type": "Warning",
    }
