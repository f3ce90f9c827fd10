"""What the funnel's steps up to the free slots found on each node, kept between questions by a reader
that keeps the nodes (`cluster.cache`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from diagnosis.objects import Object, name
from diagnosis.triage.funnel import Ask, Drop, Stage, Step

T = TypeVar("T")

class Findings:
    """What the funnel's steps up to the free slots found on each node, kept with the nodes by a reader
    that keeps them between questions (`cluster.cache`): a question about a pod placed like an earlier
    one takes what was found rather than checking every node again, as kube-scheduler's equivalence
    cache once did. The steps before the free slots are kept by what they read of the pod
    (`runner._placement_key`); the free-slot step by the pod's asks and the node's holders. A
    finding serves only the very node object (and holders) it was found on: a node that changed is
    checked again. A node keeps up to `KEPT` findings (more, and it starts over).

    Questions run in threads of their own: each change here is one dict operation."""

    KEPT = 16

    def __init__(self) -> None:
        self._on: dict[str, tuple[Object, dict[object, Any]]] = {}
        """Node name → the node object and what was found on it, by what the check read."""

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

    def run(
        self, key: str, steps: tuple[Step, ...], ask: Ask, nodes: tuple[Object, ...]
    ) -> tuple[Stage, ...]:
        """`run(steps, ask, nodes)` for a pod whose placement is `key`: a node is checked only when
        nothing is kept of it for that placement (the first step that drops it, len(steps) for none,
        and the drop)."""
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
        to the question's `Ask` as if read (the advice reads it of every node again)."""
        key, asked = ("free slots", *ask.requests.items()), tuple(ask.requests)
        offers, used = ask.shared.offers, ask.shared.used
        drops = []
        for node in nodes:
            host = name(node)
            held = ask.holders.get(host, ())
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
        passed = tuple(node for node, drop in zip(nodes, drops, strict=True) if drop is None)
        return Stage(step, nodes, passed, tuple(drop for drop in drops if drop is not None))

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


def _first_drop(steps: tuple[Step, ...], ask: Ask, node: Object) -> tuple[int, Drop | None]:
    """The first of the steps that drops the node (its index; len(steps): none), and the drop."""
    for at, step in enumerate(steps):
        why = step.check(ask, node)
        if why is not None:
            return at, Drop(node, why)
    return len(steps), None
