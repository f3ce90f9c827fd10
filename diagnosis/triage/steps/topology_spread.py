"""The `topology-spread` step: kube-scheduler's PodTopologySpread Filter
(`pkg/scheduler/framework/plugins/podtopologyspread/common.go`, `filtering.go`).

Only `whenUnsatisfiable: DoNotSchedule` constraints filter. The built-in default constraints
(`defaultingType: System`) are `ScheduleAnyway`, so a pod without constraints of its own is never held
here. Per constraint: the selector is `labelSelector` with `matchLabelKeys` merged in as `key In
(the pod's value)`; `minDomains` defaults to 1, `nodeAffinityPolicy` to Honor, `nodeTaintsPolicy` to
Ignore. Matching pods of the pod's namespace are counted on the eligible nodes (those with every
constraint's topology key, and passing the policies); a node without the key fails; otherwise the
skew is its domain's count, plus 1 when the pod matches its own selector, minus the smallest domain
count (0 while there are fewer domains than `minDomains`). A node that pods are nominated to (of the
pod's priority or more) must keep the skew with the matching ones counted in its domain too: the
scheduler filters it with them and without them (`peers.nominated_on`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from diagnosis.commands import collect
from diagnosis.model import Command, Harm, PodVerdict
from diagnosis.objects import Object, labels, mapping, meta, name, namespace, sequence, spec, text
from diagnosis.selectors import Requirement, Selector, SelectorError, parse
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.fixes import Change, pod_change, where
from diagnosis.triage.funnel import SHOWN, Advice, Ask, Funnel, Step, names
from diagnosis.triage.peers import Query, existing, nominated_on
from diagnosis.triage.scheduling import BLOCKING_EFFECTS, Placement, taints
from diagnosis.views import TriageView


@dataclass(frozen=True)
class Constraint:
    key: str
    max_skew: int
    min_domains: int
    selector: Selector
    honor_affinity: bool
    honor_taints: bool

    def __str__(self) -> str:
        return f"{self.key} maxSkew {self.max_skew}" + (
            f" minDomains {self.min_domains}" if self.min_domains > 1 else ""
        )


def constraints(pod: Object) -> tuple[Constraint, ...]:
    """The pod's DoNotSchedule constraints, as the scheduler reads them; raises SelectorError for a
    selector that would not parse."""
    pod_labels = labels(pod)
    found = []
    for item in map(mapping, sequence(spec(pod).get("topologySpreadConstraints"))):
        if item.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        merged = tuple(
            Requirement(key, "In", (pod_labels[key],))
            for key in map(text, sequence(item.get("matchLabelKeys")))
            if key in pod_labels
        )
        min_domains = item.get("minDomains")
        max_skew = item.get("maxSkew")
        found.append(
            Constraint(
                key=text(item.get("topologyKey")),
                max_skew=max_skew if isinstance(max_skew, int) else 1,
                min_domains=min_domains if isinstance(min_domains, int) and min_domains > 0 else 1,
                selector=parse(item.get("labelSelector")).with_requirements(merged),
                honor_affinity=item.get("nodeAffinityPolicy", "Honor") != "Ignore",
                honor_taints=item.get("nodeTaintsPolicy") == "Honor",
            )
        )
    return tuple(found)


def queries(pod: Object) -> tuple[Query, ...]:
    """The pods the constraints count: their selector, in the pod's namespace."""
    try:
        found = constraints(pod)
    except SelectorError:
        return ()
    return tuple(Query(c.selector, frozenset({namespace(pod)})) for c in found)


def needs_every_node(pod: Object) -> bool:
    """A constraint counts nodes outside the pod's nodeSelector (`nodeAffinityPolicy: Ignore`): a
    reader that kept only the nodes matching it must read the others too."""
    try:
        return any(not c.honor_affinity for c in constraints(pod))
    except SelectorError:
        return False


