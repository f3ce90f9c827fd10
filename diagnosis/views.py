"""What a diagnosis reads: the objects already fetched and the time of the reading.

The cluster layer fills these from a snapshot or a live cluster; the diagnosis is a pure function of
them. Given equal views, a diagnosis returns an equal result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from diagnosis.dra_objects import NO_DRA, Dra
from diagnosis.objects import Object


@dataclass(frozen=True)
class Peers:
    """The pods and namespaces the pod's inter-pod rules look at (`diagnosis.triage.peers.needs`
    says which): pods matching a label selector of its pod affinity, anti-affinity or topology spread
    constraints, in any node's domain; the nodes those pods are on beyond the candidates; Namespaces."""

    pods: tuple[Object, ...] = ()
    """Bound, non-terminal pods matching one of the pod's queries. More may be present: the
    classifier keeps only those matching a query."""
    nodes: tuple[Object, ...] = ()
    """Nodes the view needs besides `TriageView.nodes`: those `pods` are on, and every node when a
    spread constraint counts nodes the nodeSelector excludes. Nodes may repeat `TriageView.nodes`."""
    namespaces: tuple[Object, ...] = ()
    """The Namespaces whose labels a namespaceSelector is matched against (the pod's own among
    them); more may be present."""
    all_pods: bool = False
    """The view's bound pods hold every bound pod of the cluster that has a required pod
    anti-affinity, and its nodes (with `nodes`) the nodes those pods are on: a snapshot, the watch
    cache, a direct read with `--all-pods`. Every existing pod's anti-affinity is then checked; without
    it, only that of the pods on the nodes that reach the free-slot check, and a `schedulable` answer
    says so."""


@dataclass(frozen=True)
class Storage:
    """The storage objects the pod's volumes lead to (`diagnosis.triage.steps.volume`)."""

    claims: tuple[Object, ...] = ()
    """PersistentVolumeClaims: the pod's own, and those of the pods on the candidate nodes when a
    CSI attach limit has to be counted. More may be present."""
    volumes: tuple[Object, ...] = ()
    """PersistentVolumes: those the claims are bound to, and every one when an unbound claim may bind
    to an existing volume. More may be present."""
    classes: tuple[Object, ...] = ()
    """StorageClasses of the claims."""
    csinodes: tuple[Object, ...] = ()
    """CSINodes of the candidate nodes, when the pod has a CSI volume."""
    drivers: tuple[Object, ...] = ()
    """CSIDrivers of the classes of the pod's claims that wait for their first consumer (whether
    the driver publishes its storage capacity)."""
    capacities: tuple[Object, ...] = ()
    """CSIStorageCapacities, when such a driver publishes them. More may be present."""
    users: tuple[Object, ...] = ()
    """Bound pods of the pod's namespace that use one of its ReadWriteOncePod claims (VolumeRestrictions
    refuses the pod while one does). More may be present."""


STATUS_CONFIGMAP = ("kube-system", "cluster-autoscaler-status")
"""cluster-autoscaler's status ConfigMap (its `--namespace`, `--status-config-map-name` defaults)."""


@dataclass(frozen=True)
class Capacity:
    """What says whether a node will come (`diagnosis.autoscaling`); each read is optional."""

    status: Object | None = None
    """ConfigMap `kube-system/cluster-autoscaler-status`, when cluster-autoscaler writes it."""
    nodepools: tuple[Object, ...] = ()
    """Karpenter NodePools (`karpenter.sh/v1`)."""
    nodeclaims: tuple[Object, ...] = ()
    """Karpenter NodeClaims (`karpenter.sh/v1`)."""
    requests: tuple[Object, ...] = ()
    """The ProvisioningRequest the pod's annotation names (`autoscaling.x-k8s.io/v1`); more may be
    present."""
    groups: tuple[Object, ...] = ()
    """The nodes of the node groups other than the one the pod's nodeSelector pins, where the reader
    read only that group's (`TriageView.prefiltered`): the templates of the groups it could move to."""
    events: tuple[Object, ...] = ()
    """The autoscalers' events on their own objects: Karpenter's on NodeClaims (namespace `default`),
    read when one is nominated for the pod; cluster-autoscaler's on its status ConfigMap, read when
    it triggered a scale-up for the pod. Others may be present."""


