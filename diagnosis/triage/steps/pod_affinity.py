"""The `pod-affinity` step: kube-scheduler's InterPodAffinity Filter
(`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`, `AffinityTerm` in
`k8s.io/kube-scheduler/framework/types.go`).

Only required terms filter. A term's namespaces are those it lists, plus those its
`namespaceSelector` picks (`{}`: every namespace), or the pod's own when it has neither. Per node, in
the scheduler's order:
1. the pod's required affinity: every term's topology key is on the node, and the node's domain holds
   a pod matching all the terms — unless no pod anywhere matches them and the pod matches its own
   terms (the first pod of its group);
2. the pod's required anti-affinity: no pod matching a term in the node's domain for that term;
3. existing pods' required anti-affinity: no pod whose term matches this pod sits in a domain that
   this node shares (any of the node's labels).
Existing pods are the bound pods that are not terminal, terminating ones included. The pods nominated
to a node (of the pod's priority or more) count as existing pods on that node alone: the scheduler
filters it with them and without them (`peers.nominated_on`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain

from diagnosis import objects
from diagnosis.commands import collect
from diagnosis.model import Command, Harm, PodVerdict
from diagnosis.objects import Object, labels, name, namespace, sequence, spec, text
from diagnosis.relations import POD_TEMPLATE_HASH, node_name, workload
from diagnosis.selectors import SelectorError, parse
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.fixes import Change, ending, pod_change, where
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step
from diagnosis.triage.peers import (
    Query,
    existing,
    namespace_labels,
    nominated_on,
    owners_text,
    pods_text,
    spec_terms,
)
from diagnosis.views import TriageView

AFFINITY = "podAffinity"
ANTI_AFFINITY = "podAntiAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
"""JobSet's exclusive placement: its pod webhook gives the leader the pod affinity and anti-affinity
that keep each child Job alone in its domain of this label (JobSet `pkg/webhooks/pod_webhook.go`)."""


@dataclass(frozen=True)
class Term:
    """One required pod (anti-)affinity term, parsed."""

    query: Query
    topology_key: str

    @classmethod
    def of(cls, raw: Mapping[str, object], own_namespace: str) -> Term:
        """Raises SelectorError when a selector would not parse."""
        listed = frozenset(n for n in sequence(raw.get("namespaces")) if isinstance(n, str))
        raw_selector = raw.get("namespaceSelector")
        ns_selector = None if raw_selector is None else parse(raw_selector)
        if not listed and ns_selector is None:
            listed = frozenset({own_namespace})
        return cls(Query(parse(raw.get("labelSelector")), listed, ns_selector), text(raw.get("topologyKey")))

    def __str__(self) -> str:
        where = sorted(self.query.namespaces)
        scope = "all namespaces" if self.query.everywhere else ", ".join(where)
        if self.query.namespace_selector is not None and not self.query.everywhere:
            scope += f" + namespaces matching {self.query.namespace_selector}"
        return f"{self.query.selector} in {scope or 'no namespace'}, topologyKey {self.topology_key}"


def terms(pod: Object, kind: str) -> tuple[Term, ...]:
    """The pod's required terms of `podAffinity` or `podAntiAffinity`; raises SelectorError."""
    return tuple(Term.of(raw, namespace(pod)) for raw in spec_terms(pod, kind))


def queries(pod: Object) -> tuple[Query, ...]:
    """The pods the pod's own terms look at."""
    try:
        return tuple(t.query for kind in (AFFINITY, ANTI_AFFINITY) for t in terms(pod, kind))
    except SelectorError:
        return ()


def has_namespace_selector(pod: Object) -> bool:
    """Some required anti-affinity term of this (existing) pod picks namespaces by their labels:
    matching it against a pod needs that pod's Namespace. (Most pods have no affinity at all: the
    reader asks this of every bound pod it read.)"""
    return bool(spec(pod).get("affinity")) and any(
        isinstance(raw.get("namespaceSelector"), Mapping) and raw.get("namespaceSelector")
        for raw in spec_terms(pod, ANTI_AFFINITY)
    )


