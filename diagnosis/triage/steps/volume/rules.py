"""The `volume` step's rules per node, in the scheduler's order (VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone): the pod's claims resolved once for all nodes (`Volumes`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from diagnosis import objects
from diagnosis.objects import (
    Object,
    labels,
    mapping,
    meta,
    name,
    namespace,
    sequence,
    spec,
    status,
    text,
    uid,
)
from diagnosis.quantity import count
from diagnosis.relations import node_name
from diagnosis.selectors import SelectorError, parse
from diagnosis.triage.fit import binary_size
from diagnosis.triage.funnel import Ask
from diagnosis.triage.scheduling import Placement
from diagnosis.triage.steps.volume.claims import (
    GA_TOPOLOGY,
    NO_PROVISIONER,
    SELECTED_NODE,
    TOPOLOGY_LABELS,
    ClaimRef,
    Index,
    bound,
    claim_refs,
    claim_users,
    class_of,
    limits,
    one_pod,
    publishes_capacity,
)


@dataclass(frozen=True)
class Volumes:
    """The pod's claims resolved, worked out once for all nodes."""

    everywhere: str = ""
    """Why every node fails (a missing PVC, an unbound Immediate one…), or ""."""
    bound: tuple[tuple[Object, Object], ...] = ()
    """(claim, its PV) of the fully bound claims."""
    zoned: tuple[tuple[Object, Object], ...] = ()
    """The same without the claims of generic ephemeral volumes, which VolumeZone does not read."""
    delayed: tuple[Object, ...] = ()
    """Unbound WaitForFirstConsumer claims."""
    new_csi: Mapping[str, str] = field(default_factory=dict)
    """The pod's CSI volumes: unique name (driver/handle) → driver."""
    index: Index | None = None
    pods_by_node: Mapping[str, tuple[Object, ...]] = field(default_factory=dict)
    users: Mapping[str, tuple[Object, ...]] = field(default_factory=dict)
    """PVC → the other pods using it, for the pod's ReadWriteOncePod claims that some pod uses."""

    @classmethod
    def of(cls, ask: Ask) -> Volumes:
        found = ask.memo.get("volumes")
        if isinstance(found, Volumes):
            return found
        ask.memo["volumes"] = found = cls._worked_out(ask)
        return found

    @classmethod
    def _worked_out(cls, ask: Ask) -> Volumes:
        pod, refs = ask.pod, claim_refs(ask.pod)
        if not refs or ask.view is None:
            return cls()
        index = Index(ask.view.storage)
        # VolumeRestrictions: every claim exists (its PreFilter), and no other pod uses a ReadWriteOncePod
        # one (its Filter then refuses every node).
        resolved = _resolved(pod, refs, index)
        if isinstance(resolved, str):
            return cls(everywhere=resolved)
        in_use = ask.view.storage.users
        used = {
            ref.claim: held
            for ref, claim in resolved
            if not ref.ephemeral and one_pod(claim) and (held := claim_users(pod, ref.claim, in_use))
        }
        if used:
            return cls(everywhere="; ".join(_used_why(c, held) for c, held in used.items()), users=used)
        # VolumeBinding's PreFilter: a claim that cannot be bound or used anywhere.
        if why := _unusable(pod, resolved, index):
            return cls(everywhere=why)
        immediate = [c for _, c in resolved if not bound(c) and not index.delayed(c)]
        if immediate:
            return cls(
                everywhere="unbound Immediate PVCs: " + "; ".join(_immediate_why(c, index) for c in immediate)
            )
        volumes = _bound_volumes(resolved, index)
        if isinstance(volumes, str):
            return cls(everywhere=volumes)
        pairs, zoned = volumes
        return cls(
            bound=tuple(pairs),
            zoned=tuple(zoned),
            delayed=tuple(c for _, c in resolved if not bound(c)),
            new_csi=_new_csi(resolved, index),
            index=index,
            pods_by_node=ask.pods,
        )

    def failure(self, node: Object) -> str | None:
        if self.everywhere:
            return self.everywhere
        if self.index is None:
            return None
        # NodeVolumeLimits, VolumeBinding, VolumeZone: the scheduler's filter order.
        return self._attach_limit(node) or self._binding(node) or self._zone(node)

    def _attach_limit(self, node: Object) -> str | None:
        assert self.index is not None
        node_limits = limits(self.index.csinodes.get(name(node)))
        if not self.new_csi or not node_limits:
            return None
        attached = {
            k: d for other in self.pods_by_node.get(name(node), ()) for k, d in self.csi_of(other).items()
        }
        new = {k: d for k, d in self.new_csi.items() if k not in attached}
        for driver in sorted(set(new.values())):
            if driver not in node_limits:
                continue
            used = sum(1 for d in attached.values() if d == driver)
            adding = sum(1 for d in new.values() if d == driver)
            if used + adding > node_limits[driver]:
                return (
                    f"{driver} has {used} volume{'' if used == 1 else 's'} attached there + {adding} new, "
                    f"over its limit of {node_limits[driver]} (CSINode)"
                )
        return None

    def csi_of(self, pod: Object) -> dict[str, str]:
        """The pod's CSI volumes: unique name (driver/handle) → driver."""
        assert self.index is not None
        found = {}
        for ref in claim_refs(pod):
            claim = self.index.claims.get((namespace(pod), ref.claim))
            if claim is None:
                continue
            driver, handle = self.index.driver(claim)
            if driver and handle:
                found[f"{driver}/{handle}"] = driver
        return found

    def _binding(self, node: Object) -> str | None:
        """`FindPodVolumes`: the bound claims' PVs allow the node; the claims given a node are given
        this one; the others, smallest first, each take a PV that no claim before took
        (`findMatchingVolumes`), or can be provisioned there."""
        assert self.index is not None
        for claim, volume in self.bound:
            why = volume_affinity(volume, node)
            if why:
                return _place(claim, volume, node) or f"PV {name(volume)} of PVC {name(claim)}: {why}"
        for claim in self.delayed:
            selected = objects.annotations(claim).get(SELECTED_NODE)
            if selected is not None and selected != name(node):
                return f"PVC {name(claim)} is already given node {selected} ({SELECTED_NODE})"
        chosen: dict[str, str] = {}
        matching = (c for c in self.delayed if SELECTED_NODE not in objects.annotations(c))
        for claim in sorted(matching, key=lambda c: _requested(c) or 0):
            taken = self._available_volume(claim, node, chosen)
            if taken is not None:
                chosen[name(taken)] = name(claim)
                continue
            why = self._cannot_provision(claim, node, chosen)
            if why:
                return why
        return None

    def _available_volume(self, claim: Object, node: Object, chosen: Mapping[str, str]) -> Object | None:
        """`FindMatchingVolume` with the node: a PV pre-bound to the claim, or the smallest
        available PV of its class that is big enough, of its mode and access modes, selected by its
        selector and allowed on the node; none of the PVs `chosen` for the pod's other claims."""
        assert self.index is not None
        wanted = _requested(claim) or 0
        selector = spec(claim).get("selector")
        best: tuple[int, str, Object] | None = None
        for volume in self.index.volumes.values():
            if name(volume) in chosen:
                continue
            ref = mapping(spec(volume).get("claimRef"))
            if ref and not _bound_to(ref, claim):
                continue
            size = _big_enough(volume, claim, wanted)
            if size is None:
                continue
            fits = volume_affinity(volume, node) is None
            if ref:
                return volume if fits else None
            if not fits or not _available_for(volume, claim, selector):
                continue
            if best is None or size < best[0]:
                best = (size, name(volume), volume)
        return None if best is None else best[2]

    def _cannot_provision(self, claim: Object, node: Object, chosen: Mapping[str, str]) -> str | None:
        """`checkVolumeProvisions`: why a new PV cannot be provisioned for the claim on the node
        (`chosen`: the PVs the pod's other claims take there)."""
        assert self.index is not None
        class_name = class_of(claim)
        storage_class = self.index.classes.get(class_name, {})
        provisioner = text(storage_class.get("provisioner"))
        taken = "; ".join(f"PV {v} goes to PVC {c}" for v, c in chosen.items())
        head = f"PVC {name(claim)}: no free PV of StorageClass {class_name} fits the node" + (
            f" ({taken})" if taken else ""
        )
        if not provisioner or provisioner == NO_PROVISIONER:
            return f"{head}, and the class makes none ({provisioner or 'no provisioner'})"
        terms = [mapping(t) for t in sequence(storage_class.get("allowedTopologies"))]
        if terms and not any(_topology_term(t, labels(node)) for t in terms):
            allowed = "; ".join(_topology_text(t) for t in terms)
            return f"{head}, and the class's allowedTopologies ({allowed}) exclude the node"
        return self._no_capacity(claim, node, provisioner)

    def _no_capacity(self, claim: Object, node: Object, provisioner: str) -> str | None:
        """`hasEnoughCapacity`: for a CSI driver that publishes its capacity (`storageCapacity` in
        its CSIDriver), some CSIStorageCapacity of the claim's class whose `nodeTopology` selects the
        node has room for the claim (`maximumVolumeSize`, else `capacity`)."""
        assert self.index is not None
        asked = _requested(claim)
        driver = self.index.drivers.get(provisioner)
        if asked is None or driver is None or not publishes_capacity(driver):
            return None
        rooms = [
            room
            for c in self.index.capacities.get(class_of(claim), [])
            if _reaches(c, node) and (room := _room(c)) is not None
        ]
        if any(room >= asked for room in rooms):
            return None
        found = (
            f"at most {binary_size(max(rooms))} there"
            if rooms
            else "none there (no CSIStorageCapacity reaches the node)"
        )
        return f"PVC {name(claim)} asks {binary_size(asked)}; StorageClass {class_of(claim)} has {found}"

    def _zone(self, node: Object) -> str | None:
        node_labels = labels(node)
        if not any(k in node_labels for k in TOPOLOGY_LABELS):
            return None
        for claim, volume in self.zoned:
            volume_labels = labels(volume)
            for key in TOPOLOGY_LABELS:
                if key not in volume_labels:
                    continue
                zones = {z for z in volume_labels[key].split("__") if z}
                have = node_labels.get(key)
                if have is None:
                    have = node_labels.get(GA_TOPOLOGY.get(key, key))
                if have is None or have not in zones:
                    return _placed(claim, key, sorted(zones), have)
        return None


