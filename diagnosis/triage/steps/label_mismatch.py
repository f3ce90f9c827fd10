"""The `label-mismatch` step: kube-scheduler's NodeAffinity Filter (`nodeaffinity/node_affinity.go`:
the nodeSelector and the required node affinity together, `diagnosis.triage.scheduling`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis.commands import collect
from diagnosis.model import Command, PodVerdict
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.fixes import CHECKED, Change, patch_text, pod_change, selecting, where
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step
from diagnosis.triage.resources import offer
from diagnosis.triage.scheduling import node_selector, selector_keys


def label_mismatch(ask: Ask, node: Object) -> str | None:
    return ask.placement.mismatch(node)


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
    """Select a value that exists: per node that offers the devices the pod asks, the selector (and
    the failing `In` requirements of the affinity) rewritten to that node's values. Each distinct
    patch once; which pool it opens is what the check finds."""
    pod, requests = funnel.view.pod, funnel.ask.requests
    nodes = sorted(
        funnel.last.entered,
        key=lambda n: (not all(offer(n, r).allocatable for r in requests), name(n)),
    )
    seen: dict[str, Change] = {}
    for node in nodes:
        patch = selecting(pod, node)
        if patch is None or (key := patch_text(patch)) in seen:
            continue
        shown = _selector_words(patch)
        seen[key] = pod_change(f"select {shown} {where(pod)}: opens {{opens}}", patch)
        if len(seen) >= CHECKED:
            break
    return tuple(seen.values())


def _selector_words(patch: Mapping[str, Any]) -> str:
    body = mapping(patch.get("spec"))
    parts = [f"nodeSelector {k}={v}" for k, v in sorted(mapping(body.get("nodeSelector")).items())]
    affinity = mapping(mapping(body.get("affinity")).get("nodeAffinity"))
    required = mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in map(mapping, sequence(required.get("nodeSelectorTerms"))):
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
)