@dataclass(frozen=True)
class Affinity:
    """The counts per topology domain the three checks read, worked out once for all nodes."""

    affinity: tuple[Term, ...]
    anti_affinity: tuple[Term, ...]
    affinity_pods: Mapping[tuple[str, str], tuple[Object, ...]]
    """(key, value) → the pods there matching all affinity terms."""
    anti_pods: tuple[Mapping[str, tuple[Object, ...]], ...]
    """Per anti-affinity term: domain value → the pods there matching it."""
    repelling: Mapping[tuple[str, str], tuple[Object, ...]]
    """(key, value) → the existing pods whose anti-affinity term matching this pod covers it."""
    self_match: bool
    error: str = ""
    nominated: Mapping[str, Affinity] = field(default_factory=dict)
    """Node name → the pods nominated to it, as `anti_pods` and `repelling` of their own (the scheduler
    meets them on that node alone)."""

    @classmethod
    def of(cls, ask: Ask) -> Affinity:
        found = ask.memo.get("affinity")
        if isinstance(found, Affinity):
            return found
        ask.memo["affinity"] = found = cls._worked_out(ask)
        return found

    @classmethod
    def _worked_out(cls, ask: Ask) -> Affinity:
        pod = ask.pod
        try:
            wanted, unwanted = terms(pod, AFFINITY), terms(pod, ANTI_AFFINITY)
        except SelectorError as err:
            return cls((), (), {}, (), {}, False, f"parsing pod: {err}")
        if ask.view is None:
            return cls(wanted, unwanted, {}, tuple({} for _ in unwanted), {}, False)
        view: TriageView = ask.view
        nodes = ask.shared.universe(view)
        ns_labels = namespace_labels(view)
        # Without terms of its own, only existing pods' anti-affinity can refuse the pod: the pods
        # that have some are the only ones to look at (few, in most clusters).
        nearby = ask.repelling
        if wanted or unwanted:
            nearby += tuple(p for on_node in ask.pods.values() for p in on_node)
        pods = existing(view, queries(pod), nearby, nodes)
        found = cls._counted(pod, wanted, unwanted, ((p, nodes[node_name(p)]) for p in pods), ns_labels)
        if not (wanted or unwanted or found.repelling):
            # PreFilter's Skip: the Filter does not run, so no pod nominated to a node is met there.
            return found
        # A pod nominated to a node cannot satisfy the pod's affinity (the pass without it must too),
        # only refuse the node.
        nominated = {
            host: cls._counted(pod, (), unwanted, ((p, nodes[host]) for p in others), ns_labels)
            for host, others in nominated_on(view, ask.pods).items()
        }
        return replace(found, nominated=nominated)

    @classmethod
    def _counted(
        cls,
        pod: Object,
        wanted: tuple[Term, ...],
        unwanted: tuple[Term, ...],
        placed: Iterable[tuple[Object, Object]],
        ns_labels: Mapping[str, Mapping[str, str]],
    ) -> Affinity:
        """The pod's terms counted over these pods, each with the node it counts on."""
        affinity_pods: dict[tuple[str, str], list[Object]] = {}
        anti_pods: list[dict[str, list[Object]]] = [{} for _ in unwanted]
        repelling: dict[tuple[str, str], list[Object]] = {}
        own_labels = ns_labels.get(namespace(pod), {})
        for other, node in placed:
            node_labels = labels(node)
            if wanted and all(t.query.matches(other, ns_labels) for t in wanted):
                for t in wanted:
                    if t.topology_key in node_labels:
                        pair = (t.topology_key, node_labels[t.topology_key])
                        affinity_pods.setdefault(pair, []).append(other)
            for index, t in enumerate(unwanted):
                if t.topology_key in node_labels and t.query.matches(other, ns_labels):
                    anti_pods[index].setdefault(node_labels[t.topology_key], []).append(other)
            for t in _existing_terms(other):
                if t.topology_key in node_labels and _repels(t, pod, own_labels):
                    pair = (t.topology_key, node_labels[t.topology_key])
                    repelling.setdefault(pair, []).append(other)
        return cls(
            wanted,
            unwanted,
            {k: tuple(v) for k, v in affinity_pods.items()},
            tuple({d: tuple(p) for d, p in m.items()} for m in anti_pods),
            {k: tuple(v) for k, v in repelling.items()},
            all(t.query.matches(pod, ns_labels) for t in wanted),
        )

    def failure(self, node: Object) -> str | None:
        found = self.blocking(node)
        return None if found is None else found.why

    def blocking(self, node: Object) -> Block | None:
        """Why the node is refused, by the first of the three checks that fails (the scheduler stops
        there), with the domain and the pods that decide; None when it passes."""
        if self.error:
            return Block(ERROR, "", (), self.error)
        node_labels = labels(node)
        # 1. The pod's own required affinity (UU: preemption cannot help).
        if self.affinity:
            missing = [t.topology_key for t in self.affinity if t.topology_key not in node_labels]
            if missing:
                why = f"no label {missing[0]} (the topologyKey of the pod's required pod affinity)"
                return Block(AFFINITY, f"no {missing[0]}", (), why)
            empty = [t for t in self.affinity if not self.affinity_pods.get(_pair(t, node_labels))]
            if empty and not (not self.affinity_pods and self.self_match):
                domain = f"{empty[0].topology_key}={node_labels[empty[0].topology_key]}"
                why = f"no pod matching the pod's required affinity ({empty[0].query.selector}) in {domain}"
                return Block(AFFINITY, domain, (), why)
        here = self.nominated.get(name(node))
        # 2. The pod's own required anti-affinity.
        for index, t in enumerate(self.anti_affinity):
            value = node_labels.get(t.topology_key)
            there = () if value is None else self.anti_pods[index].get(value, ())
            if here is not None and value is not None:
                there += here.anti_pods[index].get(value, ())
            if there:
                domain = f"{t.topology_key}={value}"
                why = f"{domain} holds {pods_text(there)}, matching the pod's anti-affinity"
                return Block(ANTI_AFFINITY, domain, there, why)
        # 3. Existing pods' required anti-affinity, over every label of the node.
        for key, value in sorted(node_labels.items()):
            there = self.repelling.get((key, value), ())
            if here is not None:
                there += here.repelling.get((key, value), ())
            if there:
                domain = f"{key}={value}"
                return Block(
                    EXISTING,
                    domain,
                    there,
                    f"{domain} holds {pods_text(there)}, whose anti-affinity repels the pod",
                )
        return None