def _resolved(pod: Object, refs: Iterable[ClaimRef], index: Index) -> list[tuple[ClaimRef, Object]] | str:
    """The pod's claims by its references to them, or why not: the first one missing."""
    resolved: list[tuple[ClaimRef, Object]] = []
    for ref in refs:
        claim = index.claims.get((namespace(pod), ref.claim))
        if claim is None:
            if ref.ephemeral:
                return (
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                    f'"{ref.claim}"'
                )
            return f'persistentvolumeclaim "{ref.claim}" not found'
        resolved.append((ref, claim))
    return resolved


def _unusable(pod: Object, resolved: Iterable[tuple[ClaimRef, Object]], index: Index) -> str:
    """Why a claim of the pod cannot be bound or used on any node (VolumeBinding's PreFilter), or ""."""
    ns = namespace(pod)
    for ref, claim in resolved:
        if status(claim).get("phase") == "Lost":
            lost = text(spec(claim).get("volumeName"))
            return f'persistentvolumeclaim "{ref.claim}" bound to non-existent persistentvolume "{lost}"'
        if meta(claim).get("deletionTimestamp") is not None:
            return f'persistentvolumeclaim "{ref.claim}" is being deleted'
        if ref.ephemeral and not _owned_by_pod(claim, pod):
            return f"PVC {ns}/{ref.claim} was not created for pod {ns}/{name(pod)} (pod is not owner)"
        storage_class = index.classes.get(class_of(claim))
        if (
            not bound(claim)
            and storage_class is not None
            and not isinstance(storage_class.get("volumeBindingMode"), str)
        ):
            return f'VolumeBindingMode not set for StorageClass "{class_of(claim)}"'
    return ""