@dataclass(frozen=True)
class Spread:
    """The constraints with their counts per domain, worked out once for all nodes."""

    constraints: tuple[Constraint, ...]
    counts: tuple[Mapping[str, int], ...]
    """Per constraint: domain (topology value) → matching pods on its eligible nodes."""
    matched: tuple[Mapping[str, tuple[Object, ...]], ...]
    """Per constraint: domain → the matching pods counted there."""
    self_match: tuple[bool, ...]
    error: str = ""
    nominated: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """Node name → per constraint, the matching pods nominated to it (counted in its domain when the
    scheduler filters that node with them)."""

    @classmethod
    def of(cls, ask: Ask) -> Spread:
        found = ask.memo.get("spread")
        if isinstance(found, Spread):
            return found
        ask.memo["spread"] = found = cls._worked_out(ask)
        return found

    @classmethod
    def _worked_out(cls, ask: Ask) -> Spread:
        pod = ask.pod
        try:
            found = constraints(pod)
        except SelectorError as err:
            return cls((), (), (), (), f"parsing pod: {err}")
        if not found or ask.view is None:
            return cls(found, tuple({} for _ in found), tuple({} for _ in found), (False,) * len(found))
        view: TriageView = ask.view
        nodes = ask.shared.universe(view)
        eligible = _eligible(found, ask.placement, nodes.values())
        pods = existing(view, queries(pod), (p for on_node in ask.pods.values() for p in on_node), nodes)
        counts, matched = _counted(pod, found, eligible, pods)
        nominated = {
            host: tuple(
                sum(
                    namespace(p) == namespace(pod) and c.selector.matches(labels(p)) and host in eligible[i]
                    for p in others
                )
                for i, c in enumerate(found)
            )
            for host, others in nominated_on(view, ask.pods).items()
        }
        return cls(
            found,
            tuple(counts),
            tuple({d: tuple(p) for d, p in m.items()} for m in matched),
            tuple(c.selector.matches(labels(pod)) for c in found),
            nominated={host: added for host, added in nominated.items() if any(added)},
        )

    def minimum(self, index: int, domain: str = "", added: int = 0) -> int:
        """The smallest domain count (0 while there are fewer domains than minDomains), with `added`
        more pods in `domain`."""
        return self._smallest(index, domain, added) if added else self._minimums[index]

    @cached_property
    def _minimums(self) -> tuple[int, ...]:
        """Per constraint, worked out once: every node asks it."""
        return tuple(self._smallest(i, "", 0) for i in range(len(self.constraints)))

    def _smallest(self, index: int, domain: str, added: int) -> int:
        counts, constraint = self.counts[index], self.constraints[index]
        if len(counts) < constraint.min_domains or not counts:
            return 0
        return min(n + added if d == domain else n for d, n in counts.items())

    def _passes(self, index: int, node: Object) -> list[tuple[int, int, int, int]] | None:
        """(pods nominated to the node counted in its domain, its domain's count, the minimum, the
        skew) for each time the scheduler filters the node: with those pods first if any, then without
        them. None: the node has no topology key."""
        domain = labels(node).get(self.constraints[index].key)
        if domain is None:
            return None
        own = int(self.self_match[index])
        nominated = self.nominated.get(name(node))
        found = []
        for added in (nominated[index], 0) if nominated and nominated[index] else (0,):
            have, low = self.counts[index].get(domain, 0) + added, self.minimum(index, domain, added)
            found.append((added, have, low, have + own - low))
        return found

    def skew(self, index: int, node: Object) -> int | None:
        """The skew the pod would make on the node for constraint `index` (None: no topology key)."""
        passes = self._passes(index, node)
        return None if passes is None else max(skew for *_, skew in passes)

    def failure(self, node: Object) -> str | None:
        """Why the node breaks a constraint (the first that fails, as the scheduler stops there)."""
        if self.error:
            return self.error
        node_labels = labels(node)
        for index, c in enumerate(self.constraints):
            passes = self._passes(index, node)
            if passes is None:
                return f"no label {c.key} (a topology spread constraint's topologyKey)"
            for added, have, low, skew in passes:
                if skew > c.max_skew:
                    domain, own = node_labels[c.key], self.self_match[index]
                    nominated = f" ({added} nominated to the node)" if added else ""
                    mine = " + this pod" if own else ""
                    pods = f"{have} matching pod{'' if have == 1 else 's'}{nominated}{mine}"
                    return (
                        f"{c.key}={domain} has {pods}, min {low}{self._why_min(index)}: "
                        f"skew {skew} > maxSkew {c.max_skew}"
                    )
        return None

    def _why_min(self, index: int) -> str:
        domains, wanted = len(self.counts[index]), self.constraints[index].min_domains
        if domains < wanted:
            return f" ({domains} domain{'' if domains == 1 else 's'} < minDomains {wanted})"
        return ""

    def domains_line(self, index: int) -> str:
        c, counts = self.constraints[index], self.counts[index]
        listed = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
        shown = ", ".join(f"{d}: {n}" for d, n in listed[:SHOWN])
        more = f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
        return (
            f"spread constraint {c} over {c.selector}: matching pods per {c.key} domain "
            f"(eligible nodes only): {shown or 'no eligible domain'}{more}; "
            f"min {self.minimum(index)}{self._why_min(index)}"
        )


def _eligible(
    found: tuple[Constraint, ...], placement: Placement, nodes: Iterable[Object]
) -> list[dict[str, str]]:
    """Per constraint: eligible node name → its domain (the nodes with every constraint's key, that
    the constraint's policies include)."""
    keys = [c.key for c in found]
    eligible: list[dict[str, str]] = [{} for _ in found]
    for node in nodes:
        node_labels = labels(node)
        if not all(k in node_labels for k in keys):
            continue
        for i, c in enumerate(found):
            if _included(c, placement, node):
                eligible[i][name(node)] = node_labels[c.key]
    return eligible


