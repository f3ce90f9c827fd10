"""The `label-mismatch` step: kube-scheduler's NodeAffinity Filter (`nodeaffinity/node_affinity.go`:
the nodeSelector and the required node affinity together, `diagnosis.triage.scheduling`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from diagnosis.commands import collect
from diagnosis.model import Command, PodVerdict
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, text
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.fixes import (
    CHECKED,
    Change,
    node_change,
    patch_text,
    pod_change,
    pool_of,
    selecting,
    where,
)
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step
from diagnosis.triage.resources import offer
from diagnosis.triage.scheduling import node_selector, required_terms, selector_keys


def label_mismatch(ask: Ask, node: Object) -> str | None:
    return ask.placement.mismatch(node)


def unconstrained(ask: Ask) -> bool:
    """The pod has no nodeSelector and no required node affinity: every node matches (NodeAffinity's
    PreFilter returns `Skip` for it, `nodeaffinity/node_affinity.go`)."""
    return not ask.placement.constrained


def advise(funnel: Funnel) -> Advice:
    pod, nodes = funnel.view.pod, funnel.last.entered
    selector = {k: v for k, v in node_selector(pod).items() if isinstance(k, str) and isinstance(v, str)}
    absent = [
        f"{k}={v}" for k, v in sorted(selector.items()) if not any(labels(n).get(k) == v for n in nodes)
    ]
    if absent:
        summary = f"No node has the label {', '.join(absent)} that the pod's nodeSelector asks for"
    else:
        first = funnel.last.dropped[0]
        summary = f"No node matches the pod's node selector and affinity: {name(first.node)} {first.why}"
    keys = selector_keys(pod)
    evidence = tuple(label_inventory(key, nodes) for key in keys[:4])
    commands = collect(kubectl.nodes_with_labels(keys), pod_placement(namespace(pod), name(pod)))
    return Advice(summary, evidence, commands, fixes=_fixes(funnel))


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Select a value that exists, the closest to the one asked first (`nvidia-a100` asked,
    `nvidia-tesla-a100` there): per node, the selector (and the failing `In` requirements of the
    affinity) rewritten to that node's values, each distinct patch once; then label the nodes that
    lack a selected key, a change in the cluster. Which nodes each opens is what the check finds."""
    pod, requests = funnel.view.pod, funnel.ask.requests
    seen: dict[str, tuple[tuple[float, bool, str], Change]] = {}
    closeness: dict[str, float] = {}  # by patch: a pool's nodes all select the same values
    for node in funnel.last.entered:
        patch = selecting(pod, node)
        if patch is None:
            continue
        key = patch_text(patch)
        if key not in closeness:
            closeness[key] = _closeness(pod, patch)
        rank = (-closeness[key], not all(offer(node, r).allocatable for r in requests), name(node))
        if key in seen and seen[key][0] <= rank:
            continue
        shown = _selector_words(patch)
        seen[key] = rank, pod_change(f"select {shown} {where(pod)}: opens {{opens}}", patch)
    ranked = [change for _, change in sorted(seen.values(), key=lambda found: found[0])]
    labelling = _labelling(funnel)
    return (*ranked[: CHECKED - len(labelling)], *labelling)


def _closeness(pod: Object, patch: Mapping[str, Any]) -> float:
    """How alike the values a patch selects are to the ones the pod asks (1: the same), the least
    alike of them: a misspelt or renamed value is the likely cause."""
    body = mapping(patch.get("spec"))
    asked = node_selector(pod)
    ratios = [
        SequenceMatcher(None, str(asked.get(k, "")), str(v)).ratio()
        for k, v in mapping(body.get("nodeSelector")).items()
    ]
    wanted: dict[str, list[str]] = {}
    for term in required_terms(pod) or ():
        for r in map(mapping, sequence(term.get("matchExpressions"))):
            wanted.setdefault(text(r.get("key")), []).extend(map(str, sequence(r.get("values"))))
    for term in map(mapping, sequence(_terms(body).get("nodeSelectorTerms"))):
        for r in map(mapping, sequence(term.get("matchExpressions"))):
            for value in map(str, sequence(r.get("values"))):
                asked_values = wanted.get(text(r.get("key"))) or [""]
                ratios.append(max(SequenceMatcher(None, a, value).ratio() for a in asked_values))
    return min(ratios, default=1.0)


