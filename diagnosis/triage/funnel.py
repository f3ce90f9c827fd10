"""The protocol every step of the ladder shares, written once: what a step reads and what it returns.

A funnel step (`diagnosis.triage.steps.<verdict>`) exports `STEP`, a `Step`: its check reads the
`Ask` (what the pod asks, read once for all nodes) and one node, and returns None when the node passes,
else why not (a check that reads only a few parts of a node names them, its `shape`: one node of each
shape is checked); its advice reads the whole `Funnel` run and returns an `Advice` when it is the step
that leaves no node. A rung before the funnel is a function named after its verdict, a `Rung`: it reads
what the ladder `Seen` and returns an `Answer`, or None when it does not hold. The ladder
(`diagnosis.triage.classify`) orders them; `run` applies funnel steps and writes down what each one
did, so the evidence can show it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from diagnosis.dra_objects import Dra
from diagnosis.model import Command, Holding, PodState, PodVerdict, Snippet, Started
from diagnosis.objects import Object, name
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.fit import (
    PODS,
    Shortage,
    Usage,
    amount,
    checked_asks,
    offered_of,
    pod_requests,
    shortages,
    usage,
)
from diagnosis.triage.fixes import Change
from diagnosis.triage.peers import universe
from diagnosis.triage.ports import HostPort, host_ports
from diagnosis.triage.resources import (
    Counted,
    Holder,
    Members,
    NodePods,
    Offer,
    device_holders,
    offer,
    offer_read,
)
from diagnosis.triage.scheduling import Placement
from diagnosis.views import TriageView
from diagnosis.workloads import OwnersSeen, preempts_below

if TYPE_CHECKING:
    from diagnosis.triage.findings import Findings

T = TypeVar("T")

SHOWN = 10
"""Nodes named per step (and pods per node): enough to act on, short enough to read."""


@dataclass
class Shared:
    """What one classification works out once and reuses in each of its funnel runs (the verdict's,
    then one per fix it checks, `runner.checked`): each node's offer of each resource, the pods
    counted on every node (`Counted`), and per node's pods their holders and what they request.
    Keys hold ids, so every object a run read is kept alive here for as long as this lives: no id is
    reused for another object meanwhile. The pod's identity and priority are the same in every run
    (a fix never changes them)."""

    offers: dict[tuple[int, str], Offer] = field(default_factory=dict)
    filtered: dict[tuple[object, ...], tuple[tuple[Stage, ...], frozenset[str]]] = field(default_factory=dict)
    """The steps before the free slots and the names of the nodes they keep, by what they read of the
    pod, id(nodes) and, for a pod that names claims, of the DRA objects (`runner.run_funnel`)."""
    usages: dict[int, Usage] = field(default_factory=dict)
    """What the pods counted on a node request together, by id(those pods)."""
    requests: dict[int, Mapping[str, int]] = field(default_factory=dict)
    """A pod's requests (`fit.pod_requests`) by `resources.template_key`."""
    used: dict[tuple[int, str], int] = field(default_factory=dict)
    """What a node's holders hold of a resource together, by (id(those holders), resource)."""
    short: dict[tuple[int, int, tuple[tuple[str, int], ...]], list[str]] = field(default_factory=dict)
    """The free-slot step's findings on a node, by (id(node), id(its holders), the asks)."""
    extended: dict[int, Mapping[str, int]] = field(default_factory=dict)
    """A pod's extended asks (`resources.effective_requests`) by `resources.template_key`."""
    owners: OwnersSeen = field(default_factory=dict)
    """The pods' owners (`workloads.top_owner`) by what they were read from."""
    alive: list[object] = field(default_factory=list)
    _candidates: dict[int, tuple[Object, ...]] = field(default_factory=dict)
    _universes: dict[tuple[int, int], Mapping[str, Object]] = field(default_factory=dict)
    free_slots: dict[
        tuple[int, tuple[tuple[str, int], ...]], tuple[Stage, Mapping[str, tuple[Holder, ...]]]
    ] = field(default_factory=dict)
    """The free-slot step of the classification's first run, by id(the nodes it ran on) and the asks:
    the stage and the holders it read (`runner._free_slots`)."""
    _named: dict[int, dict[str, Object]] = field(default_factory=dict)
    """The nodes of a tuple (by id) with a name, by name (`candidates`)."""
    kept: Findings | None = None
    """What a reader that keeps the nodes keeps between questions (`Prepared.findings`): the
    candidates of a tuple of nodes it hands over again are taken from there."""
    _devices: dict[object, object] = field(default_factory=dict)
    """The pod's `Devices` (`devices`)."""
    _counted: dict[tuple[int, int], Counted] = field(default_factory=dict)
    _held: dict[int, tuple[Holder, ...]] = field(default_factory=dict)
    _amounts: dict[int, tuple[Mapping[str, Any], dict[str, int]]] = field(default_factory=dict)
    """`offered` by id(what a node offers), with it."""
    _holders: dict[tuple[int, int], dict[str, tuple[Holder, ...]]] = field(default_factory=dict)
    """`holders_of` by id(counted) and id(nodes)."""
    _redone: dict[int, tuple[Mapping[str, tuple[Holder, ...]], frozenset[str]]] = field(default_factory=dict)
    """A `holders_of` result (by id) that is another one's with some nodes worked out again: that
    other one and those nodes."""
    _ended: dict[int, tuple[Sequence[Object], frozenset[tuple[str, str]]]] = field(default_factory=dict)
    """Bound pods (by id) that are others without some pods (a fix's that ends them)."""

    def offered(self, node: Object, asked: Iterable[tuple[str, int]]) -> Mapping[str, int]:
        """What the node offers of pods and of each resource asked (`fit.amount` of what
        `fit.offered_of` reads), worked out once per what it offers: a pool's nodes share it
        (`cluster.compact`)."""
        offered = offered_of(node)
        kept = self._amounts.get(id(offered))
        if kept is None or kept[0] is not offered:
            kept = self._amounts[id(offered)] = (offered, {PODS: amount(PODS, offered.get(PODS))})
        amounts = kept[1]
        for resource, _ in asked:
            if resource not in amounts:
                amounts[resource] = amount(resource, offered.get(resource))
        return amounts

    def keep(self, view: TriageView) -> None:
        """Keep alive what the view holds, for as long as this lives."""
        self.alive += tuple(getattr(view, f.name) for f in fields(view))

    def ending(
        self, before: Sequence[Object], after: Sequence[Object], ended: frozenset[tuple[str, str]]
    ) -> None:
        """Note that `after` is `before` without the pods `ended` (by namespace and name)."""
        self.alive += (before, after)
        self._ended[id(after)] = (before, ended)

    def counted(self, view: TriageView, grouped: Mapping[str, NodePods] | None = None) -> Counted:
        """`Counted` for the view's pod, once per set of bound and nominated pods; for bound pods that
        are others without some pods, those taken out of the others' (the same result). `grouped`:
        the view's first bound pods node by node, as the reader handed them over (`Prepared.grouped`)."""
        key = (id(view.bound_pods), id(view.nominated_pods))
        found = self._counted.get(key)
        if found is None:
            if id(view.bound_pods) in self._ended:
                before, ended = self._ended[id(view.bound_pods)]
                found = self.counted(replace(view, bound_pods=before), grouped).without(ended)
            else:
                whole = None
                if grouped and self.kept is not None:
                    whole = self.kept.groups(grouped)
                pod, bound, nominated = view.pod, view.bound_pods, view.nominated_pods
                found = Counted.of(pod, bound, nominated, self.extended, grouped, whole)
            self.alive += (view.bound_pods, view.nominated_pods, found)
            self._counted[key] = found
        return found

    def holders_of(
        self, view: TriageView, counted: Counted, nodes: frozenset[str]
    ) -> dict[str, tuple[Holder, ...]]:
        """`resources.device_holders` of the pods counted on each of these nodes, once per `counted`:
        for a `counted` without some pods (a fix's), those of its `base` on every node it leaves
        alone. A node's holders are worked out once per its pods, or by the node's group as the
        reader handed it over (`resources.NodePods`)."""
        key = (id(counted), id(nodes))
        found = self._holders.get(key)
        if found is not None:
            return found
        redo: Iterable[str] = nodes
        known = self._holders.get((id(counted.base), id(nodes))) if counted.base is not None else None
        if known is not None:
            found, redo = dict(known), counted.touched & nodes
            for node in redo:
                found.pop(node, None)
            self._redone[id(found)] = (known, redo)
        else:
            found = {}
        rank = preempts_below(view.pod)
        for node in redo:
            pods = counted.holding.get(node)
            if pods is None:
                continue
            group = counted.groups.get(node)
            if group is not None and group.holding is pods:
                found[node] = group.holders(view.pod, rank)
                continue
            held = self._held.get(id(pods))
            if held is None:
                held = self._held[id(pods)] = device_holders(view.pod, pods, self.extended, self.owners)
            found[node] = held
        self.alive += (counted, nodes)
        self._holders[key] = found
        return found

    def changed_holders(
        self, before: Mapping[str, tuple[Holder, ...]], after: Mapping[str, tuple[Holder, ...]]
    ) -> Iterable[str]:
        """The nodes whose holders differ between two `holders_of` results: when `after` is `before`
        with some nodes worked out again, only those are compared."""
        if after is before:
            return ()
        redone = self._redone.get(id(after))
        hosts = redone[1] if redone is not None and redone[0] is before else before.keys() | after.keys()
        return [host for host in hosts if after.get(host) is not before.get(host)]

    def universe(self, view: TriageView) -> Mapping[str, Object]:
        """`peers.universe(view)`, worked out once per set of nodes and peers' nodes."""
        key = (id(view.nodes), id(view.peers.nodes))
        found = self._universes.get(key)
        if found is None:
            self.alive += (view.nodes, view.peers.nodes)
            named = self._named.get(id(view.nodes))
            # When every node has a name of its own, the candidates already hold them by name.
            whole = named is not None and len(named) == len(view.nodes)
            found = self._universes[key] = universe(view, named if whole else None)
        return found

    def devices(self, pod: Object, dra: Dra) -> Devices:
        """The pod's `Devices` on these DRA objects (`Devices.of`): what it works out per node is
        reused by every run, and by the runs on DRA objects changed from these (`Dra.with_claims`) on
        the nodes the change leaves alone. Kept here for the classification (`_devices`), and, on the
        objects a reader that keeps the nodes hands over, with its findings for the next questions."""
        base = self.devices(pod, dra.base) if dra.base is not None else None
        memo = self.kept.devices_of(dra) if self.kept is not None and base is None else self._devices
        return Devices.of(pod, dra, base, memo)

    def candidates(self, nodes: Sequence[object]) -> tuple[Object, ...]:
        """`candidates(nodes)`, worked out once per tuple of nodes."""
        found = self._candidates.get(id(nodes))
        if found is None:
            self.alive.append(nodes)
            if self.kept is not None and type(nodes) is tuple:
                named, found = self.kept.of_nodes(nodes, "candidates", partial(_sorted_by_name, nodes))
            else:
                named, found = _sorted_by_name(nodes)
            self._named[id(nodes)], self._candidates[id(nodes)] = named, found
        return found