@dataclass(frozen=True)
class Block:
    """Why one node is refused: which check, the domain, the pods that decide, in words."""

    check: str
    domain: str
    pods: tuple[Object, ...]
    why: str


ERROR, EXISTING = "error", "existing"


def _pair(term: Term, node_labels: Mapping[str, str]) -> tuple[str, str]:
    return term.topology_key, node_labels[term.topology_key]


def _existing_terms(pod: Object) -> tuple[Term, ...]:
    """An existing pod's required anti-affinity terms; a term that would not parse is left out (the
    scheduler could not have read it either)."""
    found = []
    for raw in spec_terms(pod, ANTI_AFFINITY):
        try:
            found.append(Term.of(raw, namespace(pod)))
        except SelectorError:
            continue
    return tuple(found)


def _repels(term: Term, pod: Object, own_namespace_labels: Mapping[str, str]) -> bool:
    """`AffinityTerm.Matches(pod, nsLabels)`: the term's namespaces hold the pod (by name, or by its
    Namespace's labels) and its selector matches the pod's labels."""
    query = term.query
    in_namespace = namespace(pod) in query.namespaces or (
        query.namespace_selector is not None and query.namespace_selector.matches(own_namespace_labels)
    )
    return in_namespace and query.selector.matches(labels(pod))


def pod_affinity(ask: Ask, node: Object) -> str | None:
    return Affinity.of(ask).failure(node)


