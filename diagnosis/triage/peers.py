"""The pods, nodes and namespaces that the pod's inter-pod rules (pod affinity, anti-affinity,
topology spread) read, shared by the readers (which fetch them) and the classifier (which keeps
exactly the same ones, so a snapshot holding more answers as the live cluster does).

Each rule reads the pods matching one label selector in some namespaces: a `Query`, which the API
server answers with a `labelSelector` (and the namespaces whose labels a `namespaceSelector` picks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from diagnosis.objects import Object, labels, mapping, meta, name, namespace, sequence, spec, text
from diagnosis.relations import holds_node, node_name, nominated_node, workload
from diagnosis.selectors import Selector
from diagnosis.views import TriageView


@dataclass(frozen=True)
class Query:
    """Pods matching `selector` in the namespaces named, plus those whose Namespace matches
    `namespace_selector` (None: no selector; everything: every namespace)."""

    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector | None = None

    @property
    def everywhere(self) -> bool:
        return self.namespace_selector is not None and self.namespace_selector.everything

    def in_namespace(self, ns: str, namespace_labels: Mapping[str, Mapping[str, str]]) -> bool:
        """`AffinityTerm.Matches`'s namespace half, with the Namespace labels read."""
        if ns in self.namespaces or self.everywhere:
            return True
        selector = self.namespace_selector
        return selector is not None and ns in namespace_labels and selector.matches(namespace_labels[ns])

    def matches(self, pod: Object, namespace_labels: Mapping[str, Mapping[str, str]]) -> bool:
        return self.in_namespace(namespace(pod), namespace_labels) and self.selector.matches(labels(pod))


def namespace_labels(view: TriageView) -> dict[str, Mapping[str, str]]:
    """Namespace name → its labels, for the Namespaces the view holds."""
    return {name(ns): labels(ns) for ns in view.peers.namespaces}


def universe(view: TriageView, named: Mapping[str, Object] | None = None) -> dict[str, Object]:
    """Every node the view holds, by name: the candidates and the peers' nodes. `named`: the view's
    nodes by name already, when every one of them has a name of its own."""
    found: dict[str, Object] = dict(named) if named is not None else {}
    for node in (*(view.nodes if named is None else ()), *view.peers.nodes):
        found.setdefault(name(node), node)
    return found


def existing(
    view: TriageView, queries: Iterable[Query], nearby: Iterable[Object], nodes: Mapping[str, Object]
) -> tuple[Object, ...]:
    """The pods the inter-pod rules look at: bound, not terminal, on a node the view holds (`nodes`:
    its `universe`), and either matching a query or `nearby` (those counted on the nodes that reached
    the free-slot step: the bound pods every reader fetches). The pod itself never counts."""
    kept_queries = tuple(q for q in queries if not q.selector.nothing)
    ns_labels = namespace_labels(view)
    me = (namespace(view.pod), name(view.pod))
    found: dict[tuple[str, str], Object] = {}
    if kept_queries:
        for pod in view.peers.pods:
            if any(q.matches(pod, ns_labels) for q in kept_queries):
                found.setdefault((namespace(pod), name(pod)), pod)
    for pod in nearby:
        found.setdefault((namespace(pod), name(pod)), pod)
    return tuple(
        p for key, p in sorted(found.items()) if key != me and holds_node(p) and node_name(p) in nodes
    )


def nominated_on(
    view: TriageView, counted: Mapping[str, tuple[Object, ...]]
) -> dict[str, tuple[Object, ...]]:
    """Node → the unbound pods nominated to it that count there (`counted`: `funnel.Ask.pods`, which
    holds those of the pod's priority or more). The scheduler filters such a node twice, with them and
    without them, and keeps it only if both pass (`RunFilterPluginsWithNominatedPods`): the inter-pod
    rules meet them on that node alone, not on the rest of its domain."""
    found = {}
    for node in sorted({nominated_node(p) for p in view.nominated_pods}):
        here = tuple(p for p in counted.get(node, ()) if nominated_node(p))
        if here:
            found[node] = here
    return found


def _job(pod: Object) -> str:
    """The Job that made the pod (its controller ownerReference), or ""."""
    for ref in map(mapping, sequence(meta(pod).get("ownerReferences"))):
        if ref.get("controller") is True and ref.get("kind") == "Job":
            return text(ref.get("name"))
    return ""


def owner_text(pod: Object) -> str:
    """`ml/trainer-0 (Job llama-workers-0 of JobSet llama, on node-1)`: the pod, what runs it
    (`diagnosis.relations.workload`) and the node it is bound or nominated to."""
    kind, owner_name = workload(pod)
    job = _job(pod)
    what = "" if kind == "Pod" else f"{kind} {owner_name}"
    if kind == "JobSet" and job:
        what = f"Job {job} of JobSet {owner_name}"
    bound, nominated = node_name(pod), nominated_node(pod)
    where = f"on {bound}" if bound else f"nominated to {nominated}" if nominated else ""
    about = ", ".join(part for part in (what, where) if part)
    return f"{namespace(pod)}/{name(pod)}" + (f" ({about})" if about else "")


def owners_text(pods: Iterable[Object], jobs: bool = True) -> str:
    """What runs these pods, each workload once: `JobSet ml/llama (Jobs llama-w-0, llama-w-1);
    Deployment ml/sdxl-serve` (without a JobSet's Jobs: `jobs` False); a pod nothing made is named
    itself."""
    found: dict[str, list[str]] = {}
    for pod in pods:
        kind, owner_name = workload(pod)
        listed = found.setdefault(f"{kind} {namespace(pod)}/{owner_name}".replace("Pod ", "pod "), [])
        if jobs and kind == "JobSet" and (job := _job(pod)) and job not in listed:
            listed.append(job)
    return "; ".join(
        what + (f" (Job{'s' if len(listed) > 1 else ''} {', '.join(listed)})" if listed else "")
        for what, listed in found.items()
    )


def pods_text(pods: Iterable[Object], limit: int = 3) -> str:
    """Up to `limit` pods with their owners, then how many more."""
    listed = list(pods)
    shown = "; ".join(owner_text(p) for p in listed[:limit])
    return shown + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def spec_terms(pod: Object, kind: str) -> tuple[Mapping[str, object], ...]:
    """The required terms of the pod's `podAffinity` or `podAntiAffinity`. It is asked of every bound
    pod a reader keeps, and most pods have no affinity at all: that is looked at first."""
    affinity = spec(pod).get("affinity")
    if not affinity:
        return ()
    rules = mapping(mapping(affinity).get(kind))
    return tuple(map(mapping, sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))))