def holders_key(nodes: tuple[Object, ...]) -> str:
    """Where `Ask.memo` keeps what `Ask.of_holders` worked out of these nodes, with the nodes."""
    return f"of holders {id(nodes)}"


def offered(ask: Ask) -> Callable[[Object], Hashable] | None:
    """The shape of a node for a check that reads only what it offers of the pod's extended resources
    (`Ask.offer`: `resources.offer_read`). None for a pod with DRA devices, whose checks read the
    node's devices too."""
    return None if ask.devices is not None else offer_read


class Room(NamedTuple):
    """A node, and what it offers and its holders hold of each resource a pod asks (`Ask.room`)."""

    node: Object
    allocatable: tuple[int, ...]
    used: tuple[int, ...]

    def spare(self) -> tuple[int, ...]:
        """Allocatable minus held: 0 where the holders hold as much or more than is allocatable."""
        return tuple(max(a - u, 0) for a, u in zip(self.allocatable, self.used, strict=True))


@dataclass(frozen=True)
class Ask:
    """What every node is checked against."""

    pod: Object
    requests: Mapping[str, int]
    """Extended resource → the pod's effective request."""
    holders: Mapping[str, tuple[Holder, ...]] = field(default_factory=dict)
    """Node name → the pods holding extended resources there (only the free-slot step reads it)."""
    pods: Mapping[str, tuple[Object, ...]] = field(default_factory=dict)
    """Node name → every pod counted there (`resources.Counted`), for the steps after the free slots."""
    repelling: tuple[Object, ...] = ()
    """The bound pods counted on the reached nodes that have a required pod anti-affinity; on every
    node, when the view holds every such pod (`Peers.all_pods`)."""
    view: TriageView | None = None
    """The whole view, for the steps that look beyond the node: volumes, spread, pod affinity."""
    reached: frozenset[str] = frozenset()
    """The nodes that reached the free-slot step: those whose bound pods the view holds."""
    counted: Counted | None = None
    """What `pods` were taken from."""
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    _shortages: dict[int, list[Shortage]] = field(default_factory=dict, compare=False, repr=False)
    """What a step works out once for all nodes (its counts per domain, the pod's claims)."""
    devices: Devices | None = None
    """The pod's ResourceClaims against the cluster's devices; None when it names none (or when only
    the nodes reaching the free-slot step are wanted: DRA never narrows which bound pods count)."""
    shared: Shared = field(default_factory=Shared, compare=False, repr=False)
    """What the classification's funnel runs work out once (an Ask `replace`d keeps it)."""

    @property
    def groups(self) -> Mapping[str, NodePods]:
        """The nodes whose counted pods came as the reader's groups (`resources.Counted.groups`)."""
        return {} if self.counted is None else self.counted.groups

    @cached_property
    def placement(self) -> Placement:
        """What the pod asks of a node's labels and taints, read from the pod once for all nodes."""
        return Placement.of(self.pod)

    @cached_property
    def fit(self) -> Mapping[str, int]:
        """The pod's request of every resource NodeResourcesFit compares (`fit.pod_requests`)."""
        return pod_requests(self.pod)

    @cached_property
    def ports(self) -> tuple[HostPort, ...]:
        """The host ports the pod asks for (`ports.host_ports`)."""
        return host_ports(self.pod)

    @cached_property
    def members(self) -> Members:
        """Every pod counted on the reached nodes (`pods`), found by workload: how many replicas a
        fix that scales a workload down starts from."""
        return Members(self.pods, self.groups, self.counted)

    def offer(self, node: Object, resource: str) -> Offer:
        """`resources.offer(node, resource)`, read once per node."""
        key = (id(node), resource)
        found = self.shared.offers.get(key)
        if found is None:
            found = self.shared.offers[key] = offer(node, resource)
        return found

    def used(self, node: str, resource: str) -> int:
        """What the pods holding `resource` on the node (by name) hold of it together, worked out once
        per node's holders."""
        held = self.holders.get(node, ())
        key = (id(held), resource)
        found = self.shared.used.get(key)
        if found is None:
            found = self.shared.used[key] = sum(h.requests.get(resource, 0) for h in held)
        return found

    def of_holders(self, nodes: tuple[Object, ...], what: str, work: Callable[[], T]) -> T:
        """`work()`, worked out of these nodes, the holders on each and the asks alone (`what` says
        which work): once per question, or, where a reader keeps what the free-slot step found
        (`findings.Findings.free_slots`), once while the nodes and every node's holders are the same."""
        kept = self.memo.get(holders_key(nodes))
        if not (isinstance(kept, tuple) and kept[0] is nodes):
            kept = self.memo[holders_key(nodes)] = (nodes, {})
        worked: dict[str, Any] = kept[1]
        if what not in worked:
            worked[what] = work()
        found: T = worked[what]
        return found

    def room(self, nodes: tuple[Object, ...]) -> dict[str, Room]:
        """Node name → the node, what it offers of each resource asked (in `requests`' order) and
        what its holders hold of it: what the advice reads of every node (ranks, free devices,
        overcommitted nodes), read once."""
        return self.of_holders(nodes, "room", partial(self._room, nodes))

    def _room(self, nodes: tuple[Object, ...]) -> dict[str, Room]:
        found = {}
        asked, offer, used = tuple(self.requests), self.offer, self.used
        for node in nodes:  # a plain loop: it runs for every node the step was given
            host = name(node)
            offered, held = [], []
            for resource in asked:
                offered.append(offer(node, resource).allocatable)
                held.append(used(host, resource))
            found[host] = Room(node, tuple(offered), tuple(held))
        return found

    @cached_property
    def checked(self) -> tuple[tuple[str, int], ...]:
        """The pod's requests the node-resources step compares (`fit.checked_asks`)."""
        return checked_asks(self.fit, self.requests)

    def shortages(self, node: Object) -> list[Shortage]:
        """What of the pod's other requests does not fit on the node (`fit.shortages`), worked out once
        per node for the check, the advice and the fixes."""
        found = self._shortages.get(id(node))
        if found is None:
            asked = self.checked
            found = shortages(asked, self.shared.offered(node, asked), self.usage(name(node)))
            self._shortages[id(node)] = found
        return found

    def usage(self, node: str) -> Usage:
        """What the pods counted on the node request together, worked out once per node's pods (by
        its group, while they are the group's pods)."""
        pods = self.pods.get(node, ())
        found = self.shared.usages.get(id(pods))
        if found is None:
            group = self.groups.get(node)
            if group is not None and group.pods is pods:
                found = group.kept("usage", partial(usage, pods))
            else:
                keys = None if self.counted is None else self.counted.keys_of(node, pods)
                found = usage(pods, self.shared.requests, keys)
            self.shared.usages[id(pods)] = found
        return found


