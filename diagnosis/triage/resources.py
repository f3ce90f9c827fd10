"""Extended resources: what a pod asks for, what a node offers, what the pods bound there hold.

The arithmetic is the scheduler's (`resource.PodRequests` in `component-helpers/resource/helpers.go`, and
`NodeInfo.Requested` in `pkg/scheduler/framework/types.go`, over the pods that are not terminal), so a
node kubewhy calls full is one the scheduler calls full.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial
from typing import Any, NamedTuple, TypeVar

from diagnosis.names import is_label_key
from diagnosis.objects import Object, mapping, meta, name, namespace, parts, sequence, spec, status, text, uid
from diagnosis.quantity import count
from diagnosis.relations import ENDED, is_terminal, nominated_node
from diagnosis.triage.peers import spec_terms
from diagnosis.workloads import Owner, OwnersSeen, preempts_below, priority, priority_class, top_owner


@lru_cache(maxsize=1024)
def is_extended(resource: str) -> bool:
    """`IsExtendedResourceName`: a qualified name with a `/`, outside `kubernetes.io/`, that is not
    itself a quota key (`requests.…`). `cpu`, `hugepages-2Mi` and `foo.kubernetes.io/bar` are not."""
    return (
        "/" in resource
        and "kubernetes.io/" not in resource
        and not resource.startswith("requests.")
        and is_label_key(f"requests.{resource}")
    )


@dataclass(frozen=True)
class Container:
    """One container's asks, as the scheduler sees them."""

    name: str
    requests: Mapping[str, int]
    sidecar: bool
    """A restartable init container (`restartPolicy: Always`): it runs beside the app containers."""


def containers(pod: Object, field: str) -> tuple[Container, ...]:
    """The pod's `containers` or `initContainers`, each with its extended-resource asks: limits,
    falling back to requests (the API copies a lone limit into requests; only limits are reliable in
    hand-written objects), 0 omitted."""
    found = []
    for item in sequence(spec(pod).get(field)):
        container = mapping(item)
        asks = _asks(mapping(container.get("resources")))
        found.append(
            Container(
                name=text(container.get("name")),
                requests={k: v for k, v in asks.items() if v > 0},
                sidecar=field == "initContainers" and container.get("restartPolicy") == "Always",
            )
        )
    return tuple(found)


def effective_requests(pod: Object) -> dict[str, int]:
    """Extended resource → the pod's effective request, 0s omitted, keys sorted.

    Per resource: the larger of the app containers plus the sidecars (they all run at once) and each
    plain init container plus the sidecars started before it (init containers run one at a time);
    then `spec.overhead`, which `resource.PodRequests` adds for every resource, extended ones
    included (`helpers_test.go` "req-and-overhead"). Extended resources are never pod-level.
    """
    pod_spec = spec(pod)
    app = sequence(pod_spec.get("containers"))
    if len(app) == 1 and not pod_spec.get("initContainers"):
        # Most pods: one container, so its asks are the pod's.
        peak = _asks(mapping(mapping(app[0]).get("resources")))
    else:
        inits = ((c.requests, c.sidecar) for c in containers(pod, "initContainers"))
        peak = combined(inits, (c.requests for c in containers(pod, "containers")))
    if "overhead" in pod_spec:
        add_to(peak, extended_overhead(pod))
    return {k: peak[k] for k in sorted(peak) if peak[k] > 0}


def extended_overhead(pod: Object) -> dict[str, int]:
    """The extended resources of `spec.overhead` (the RuntimeClass's `overhead.podFixed`)."""
    return _extended(spec(pod).get("overhead"))


def combined(
    init_containers: Iterable[tuple[Mapping[str, int], bool]], app_containers: Iterable[Mapping[str, int]]
) -> dict[str, int]:
    """`resource.PodRequests` over containers' requests: per resource, the larger of the app
    containers plus the sidecars (init containers marked True, which keep running) and each plain
    init container plus the sidecars started before it (init containers run one at a time)."""
    running: dict[str, int] = {}
    peak: dict[str, int] = {}
    for asks, sidecar in init_containers:
        if sidecar:
            add_to(running, asks)
        else:
            _raise_to(peak, _plus(running, asks))
    for asks in app_containers:
        add_to(running, asks)
    _raise_to(peak, running)
    return peak