def _counted(
    pod: Object, found: tuple[Constraint, ...], eligible: list[dict[str, str]], pods: Iterable[Object]
) -> tuple[list[dict[str, int]], list[dict[str, list[Object]]]]:
    """Per constraint: the matching pods of the pod's namespace on its eligible nodes, counted per
    domain, and those pods per domain."""
    counts: list[dict[str, int]] = [dict.fromkeys(e.values(), 0) for e in eligible]
    matched: list[dict[str, list[Object]]] = [{} for _ in found]
    for other in pods:
        if namespace(other) != namespace(pod) or meta(other).get("deletionTimestamp") is not None:
            continue
        host = text(spec(other).get("nodeName"))
        for i, c in enumerate(found):
            domain = eligible[i].get(host)
            if domain is not None and c.selector.matches(labels(other)):
                counts[i][domain] += 1
                matched[i].setdefault(domain, []).append(other)
    return counts, matched


def _included(c: Constraint, placement: Placement, node: Object) -> bool:
    """`matchNodeInclusionPolicies`: Honor affinity keeps the nodes the pod's nodeSelector and
    required affinity accept; Honor taints the nodes with no untolerated NoSchedule/NoExecute taint."""
    if c.honor_affinity and placement.mismatch(node) is not None:
        return False
    if c.honor_taints:
        return not any(t.effect in BLOCKING_EFFECTS and placement.blocks(t) for t in taints(node))
    return True


def topology_spread(ask: Ask, node: Object) -> str | None:
    return Spread.of(ask).failure(node)


def advise(funnel: Funnel) -> Advice:
    spread = Spread.of(funnel.ask)
    pod, dropped = funnel.view.pod, funnel.last.dropped
    first = dropped[0]
    if spread.error:
        summary = f"The scheduler cannot read the pod's topology spread constraints: {spread.error}"
    else:
        constraint_index = next((i for i, c in enumerate(spread.constraints) if c.key in first.why), 0)
        c = spread.constraints[constraint_index]
        broken = first.why.removeprefix(f"{c.key}=")
        summary = (
            f"Every node left would break the pod's spread over {c.key} (maxSkew {c.max_skew}): {broken}"
        )
    evidence = [spread.domains_line(i) for i in range(len(spread.constraints))]
    for index, per_domain in enumerate(spread.matched):
        for domain, pods in sorted(per_domain.items())[:3]:
            if pods:
                listed = names(f"{namespace(p)}/{name(p)}" for p in pods)
                evidence.append(f"{spread.constraints[index].key}={domain} counts {listed}")
    commands = collect(
        pod_spread(namespace(pod), name(pod)),
        kubectl.nodes_with_labels(c.key for c in spread.constraints),
        *(kubectl.pods_matching(namespace(pod), c.selector.query()) for c in spread.constraints[:2]),
    )
    return Advice(summary, tuple(evidence), commands, fixes=_fixes(funnel, spread))


def _fixes(funnel: Funnel, spread: Spread) -> tuple[Change, ...]:
    """The pod's own constraint loosened: its maxSkew raised to the least skew a node left would
    make, then the constraint made ScheduleAnyway (it then only scores). Lists are replaced whole in a
    merge patch, so each patch carries every constraint of the pod."""
    if spread.error:
        return ()
    pod = funnel.view.pod
    raw = [dict(mapping(c)) for c in sequence(spec(pod).get("topologySpreadConstraints"))]
    hard = [i for i, c in enumerate(raw) if c.get("whenUnsatisfiable") == "DoNotSchedule"]
    changes: list[Change] = []
    for index, constraint in enumerate(spread.constraints):
        skews = [k for d in funnel.last.dropped if (k := spread.skew(index, d.node)) is not None]
        if not skews or min(skews) <= constraint.max_skew or index >= len(hard):
            continue
        position = hard[index]
        raised = [dict(c, maxSkew=min(skews)) if i == position else c for i, c in enumerate(raw)]
        anyway = [
            dict(c, whenUnsatisfiable="ScheduleAnyway") if i == position else c for i, c in enumerate(raw)
        ]
        changes += (
            pod_change(
                f"raise the maxSkew of the spread over {constraint.key} from {constraint.max_skew} to "
                f"{min(skews)} {where(pod)}: opens {{opens}}",
                {"spec": {"topologySpreadConstraints": raised}},
                Harm.SHRINKS,
            ),
            pod_change(
                f"make the spread over {constraint.key} ScheduleAnyway {where(pod)}: opens {{opens}}",
                {"spec": {"topologySpreadConstraints": anyway}},
                Harm.SHRINKS,
            ),
        )
    return tuple(changes)


def pod_spread(namespace: str, pod: str) -> Command | None:
    return pod_jsonpath(
        namespace,
        pod,
        "{.spec.topologySpreadConstraints}",
        "the pod's topology spread constraints, as stored (matchLabelKeys already merged)",
    )


STEP = Step(
    PodVerdict.TOPOLOGY_SPREAD, "keeps the topology spread", topology_spread, advise, ("PodTopologySpread",)
)