class Drop(NamedTuple):
    """A node a step dropped, and why (a tuple: a step may drop thousands)."""

    node: Object
    why: str


@dataclass(frozen=True)
class Stage:
    """One step applied: the nodes it was given, those it kept, those it dropped and why."""

    step: Step
    entered: tuple[Object, ...]
    kept: tuple[Object, ...]
    dropped: tuple[Drop, ...]

    @cached_property
    def by_reason(self) -> dict[str, list[Object]]:
        """The dropped nodes by why, in order (`stage_line`): once per stage, which a reader that
        keeps the nodes hands to every question about them (`Findings`)."""
        found: dict[str, list[Object]] = {}
        for drop in self.dropped:
            found.setdefault(drop.why, []).append(drop.node)
        return found

    @cached_property
    def drops(self) -> tuple[Drop | None, ...]:
        """Each node entered: its drop, None where kept (`runner._free_slots` changes a few)."""
        dropped = {id(drop.node): drop for drop in self.dropped}
        return tuple(dropped.get(id(node)) for node in self.entered)

    @cached_property
    def at(self) -> dict[str, int]:
        """Node name → where `entered` lists it."""
        return {name(node): i for i, node in enumerate(self.entered)}


@dataclass(frozen=True)
class Funnel:
    """The whole run, for the step that leaves no node to explain itself."""

    view: TriageView
    ask: Ask
    stages: tuple[Stage, ...]

    @property
    def last(self) -> Stage:
        return self.stages[-1]


