"""Which devices each node offers a pod's claims: kube-scheduler's DynamicResources Filter, seen from
the objects (`pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`). For the claims
not allocated yet: which devices of the slices the node can reach match each request (`no-gpu-node`),
which of them are not tainted out (`allocatable-zero`), and whether the allocator finds devices for
every request at once among those no other claim holds (`exhausted`, `allocator`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from diagnosis.dra_objects import (
    Claim,
    Device,
    Dra,
    Inventory,
    Pool,
    Slice,
    Subrequest,
)
from diagnosis.objects import Object, name, namespace
from diagnosis.triage.dra.allocator import Ask, Choice, allocate, needed
from diagnosis.triage.dra.claims import Resolved, node_filter, resolve
from diagnosis.triage.scheduling import BLOCKING_EFFECTS, Placement, Taint, tolerates

MEMO_LIMIT = 200_000
"""Offers an Inventory remembers (a node and a distinct subrequest each) before it starts over."""

KEPT = 8
"""Pods' `Devices` a memo keeps (`Devices.of`) before it starts over."""


@dataclass(frozen=True)
class Devices:
    """The pod's claims against the cluster's devices, worked out once per node."""

    pod: Object
    dra: Dra
    base: Devices | None = field(default=None, compare=False, repr=False)
    """The same pod's Devices on `dra.base`: a node none of whose pools `dra.touched` names finds
    what it found there."""
    _per_node: dict[int, tuple[Object, tuple[tuple[Choice, ...], ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """By id(node), each with its node: a Devices may outlive the question (`of`), and no id is reused
    for another node meanwhile."""
    _unallocatable: dict[int, tuple[Object, str | None]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _ranked: dict[int, tuple[Sequence[Object], tuple[Object, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """`ranked`, by id(nodes): each entry keeps its nodes, so no id is reused for others meanwhile."""
    problems: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Selector → why it could not be evaluated, or the runtime error the scheduler also meets."""

    @classmethod
    def of(cls, pod: Object, dra: Dra, base: Devices | None, memo: dict[object, object]) -> Devices:
        """The pod's Devices on these DRA objects (`base`: on `dra.base`), kept in `memo` for the pods
        whose claims resolve to the very same claims: the runs of a classification share it, and a
        reader that keeps the DRA objects keeps a memo with them (`Findings.devices_of`), so a
        question asked again and one about another pod of the same claims take what was worked out
        on each node (every node with devices, for the free slots of a pod that asks claims alone).
        The memo is never the DRA objects' own: a Devices holds them, and that would be a cycle,
        garbage with what it found on every node that only the cyclic collector frees."""
        key = ("devices", id(dra), namespace(pod), tuple((r.entry, id(r.claim)) for r in resolve(pod, dra)))
        found = memo.get(key)
        if not isinstance(found, Devices):
            if len(memo) >= KEPT:
                memo.clear()
            found = memo[key] = cls(pod, dra, base)
        return found

    @cached_property
    def _touched_hosts(self) -> frozenset[str] | None:
        """The nodes whose choices may differ from `base`'s; None: every node's (no base of the same
        claims and devices, or a changed pool reaches nodes by a selector)."""
        base = self.base
        if base is None or base.dra is not self.dra.base:  # `Dra.base` is on the same devices
            return None
        if [id(r.claim) for r in base.resolved] != [id(r.claim) for r in self.resolved]:
            return None
        hosts: set[str] = set()
        for pool in self.dra.devices.pools:
            if (pool.driver, pool.name) in self.dra.touched:
                if any(s.all_nodes or s.node_selector is not None for s in pool.slices):
                    return None
                hosts.update(s.node_name for s in pool.slices)
        return frozenset(hosts)

    def _as_base(self, host: str) -> Devices | None:
        """`base`, when the node finds there what it would find here."""
        touched = self._touched_hosts
        return self.base if touched is not None and host not in touched else None

    @cached_property
    def resolved(self) -> tuple[Resolved, ...]:
        return resolve(self.pod, self.dra)

    @cached_property
    def asks(self) -> tuple[Ask, ...]:
        """The requests of the claims still to allocate, in pod claim order."""
        return tuple(
            Ask(r.claim, request.name, request.alternatives)
            for r in self.resolved
            if r.claim is not None and not r.claim.allocated
            for request in r.claim.spec.requests
        )

    @cached_property
    def pinned(self) -> tuple[tuple[Claim, Placement], ...]:
        return tuple(
            (r.claim, node_filter(r.claim.node_selector))
            for r in self.resolved
            if r.claim is not None and r.claim.allocated and r.claim.node_selector is not None
        )

    @cached_property
    def missing_classes(self) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(
                s.device_class
                for a in self.asks
                for s in a.alternatives
                if s.device_class not in self.dra.class_index
            )
        )

    def pools(self, node: Object) -> Iterator[tuple[Pool, Slice]]:
        """The slices the node can reach: pinned to it by name, for all nodes, or selecting it."""
        host = name(node)
        for pool in self.dra.devices.by_node.get(host, ()):
            for item in pool.slices:
                if item.node_name == host:
                    yield pool, item
        for pool in self.dra.devices.unpinned:
            for item in pool.slices:
                if item.all_nodes or (
                    item.node_selector is not None and node_filter(item.node_selector).mismatch(node) is None
                ):
                    yield pool, item

    def choices(self, node: Object) -> tuple[tuple[Choice, ...], ...]:
        """Per ask, per alternative: the devices of the node that could serve it."""
        kept = self._per_node.get(id(node))
        if kept is not None:
            return kept[1]
        host = name(node)
        inventory = self.dra.devices
        if host not in inventory.by_node and not inventory.unpinned:
            return self._nowhere  # most nodes of a cluster reach no device at all: none kept for them
        base = self._as_base(host)
        if base is not None:
            found = base.choices(node)
        else:
            found = tuple(tuple(self._choice(sub, node, host) for sub in a.alternatives) for a in self.asks)
        self._per_node[id(node)] = (node, found)
        return found

    @cached_property
    def _nowhere(self) -> tuple[tuple[Choice, ...], ...]:
        """The choices on a node that reaches no pool: `base`'s, where it has the same claims."""
        if self.base is not None and self._touched_hosts is not None:
            return self.base._nowhere
        return tuple(tuple(Choice(sub, (), (), ()) for sub in a.alternatives) for a in self.asks)

    def _choice(self, sub: Subrequest, node: Object, host: str) -> Choice:
        offer = self._offer(sub, node, host)
        for expression, problem in offer.problems:
            self.problems.setdefault(expression, problem)
        held = self.dra.holders
        untainted = offer.untainted
        free = untainted
        if not sub.admin_access:  # a request with admin access uses devices others hold
            free = _same(untainted, tuple(d for d in untainted if d.id not in held))
        return Choice(sub, offer.matching, untainted, free, offer.updating if sub.all_devices else "")

    def offer(self, sub: Subrequest, node: Object) -> Offer:
        """What the node's devices are to the subrequest, whoever holds them. It depends on the devices
        and the subrequest alone, so it is remembered with the inventory (a node's slices pinned to it
        by name; nodes reached by a node selector depend on their labels and are worked out each time)."""
        return self._offer(sub, node, name(node))

    def _offer(self, sub: Subrequest, node: Object, host: str) -> Offer:
        inventory = self.dra.devices
        key = ("offer", host, sub.asks_key)
        found = inventory.memo.get(key) if not inventory.unpinned else None
        if isinstance(found, Offer):
            return found
        offer = _offer(inventory, sub, list(self.pools(node)))
        if not inventory.unpinned:
            if len(inventory.memo) >= MEMO_LIMIT:
                inventory.memo.clear()
            inventory.memo[key] = offer
        return offer

    # — the funnel's three checks —

    def no_device(self, node: Object) -> str | None:
        """`no-gpu-node`: an allocated claim not available here, or a request no device here matches."""
        off = self.elsewhere(node)
        if off:
            return f"claim {', '.join(off)} allocated on other nodes"
        if self.missing_classes:
            return f"device class {', '.join(self.missing_classes)} does not exist"
        choices = self.choices(node)
        return self._unmatched_nowhere if choices is self._nowhere else self._unmatched(choices)

    @cached_property
    def _unmatched_nowhere(self) -> str | None:
        """`no_device` on every node that reaches no pool (most nodes of a cluster)."""
        return self._unmatched(self._nowhere)

    def _unmatched(self, choices: tuple[tuple[Choice, ...], ...]) -> str | None:
        short = [
            _ask_name(a)
            for a, options in zip(self.asks, choices, strict=True)
            if not any(c.matching for c in options)
        ]
        return _said(f"no device matches {', '.join(short)}") if short else None

    def elsewhere(self, node: Object) -> list[str]:
        """The pod's allocated claims whose allocation does not reach the node."""
        return [str(c) for c, where in self.pinned if where.mismatch(node) is not None]

    def tainted(self, node: Object) -> str | None:
        """`allocatable-zero`: for some request, every matching device is tainted out."""
        short = []
        for a, options in zip(self.asks, self.choices(node), strict=True):
            if not any(c.untainted for c in options):
                taints = sorted(
                    {str(t) for c in options for d in c.matching for t in blocking_taints(c.sub, d)}
                )
                short.append(
                    f"{_ask_name(a)}: {sum(len(c.matching) for c in options)} matching devices tainted "
                    f"{', '.join(taints)}"
                )
        return _said("; ".join(short)) if short else None

    def unallocatable(self, node: Object) -> str | None:
        """`exhausted`: the allocator finds no devices for all requests at once among the free ones."""
        kept = self._unallocatable.get(id(node))
        if kept is not None:
            return kept[1]
        base = self._as_base(name(node))
        found = base.unallocatable(node) if base is not None else self._unallocated(node)
        self._unallocatable[id(node)] = (node, found)
        return found

    def _unallocated(self, node: Object) -> str | None:
        options = self.choices(node)
        if not self.asks or allocate(self.asks, options) is not None:
            return None
        parts = []
        for a, choices in zip(self.asks, options, strict=True):
            best = max(choices, key=lambda c: len(c.free))
            wanted = "all" if best.sub.all_devices else str(best.sub.count)
            held = len(best.untainted) - len(best.free)
            parts.append(
                f"{_ask_name(a)}: {len(best.free)} free of {len(best.matching)} matching"
                f"{f' ({held} held)' if held else ''}, {wanted} asked"
            )
        parts += [
            f"request {c.sub.name} asks for all devices, but pool {c.updating} is being updated"
            for choices in options
            for c in choices
            if c.updating
        ]
        if all(any(len(c.free) >= needed(c) and not c.updating for c in choices) for choices in options):
            parts.append("the free ones break the claim's constraints")
        return _said("; ".join(parts))

    def free(self, node: Object) -> int:
        """How many devices the node has free for the pod: per request, its best alternative's."""
        return sum(max((len(c.free) for c in choices), default=0) for choices in self.choices(node))

    def ranked(self, nodes: Sequence[Object]) -> tuple[Object, ...]:
        """The nodes, most free devices first, then by name: worked out once per tuple of nodes (the
        reader's choice of pods to read, the advice and its fixes rank the same nodes)."""
        found = self._ranked.get(id(nodes))
        if found is None:
            ranked = tuple(sorted(nodes, key=lambda n: (-self.free(n), name(n))))
            found = self._ranked[id(nodes)] = (nodes, ranked)
        return found[1]

    def holders_on(self, node: Object) -> tuple[tuple[Claim, str, str], ...]:
        """(claim, request, device) of the other claims holding devices the pod's requests match here."""
        seen: dict[str, tuple[Claim, str, str]] = {}
        for choices in self.choices(node):
            for c in choices:
                for d in c.untainted:
                    held = self.dra.holders.get(d.id)
                    if held is not None:
                        seen.setdefault(d.id, (held[0], held[1], d.name))
        return tuple(seen.values())


@dataclass(frozen=True, slots=True)
class Offer:
    """A node's devices for one subrequest, before asking which are held."""

    matching: tuple[Device, ...]
    untainted: tuple[Device, ...]
    updating: str
    problems: tuple[tuple[str, str], ...]
    """(selector, why) for selectors that could not be evaluated, or failed as the scheduler's would."""


def _offer(inventory: Inventory, sub: Subrequest, reached: Sequence[tuple[Pool, Slice]]) -> Offer:
    updating = next((f"{p.driver}/{p.name}" for p, _ in reached if not p.complete), "")
    device_class = inventory.class_index.get(sub.device_class)
    if device_class is None:
        return Offer((), (), updating, ())
    selectors = (*device_class.selectors, *sub.selectors)
    problems: dict[str, str] = {}
    matching = tuple(d for _, item in reached for d in item.devices if _matches(selectors, d, problems))
    untainted = _same(matching, tuple(d for d in matching if not blocking_taints(sub, d)))
    return Offer(matching, untainted, updating, tuple(problems.items()))


def _matches(selectors: Sequence[str], device: Device, problems: dict[str, str]) -> bool:
    # The CEL library is imported by the first selector evaluated: its parser costs every other
    # question (most pods name no claim) about 40 ms of start-up, a sixth of a live CLI run.
    from diagnosis.triage.dra.cel import Outcome, evaluate

    for expression in selectors:
        result = evaluate(expression, device)
        if result.outcome is Outcome.NO_MATCH:
            return False
        if result.outcome is Outcome.ERROR:
            problems.setdefault(expression, f"CEL runtime error on {device.id}: {result.detail}")
            return False
        if result.outcome is Outcome.UNKNOWN:
            # Never guessed: the device is kept (kubewhy does not drop a node on what it cannot tell).
            problems.setdefault(expression, f"cannot be evaluated by kubewhy: {result.detail}")
    return True


def _same(devices: tuple[Device, ...], kept: tuple[Device, ...]) -> tuple[Device, ...]:
    """`kept`, some of `devices`: `devices` itself when it kept them all (a node's devices are mostly
    all untainted, and all free or all held; the pod's choices on every node are kept)."""
    return devices if len(kept) == len(devices) else kept


def _said(why: str) -> str:
    """One string for every equal reason: thousands of nodes of a pool say the same, and a reader that
    keeps the nodes keeps what each said (`Findings`)."""
    return sys.intern(why)


def _ask_name(ask: Ask) -> str:
    return f"request {ask.request} of claim {ask.claim.name}"


def blocking_taints(sub: Subrequest, device: Device) -> tuple[Taint, ...]:
    """The device's NoSchedule/NoExecute taints no toleration of the request tolerates (DRADeviceTaints)."""
    found = []
    for raw in device.taints:
        taint = Taint(raw.key, raw.value, raw.effect)
        if taint.effect in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in sub.tolerations):
            found.append(taint)
    return tuple(found)
