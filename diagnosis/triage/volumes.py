"""The `volume` step: kube-scheduler's NodeVolumeLimits (CSI), VolumeBinding and VolumeZone filters,
and the PreFilter checks of VolumeRestrictions and VolumeBinding that refuse a pod on every node
(`pkg/scheduler/framework/plugins/nodevolumelimits/csi.go`, `volumebinding/volume_binding.go`,
`volumebinding/binder.go`, `volumezone/volume_zone.go`, `volumerestrictions/volume_restrictions.go`).

Covered:
- every node: a PVC that is missing, being deleted or `Lost`; a `ReadWriteOncePod` PVC that another
  bound pod uses already (VolumeRestrictions; terminating pods still use it); a generic ephemeral
  volume whose PVC is not created yet or not the pod's; an unbound PVC in `Immediate` mode (or with a
  class that does not exist); a bound PVC whose PV is missing; a StorageClass without
  `volumeBindingMode`;
- per node, in the scheduler's order: the CSI attach limit of the node's CSINode (unique CSI volumes
  of the pods on the node plus the pod's new ones, per driver); a bound PV's node affinity; a
  `WaitForFirstConsumer` PVC given another node (`volume.kubernetes.io/selected-node`), or with no
  available PV of its class for the node and no way to provision one there (no provisioner, the
  class's `allowedTopologies`, or, for a CSI driver that publishes its capacity, no
  CSIStorageCapacity of the class for the node with room for it); a bound PV's zone and region
  labels (`topology.kubernetes.io/*` and the `failure-domain.beta.kubernetes.io/*` ones) against the
  node's.
Not covered: VolumeRestrictions' in-tree disk conflicts (inline GCE PD, EBS, iSCSI and RBD volumes);
VolumeAttachments of pods that are gone; in-tree volumes migrated to CSI (counted by the scheduler
when migration is on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from diagnosis import objects
from diagnosis.commands import collect, describe
from diagnosis.missing import similar_names
from diagnosis.model import PodVerdict
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
from diagnosis.relations import holds_node, node_name
from diagnosis.selectors import SelectorError, parse
from diagnosis.triage import commands as kubectl
from diagnosis.triage import preemption, remedies
from diagnosis.triage.fit import binary_size
from diagnosis.triage.fixes import Change, ending, pod_change, pool_of, where
from diagnosis.triage.funnel import Advice, Ask, Funnel, names
from diagnosis.triage.peers import owner_text
from diagnosis.triage.scheduling import Placement
from diagnosis.views import Storage, TriageView
from diagnosis.workloads import top_owner

SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT = "WaitForFirstConsumer"
ONE_POD = "ReadWriteOncePod"

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
"""The PV labels VolumeZone reads (`volumezone.topologyLabels`)."""
_GA = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}


@dataclass(frozen=True)
class ClaimRef:
    """A pod volume backed by a PVC: its own (`persistentVolumeClaim`) or a generic ephemeral one,
    whose PVC is named `<pod>-<volume>`."""

    volume: str
    claim: str
    ephemeral: bool


def claim_refs(pod: Object) -> tuple[ClaimRef, ...]:
    found = []
    for vol in map(mapping, sequence(spec(pod).get("volumes"))):
        volume = text(vol.get("name"))
        if isinstance(vol.get("persistentVolumeClaim"), Mapping):
            found.append(
                ClaimRef(volume, text(mapping(vol["persistentVolumeClaim"]).get("claimName")), False)
            )
        elif isinstance(vol.get("ephemeral"), Mapping):
            found.append(ClaimRef(volume, f"{name(pod)}-{volume}", True))
    return tuple(found)


def claim_names(pod: Object) -> tuple[str, ...]:
    """The PVCs the pod's volumes name (what a reader fetches first)."""
    return tuple(dict.fromkeys(r.claim for r in claim_refs(pod) if r.claim))


def class_of(obj: Object) -> str:
    """`GetPersistentVolumeClaimClass` / `GetPersistentVolumeClass`: the beta annotation wins."""
    beta = objects.annotations(obj).get(BETA_CLASS)
    return beta if beta is not None else text(spec(obj).get("storageClassName"))


def bound(claim: Object) -> bool:
    """Fully bound: a volume name and the binder's `bind-completed` annotation."""
    return bool(text(spec(claim).get("volumeName"))) and BIND_COMPLETED in objects.annotations(claim)