def _bound_volumes(
    resolved: Iterable[tuple[ClaimRef, Object]], index: Index
) -> tuple[list[tuple[Object, Object]], list[tuple[Object, Object]]] | str:
    """(claim, its PV) of the bound claims, and of those VolumeZone reads (not an ephemeral volume's);
    or why not: a bound claim's PV is missing."""
    pairs: list[tuple[Object, Object]] = []
    zoned: list[tuple[Object, Object]] = []
    for ref, claim in resolved:
        if not bound(claim):
            continue
        volume = index.volume_of(claim)
        # A bound claim's PV is missing: VolumeZone's PreFilter refuses the pod (VolumeBinding's
        # Filter then refuses every node too, for an ephemeral volume's claim).
        if volume is None:
            return f'persistentvolume "{text(spec(claim).get("volumeName"))}" not found'
        pairs.append((claim, volume))
        if not ref.ephemeral:
            zoned.append((claim, volume))
    return pairs, zoned


def _new_csi(resolved: Iterable[tuple[ClaimRef, Object]], index: Index) -> dict[str, str]:
    """The pod's CSI volumes: unique name (driver/handle) → driver."""
    new_csi = {}
    for _, claim in resolved:
        driver, handle = index.driver(claim)
        if driver and handle:
            new_csi[f"{driver}/{handle}"] = driver
    return new_csi