def _terms(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The required node affinity a pod patch writes."""
    return mapping(
        mapping(mapping(body.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )


LABELLED_POOLS = 2
"""Pools offered the labels the pod selects, one change each: each costs a funnel run."""

PLATFORM_DOMAINS = (
    "kubernetes.io",
    "k8s.io",
    "cloud.google.com",
    "nvidia.com",
    "amd.com",
    "google.com",
    "amazonaws.com",
    "azure.com",
    "karpenter.sh",
)
"""Label key prefixes (and their subdomains) written by the platform or a hardware labeller (the
kubelet, GKE, EKS, AKS, Karpenter, NVIDIA GPU Feature Discovery): they describe the node, so giving a
node one by hand would lie about its hardware (and be overwritten). `node-role.kubernetes.io` is the
one left to people (the kubelet may not set it: NodeRestriction)."""


def _by_hand(key: str) -> bool:
    """A label key people set, which a fix may tell them to set on a node."""
    domain = key.rpartition("/")[0]
    if not domain or domain == "node-role.kubernetes.io":
        return True
    return not any(domain == d or domain.endswith("." + d) for d in PLATFORM_DOMAINS)


def _labelling(funnel: Funnel) -> tuple[Change, ...]:
    """When no node carries a label the nodeSelector asks and people set it: give it to the nodes
    that lack the key and offer the devices the pod asks, a pool at a time (its first nodes)."""
    pod, requests, nodes = funnel.view.pod, funnel.ask.requests, funnel.last.entered
    missing = {
        k: v
        for k, v in node_selector(pod).items()
        if isinstance(k, str) and isinstance(v, str) and _by_hand(k)
        if not any(labels(n).get(k) == v for n in nodes)
    }
    if not missing:
        return ()
    pools: dict[str, list[Object]] = {}
    for node in sorted(nodes, key=name):
        if any(k in labels(node) for k in missing):
            continue
        if all(offer(node, r).allocatable for r in requests):
            pools.setdefault(pool_of([node]), []).append(node)
    words = ", ".join(f"{k}={v}" for k, v in sorted(missing.items()))
    changes = []
    for chosen in list(pools.values())[:LABELLED_POOLS]:
        hosts = [name(n) for n in chosen[:LABELLED_NODES]]
        changes.append(
            node_change(
                f"label {pool_of(chosen)} {words} (no node has it): opens {{opens}}",
                {host: {"metadata": {"labels": missing}} for host in hosts},
                collect(kubectl.label_nodes(hosts, missing)),
            )
        )
    return tuple(changes)


LABELLED_NODES = 8
"""Nodes of a pool a label fix names: enough to place a pod, few enough to read in a command."""


def _selector_words(patch: Mapping[str, Any]) -> str:
    body = mapping(patch.get("spec"))
    parts = [f"nodeSelector {k}={v}" for k, v in sorted(mapping(body.get("nodeSelector")).items())]
    for term in map(mapping, sequence(_terms(body).get("nodeSelectorTerms"))):
        for r in map(mapping, sequence(term.get("matchExpressions"))):
            if r.get("operator") == "In":
                parts.append(f"affinity {r.get('key')} In [{', '.join(map(str, sequence(r.get('values'))))}]")
    return "; ".join(parts) or "the selector"


def pod_placement(namespace: str, pod: str) -> Command | None:
    template = (
        '{"nodeSelector: "}{.spec.nodeSelector}{"\\n"}'
        '{"required affinity: "}'
        '{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution}{"\\n"}'
    )
    return pod_jsonpath(
        namespace, pod, template, "the pod's nodeSelector and required node affinity, as stored"
    )


def label_inventory(key: str, nodes: Sequence[Object]) -> str:
    """`label K on the 9 nodes: a ×3, (absent) ×3, b ×2`: what the nodes have for a selected key."""
    counts: dict[str, int] = {}
    for node in nodes:
        value = labels(node).get(key)
        shown = "(absent)" if value is None else value or '""'
        counts[shown] = counts.get(shown, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"{value} ×{n}" for value, n in ranked[:6])
    more = f", and {len(ranked) - 6} other values" if len(ranked) > 6 else ""
    return f"label {key} on the {len(nodes)} node{'' if len(nodes) == 1 else 's'}: {listed}{more}"


STEP = Step(
    PodVerdict.LABEL_MISMATCH,
    "matches the nodeSelector and required node affinity",
    label_mismatch,
    advise,
    ("NodeName", "NodeAffinity"),
    skips=unconstrained,
)