def _summary(pod: Object, affinity: Affinity, blocks: list[Block]) -> str:
    """One line: which check refuses the nodes, the domains, and the workloads that hold them."""
    first = blocks[0]
    if first.check == ERROR:
        return f"The scheduler cannot read the pod's pod affinity: {first.why}"
    same = [b for b in blocks if b.check == first.check]
    domains = list(dict.fromkeys(b.domain for b in same))
    shown = ", ".join(domains[:5]) + (f" and {len(domains) - 5} more" if len(domains) > 5 else "")
    if first.check == AFFINITY and not first.pods and first.why.startswith("no label"):
        return f"No node left satisfies the pod's required pod affinity: they have {first.why}"
    if first.check == AFFINITY:
        where = ", ".join(f"{k}={v}" for k, v in sorted(affinity.affinity_pods))
        found = f"; matching pods are in {where}" if where else "; no pod matches it anywhere"
        verb = "has" if len(domains) == 1 else "have"
        head = "No node left satisfies the pod's required pod affinity"
        return f"{head}: {shown} {verb} no matching pod{found}"
    holders = owners_text((p for b in same for p in b.pods), jobs=False)
    whose = (
        "the pod's own anti-affinity" if first.check == ANTI_AFFINITY else "the anti-affinity of pods there"
    )
    key = objects.annotations(pod).get(EXCLUSIVE_TOPOLOGY)
    if key:
        whose = f"JobSet exclusive placement (one child Job per {key} domain)"
    held = (
        domains[0]
        if len(domains) == 1
        else f"{'both' if len(domains) == 2 else f'all {len(domains)}'} {domains[0].split('=')[0]} domains"
    )
    verb = "is" if len(domains) == 1 else "are"
    return f"Every node left is refused by {whose}: {held} {verb} held by {holders}"


def deciding_pods(affinity: Affinity) -> Iterable[Object]:
    """The pods whose presence decides the step: those the anti-affinity terms meet, and the
    existing pods that repel the pod, bound or nominated."""
    seen: set[tuple[str, str]] = set()
    for counts in (affinity, *affinity.nominated.values()):
        groups = (*(p for m in counts.anti_pods for p in m.values()), *counts.repelling.values())
        for pod in chain.from_iterable(groups):
            key = (namespace(pod), name(pod))
            if key not in seen:
                seen.add(key)
                yield pod


def advise(funnel: Funnel) -> Advice:
    affinity = Affinity.of(funnel.ask)
    pod = funnel.view.pod
    blocks = [b for d in funnel.last.dropped if (b := affinity.blocking(d.node)) is not None]
    summary = _summary(pod, affinity, blocks)
    evidence = [f"required pod affinity: {t}" for t in affinity.affinity]
    evidence += [f"required pod anti-affinity: {t}" for t in affinity.anti_affinity]
    if affinity.affinity and not affinity.affinity_pods:
        evidence.append(
            "no pod matches all the affinity terms in any domain"
            + (
                "; the pod matches them itself, so it may go where the topology keys exist "
                "(the first pod of its group)"
                if affinity.self_match
                else " and the pod does not match them itself, so no node qualifies"
            )
        )
    for key_value, pods in sorted(affinity.affinity_pods.items())[:5]:
        evidence.append(f"{key_value[0]}={key_value[1]} holds pods matching the affinity: {pods_text(pods)}")
    deciding = list(deciding_pods(affinity))
    if deciding:
        evidence.append(f"pods that keep it out: {pods_text(deciding, 10)}")
    keys = sorted({t.topology_key for t in (*affinity.affinity, *affinity.anti_affinity)})
    commands: list[Command | None] = [
        affinity_spec(namespace(pod), name(pod)),
        kubectl.nodes_with_labels(keys or [k for k, _ in affinity.repelling]),
    ]
    for t in (*affinity.affinity, *affinity.anti_affinity)[:2]:
        scope = None if t.query.everywhere or len(t.query.namespaces) != 1 else next(iter(t.query.namespaces))
        commands.append(kubectl.pods_matching(scope, t.query.selector.query()))
    commands += (affinity_spec(namespace(other), name(other)) for other in deciding[:2])
    return Advice(summary, tuple(evidence), collect(*commands), fixes=_fixes(pod, blocks))


