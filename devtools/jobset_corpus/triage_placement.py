# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""/triage cases of topology spread and pod (anti-)affinity, each checked with the real
kube-scheduler."""

from __future__ import annotations

from typing import Any

from devtools.jobset_corpus.nodes import a3, cpu_node, eks_p4d, g2, gke_node, pool
from devtools.jobset_corpus.pods import app_pod, full_of
from devtools.jobset_corpus.scenario import TriageCases
from devtools.jobset_corpus.world import Obj, World, ts

CASES = TriageCases()
triage_case = CASES.case


def namespace_object(w: World, name: str, labels: dict[str, str] | None = None) -> Obj:
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "creationTimestamp": ts(90000),
                "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
    )


def spread(key: str, labels: dict[str, str], max_skew: int = 1, **more: Any) -> Obj:
    return {
        "topologySpreadConstraints": [
            {
                "labelSelector": {"matchLabels": labels},
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                **more,
            }
        ]
    }


def anti_affinity(key: str, labels: dict[str, str]) -> Obj:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


@triage_case("gke-spread-zones-l4")
def spread_zones_l4(w: World) -> None:
    """whisper-asr spreads over zones (maxSkew 1); us-central1-b and -c have one L4 node each, both
    full, so the only free L4s are in us-central1-a, which already has one replica more."""
    a = pool(w, 2, g2, "ml-prod", "l4-pool", zone="us-central1-a")
    b = pool(w, 1, g2, "ml-prod", "l4-pool-b", zone="us-central1-b")
    c = pool(w, 1, g2, "ml-prod", "l4-pool-c", zone="us-central1-c")
    labels = {"app": "whisper-asr"}
    constraint = spread("topology.kubernetes.io/zone", labels)
    owner = ("Deployment", "whisper-asr")
    for node in (a[0], a[0], b[0], c[0]):
        app_pod(w, "speech", owner, labels, ("nvidia.com/gpu", "1"), node=node, extra=constraint, created=600)
    full_of(w, "speech", ("StatefulSet", "tts-serve"), b[0], "1")
    full_of(w, "speech", ("StatefulSet", "tts-serve"), c[0], "1")
    message = (
        "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints, 3 Insufficient nvidia.com/gpu. "
        "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )
    app_pod(w, "speech", owner, labels, ("nvidia.com/gpu", "1"), extra=constraint, unschedulable=message)


@triage_case("gke-spread-min-domains")
def spread_min_domains(w: World) -> None:
    """vLLM replicas must span three zones (minDomains 3) but H100 nodes exist in two: the global
    minimum stays 0, and any zone with a replica is one too many."""
    a = pool(w, 1, a3, "ml-prod", "a3-pool-a", zone="us-central1-a")
    b = pool(w, 1, a3, "ml-prod", "a3-pool-b", zone="us-central1-b")
    cpu_node(w, "ml-prod")
    labels = {"app": "vllm-llama-70b"}
    constraint = spread(
        "topology.kubernetes.io/zone", labels, minDomains=3, nodeAffinityPolicy="Honor"
    )
    extra = {**constraint, "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}}
    for node in (a[0], b[0]):
        app_pod(w, "serving", ("StatefulSet", "vllm-llama-70b"), labels, ("nvidia.com/gpu", "4"), node=node,
                extra=extra, created=700)
    message = (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )
    app_pod(w, "serving", ("StatefulSet", "vllm-llama-70b"), labels, ("nvidia.com/gpu", "4"), extra=extra,
            unschedulable=message)


@triage_case("eks-spread-hostname")
def spread_hostname(w: World) -> None:
    """bert-pretrain spreads over hosts (maxSkew 1); the third p4d node is full of another team's
    pods, but it still counts as a domain with 0 of them, so each other node is one too many."""
    nodes = [eks_p4d(w, i) for i in range(3)]
    labels = {"app": "bert-pretrain", "team": "nlp"}
    constraint = spread("kubernetes.io/hostname", {"app": "bert-pretrain"})
    for node in nodes[:2]:
        app_pod(w, "nlp", ("Job", "bert-pretrain"), labels, ("nvidia.com/gpu", "4"), node=node, extra=constraint,
                created=300)
    full_of(w, "research", ("Job", "protein-fold-312"), nodes[2], "8")
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 No preemption victims found for incoming pod."
    )
    app_pod(w, "nlp", ("Job", "bert-pretrain"), labels, ("nvidia.com/gpu", "4"), extra=constraint,
            unschedulable=message)


@triage_case("gke-anti-affinity-one-per-node")
def anti_affinity_one_per_node(w: World) -> None:
    """sdxl-serve keeps one replica per node; each L4 node already runs one (with an L4 free)."""
    _one_per_node(w, placed=800, pending=45, revision=0)


@triage_case("gke-anti-affinity-rollout")
def anti_affinity_rollout(w: World) -> None:
    """A rolling update of sdxl-serve, one replica per node, on as many nodes as replicas: the default
    strategy (maxSurge 25 %, rounded up to 1) starts the new ReplicaSet's pod first, which each node's
    old pod keeps out; the old pods end only once the new one is ready."""
    _one_per_node(w, placed=3000, pending=25, revision=1)


def _one_per_node(w: World, placed: float, pending: float, revision: int) -> None:
    """Three L4 nodes each running a pod of sdxl-serve (required anti-affinity on hostname), and one
    more of its ReplicaSet of `revision`, Pending; `placed`, `pending`: minutes since each was made."""
    nodes = pool(w, 3, g2, "ml-prod", "l4-pool")
    labels = {"app": "sdxl-serve"}
    extra = anti_affinity("kubernetes.io/hostname", labels)
    for node in nodes:
        app_pod(w, "inference", ("Deployment", "sdxl-serve"), labels, ("nvidia.com/gpu", "1"), node=node,
                extra=extra, created=placed)
    message = (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    app_pod(w, "inference", ("Deployment", "sdxl-serve"), labels, ("nvidia.com/gpu", "1"), extra=extra,
            unschedulable=message, created=pending, revision=revision)


@triage_case("gke-pod-affinity-cache-zone")
def pod_affinity_cache_zone(w: World) -> None:
    """The ranker must run in the zone of its feature cache (required pod affinity by zone, to the
    namespaces labelled serves=recsys); the cache runs in us-central1-b, the L4 nodes are in
    us-central1-a."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    cache_nodes = [gke_node(w, "ml-prod", "default-pool", "e2-standard-8", {}, {}, zone="us-central1-b")]
    namespace_object(w, "recsys", {"team": "recsys", "tier": "online"})
    namespace_object(w, "platform-cache", {"team": "platform", "serves": "recsys"})
    # The cache keeps batch pods of any namespace labelled tier=batch off its nodes.
    batch_off = {
        "labelSelector": {"matchLabels": {"workload": "batch"}},
        "namespaceSelector": {"matchLabels": {"tier": "batch"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    for _ in range(2):
        app_pod(w, "platform-cache", ("StatefulSet", "feature-cache"), {"app": "feature-cache"}, ("cpu", "2"),
                node=cache_nodes[0], created=2000,
                extra={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [batch_off]}}})
    term = {
        "labelSelector": {"matchLabels": {"app": "feature-cache"}},
        "namespaceSelector": {"matchLabels": {"serves": "recsys"}},
        "topologyKey": "topology.kubernetes.io/zone",
    }
    extra = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    del nodes
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match pod affinity rules. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    app_pod(w, "recsys", ("Deployment", "ranker"), {"app": "ranker"}, ("nvidia.com/gpu", "1"), extra=extra,
            unschedulable=message)
