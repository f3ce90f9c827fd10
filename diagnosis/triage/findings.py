"""What the funnel's steps up to the free slots found on each node, and what is worked out of a whole
tuple of nodes, kept between questions by a reader that keeps the nodes (`cluster.cache`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from functools import cache, partial
from typing import Any, NamedTuple, TypeVar

from diagnosis.dra_objects import Dra
from diagnosis.objects import Object, name
from diagnosis.triage.funnel import Ask, Drop, Room, Stage, Step, holders_key
from diagnosis.triage.resources import Groups, Holder, NodePods, Offer

T = TypeVar("T")


class Findings:
    """What the funnel's steps up to the free slots found on each node, kept with the nodes by a reader
    that keeps them between questions (`cluster.cache`): a question about a pod placed like an earlier
    one takes what was found rather than checking every node again, as kube-scheduler's equivalence
    cache once did. The steps before the free slots are kept by what they read of the pod
    (`scheduling.placement_key`); the free-slot step by the pod's asks and the node's holders. A
    finding serves only the very node object (and holders) it was found on: a node that changed is
    checked again. A node keeps up to `KEPT` findings (more, and it starts over).

    Questions run in threads of their own: each change here is one dict operation."""

    KEPT = 16
    WHOLE = 64
    """What is worked out of whole tuples of nodes: up to this many results (more, and it starts over)."""

    def __init__(self) -> None:
        self._on: dict[str, tuple[Object, dict[object, Any]]] = {}
        """Node name → the node object and what was found on it, by what the check read."""
        self._whole: dict[tuple[int, Hashable], tuple[object, Any]] = {}
        """(id(nodes), what) → the nodes and what was worked out of them (`of_nodes`)."""
        self._dra: tuple[Dra | None, dict[object, object]] = (None, {})
        """The reader's DRA objects of the moment and what pods' claims found on them (`devices_of`)."""

    def devices_of(self, dra: Dra) -> dict[object, object]:
        """Where pods' `Devices` on these DRA objects are kept (`Devices.of`): a reader that keeps
        them hands over the same while no claim changes; other objects start it over, and the old
        ones go with what was found on them."""
        if self._dra[0] is not dra:
            self._dra = (dra, {})
        return self._dra[1]

    def of_nodes(
        self,
        nodes: tuple[Object, ...] | Mapping[str, NodePods],
        what: Hashable,
        work: Callable[[], T],
        holds: Callable[[T], bool] | None = None,
    ) -> T:
        """`work()`, worked out of `nodes` alone, once per tuple of nodes (and `what`): a reader that
        keeps the nodes hands over the same tuple until one of them changes (`ClusterCache.nodes`),
        so each question about them takes it as worked out (the nodes sorted by name, their pools,
        the steps before the free slots for a placement), while `holds(it)` when given; so too of
        the pending pods, handed over as the same tuple until one changes (`ClusterCache.pending_pods`),
        and of the groups of pods bound to the nodes, the same mapping while none changes
        (`resources.Groups`).
        The tuple is kept with it: its id is not another's meanwhile."""
        key = (id(nodes), what)
        found = self._whole.get(key)
        if found is not None and found[0] is nodes and (holds is None or holds(found[1])):
            result: T = found[1]
            return result
        if len(self._whole) >= self.WHOLE:
            self._whole.clear()
        result = work()
        self._whole[key] = (nodes, result)
        return result

    def groups(self, grouped: Mapping[str, NodePods]) -> Groups:
        """`Groups.of(grouped)`, once per mapping of groups the reader hands over (`of_nodes`): what
        the classifier counts (`Shared.counted`) and the reader looks into (the pods' anti-affinity,
        `cluster.live.peers`) on each question; iterating 19,000 groups alone takes 5–10 ms."""
        return self.of_nodes(grouped, "groups", partial(Groups.of, grouped))

    def forget(self, node: str) -> None:
        """The node changed or is gone: what was found on it is not kept."""
        self._on.pop(node, None)

    def __contains__(self, node: object) -> bool:
        """Something is kept of the node (by name)."""
        return node in self._on

    def __len__(self) -> int:
        """How many nodes something is kept of."""
        return len(self._on)

    def kept(self) -> Iterator[dict[object, Any]]:
        """What is kept of each node."""
        return (found for _, found in tuple(self._on.values()))

    def worked_out(self) -> tuple[Any, ...]:
        """What is kept of whole tuples of nodes (`of_nodes`), without the tuples."""
        return tuple(found for _, found in tuple(self._whole.values()))

    def run(
        self, key: str, steps: tuple[Step, ...], ask: Ask, nodes: tuple[Object, ...]
    ) -> tuple[Stage, ...]:
        """`run(steps, ask, nodes)` for a pod whose placement is `key`: a node is checked only when
        nothing is kept of it for that placement (the first step that drops it, len(steps) for none,
        and the drop). The same tuple of nodes again: the stages found on it."""
        return self.of_nodes(nodes, ("run", key, steps), lambda: self._run(key, steps, ask, nodes))

    def _run(
        self, key: str, steps: tuple[Step, ...], ask: Ask, nodes: tuple[Object, ...]
    ) -> tuple[Stage, ...]:
        found: list[tuple[int, Drop | None]] = []
        for node in nodes:
            kept = self._of(node)
            known = kept.get(key)
            if known is None:
                known = self._keep(kept, key, _first_drop(steps, ask, node))
            found.append(known)
        dropping = {first for first, _ in found}
        stages = []
        for at, step in enumerate(steps):
            if at in dropping:
                passed = tuple(node for node, (first, _) in zip(nodes, found, strict=True) if first > at)
                dropped = tuple(drop for first, drop in found if first == at and drop is not None)
                found = [f for f in found if f[0] > at]
            else:  # a step that drops no node keeps them all as they came
                passed, dropped = nodes, ()
            stages.append(Stage(step, nodes, passed, dropped))
            if not passed:
                break
            nodes = passed
        return tuple(stages)

    def free_slots(self, step: Step, ask: Ask, nodes: tuple[Object, ...]) -> Stage:
        """`run((step,), ask, nodes)[0]` for the free-slot step of a pod that names no claim: a node is
        checked only when nothing is kept of it for these asks and the very holders it has now (a
        reader that keeps each node's pods keeps their holders, `resources.NodePods`). What the check
        read (the node's offer and its holders' use of each resource asked) is kept too, and handed
        to the question's `Ask` as if read (the advice reads it of every node again). The same tuple of
        nodes with the very same holders on each: the stage found on it."""
        key = ("free slots", *ask.requests.items())
        holders = ask.holders

        def same_holders(found: _FreeSlots) -> bool:
            return all(holders.get(host, ()) is held for host, held in found.held.items())

        found = self.of_nodes(nodes, key, lambda: self._free_slots(key, step, ask, nodes), same_holders)
        ask.shared.offers.update(found.offers)
        ask.shared.used.update(found.used)
        ask.memo[holders_key(nodes)] = (nodes, found.worked)
        return found.stage

    def _free_slots(
        self, key: tuple[object, ...], step: Step, ask: Ask, nodes: tuple[Object, ...]
    ) -> _FreeSlots:
        asked = tuple(ask.requests)
        offers, used = ask.shared.offers, ask.shared.used
        drops, held_on, rooms = [], {}, {}
        for node in nodes:
            host = name(node)
            held = held_on[host] = ask.holders.get(host, ())
            kept = self._of(node)
            known = kept.get(key)
            if known is None or known[0] is not held:
                why = step.check(ask, node)
                read = tuple((ask.offer(node, r), ask.used(host, r)) for r in asked)
                known = self._keep(kept, key, (held, None if why is None else Drop(node, why), read))
            else:
                # What the check read of the node, for the advice that reads it again.
                for resource, (offer_of, used_of) in zip(asked, known[2], strict=True):
                    offers[(id(node), resource)], used[(id(held), resource)] = offer_of, used_of
            drops.append(known[1])
            rooms[host] = Room(node, tuple(o.allocatable for o, _ in known[2]), tuple(u for _, u in known[2]))
        passed = tuple(node for node, drop in zip(nodes, drops, strict=True) if drop is None)
        stage = Stage(step, nodes, passed, tuple(drop for drop in drops if drop is not None))
        read_offers = {(id(node), r): offers[(id(node), r)] for node in nodes for r in asked}
        read_used = {(id(held), r): used[(id(held), r)] for held in held_on.values() for r in asked}
        return _FreeSlots(stage, held_on, read_offers, read_used, {"room": rooms})

    def _of(self, node: Object) -> dict[object, Any]:
        """What is kept of this node object (a node of its name that is another object is not it)."""
        host = name(node)
        entry = self._on.get(host)
        if entry is None or entry[0] is not node:
            entry = self._on[host] = (node, {})
        return entry[1]

    def _keep(self, kept: dict[object, Any], key: object, found: T) -> T:
        if len(kept) >= self.KEPT:
            kept.clear()
        kept[key] = found
        return found


class _FreeSlots(NamedTuple):
    """The free-slot step on a tuple of nodes, the holders it found on each (by node name), and what
    its check read: each node's offer and each node's holders' use of each resource asked (`Shared`)."""

    stage: Stage
    held: dict[str, tuple[Holder, ...]]
    offers: dict[tuple[int, str], Offer]
    used: dict[tuple[int, str], int]
    worked: dict[str, Any]
    """What questions worked out of the nodes and their holders (`Ask.of_holders`): to begin with,
    `Ask.room`, from what the check read."""


def _first_drop(steps: tuple[Step, ...], ask: Ask, node: Object) -> tuple[int, Drop | None]:
    """The first of the steps that drops the node (its index; len(steps): none), and the drop."""
    for at, step in enumerate(steps):
        why = step.check(ask, node)
        if why is not None:
            return at, Drop(node, why)
    return _passed(len(steps))


@cache
def _passed(steps: int) -> tuple[int, None]:
    """What is kept of a node no step drops: one tuple for them all (most of 65,000 nodes)."""
    return steps, None
