"""The pod's PersistentVolumeClaims and what the `volume` step reads for them: the claims a pod names,
their classes and users, the storage index, and what the readers must fetch (`cluster.live.storage`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from diagnosis import objects
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, text
from diagnosis.relations import holds_node
from diagnosis.views import Storage

SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT = "WaitForFirstConsumer"
ONE_POD = "ReadWriteOncePod"

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, ZONE, REGION)
"""The PV labels VolumeZone reads (`volumezone.topologyLabels`)."""
GA_TOPOLOGY = {_BETA_ZONE: ZONE, _BETA_REGION: REGION}
"""The beta topology labels → the GA ones a node carries."""


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