@dataclass(frozen=True)
class Advice:
    """What a verdict adds to the funnel: its one-line summary, evidence, commands and snippets, and
    the changes that may remove its cause (checked before any is offered: `diagnosis.triage.fixes`)."""

    summary: str
    evidence: tuple[str, ...] = ()
    commands: tuple[Command, ...] = ()
    snippets: tuple[Snippet, ...] = ()
    fixes: tuple[Change, ...] = ()
    holders: tuple[Holding, ...] = ()
    competing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """One funnel step: the verdict when it leaves no node; its title in the evidence (a template
    with `{resources}` and `{asks}`); the per-node check (None: the node passes, else why not); and
    what to tell when it is the step that leaves none."""

    verdict: PodVerdict
    title: str
    check: Callable[[Ask, Object], str | None]
    advise: Callable[[Funnel], Advice]
    plugins: tuple[str, ...] = ()
    """The kube-scheduler Filter plugins whose rule the check applies (`apis/config/v1/
    default_plugins.go`): `devtools.oracle` compares the step with them."""
    shape: Callable[[Ask], Callable[[Object], Hashable] | None] | None = None
    """For a pod, what reads all the check reads of a node, as a key, when it reads only a few of
    its parts (a pool's nodes share them: `cluster.compact`); None when it reads more of them.
    `run` checks one node of each shape and gives the others of that shape its answer."""
    skips: Callable[[Ask], bool] | None = None
    """Whether the check passes every node for the pod, read of the pod alone (the scheduler's
    PreFilter `Skip`): `run` then reads no node."""