def one_pod(claim: Object) -> bool:
    """The claim's access modes hold `ReadWriteOncePod`: one pod of the cluster may use it at a time."""
    return ONE_POD in {text(m) for m in sequence(spec(claim).get("accessModes"))}


def claim_users(pod: Object, claim: str, pods: Iterable[Object]) -> tuple[Object, ...]:
    """The bound pods, other than `pod`, whose volumes name PVC `claim` of its namespace (the count
    VolumeRestrictions keeps per `namespace/claim`: pods on any node, terminating ones included)."""
    ns, me = namespace(pod), (namespace(pod), name(pod))
    return tuple(
        p
        for p in pods
        if namespace(p) == ns
        and (namespace(p), name(p)) != me
        and holds_node(p)
        and any(r.claim == claim and not r.ephemeral for r in claim_refs(p))
    )


class Index:
    """The storage objects of a view, by name."""

    def __init__(self, storage: Storage) -> None:
        self.claims = {(namespace(c), name(c)): c for c in storage.claims}
        self.volumes = {name(v): v for v in storage.volumes}
        self.classes = {name(c): c for c in storage.classes}
        self.csinodes = {name(c): c for c in storage.csinodes}
        self.drivers = {name(d): d for d in storage.drivers}
        self.capacities: dict[str, list[Object]] = {}
        for capacity in storage.capacities:
            self.capacities.setdefault(text(capacity.get("storageClassName")), []).append(capacity)

    def volume_of(self, claim: Object) -> Object | None:
        return self.volumes.get(text(spec(claim).get("volumeName")))

    def delayed(self, claim: Object) -> bool:
        """An unbound claim whose class waits for the first consumer (else it is Immediate)."""
        storage_class = self.classes.get(class_of(claim))
        return (
            not text(spec(claim).get("volumeName"))
            and storage_class is not None
            and storage_class.get("volumeBindingMode") == WAIT
        )

    def driver(self, claim: Object) -> tuple[str, str]:
        """`getCSIDriverInfo`: the CSI driver and volume handle of the claim's PV, or for an unbound
        claim (or a missing PV) its class's provisioner and a handle unique to the claim; ("", "")
        when it is not a CSI volume."""
        volume = self.volume_of(claim) if text(spec(claim).get("volumeName")) else None
        if volume is not None:
            csi = mapping(spec(volume).get("csi"))
            return text(csi.get("driver")), text(csi.get("volumeHandle"))
        storage_class = self.classes.get(class_of(claim))
        if not class_of(claim) or storage_class is None:
            return "", ""
        return text(storage_class.get("provisioner")), f"new:{namespace(claim)}/{name(claim)}"


def needs_every_volume(pod: Object, storage: Storage) -> bool:
    """Some PVC of the pod waits for its first consumer without a chosen node: the scheduler looks
    for an available PV of its class among all PVs."""
    index = Index(storage)
    for ref in claim_refs(pod):
        claim = index.claims.get((namespace(pod), ref.claim))
        if claim is not None and index.delayed(claim) and SELECTED_NODE not in objects.annotations(claim):
            return True
    return False


def provisioners(pod: Object, storage: Storage) -> frozenset[str]:
    """The provisioners of the classes of the pod's claims that wait for their first consumer: a CSI
    driver among them may publish the capacity it has left per node (`hasEnoughCapacity`)."""
    index = Index(storage)
    found = set()
    for ref in claim_refs(pod):
        claim = index.claims.get((namespace(pod), ref.claim))
        if claim is not None and index.delayed(claim):
            found.add(text(index.classes[class_of(claim)].get("provisioner")))
    return frozenset(found - {"", NO_PROVISIONER})


def publishes_capacity(driver: Object) -> bool:
    """The CSIDriver asks the scheduler to check its CSIStorageCapacities (`spec.storageCapacity`)."""
    return mapping(spec(driver)).get("storageCapacity") is True


def csi_drivers(pod: Object, storage: Storage) -> frozenset[str]:
    """The CSI drivers of the pod's volumes (whose CSINodes may set attach limits)."""
    index = Index(storage)
    found = set()
    for ref in claim_refs(pod):
        claim = index.claims.get((namespace(pod), ref.claim))
        if claim is not None:
            driver, handle = index.driver(claim)
            if driver and handle:
                found.add(driver)
    return frozenset(found)


