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

from collections.abc import Iterable

from diagnosis import commands, objects
from diagnosis.commands import collect, describe
from diagnosis.missing import similar_names
from diagnosis.model import CAUSE_CHARS, Command, Harm, PodVerdict
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain
from diagnosis.objects import Object, labels, mapping, meta, name, namespace, sequence, spec, text
from diagnosis.triage import commands as kubectl
from diagnosis.triage import preemption
from diagnosis.triage.fixes import UNCHECKED, Change, ending, pod_change, pool_of, where
from diagnosis.triage.freeing import ending_on, fewest_ended
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step, names
from diagnosis.triage.peers import owner_text
from diagnosis.triage.steps.volume.claims import (
    DEFAULT_CLASS,
    REGION,
    TOPOLOGY_LABELS,
    ZONE,
    Index,
    bound,
    claim_refs,
    class_of,
    limits,
)
from diagnosis.triage.steps.volume.rules import Volumes, volume_affinity
from diagnosis.views import TriageView
from diagnosis.workloads import top_owner


def volume(ask: Ask, node: Object) -> str | None:
    return Volumes.of(ask).failure(node)


def advise(funnel: Funnel) -> Advice:
    state = Volumes.of(funnel.ask)
    pod, first = funnel.view.pod, funnel.last.dropped[0]
    ns = namespace(pod)
    if state.everywhere:
        summary = f"No node can take the pod's volumes: {state.everywhere}"
    else:
        left = len(funnel.last.dropped)
        nodes = "No node left" if left == 1 else f"None of the {left} nodes left"
        summary = f"{nodes} can use the pod's volumes: on {name(first.node)}, {first.why}"
        if len(summary) > CAUSE_CHARS:  # the node is named in the evidence
            summary = f"{nodes} can use the pod's volumes: {first.why}"
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
        persistent_volume_claims(ns, [] if len(claims) < len(claim_refs(pod)) else [name(c) for c in claims]),
        *(describe("pod", namespace(p), name(p), _HOLDING) for p in holding[:2]),
        *(persistent_volume(name(found)) for _, found in state.bound[:2]),
        storage_classes(classes),
        kubectl.nodes_with_labels((ZONE, REGION)),
        csinode(name(first.node)) if "CSINode" in first.why else None,
        storage_capacities() if "CSIStorageCapacity" in first.why else None,
    )
    return Advice(summary, tuple(evidence), commands, fixes=_fixes(funnel, state, index))


def _fixes(funnel: Funnel, state: Volumes, index: Index) -> tuple[Change, ...]:
    """Name the PVC that exists where the pod names one that does not (a typo), or create it; free a
    node the volumes allow but an earlier step refused (its devices or other resources held,
    `ending_on`); free attach slots on a node at its CSI limit; move a zonal volume's data
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
        if (freeing := ending_on(funnel.ask, node)) is not None:
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
                    f"{UNCHECKED}",
                    commands=collect(persistent_volume_claims(ns, [])),
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
                    collect(
                        kubectl.deployment_strategy(
                            namespace(pod),
                            own.name,
                            {"type": "Recreate", "rollingUpdate": None},
                            f"make Deployment {own.name} end its old pods before it starts new ones: "
                            "a ReadWriteOncePod volume serves one pod at a time, so a rolling update "
                            "that starts the new pod first waits for ever",
                        )
                    ),
                    Harm.KEEPS,  # its own workload's old pod
                )
            )
        elif freeing := fewest_ended(pod, held, keys.issubset, f"free ReadWriteOncePod PVC {claim}"):
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
                    f"not, and a claim's class cannot be changed): {UNCHECKED}",
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
    return fewest_ended(funnel.view.pod, holding, enough, f"free volume attach slots on {name(node)}")


def _moved(pod: Object, state: Volumes, nodes: tuple[Object, ...]) -> tuple[Change, ...]:
    """The data of a bound PV that the nodes left cannot reach, moved next to them."""
    for claim, volume in state.bound:
        if any(volume_affinity(volume, n) is not None for n in nodes) or any(
            Volumes(zoned=((claim, volume),))._zone(n) for n in nodes
        ):
            return (
                Change(
                    f"move the data of PVC {name(claim)} next to {pool_of(nodes)} (a VolumeSnapshot "
                    f"restored into a new PVC there, or a copy): {UNCHECKED}",
                    commands=collect(persistent_volume(name(volume))),
                    objects=(f"persistentvolumeclaim/{namespace(claim)}/{name(claim)}",),
                    checkable=False,
                ),
            )
    return ()


def persistent_volume_claims(namespace: str, names: Iterable[str]) -> Command | None:
    """The PVCs named (they exist), or, with no name, every PVC of the namespace."""
    valid = [n for n in dict.fromkeys(names) if is_dns1123_subdomain(n)]
    if not is_dns1123_label(namespace):
        return None
    purpose = (
        "the pod's PersistentVolumeClaims: status, volume, StorageClass"
        if valid
        else "the namespace's PersistentVolumeClaims: is the one the pod names there under another name?"
    )
    return commands.kubectl(purpose, "get", "pvc", *valid, "-n", namespace, "-o", "wide")


def persistent_volume(volume: str) -> Command | None:
    if not is_dns1123_subdomain(volume):
        return None
    return commands.kubectl(
        f"where PV {volume} may be used: its zone labels and node affinity",
        "get",
        "pv",
        volume,
        "-o",
        'jsonpath={.metadata.labels}{"\\n"}{.spec.nodeAffinity}',
    )


def storage_classes(names: Iterable[str]) -> Command | None:
    valid = [n for n in dict.fromkeys(names) if is_dns1123_subdomain(n)]
    if not valid:
        return None
    return commands.kubectl(
        "the StorageClasses: provisioner, volumeBindingMode, allowedTopologies",
        "get",
        "storageclass",
        *valid,
        "-o",
        "yaml",
    )


def storage_capacities() -> Command:
    return commands.kubectl(
        "the capacity each CSI driver publishes, per StorageClass and node topology (the scheduler "
        "provisions a claim only where one has room for it)",
        "get",
        "csistoragecapacities",
        "-A",
        "-o",
        "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,CLASS:.storageClassName,"
        "CAPACITY:.capacity,MAXIMUM:.maximumVolumeSize,TOPOLOGY:.nodeTopology",
    )


def csinode(node: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return commands.kubectl(
        f"the CSI drivers on {node} and how many volumes each may attach",
        "get",
        "csinode",
        node,
        "-o",
        "jsonpath={.spec.drivers}",
    )


STEP = Step(
    PodVerdict.VOLUME,
    "can use the pod's volumes",
    volume,
    advise,
    ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"),
)