@dataclass(frozen=True)
class Seen:
    """What a rung reads: the view, the pod's extended asks (`resources.effective_requests`), and what
    the classification works out once (`Shared`)."""

    view: TriageView
    requests: Mapping[str, int]
    shared: Shared


@dataclass(frozen=True)
class Answer:
    """What a rung (or the funnel) says: its verdict, its advice and the evidence lines; the view its
    fixes are checked on when it is not the view itself; a placed pod's state and whether it runs."""

    verdict: PodVerdict
    advice: Advice
    evidence: tuple[str, ...]
    checked_on: TriageView | None = None
    pod_state: PodState | None = None
    started: Started | None = None


Rung = Callable[[Seen], Answer | None]
"""A rung of the ladder before the funnel: its answer when it holds, else None."""


def run(steps: Iterable[Step], ask: Ask, nodes: tuple[Object, ...]) -> tuple[Stage, ...]:
    """Apply the steps in order until one leaves no node; a step that passes every node for the pod
    (`Step.skips`) reads none."""
    stages = []
    for step in steps:
        skipped = step.skips is not None and step.skips(ask)
        kept, dropped = (nodes, ()) if skipped else _checked(step, ask, nodes)
        stages.append(Stage(step, nodes, tuple(kept), tuple(dropped)))
        if not kept:
            break
        nodes = tuple(kept)
    return tuple(stages)