class Offer(NamedTuple):
    """What a node reports for one resource. `capacity` None: the key is absent. (A tuple: the
    funnel reads one per node and resource, thousands per classification.)"""

    capacity: int | None
    allocatable: int

    @property
    def reported(self) -> bool:
        """Key absent and `"0"` both mean no device plugin serves it now: the kubelet sets capacity 0
        when a plugin's resource is removed (`GetCapacity`, `pkg/kubelet/cm/devicemanager/manager.go`)."""
        return bool(self.capacity)


def offer(node: Object, resource: str) -> Offer:
    """The node's capacity and allocatable for `resource`; a missing allocatable key reads as 0, as
    the scheduler reads it."""
    node_status = status(node)
    capacity = mapping(node_status.get("capacity")).get(resource)
    allocatable = mapping(node_status.get("allocatable")).get(resource)
    if isinstance(capacity, _SCALARS) and isinstance(allocatable, _SCALARS):
        return _offer(capacity, allocatable)  # a cluster's nodes report a few distinct pairs
    return _offer.__wrapped__(capacity, allocatable)


def offer_read(node: Object) -> tuple[int, int]:
    """All `offer` reads of a node, as a key: its capacity and allocatable by identity (the nodes of a
    pool share them: `cluster.compact`)."""
    node_status = status(node)
    return id(node_status.get("capacity")), id(node_status.get("allocatable"))


_SCALARS = (str, int, float, type(None))
"""What a quantity in JSON may be, hashable (anything else is no quantity)."""


@lru_cache(maxsize=4096)
def _offer(capacity: object, allocatable: object) -> Offer:
    return Offer(
        capacity=None if capacity is None else count(capacity) or 0, allocatable=count(allocatable) or 0
    )


def reported_resources(node: Object) -> tuple[str, ...]:
    """The extended resources the node reports with a capacity above 0, sorted."""
    capacity = mapping(status(node).get("capacity"))
    return tuple(sorted(k for k, v in capacity.items() if is_extended(k) and count(v)))


T = TypeVar("T")

_NO_OWNER = Owner("Pod", "")
_ANTI = "podAntiAffinity"


class Holder(NamedTuple):
    """A pod that holds extended resources on a node (a tuple: a question names the holders of every
    node reached, thousands of them)."""

    namespace: str
    name: str
    requests: Mapping[str, int]
    terminating: bool
    owner: Owner = _NO_OWNER
    priority: int = 0
    priority_class: str = ""
    preemptible: bool = False
    """The pod asked about may preempt this one (`holder_of`)."""
    nominated: bool = False
    """Not bound yet: the scheduler nominated the node for it, and it has the pod's priority or more."""