def _fixes(pod: Object, blocks: list[Block]) -> tuple[Change, ...]:
    """For anti-affinity: the workloads whose pods hold the domains end (or finish), one at a time,
    never the pod's own; then the pod's own required anti-affinity dropped (unless JobSet's webhook
    sets it: exclusive placement). For affinity: the required pod affinity dropped."""
    first = blocks[0]
    if first.check == ERROR:
        return ()
    if first.check == AFFINITY:
        patch = {"spec": {"affinity": {AFFINITY: {_REQUIRED: None}}}}
        return (
            pod_change(
                f"drop the pod's required pod affinity {where(pod)}: opens {{opens}}", patch, Harm.SHRINKS
            ),
        )
    own = workload(pod)
    rolled = _rolled_out(pod, first) if first.check == ANTI_AFFINITY else None
    by_workload: dict[tuple[str, str, str], list[Object]] = {}
    for block in blocks:
        if block.check == first.check:
            for other in block.pods:
                kind, owner_name = workload(other)
                if (kind, owner_name) != own or namespace(other) != namespace(pod):
                    by_workload.setdefault((kind, namespace(other), owner_name), []).append(other)
    changes = [
        *([rolled] if rolled is not None else []),
        *(
            ending(
                f"end or wait for {kind} {ns}/{owner_name}, whose pods hold those domains: opens {{opens}}",
                sorted({(namespace(p), name(p)) for p in pods}),
            )
            for (kind, ns, owner_name), pods in by_workload.items()
        ),
    ]
    if first.check == ANTI_AFFINITY and EXCLUSIVE_TOPOLOGY not in objects.annotations(pod):
        patch = {"spec": {"affinity": {ANTI_AFFINITY: {_REQUIRED: None}}}}
        changes.append(
            pod_change(
                f"make the pod's anti-affinity preferred, not required, {where(pod)}: opens {{opens}}",
                patch,
                Harm.SHRINKS,
            )
        )
    return tuple(changes)


def _rolled_out(pod: Object, block: Block) -> Change | None:
    """The pod is a Deployment's new one, kept out of the domain by its own old pods (another
    pod-template-hash): a rolling update with surge starts the new pod before it ends an old one, and
    with one pod per domain and every domain held, the new pod waits for ever. Without surge, the old
    pod there ends first."""
    kind, deployment = workload(pod)
    mine = labels(pod).get(POD_TEMPLATE_HASH)
    old = [
        p
        for p in block.pods
        if workload(p) == (kind, deployment)
        and namespace(p) == namespace(pod)
        and labels(p).get(POD_TEMPLATE_HASH) not in (None, mine)
    ]
    if kind != "Deployment" or not old or len(old) != len(block.pods):
        return None
    purpose = f"make Deployment {namespace(pod)}/{deployment} end one old pod before it starts each new one"
    return ending(
        f"let Deployment {deployment} end an old pod before it starts each new one (maxSurge 0, "
        f"maxUnavailable 1): its old pod{'s' if len(old) > 1 else ''} in {block.domain} "
        f"({', '.join(sorted(map(name, old)))}) end{'' if len(old) > 1 else 's'} first: opens {{opens}}",
        sorted((namespace(p), name(p)) for p in old),
        collect(
            kubectl.deployment_strategy(
                namespace(pod),
                deployment,
                {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                purpose,
            )
        ),
        Harm.KEEPS,  # its own workload's old pod, which the rollout ends anyway
    )


def affinity_spec(namespace: str, pod: str) -> Command | None:
    purpose = f"the pod affinity and anti-affinity of {namespace}/{pod}, as stored"
    return pod_jsonpath(namespace, pod, "{.spec.affinity}", purpose)


STEP = Step(
    PodVerdict.POD_AFFINITY,
    "satisfies pod affinity and anti-affinity",
    pod_affinity,
    advise,
    ("InterPodAffinity",),
)