def _big_enough(volume: Object, claim: Object, wanted: int) -> int | None:
    """The PV's size, when it is big enough for the claim, of its volume mode and not being deleted."""
    volume_spec = spec(volume)
    size = count(mapping(volume_spec.get("capacity")).get("storage")) or 0
    if size < wanted or _mode(volume_spec) != _mode(spec(claim)):
        return None
    return None if meta(volume).get("deletionTimestamp") is not None else size


def _available_for(volume: Object, claim: Object, selector: object) -> bool:
    """An unbound PV the claim may take: Available, of its class, selected by its selector, with
    every access mode it asks."""
    if status(volume).get("phase") != "Available" or class_of(volume) != class_of(claim):
        return False
    if selector is not None and not _selects(selector, labels(volume)):
        return False
    modes = {text(m) for m in sequence(spec(volume).get("accessModes"))}
    return {text(m) for m in sequence(spec(claim).get("accessModes"))} <= modes


def _requested(claim: Object) -> int | None:
    """The claim's `resources.requests.storage` in bytes, or None without one."""
    asked = mapping(mapping(spec(claim).get("resources")).get("requests")).get("storage")
    return None if asked is None else count(asked)


def _room(capacity: Object) -> int | None:
    """`volumeLimit`: the largest volume the capacity allows, `maximumVolumeSize` over `capacity`."""
    limit = capacity.get("maximumVolumeSize")
    if limit is None:
        limit = capacity.get("capacity")
    return None if limit is None else count(limit)


def _reaches(capacity: Object, node: Object) -> bool:
    """`nodeHasAccess`: the capacity's `nodeTopology` selects the node (none: it reaches no node)."""
    topology = capacity.get("nodeTopology")
    return topology is not None and _selects(topology, labels(node))


def _used_why(claim: str, held: tuple[Object, ...]) -> str:
    return f'persistentvolumeclaim "{claim}" is ReadWriteOncePod and in use by ' + ", ".join(
        f"pod {name(p)} on {node_name(p)}" + (" (terminating)" if meta(p).get("deletionTimestamp") else "")
        for p in held
    )


def _immediate_why(claim: Object, index: Index) -> str:
    class_name = class_of(claim)
    if text(spec(claim).get("volumeName")):
        return f"{name(claim)} names PV {text(spec(claim).get('volumeName'))}, not bound yet"
    if not class_name:
        return f"{name(claim)} has no StorageClass and no PV bound"
    if class_name not in index.classes:
        return f"{name(claim)}'s StorageClass {class_name} does not exist"
    return f"{name(claim)} waits for a PV of StorageClass {class_name}"