def limits(csinode: Object | None) -> dict[str, int]:
    """`getVolumeLimits`: driver → `allocatable.count` of the CSINode's drivers that set one."""
    found = {}
    for driver in map(mapping, sequence(spec(csinode).get("drivers"))):
        limit = mapping(driver.get("allocatable")).get("count")
        if isinstance(limit, int) and not isinstance(limit, bool):
            found[text(driver.get("name"))] = limit
    return found


def limited(drivers: Iterable[str], csinodes: Iterable[Object]) -> bool:
    """Some CSINode limits one of these drivers: the volumes already attached must be counted."""
    wanted = set(drivers)
    return any(wanted & limits(c).keys() for c in csinodes)


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
        ns = namespace(pod)
        resolved: list[tuple[ClaimRef, Object]] = []
        # VolumeRestrictions: every claim exists (its PreFilter), and no other pod uses a ReadWriteOncePod
        # one (its Filter then refuses every node).
        for ref in refs:
            claim = index.claims.get((ns, ref.claim))
            if claim is None:
                if ref.ephemeral:
                    why = (
                        "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                        f'"{ref.claim}"'
                    )
                else:
                    why = f'persistentvolumeclaim "{ref.claim}" not found'
                return cls(everywhere=why)
            resolved.append((ref, claim))
        in_use = ask.view.storage.users
        used = {
            ref.claim: held
            for ref, claim in resolved
            if not ref.ephemeral and one_pod(claim) and (held := claim_users(pod, ref.claim, in_use))
        }
        if used:
            return cls(everywhere="; ".join(_used_why(c, held) for c, held in used.items()), users=used)
        # VolumeBinding's PreFilter: a claim that cannot be bound or used anywhere.
        for ref, claim in resolved:
            if status(claim).get("phase") == "Lost":
                lost = text(spec(claim).get("volumeName"))
                return cls(
                    everywhere=f'persistentvolumeclaim "{ref.claim}" bound to non-existent '
                    f'persistentvolume "{lost}"'
                )
            if meta(claim).get("deletionTimestamp") is not None:
                return cls(everywhere=f'persistentvolumeclaim "{ref.claim}" is being deleted')
            if ref.ephemeral and not _owned_by_pod(claim, pod):
                return cls(
                    everywhere=f"PVC {ns}/{ref.claim} was not created for pod {ns}/{name(pod)} "
                    "(pod is not owner)"
                )
            storage_class = index.classes.get(class_of(claim))
            if (
                not bound(claim)
                and storage_class is not None
                and not isinstance(storage_class.get("volumeBindingMode"), str)
            ):
                return cls(everywhere=f'VolumeBindingMode not set for StorageClass "{class_of(claim)}"')
        immediate = [c for _, c in resolved if not bound(c) and not index.delayed(c)]
        if immediate:
            return cls(
                everywhere="pod has unbound immediate PersistentVolumeClaims ("
                + "; ".join(_immediate_why(c, index) for c in immediate)
                + ")"
            )
        pairs: list[tuple[Object, Object]] = []
        zoned: list[tuple[Object, Object]] = []
        for ref, claim in resolved:
            if not bound(claim):
                continue
            volume = index.volume_of(claim)
            # A bound claim's PV is missing: VolumeZone's PreFilter refuses the pod (VolumeBinding's
            # Filter then refuses every node too, for an ephemeral volume's claim).
            if volume is None:
                return cls(everywhere=f'persistentvolume "{text(spec(claim).get("volumeName"))}" not found')
            pairs.append((claim, volume))
            if not ref.ephemeral:
                zoned.append((claim, volume))
        new_csi = {}
        for _, claim in resolved:
            driver, handle = index.driver(claim)
            if driver and handle:
                new_csi[f"{driver}/{handle}"] = driver
        return cls(
            bound=tuple(pairs),
            zoned=tuple(zoned),
            delayed=tuple(c for _, c in resolved if not bound(c)),
            new_csi=new_csi,
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
                    f"CSINode {name(node)}: {driver} has {used} volume{'' if used == 1 else 's'} attached "
                    f"+ {adding} new > limit {node_limits[driver]}"
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
        assert self.index is not None
        for claim, volume in self.bound:
            why = _volume_affinity(volume, node)
            if why:
                return f"PV {name(volume)} of PVC {name(claim)}: node affinity {why}"
        for claim in self.delayed:
            selected = objects.annotations(claim).get(SELECTED_NODE)
            if selected is not None:
                if selected != name(node):
                    return f"PVC {name(claim)} is already given node {selected} ({SELECTED_NODE})"
                continue
            if self._available_volume(claim, node) is not None:
                continue
            why = self._cannot_provision(claim, node)
            if why:
                return why
        return None

    def _available_volume(self, claim: Object, node: Object) -> Object | None:
        """`FindMatchingVolume` with the node: a PV pre-bound to the claim, or the smallest
        available PV of its class that is big enough, of its mode and access modes, selected by its
        selector and allowed on the node."""
        assert self.index is not None
        wanted = _requested(claim) or 0
        selector = spec(claim).get("selector")
        best: tuple[int, str, Object] | None = None
        for volume in self.index.volumes.values():
            volume_spec = spec(volume)
            ref = mapping(volume_spec.get("claimRef"))
            if ref and not _bound_to(ref, claim):
                continue
            size = count(mapping(volume_spec.get("capacity")).get("storage")) or 0
            if size < wanted or _mode(volume_spec) != _mode(spec(claim)):
                continue
            if meta(volume).get("deletionTimestamp") is not None:
                continue
            fits = _volume_affinity(volume, node) is None
            if ref:
                return volume if fits else None
            if status(volume).get("phase") != "Available" or class_of(volume) != class_of(claim):
                continue
            if selector is not None and not _selects(selector, labels(volume)):
                continue
            modes = {text(m) for m in sequence(volume_spec.get("accessModes"))}
            if not fits or not {text(m) for m in sequence(spec(claim).get("accessModes"))} <= modes:
                continue
            if best is None or size < best[0]:
                best = (size, name(volume), volume)
        return None if best is None else best[2]

    def _cannot_provision(self, claim: Object, node: Object) -> str | None:
        """`checkVolumeProvisions`: why a new PV cannot be provisioned for the claim on the node."""
        assert self.index is not None
        class_name = class_of(claim)
        storage_class = self.index.classes.get(class_name, {})
        provisioner = text(storage_class.get("provisioner"))
        head = (
            f"PVC {name(claim)} (StorageClass {class_name}, {WAIT}): "
            "no available PV of the class fits the node"
        )
        if not provisioner or provisioner == NO_PROVISIONER:
            return f"{head}, and the class provisions none ({provisioner or 'no provisioner'})"
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
            f"the CSIStorageCapacity for the node allows at most {binary_size(max(rooms))}"
            if rooms
            else "no CSIStorageCapacity of the class reaches the node"
        )
        return (
            f"PVC {name(claim)} (StorageClass {class_of(claim)}, {WAIT}) asks {binary_size(asked)}: "
            f"{found} (driver {provisioner} publishes its capacity)"
        )

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
                    have = node_labels.get(_GA.get(key, key))
                if have is None or have not in zones:
                    shown = "no " + key if have is None else f"{_GA.get(key, key)}={have}"
                    return (
                        f"PV {name(volume)} of PVC {name(claim)} is in {key}={volume_labels[key]}, "
                        f"the node has {shown}"
                    )
        return None


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
    return f"{name(claim)} waits for StorageClass {class_name} (Immediate) to provision or bind a PV"


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