def _checked(step: Step, ask: Ask, nodes: tuple[Object, ...]) -> tuple[list[Object], list[Drop]]:
    """The nodes the step keeps and those it drops. A step that reads a node's shape (`Step.shape`)
    checks one node of each shape and gives the others of that shape its answer: on 5,000 nodes of
    a few pools, a few checks in place of thousands."""
    kept, dropped = [], []
    check, read = step.check, None if step.shape is None else step.shape(ask)
    known: dict[Hashable, str | None] = {}
    for node in nodes:  # a plain loop, its checks inline: it runs for every node of every step
        key = None if read is None else read(node)
        if key is None:
            why = check(ask, node)
        elif key in known:
            why = known[key]
        else:
            why = known[key] = check(ask, node)
        if why is None:
            kept.append(node)
        else:
            dropped.append(tuple.__new__(Drop, (node, why)))  # Drop(node, why), without a frame
    return kept, dropped


def candidates(nodes: Iterable[object]) -> tuple[Object, ...]:
    """Nodes with a name, one per name, sorted by name: the funnel and its evidence do not depend on
    the order the reader listed them in."""
    return _sorted_by_name(nodes)[1]


def _sorted_by_name(nodes: Iterable[object]) -> tuple[dict[str, Object], tuple[Object, ...]]:
    """The nodes with a name by name, and `candidates(nodes)`."""
    by_name = _by_name(nodes)
    return by_name, tuple(map(by_name.__getitem__, sorted(by_name)))