def _owned_by_pod(claim: Object, pod: Object) -> bool:
    """`ephemeral.VolumeIsForPod`: the PVC's controller is the pod."""
    for ref in map(mapping, sequence(meta(claim).get("ownerReferences"))):
        if ref.get("controller") is True:
            return text(ref.get("uid")) == uid(pod) if uid(pod) else text(ref.get("name")) == name(pod)
    return False


def _bound_to(ref: Mapping[str, object], claim: Object) -> bool:
    """`IsVolumeBoundToClaim`: the PV's claimRef names the claim (and its uid, when it has one)."""
    if text(ref.get("name")) != name(claim) or text(ref.get("namespace")) != namespace(claim):
        return False
    return not text(ref.get("uid")) or text(ref.get("uid")) == uid(claim)


def _mode(volume_spec: Mapping[str, object]) -> str:
    return text(volume_spec.get("volumeMode")) or "Filesystem"


def _selects(selector: object, volume_labels: Mapping[str, str]) -> bool:
    try:
        return parse(selector).matches(volume_labels)
    except SelectorError:
        return False


def volume_affinity(volume: Object, node: Object) -> str | None:
    """`CheckNodeAffinity`: why the PV's required node affinity refuses the node, or None."""
    required = mapping(spec(volume).get("nodeAffinity")).get("required")
    if not isinstance(required, Mapping):
        return None
    placement = Placement.of(
        {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}}}
    )
    why = placement.mismatch(node)
    return None if why is None else why.removeprefix("affinity").lstrip(": ")


def _place(claim: Object, volume: Object, node: Object) -> str | None:
    """The PV's required node affinity in plain words (`_placed`), when it has one term and a
    requirement of it that refuses the node is `In` on a zone, region or hostname label; else None."""
    required = mapping(mapping(spec(volume).get("nodeAffinity")).get("required"))
    terms = [mapping(t) for t in sequence(required.get("nodeSelectorTerms"))]
    if len(terms) != 1:
        return None
    node_labels = labels(node)
    for expression in map(mapping, sequence(terms[0].get("matchExpressions"))):
        key, values = text(expression.get("key")), [text(v) for v in sequence(expression.get("values"))]
        have = node_labels.get(key)
        if expression.get("operator") == "In" and _PLACES.get(key.rsplit("/", 1)[-1]) and have not in values:
            return _placed(claim, key, values, have)
    return None


_PLACES = {"zone": "zone", "region": "region", "hostname": "node"}
"""The last part of a topology label key → what it places a volume in."""


def _placed(claim: Object, key: str, values: Sequence[str], have: str | None) -> str:
    """`PVC data's disk is in zone us-central1-a; the node is in us-central1-c`."""
    where = _PLACES.get(key.rsplit("/", 1)[-1], key)
    node = f"is in {have}" if have is not None else f"has no label {key}"
    if where == "node":
        return f"PVC {name(claim)}'s volume is on node {' or '.join(values)} only"
    return f"PVC {name(claim)}'s disk is in {where} {' or '.join(values)}; the node {node}"


def _topology_term(term: Mapping[str, object], node_labels: Mapping[str, str]) -> bool:
    """One `TopologySelectorTerm`: every expression's key has one of its values; empty selects none."""
    expressions = [mapping(e) for e in sequence(term.get("matchLabelExpressions"))]
    if not expressions:
        return False
    return all(
        node_labels.get(text(e.get("key"))) in {text(v) for v in sequence(e.get("values"))}
        for e in expressions
    )


def _topology_text(term: Mapping[str, object]) -> str:
    return ", ".join(
        f"{text(e.get('key'))} in [{', '.join(map(text, sequence(e.get('values'))))}]"
        for e in map(mapping, sequence(term.get("matchLabelExpressions")))
    )