@dataclass(frozen=True)
class TriageView:
    """Everything `/triage` needs to decide about one pod."""

    pod: Object
    nodes: tuple[Object, ...]
    """The candidate nodes. All nodes of the cluster, unless `prefiltered`."""
    bound_pods: Sequence[Object]
    """Pods bound to candidate nodes (`spec.nodeName` set), in any namespace, whose phase is not
    Succeeded/Failed. They may be limited to the nodes that reach the free-slot check (see
    `diagnosis.triage.classify.usage_candidates`); other pods may be present and must be ignored safely.
    A reader hands over a tuple; a fix's view reads the classification's in place (`fixes.Remaining`)."""
    events: tuple[Object, ...]
    """Events whose involvedObject (v1) or regarding (events.k8s.io/v1) is the pod."""
    now: datetime
    prefiltered: bool = False
    """True when the API server already kept only the nodes matching the pod's nodeSelector
    (a label selector): `nodes` then holds only those, and the funnel says so."""
    peers: Peers = Peers()
    storage: Storage = Storage()
    nominated_pods: tuple[Object, ...] = ()
    """Unbound pods with `status.nominatedNodeName`, any namespace: those of the pod's priority or
    more count against their node (`diagnosis.triage.resources.counted`). Others may be present."""
    workloads: tuple[Object, ...] = ()
    """Kueue Workloads of the pod's namespace (read for a pod gated by Kueue); others are ignored."""
    queues: tuple[Object, ...] = ()
    """Kueue LocalQueues: the one the pod's queue label names says which ClusterQueue admits it; and
    that ClusterQueue (its nominal quota per flavor, what is reserved of it). Others are ignored."""
    unread: tuple[str, ...] = ()
    """Optional reads that failed, each a line saying what and why (the answer is given without them)."""
    pending_pods: tuple[Object, ...] = ()
    """Other pods waiting to be scheduled (no node, phase Pending), any namespace: those that want the
    same devices on the same nodes compete with the pod. Snapshots give them, and the live reader's
    cache, which keeps them (`CacheOptions.pending`); read directly, none (a cluster-wide LIST per
    question)."""
    bound_nodes: frozenset[str] | None = None
    """The nodes whose bound pods were read, when not every node's were: a fix that opens another
    node cannot be proven (its pods were not counted), so it does not claim that node."""
    dra: Dra = NO_DRA
    """Dynamic Resource Allocation objects, read when the pod names ResourceClaims: its claims and every
    allocated claim, the DeviceClasses, the ResourceSlices, its namespace's claim templates."""
    notes: tuple[str, ...] = ()
    """What the reading says about itself (e.g. the cluster was read directly while kubewhy's cache
    of it syncs): shown after the evidence; the diagnosis never reads it."""
    capacity: Capacity = Capacity()
    """What autoscalers say about adding a node for the pod."""
    daemonsets: tuple[Object, ...] = ()
    """The cluster's DaemonSets, read when nodes serve none of the devices the pod asks: which device
    plugin should serve them, and why it does not (none when not read)."""


class WorkloadView(Protocol):
    """What a workload's view holds to triage its pending pods: the nodes and pods around them, read
    as `TriageView` reads them for one pod (`JobSetView`, `LwsView`)."""

    @property
    def nodes(self) -> tuple[Object, ...]: ...
    @property
    def bound_pods(self) -> tuple[Object, ...]: ...
    @property
    def now(self) -> datetime: ...
    @property
    def peers(self) -> Peers: ...
    @property
    def storage(self) -> Storage: ...
    @property
    def nominated_pods(self) -> tuple[Object, ...]: ...
    @property
    def dra(self) -> Dra: ...
    @property
    def capacity(self) -> Capacity: ...