def _volume_affinity(volume: Object, node: Object) -> str | None:
    """`CheckNodeAffinity`: why the PV's required node affinity refuses the node, or None."""
    required = mapping(spec(volume).get("nodeAffinity")).get("required")
    if not isinstance(required, Mapping):
        return None
    placement = Placement.of(
        {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}}}
    )
    why = placement.mismatch(node)
    return None if why is None else why.removeprefix("affinity").lstrip(": ")


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


def volume(ask: Ask, node: Object) -> str | None:
    return Volumes.of(ask).failure(node)


def advise(funnel: Funnel) -> Advice:
    state = Volumes.of(funnel.ask)
    pod, first = funnel.view.pod, funnel.last.dropped[0]
    ns = namespace(pod)
    if state.everywhere:
        summary = f"No node can take the pod's volumes: {state.everywhere}"
    else:
        summary = f"Every node left refuses the pod's volumes: e.g. {name(first.node)}: {first.why}"
    evidence = []
    index = state.index or Index(funnel.view.storage)
    claims = []
    for ref in claim_refs(pod):
        claim = index.claims.get((ns, ref.claim))
        if claim is None:
            evidence.append(f"volume {ref.volume}: PVC {ref.claim} does not exist")
            continue
        claims.append(claim)
        volume_name = text(spec(claim).get("volumeName"))
        found = index.volumes.get(volume_name)
        zone = (
            ", ".join(f"{k}={v}" for k, v in labels(found).items() if k in TOPOLOGY_LABELS) if found else ""
        )
        evidence.append(
            f"volume {ref.volume}: PVC {ref.claim}, StorageClass {class_of(claim) or '(none)'}, "
            + (f"bound to PV {volume_name}" + (f" ({zone})" if zone else "") if bound(claim) else "not bound")
        )
    evidence += [
        f"PVC {claim} is ReadWriteOncePod: {', '.join(owner_text(p) for p in held)} uses it"
        for claim, held in state.users.items()
    ]
    holding = [p for held in state.users.values() for p in held]
    classes = sorted({class_of(c) for c in claims if class_of(c)})
    commands = collect(
        # A claim that does not exist cannot be read: then the namespace's claims are listed.
        kubectl.claims(ns, [] if len(claims) < len(claim_refs(pod)) else [name(c) for c in claims]),
        *(describe("pod", namespace(p), name(p), _HOLDING) for p in holding[:2]),
        *(kubectl.persistent_volume(name(found)) for _, found in state.bound[:2]),
        kubectl.storage_classes(classes),
        kubectl.nodes_with_labels((_ZONE, _REGION)),
        kubectl.csinode(name(first.node)) if "CSINode" in first.why else None,
        kubectl.storage_capacities() if "CSIStorageCapacity" in first.why else None,
    )
    return Advice(summary, tuple(evidence), commands, fixes=_fixes(funnel, state, index))