@dataclass(frozen=True)
class Counted:
    """Node name → the other pods that count against it, as the scheduler counts them: bound there and
    not Succeeded/Failed (terminating pods still count until the object is gone), any namespace, and
    the unbound pods nominated there whose priority is at least the pod's (`addGENominatedPods`). The
    pod itself never counts; a pod listed twice counts once, where it is first listed.

    Worked out for every node in one pass over the pods listed, and read per node afterwards
    (`within`): a classification runs the funnel once per fix it checks, over the same pods. The
    nodes whose pods a reader hands over as `NodePods` take them as they are, pod by pod only where
    the pod asked about is among them; a group's pod listed again is found in the group of the node it
    is listed on (bound or nominated there), not looked for in every group: a pod the scheduler bound
    since a reader listed it as nominated elsewhere counts on both nodes, for that one question."""

    on: Mapping[str, tuple[Object, ...]]
    where: Mapping[tuple[str, str], str]
    """(namespace, name) of each pod counted outside `groups` → its node."""
    repelling: tuple[tuple[str, Object], ...]
    """(node, pod) of the bound pods counted that have a required pod anti-affinity (few, in most
    clusters: the only existing pods that can refuse a pod without terms of its own)."""
    listed: Mapping[tuple[str, str], int]
    """(namespace, name) → where the view's bound pods first list it (`positions`), outside `groups`."""
    relisted: Mapping[tuple[str, str], tuple[int, ...]]
    """(namespace, name) → where the bound pods list it again (a reader that met it twice)."""
    holding: Mapping[str, tuple[Object, ...]]
    """Node name → those of its counted pods that ask for an extended resource (`device_holders`
    reads only these: most pods ask none)."""
    gone: frozenset[tuple[str, str]] = frozenset()
    """The pods taken out by `without`: `where` and `spaces` still hold them."""
    templates: Mapping[str, list[int | None]] = field(default_factory=dict)
    """Node → the `template_key` of each pod counted one by one there, in `on`'s order; None where
    the pod has a status, which may say it holds what is not its template's (`fit.usage` reads
    these, not the pods again: `keys_of`)."""
    spaces: Mapping[str, list[Object]] = field(default_factory=dict)
    """Namespace → the pods counted in it outside `groups` (`Members` finds a workload's replicas in
    its namespace: a pass over every pod would read thousands of objects spread over the heap)."""
    groups: Mapping[str, NodePods] = field(default_factory=dict)
    """The nodes whose counted pods are the reader's `NodePods` for them, as given."""
    offsets: Mapping[str, int] = field(default_factory=dict)
    """Node of `groups` → where the view's bound pods list its first pod."""
    base: Counted | None = None
    """What `without` took pods out of (the first count), and the nodes it changed there."""
    touched: frozenset[str] = frozenset()
    _within: dict[int, tuple[Collection[str], Mapping[str, tuple[Object, ...]]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """`within` by id(the node names asked), with them."""

    @classmethod
    def of(
        cls,
        pod: Object,
        bound_pods: Sequence[Object],
        nominated_pods: Iterable[Object] = (),
        extended: dict[int, Mapping[str, int]] | None = None,
        grouped: Mapping[str, NodePods] | None = None,
        whole: Groups | None = None,
    ) -> Counted:
        """`extended`: what pods ask of extended resources, by `template_key`, as far as known.
        `grouped`: the first of `bound_pods`, node by node (`diagnosis.triage.prepared.Prepared.grouped`);
        `whole`: what is worked out of them as a whole (`Groups.of(grouped)`), when kept.

        The loop reads each pod's parts once and inline: it runs for every pod the reader fetched
        that no group holds."""
        me, my_uid, mine = (namespace(pod), name(pod)), uid(pod), priority(pod)
        asks = {} if extended is None else extended
        on: dict[str, list[Object]] = {}
        holding: dict[str, list[Object]] = {}
        where: dict[tuple[str, str], str] = {}
        spaces: dict[str, list[Object]] = {}
        templates: dict[str, list[int | None]] = {}
        repelling = []
        listed: dict[tuple[str, str], int] = {}
        relisted: dict[tuple[str, str], tuple[int, ...]] = {}
        groups: Mapping[str, NodePods] = {}  # the groups taken as they are, once known

        def in_group(key: tuple[str, str], node: str) -> bool:
            """The pod is one the group of the node it names holds (a reader lists a pod again on
            the node it is bound or nominated to: each group is looked into, not all of them)."""
            group = groups.get(node)
            return group is not None and key in group.keys

        def counts(
            other: Object,
            other_meta: Object,
            other_spec: Object,
            other_status: Object,
            key: tuple[str, str],
            node: str,
        ) -> bool:
            """Count the pod on the node (its `parts` given), unless it has none, is the pod asked
            about or has ended. The caller makes sure it is not counted already: where it was first
            listed, or in the node's group."""
            if not node or key == me or other_status.get("phase") in ENDED:
                return False
            if my_uid and other_meta.get("uid") == my_uid:
                return False
            where[key] = node
            template = template_key(other_spec)
            found = on.get(node)
            if found is None:
                on[node], templates[node] = [other], [None if other_status else template]
            else:
                found.append(other)
                templates[node].append(None if other_status else template)
            found = spaces.get(key[0])
            if found is None:
                spaces[key[0]] = [other]
            else:
                found.append(other)
            if extended_of(other, other_spec, asks, template):
                holding.setdefault(node, []).append(other)
            return True

        def walk(positions: range) -> None:
            for position in positions:
                other = bound_pods[position]
                other_meta, other_spec, other_status = parts(other)
                ns, pod_name = other_meta.get("namespace"), other_meta.get("name")
                key = (ns if type(ns) is str else "", pod_name if type(pod_name) is str else "")
                node = other_spec.get("nodeName")
                node = node if type(node) is str else ""
                grouped = bool(groups) and in_group(key, node)  # no group to look in: raw pods
                if grouped or listed.setdefault(key, position) != position:
                    relisted[key] = (*relisted.get(key, ()), position)
                    if grouped or key in where:
                        continue
                if not counts(other, other_meta, other_spec, other_status, key, node):
                    continue
                # Most pods have no affinity at all: a glance at the keys spares reading the terms.
                rules = other_spec.get("affinity")
                if rules and mapping(rules).get(_ANTI) and spec_terms(other, _ANTI):
                    repelling.append((node, other))

        part = whole if whole is not None and whole.grouped is grouped else Groups.of(grouped or {})
        itself = {n for n, g in part.grouped.items() if me in g.keys}
        if itself:
            # A group holding the pod asked about (a reader that saw it bound) is counted pod by pod,
            # in its place among the groups.
            for node, group in part.grouped.items():
                if node in itself:
                    walk(range(part.offsets[node], part.offsets[node] + len(group.pods)))
                else:
                    repelling += ((node, p) for p in group.repelling)
            part = part.without(itself)
        else:
            repelling += part.repelling
        groups, offsets = part.grouped, part.offsets
        walk(range(part.listed, len(bound_pods)))
        for other in nominated_pods:
            if priority(other) >= mine:
                key, node = (namespace(other), name(other)), nominated_node(other)
                if not in_group(key, node) and key not in where:
                    counts(other, *parts(other), key, node)
        return cls(
            _merged(part.on, on),
            where,
            tuple(repelling),
            listed,
            relisted,
            _merged(part.holding, holding),
            groups=groups,
            offsets=offsets,
            spaces=spaces,
            templates=templates,
        )

    def within(self, node_names: Collection[str]) -> Mapping[str, tuple[Object, ...]]:
        """Node → its counted pods, for the nodes named that have some: the result does not depend on
        how many other pods the reader happened to fetch. Once per collection of names; after
        `without`, the first count's with the nodes it changed worked out again."""
        kept = self._within.get(id(node_names))
        if kept is not None and kept[0] is node_names:
            return kept[1]
        if self.base is None:
            found = {n: self.on[n] for n in node_names if n in self.on}
        else:
            found = dict(self.base.within(node_names))
            for node in self.touched:
                if node in self.on and node in node_names:
                    found[node] = self.on[node]
                else:
                    found.pop(node, None)
        self._within[id(node_names)] = (node_names, found)
        return found

    def without(self, ended: frozenset[tuple[str, str]]) -> Counted:
        """As counted once the pods `ended` (namespace, name) are gone: the other nodes keep their
        tuples, so what was worked out per node's pods still applies to them."""
        touched = {node for key in ended if key not in self.gone and (node := self.node_of(key))}
        on, holding = _without(self.on, touched, ended), _without(self.holding, touched, ended)
        repelling = tuple((n, p) for n, p in self.repelling if (namespace(p), name(p)) not in ended)
        return replace(
            self,
            on=on,
            repelling=repelling,
            holding=holding,
            gone=self.gone | ended,
            base=self.base or self,
            touched=self.touched | touched,
            _within={},
        )

    def keys_of(self, node: str, pods: Sequence[Object]) -> Sequence[int | None] | None:
        """The template keys of the node's pods (`templates`), when `pods` are the pods counted one by
        one there; else None."""
        keys = self.templates.get(node)
        if keys is None or node in self.touched or node in self.groups or self.on.get(node) is not pods:
            return None
        return keys

    def node_of(self, key: tuple[str, str]) -> str | None:
        """The node where the pod (namespace, name) is counted, if it is."""
        return self.where.get(key) or self._in_groups(key)

    def _in_groups(self, key: tuple[str, str]) -> str | None:
        """The node whose group holds the pod (namespace, name), if one does: looked up group by group
        (a fix asks for a few pods, the groups hold every pod of thousands of nodes)."""
        return next((node for node, group in self.groups.items() if key in group.keys), None)

    def positions(self, key: tuple[str, str]) -> tuple[int, ...]:
        """Where the view's bound pods list the pod (namespace, name): a fix that ends pods takes
        them out of those (`fixes.changed`). `without` keeps them as they were: a fix is checked on
        the view the classification read."""
        first = self.listed.get(key)
        if first is None and (node := self._in_groups(key)) is not None:
            first = self.offsets[node] + self.groups[node].keys[key]
        return () if first is None else (first, *self.relisted.get(key, ()))


@dataclass(frozen=True, eq=False)
class NodePods:
    """The pods bound to one node that count against it, as a reader that keeps pods node by node
    hands them over (`cluster.cache`), with what `Counted` reads of them worked out once, for every
    question asked while they are unchanged: which ask for an extended resource, which have a
    required pod anti-affinity; and what the questions work out of them (their holders for each rank
    of preempting pod, what they request together), once (`kept`)."""

    pods: tuple[Object, ...]
    """Not terminal, each (namespace, name) once, in the order given."""
    keys: Mapping[tuple[str, str], int]
    """(namespace, name) → where `pods` lists it. (The API server names one pod by its namespace and
    name at a time: a pod of the same uid is the pod of the same key.)"""
    holding: tuple[Object, ...]
    """Those that ask for an extended resource."""
    repelling: tuple[Object, ...]
    """Those with a required pod anti-affinity."""
    _kept: dict[Hashable, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, pods: Iterable[Object], extended: dict[int, Mapping[str, int]] | None = None) -> NodePods:
        """The pods given that count: not terminal, each (namespace, name) where first given.
        `extended`: what pods ask of extended resources, by `template_key`, as far as known."""
        kept: list[Object] = []
        keys: dict[tuple[str, str], int] = {}
        holding, repelling = [], []
        asks = {} if extended is None else extended
        for pod in pods:
            key = (namespace(pod), name(pod))
            if key in keys or is_terminal(pod):
                continue
            keys[key] = len(kept)
            kept.append(pod)
            pod_spec = spec(pod)
            if extended_of(pod, pod_spec, asks):
                holding.append(pod)
            # Most pods have no affinity at all: a glance at the keys spares reading the terms.
            if pod_spec.get("affinity") and spec_terms(pod, _ANTI):
                repelling.append(pod)
        return cls(tuple(kept), keys, tuple(holding), tuple(repelling))

    @cached_property
    def namespaces(self) -> dict[str, list[Object]]:
        """Namespace → these pods in it (`Members`)."""
        found: dict[str, list[Object]] = {}
        for pod in self.pods:
            found.setdefault(namespace(pod), []).append(pod)
        return found

    def holders(self, pod: Object, rank: int | None) -> tuple[Holder, ...]:
        """`device_holders(pod, self.holding)`, once per what it reads of `pod`: `rank`, its
        `preempts_below`."""
        return self.kept(("holders", rank), partial(device_holders, pod, self.holding))

    def kept(self, what: Hashable, work: Callable[[], T]) -> T:
        """What `work` works out of these pods (named `what`), once."""
        found: T | None = self._kept.get(what)
        if found is None:
            found = self._kept[what] = work()
        return found


class Members:
    """The pods read, found by their workload (`top_owner`): the replicas a fix that scales a
    workload down starts from. A namespace's pods are sorted by workload at the first question
    about it, node by node; a node's `NodePods` keeps what it sorted for every later question."""

    def __init__(
        self,
        by_node: Mapping[str, Sequence[Object]],
        groups: Mapping[str, NodePods] | None = None,
        counted: Counted | None = None,
    ) -> None:
        """`by_node`: node name → its pods (any key, where the nodes do not matter); `groups`: the
        nodes whose pods are their `NodePods`'; `counted`: what `by_node` was taken from, whose
        pods counted one by one are found by namespace there (`Counted.spaces`)."""
        self._by_node = by_node
        self._groups = groups or {}
        self._counted = counted
        self._owned: dict[str, list[Mapping[Owner, list[Object]]]] = {}

    def of(self, ns: str, owner: Owner) -> list[Object]:
        """The pods of `owner` in namespace `ns`."""
        owned = self._owned.get(ns)
        if owned is None:
            owned = self._owned[ns] = []
            counted, read = self._counted, list[Object]()
            # Thousands of nodes, few with a pod of the namespace: a group's are found in a lookup.
            for node, pods in self._by_node.items():
                group = self._groups.get(node)
                if group is not None and group.pods is pods:
                    if namespaced := group.namespaces.get(ns):
                        owned.append(group.kept(("owners", ns), partial(_by_owner, namespaced)))
                elif counted is None or group is not None:  # a group's pods beside others: each read
                    read += (pod for pod in pods if namespace(pod) == ns)
            if counted is not None:
                read += (pod for pod in counted.spaces.get(ns, ()) if self._loose(counted, pod))
            owned.append(_by_owner(read))
        return [pod for by_owner in owned for pod in by_owner.get(owner, ())]

    def _loose(self, counted: Counted, pod: Object) -> bool:
        """The pod, counted one by one, is counted on a node of `by_node` that has no group."""
        key = (namespace(pod), name(pod))
        node = counted.where.get(key)
        return node in self._by_node and node not in self._groups and key not in counted.gone


def _by_owner(pods: Iterable[Object]) -> dict[Owner, list[Object]]:
    found: dict[Owner, list[Object]] = {}
    for pod in pods:
        found.setdefault(top_owner(pod), []).append(pod)
    return found


def group_pods(pods_on: Mapping[str, Iterable[Object]]) -> dict[str, NodePods]:
    """`NodePods` of each node's pods (node name → its pods), in the order given; what a template's
    pods ask is worked out once for all of them."""
    extended: dict[int, Mapping[str, int]] = {}
    return {node: NodePods.of(pods, extended) for node, pods in pods_on.items()}


def in_order(groups: Mapping[str, NodePods]) -> dict[str, NodePods]:
    """The groups in the order of their nodes' names, the order `Prepared.grouped` lists them in."""
    return {node: groups[node] for node in sorted(groups)}


def _merged(
    grouped: Mapping[str, tuple[Object, ...]], counted: Mapping[str, list[Object]]
) -> Mapping[str, tuple[Object, ...]]:
    """Node → its group's pods (`grouped`, the nodes with none left out), then those counted pod by
    pod: `grouped` itself when none was."""
    if not counted:
        return grouped
    merged = dict(grouped)
    for node, more in counted.items():
        found = merged.get(node)
        merged[node] = tuple(more) if found is None else (*found, *more)
    return merged


@dataclass(frozen=True)
class Groups:
    """What `Counted` takes of a reader's groups of pods (`Prepared.grouped`) when none holds the pod
    asked about, worked out once for the mapping of groups: a reader that hands over the same one
    again (`cluster.live.nodes.NodeReads.bound_groups`) has it kept (`Findings.of_nodes`)."""

    grouped: Mapping[str, NodePods]
    offsets: Mapping[str, int]
    """Node → where the bound pods list its group's first pod."""
    listed: int
    """How many pods the groups hold: where the bound pods after them begin."""
    on: Mapping[str, tuple[Object, ...]]
    holding: Mapping[str, tuple[Object, ...]]
    repelling: tuple[tuple[str, Object], ...]

    @classmethod
    def of(cls, grouped: Mapping[str, NodePods]) -> Groups:
        offsets, start = {}, 0
        for node, group in grouped.items():
            offsets[node] = start
            start += len(group.pods)
        return cls(
            grouped,
            offsets,
            start,
            {node: group.pods for node, group in grouped.items() if group.pods},
            {node: group.holding for node, group in grouped.items() if group.holding},
            tuple((node, p) for node, group in grouped.items() for p in group.repelling),
        )

    def without(self, nodes: Collection[str]) -> Groups:
        """Without the groups of these nodes; where the bound pods list each group is kept."""
        return replace(
            self,
            grouped={node: group for node, group in self.grouped.items() if node not in nodes},
            on={node: pods for node, pods in self.on.items() if node not in nodes},
            holding={node: pods for node, pods in self.holding.items() if node not in nodes},
            repelling=tuple((node, p) for node, p in self.repelling if node not in nodes),
        )


def _without(
    by_node: Mapping[str, tuple[Object, ...]], touched: set[str], ended: frozenset[tuple[str, str]]
) -> dict[str, tuple[Object, ...]]:
    """Node → pods, with the pods `ended` taken out of the nodes `touched` (and a node left with none
    left out); the other nodes keep their tuples."""
    found = dict(by_node)
    for node in touched & found.keys():
        kept = tuple(p for p in found[node] if (namespace(p), name(p)) not in ended)
        if kept:
            found[node] = kept
        else:
            del found[node]
    return found


def counted(
    pod: Object,
    bound_pods: Sequence[Object],
    node_names: Collection[str],
    nominated_pods: Iterable[Object] = (),
) -> Mapping[str, tuple[Object, ...]]:
    """`Counted` on the nodes named."""
    return Counted.of(pod, bound_pods, nominated_pods).within(node_names)


def holders(
    pod: Object,
    bound_pods: Sequence[Object],
    node_names: Collection[str],
    nominated_pods: Iterable[Object] = (),
) -> dict[str, tuple[Holder, ...]]:
    """Node name → the pods counted there (`counted`) that hold some extended resource."""
    found = {}
    for node, pods in counted(pod, bound_pods, node_names, nominated_pods).items():
        if held := device_holders(pod, pods):
            found[node] = held
    return found


def template_key(pod_spec: Object) -> int:
    """What a pod's requests are worked out from, by identity, for a memo that lives no longer than
    the pods: its containers when nothing else adds to them (the cache's pods of one template share
    one list: `cluster.compact.compact_pod`), else its whole spec."""
    if "initContainers" in pod_spec or "overhead" in pod_spec or "resources" in pod_spec:
        return id(pod_spec)
    return id(pod_spec.get("containers"))


def device_holders(
    pod: Object,
    pods: Iterable[Object],
    seen: dict[int, Mapping[str, int]] | None = None,
    owners: OwnersSeen | None = None,
) -> tuple[Holder, ...]:
    """Those of `pods` (counted on one node) that hold some extended resource, by namespace and name.
    `seen`: the extended asks already worked out, by `template_key`; `owners`: the owners read
    already (`top_owner`)."""
    memo: dict[int, Mapping[str, int]] = {} if seen is None else seen
    rank = preempts_below(pod)
    held = [holder_of(o, asks, rank, owners) for o in pods if (asks := extended_of(o, spec(o), memo))]
    return tuple(sorted(held, key=lambda h: (h.namespace, h.name)))


def holder_of(
    other: Object, requests: Mapping[str, int], rank: int | None, owners: OwnersSeen | None = None
) -> Holder:
    """Another pod on a node, as the fixes name it (`freeing.who`): whose (`owners`: as `top_owner`
    takes them), its priority, and whether a pod that preempts pods below `rank` may preempt it
    (`workloads.preempts_below`: kube-scheduler `defaultpreemption` evicts only pods of strictly
    lower priority, and none for a pod whose preemptionPolicy is `Never`)."""
    other_meta, other_spec = meta(other), spec(other)
    its = priority(other)
    return Holder(
        text(other_meta.get("namespace")),
        text(other_meta.get("name")),
        requests,
        other_meta.get("deletionTimestamp") is not None,
        top_owner(other, owners),
        its,
        priority_class(other),
        rank is not None and its < rank,
        nominated=not other_spec.get("nodeName"),
    )


def extended_of(
    pod: Object, pod_spec: Object, memo: dict[int, Mapping[str, int]], key: int | None = None
) -> Mapping[str, int]:
    """`extended_asks` of the pod (its spec), worked out once per `template_key` in `memo` (`key`,
    when worked out already)."""
    key = template_key(pod_spec) if key is None else key
    found = memo.get(key)
    if found is None:
        found = memo[key] = extended_asks(pod, pod_spec)
    return found


def extended_asks(pod: Object, pod_spec: Object) -> Mapping[str, int]:
    """`effective_requests(pod)`, given its spec. Most pods ask for no extended resource: a glance at
    their keys spares the arithmetic."""
    return effective_requests(pod) if _names_extended(pod_spec) else {}


def _names_extended(pod_spec: Object) -> bool:
    """Whether some container of the pod (its spec) names a resource with a `/` in its limits or
    requests, or its overhead does: every extended resource has one, and most pods name only cpu and
    memory."""
    if any(isinstance(r, str) and "/" in r for r in mapping(pod_spec.get("overhead"))):
        return True
    for part in ("initContainers", "containers"):
        for container in sequence(pod_spec.get(part)):
            resources = mapping(mapping(container).get("resources"))
            for asks in (resources.get("limits"), resources.get("requests")):
                for resource in mapping(asks):
                    if isinstance(resource, str) and "/" in resource:
                        return True
    return False


def _asks(resources: Mapping[str, object]) -> dict[str, int]:
    """A container's extended-resource asks: its limits, else its requests."""
    return {**_extended(resources.get("requests")), **_extended(resources.get("limits"))}


def _extended(values: object) -> dict[str, int]:
    return {k: count(v) or 0 for k, v in mapping(values).items() if isinstance(k, str) and is_extended(k)}


def add_to(total: dict[str, int], more: Mapping[str, int]) -> None:
    for resource, amount in more.items():
        total[resource] = total.get(resource, 0) + amount


def _plus(left: Mapping[str, int], right: Mapping[str, int]) -> dict[str, int]:
    total = dict(left)
    add_to(total, right)
    return total


def _raise_to(peak: dict[str, int], values: Mapping[str, int]) -> None:
    for resource, amount in values.items():
        peak[resource] = max(peak.get(resource, 0), amount)