@dataclass(frozen=True)
class JobSetView:
    """Everything `/jobset why` needs to decide about one JobSet."""

    jobset: Object
    jobs: tuple[Object, ...]
    """Child Jobs: label `jobset.sigs.k8s.io/jobset-name` = the JobSet's name."""
    pods: tuple[Object, ...]
    """Pods with label `jobset.sigs.k8s.io/jobset-name` = the JobSet's name, any phase."""
    events: tuple[Object, ...]
    """Events about the JobSet, its Jobs and its pods."""
    nodes: tuple[Object, ...]
    """The nodes the diagnosis needs: those the pods are bound to, and the candidate nodes of
    its pending pods (so a pending pod can be triaged with `TriageView(pod, nodes, bound_pods…)`)."""
    bound_pods: tuple[Object, ...]
    """As TriageView.bound_pods, for the candidate nodes of the pending pods."""
    workloads: tuple[Object, ...]
    """Kueue Workloads (`kueue.x-k8s.io`) owned by the JobSet."""
    now: datetime
    podgroups: tuple[Object, ...] = ()
    """The PodGroups its pods name (`diagnosis.gang`: coscheduling's label, Volcano's annotation)."""
    peers: Peers = Peers()
    """As TriageView.peers, for the pending pods."""
    storage: Storage = Storage()
    """As TriageView.storage, for the pending pods."""
    nominated_pods: tuple[Object, ...] = ()
    """As TriageView.nominated_pods."""
    dra: Dra = NO_DRA
    """As TriageView.dra, when a pending pod names ResourceClaims."""
    notes: tuple[str, ...] = ()
    """As TriageView.notes."""
    capacity: Capacity = Capacity()
    """As TriageView.capacity, for the pending pods."""


@dataclass(frozen=True)
class LwsView:
    """Everything `kubewhy lws why` needs to decide about one LeaderWorkerSet."""

    lws: Object
    statefulsets: tuple[Object, ...]
    """StatefulSets with label `leaderworkerset.sigs.k8s.io/name` = the LWS's name: the leader
    StatefulSet (named as the LWS) and one worker StatefulSet per group (named as its leader pod)."""
    pods: tuple[Object, ...]
    """Pods with label `leaderworkerset.sigs.k8s.io/name` = the LWS's name, any phase."""
    events: tuple[Object, ...]
    """Events about the LWS, its StatefulSets and its pods."""
    nodes: tuple[Object, ...]
    """As JobSetView.nodes: the nodes the pods are bound to (a leader's node that is gone is absent),
    and the candidate nodes of the pending pods."""
    bound_pods: tuple[Object, ...]
    """As TriageView.bound_pods, for the candidate nodes of the pending pods."""
    now: datetime
    podgroups: tuple[Object, ...] = ()
    """As JobSetView.podgroups: with LWS's Volcano provider, one per group."""
    peers: Peers = Peers()
    storage: Storage = Storage()
    nominated_pods: tuple[Object, ...] = ()
    dra: Dra = NO_DRA
    notes: tuple[str, ...] = ()
    """As TriageView.notes."""
    capacity: Capacity = Capacity()
    """As TriageView.capacity, for the pending pods."""


@dataclass(frozen=True)
class TrainJobView:
    """Everything `/jobset why` needs to decide about a TrainJob (Kubeflow Trainer v2) of that name."""

    trainjob: Object
    runtime: Object | None
    """The TrainingRuntime (its namespace) or ClusterTrainingRuntime its `runtimeRef` names; None when
    it does not exist."""
    events: tuple[Object, ...]
    """Events about the TrainJob."""
    podgroups: tuple[Object, ...]
    """The PodGroups named as the TrainJob (scheduler-plugins `scheduling.x-k8s.io`, Volcano
    `scheduling.volcano.sh`), when its runtime asks for gang scheduling."""
    workloads: tuple[Object, ...]
    """Kueue Workloads owned by the TrainJob."""
    jobset: JobSetView | None
    """Its JobSet (same name), with what explaining it reads; None when it was not created."""
    now: datetime
    notes: tuple[str, ...] = ()