def _fixes(funnel: Funnel, state: Volumes, index: Index) -> tuple[Change, ...]:
    """Name the PVC that exists where the pod names one that does not (a typo), or create it; free a
    node the volumes allow but an earlier step refused (its devices or other resources held,
    `remedies.ending_on`); free attach slots on a node at its CSI limit; move a zonal volume's data
    next to the nodes left (not checkable: a new volume is not in the objects). A nodeSelector on the
    volume's zone is never offered: it opens nothing the volume step does not already allow."""
    pod = funnel.view.pod
    changes = [*_missing_claim(pod, index), *_classless(pod, index), *_released(funnel.view, state)]
    if state.everywhere:
        return tuple(changes)
    reached = next(s.entered for s in funnel.stages if s.step.verdict is PodVerdict.EXHAUSTED)
    left = {name(n) for n in funnel.last.entered}
    allowed = [n for n in reached if name(n) not in left and state.failure(n) is None]
    for node in allowed:
        if len(changes) >= 2:
            break
        if (freeing := remedies.ending_on(funnel.ask, node)) is not None:
            changes.append(freeing)
    for drop in funnel.last.dropped[:2]:
        if "CSINode" in drop.why and (freeing := _attach_slots(funnel, state, drop.node)) is not None:
            changes.append(freeing)
    changes += _moved(pod, state, funnel.last.entered)
    return tuple(changes)


def _missing_claim(pod: Object, index: Index) -> tuple[Change, ...]:
    ns = namespace(pod)
    for ref in claim_refs(pod):
        if ref.ephemeral or (ns, ref.claim) in index.claims:
            continue
        near = similar_names(ref.claim, [n for c_ns, n in index.claims if c_ns == ns], limit=1)
        found: list[Change] = []
        if near:
            volumes = [
                dict(
                    v, persistentVolumeClaim=dict(mapping(v.get("persistentVolumeClaim")), claimName=near[0])
                )
                if text(v.get("name")) == ref.volume
                else dict(v)
                for v in map(mapping, sequence(spec(pod).get("volumes")))
            ]
            found.append(
                pod_change(
                    f"name PVC {near[0]} (it exists) instead of {ref.claim} for volume {ref.volume} "
                    f"{where(pod)}: opens {{opens}}",
                    {"spec": {"volumes": volumes}},
                )
            )
        default = sorted(
            n for n, c in index.classes.items() if objects.annotations(c).get(DEFAULT_CLASS) == "true"
        )
        if default:
            found.append(
                Change(
                    f"create PVC {ref.claim} in {ns} (the default StorageClass {default[0]} provisions it): "
                    "what it opens cannot be shown (kubewhy does not model a new volume)",
                    commands=collect(kubectl.claims(ns, [])),
                    objects=(f"storageclass/{default[0]}",),
                    checkable=False,
                )
            )
        return tuple(found)
    return ()