def _by_name(nodes: Iterable[object]) -> dict[str, Object]:
    """The nodes with a name, the first one listed per name."""
    by_name: dict[str, Object] = {}
    for node in nodes:
        # The ABC check only for what is not a plain dict (decoded JSON is).
        if (type(node) is dict or isinstance(node, Mapping)) and (node_name := name(node)):
            by_name.setdefault(node_name, node)
    return by_name


def stage_line(index: int, stage: Stage, requests: Mapping[str, int]) -> str:
    """`3. reports nvidia.com/gpu: 9 → 2 nodes; dropped a, b (why); c (why)`: the dropped nodes grouped
    by reason, at most `SHOWN` of them named. `requests` may name DRA devices beside extended
    resources (`gpu.nvidia.com devices`)."""
    title = stage.step.title.format(
        resources=and_(requests), asks=", ".join(f"{n} {r}" for r, n in requests.items())
    )
    plural = "" if len(stage.kept) == 1 else "s"
    line = f"{index}. {title}: {len(stage.entered)} → {len(stage.kept)} node{plural}"
    if not stage.dropped:
        return line
    shown, counted, parts = 0, 0, []
    for why, nodes in stage.by_reason.items():
        if shown >= SHOWN:
            break
        take = [name(node) for node in nodes[: SHOWN - shown]]  # only the nodes shown are named
        shown, counted = shown + len(take), counted + len(nodes)
        extra = f" and {len(nodes) - len(take)} more" if len(nodes) > len(take) else ""
        parts.append(f"{', '.join(take)}{extra} ({why})")
    hidden = len(stage.dropped) - counted
    tail = f"; {hidden} more for other reasons" if hidden else ""
    return f"{line}; dropped {'; '.join(parts)}{tail}"


def and_(words: Iterable[str]) -> str:
    """`a`, `a and b`, `a, b and c`; `nothing` for none (a pod whose claims the controller says need
    no claim asks no device)."""
    items = list(words)
    if not items:
        return "nothing"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def names(nodes: Iterable[Object | str]) -> str:
    """Node (or pod) names, at most `SHOWN`, then how many more."""
    listed = [n if isinstance(n, str) else name(n) for n in nodes]
    extra = f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    return ", ".join(listed[:SHOWN]) + extra


def _spare(ask: Ask, node: Object, resource: str) -> int:
    """Free minus asked: negative when the resource is short on the node."""
    return ask.offer(node, resource).allocatable - ask.used(name(node), resource) - ask.requests[resource]


def by_headroom(ask: Ask, nodes: tuple[Object, ...]) -> tuple[Object, ...]:
    """Closest to fitting first (ties by name): by the tightest resource's free minus asked (0 with no
    extended resource)."""
    wanted = tuple(ask.requests.values())

    def headroom(item: tuple[str, Room]) -> tuple[int, str]:
        host, room = item
        spare = [a - u - n for a, u, n in zip(room.allocatable, room.used, wanted, strict=True)]
        return -min(spare, default=0), host

    def ranked() -> tuple[Object, ...]:
        return tuple(room.node for _, room in sorted(ask.room(nodes).items(), key=headroom))

    return ask.of_holders(nodes, "by headroom", ranked)


def tightest(ask: Ask, node: Object) -> tuple[str, int]:
    """The pod's resource that is shortest on this node: the one worth naming in a summary."""
    resource = min(ask.requests, key=lambda r: (_spare(ask, node, r), r))
    return resource, ask.requests[resource]