_HOLDING = "the pod that uses the ReadWriteOncePod claim: why it is still there"


def _released(view: TriageView, state: Volumes) -> tuple[Change, ...]:
    """A ReadWriteOncePod claim freed of the pods that use it: those terminating waited for (or
    cleared, past their grace period); the old pod of the pod's own Deployment ended by its
    `Recreate` strategy (a rolling update starts the new pod first, which waits for the old one's
    volume, while the old one waits for the new one to be ready); another workload's pods ended."""
    pod, own = view.pod, top_owner(view.pod)
    found: list[Change] = []
    for claim, held in state.users.items():
        keys = frozenset((namespace(p), name(p)) for p in held)
        if all(meta(p).get("deletionTimestamp") is not None for p in held):
            found += preemption.wait_for(held, view.now)
        elif own.kind == "Deployment" and all(top_owner(p) == own for p in held):
            found.append(
                ending(
                    f"give Deployment {own.name} the Recreate strategy: its old pod {names(held)} ends "
                    f"before the new one starts, freeing PVC {claim}: opens {{opens}}",
                    sorted(keys),
                    collect(kubectl.recreate_strategy(namespace(pod), own.name)),
                )
            )
        elif freeing := remedies.fewest_ended(pod, held, keys.issubset, f"free ReadWriteOncePod PVC {claim}"):
            found.append(freeing)
    return tuple(found)


def _classless(pod: Object, index: Index) -> tuple[Change, ...]:
    """An unbound claim whose StorageClass does not exist waits for ever; its class cannot be changed
    in place, so the claim is made again with one that exists (not checkable: a new claim's binding
    is not in the objects)."""
    ns = namespace(pod)
    for ref in claim_refs(pod):
        claim = index.claims.get((ns, ref.claim))
        if claim is None or bound(claim) or text(spec(claim).get("volumeName")):
            continue
        if class_of(claim) and class_of(claim) not in index.classes:
            return (
                Change(
                    f"make PVC {ref.claim} again with a StorageClass that exists ({class_of(claim)} does "
                    "not, and a claim's class cannot be changed): what it opens cannot be shown (kubewhy "
                    "does not model a new volume)",
                    objects=(f"persistentvolumeclaim/{ns}/{ref.claim}",),
                    checkable=False,
                ),
            )
    return ()


def _attach_slots(funnel: Funnel, state: Volumes, node: Object) -> Change | None:
    """End the fewest pods on the node whose volumes, once detached, leave room under its CSI limit."""
    assert state.index is not None
    node_limits = limits(state.index.csinodes.get(name(node)))
    on_node = state.pods_by_node.get(name(node), ())
    volumes = {(namespace(p), name(p)): state.csi_of(p) for p in on_node}

    def enough(ended: frozenset[tuple[str, str]]) -> bool:
        attached = {k: d for key, held in volumes.items() if key not in ended for k, d in held.items()}
        new = {k: d for k, d in state.new_csi.items() if k not in attached}
        return all(
            sum(1 for d in attached.values() if d == driver) + sum(1 for d in new.values() if d == driver)
            <= node_limits[driver]
            for driver in set(new.values())
            if driver in node_limits
        )

    holding = [p for p in on_node if volumes[(namespace(p), name(p))]]
    return remedies.fewest_ended(
        funnel.view.pod, holding, enough, f"free volume attach slots on {name(node)}"
    )


def _moved(pod: Object, state: Volumes, nodes: tuple[Object, ...]) -> tuple[Change, ...]:
    """The data of a bound PV that the nodes left cannot reach, moved next to them."""
    for claim, volume in state.bound:
        if any(_volume_affinity(volume, n) is not None for n in nodes) or any(
            Volumes(zoned=((claim, volume),))._zone(n) for n in nodes
        ):
            return (
                Change(
                    f"move the data of PVC {name(claim)} next to {pool_of(nodes)} (a VolumeSnapshot "
                    "restored into a new PVC there, or a copy): what it opens cannot be shown (kubewhy does "
                    "not model a new volume)",
                    commands=collect(kubectl.persistent_volume(name(volume))),
                    objects=(f"persistentvolumeclaim/{namespace(claim)}/{name(claim)}",),
                    checkable=False,
                ),
            )
    return ()
