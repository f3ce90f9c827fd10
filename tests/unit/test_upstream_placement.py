"""kube-scheduler's own unit-test tables for the placement filters, ported row by row: every row must
give the scheduler's answer for every node.

Sources (kubernetes/kubernetes, `pkg/scheduler/framework/plugins/`):
- `volumezone/volume_zone_test.go`: TestSingleZone (all 14 rows), TestMultiZone (all 5),
  TestWithBinding (all 5), and the
  listers' PVC_4 (bound to a PV that does not exist), which no upstream row uses;
- `volumebinding/volume_binding_test.go`: TestVolumeBinding's first 13 rows (their filter statuses);
- `volumebinding/binder_test.go`: TestCapacity (all 11 scenarios, each with the CSIDriver's
  `storageCapacity` on and off);
- `volumerestrictions/volume_restrictions_test.go`: TestAccessModeConflicts (all 4 rows; the pod
  that uses the ReadWriteOncePod claim there is the pod asked about itself, which a pending pod
  cannot be: here it is another pod, bound, and the claims are bound to volumes, as the binder leaves
  them, so that VolumeBinding passes);
- `podtopologyspread/filtering_test.go`: TestSingleConstraint (all 23 rows; of its two rows named
  "NodeAffinityPolicy ignored with labelSelectors", the second, which uses nodeAffinity, says so in
  its name here), TestMultipleConstraints (all 13), and the point of TestPreFilterState's "soft
  spreadConstraints should be bypassed" as a Filter row. Their nodes outside the pod's nodeSelector
  or node affinity expect `label-mismatch`, and their node tainted
  `node.kubernetes.io/unschedulable:NoSchedule` `taint`, where the plugin alone says Success or
  Unschedulable: in the whole scheduler NodeAffinity and TaintToleration drop them before
  PodTopologySpread runs. The rows run with the NodeInclusionPolicy gate off set no policy, so the
  gate does not change their answer;
- `interpodaffinity/filtering_test.go`: TestRequiredAffinitySingleNode (24 of its 26 rows),
  TestRequiredAffinityMultipleNodes (all 18).

How a row is adapted: every node offers 8 `nvidia.com/gpu` and the pod asks 1 (existing pods ask
none), so the device steps pass every node and the row's plugin decides; the answer is, per node,
`ok` (it passes every check) or the verdict of the funnel step that drops it. The upstream tables run
one plugin alone; where a row's comment says the full scheduler would drop a node earlier ("in real
case, it's false" — the pod's node affinity), the row expects the full scheduler's answer. VolumeZone
rows bind their PVCs fully (`pv.kubernetes.io/bind-completed`), as the binder does: alone, VolumeZone
reads `volumeName` only, and in the whole scheduler a claim without the annotation is not bound.

Left out, and why:
- rows that check the plugins' internal state (PreFilter state, critical paths, scores, events,
  queueing hints): a verdict has no counterpart for them;
- TestVolumeBinding's scoring rows' scores (their filter statuses are ported), and the rest of
  binder_test.go, which checks the binder's own caches and API calls (assume, bind, revert);
- volume_restrictions_test.go TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts and
  TestISCSIDiskConflicts (4 rows each): inline in-tree disks, which kubewhy does not check (every
  `schedulable` answer says so; the cache keeps only the PVC volumes of pods);
- TestRequiredAffinitySingleNode's two rows whose pod's own selector value does not parse
  (`{{.bad-value.}}`): they expect PreFilter's error status, not a Filter status per node (kubewhy
  refuses every node at `pod-affinity` with the parse error: `test_placement`);
- InterPodAffinity's and PodTopologySpread's nominated-pod paths (TestPreFilterStateAddRemovePod,
  TestPreFilterStateAddPod, AddPod and RemovePod): they check the PreFilter state, which a verdict
  has no counterpart for; what AddPod does to a node's answer is in `test_placement` (a pod
  nominated to a node counts on that node alone);
- PodTopologySpread rows with cluster-level default constraints (`defaultConstraints`) and with the
  `NodeInclusionPolicy`/`MatchLabelKeys` gates off: kubewhy follows the defaults of 1.34, where both
  are on, and a cluster's scheduler configuration is not in its objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify, funnel_of
from diagnosis.views import Peers, Storage, TriageView

Obj = dict[str, Any]
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
GPU = "nvidia.com/gpu"
OK = "ok"


def node(name: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels},
        "spec": {},
        "status": {
            "capacity": {"cpu": "96", "memory": "1000Gi", "pods": "110", GPU: "8"},
            "allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110", GPU: "8"},
        },
    }


def pod(
    name: str,
    *,
    on: str = "",
    ns: str = "default",
    labels: dict[str, str] | None = None,
    terminating: bool = False,
    **spec: Any,
) -> Obj:
    """A pod: bound to `on` (asking nothing), or, without `on`, the pod asked about (asking 1 GPU)."""
    container: Obj = {"name": "main", "image": "trainer"}
    if not on:
        container["resources"] = {"limits": {GPU: "1"}, "requests": {GPU: "1"}}
    meta: Obj = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2026-11-29T08:59:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [container], **({"nodeName": on} if on else {}), **spec},
        "status": {"phase": "Running" if on else "Pending"},
    }


def exists(key: str) -> Obj:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def expression(key: str, operator: str, *values: str) -> Obj:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def spread(
    max_skew: int,
    key: str,
    selector: Obj | None,
    *,
    when: str = "DoNotSchedule",
    min_domains: int | None = None,
) -> Obj:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        **({"labelSelector": selector} if selector is not None else {}),
        **({"minDomains": min_domains} if min_domains is not None else {}),
    }


def node_affinity(key: str, operator: str, *values: str) -> Obj:
    term = {"matchExpressions": [expression(key, operator, *values)]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def term(
    key: str, *expressions: Obj, namespaces: list[str] | None = None, namespace_selector: Obj | None = None
) -> Obj:
    return {
        "labelSelector": {"matchExpressions": list(expressions)},
        **({"topologyKey": key} if key else {}),
        **({"namespaces": namespaces} if namespaces else {}),
        **({"namespaceSelector": namespace_selector} if namespace_selector is not None else {}),
    }


def affinity(wanted: list[Obj] | None = None, unwanted: list[Obj] | None = None) -> Obj:
    rules: Obj = {}
    if wanted:
        rules["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": wanted}
    if unwanted:
        rules["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": unwanted}
    return rules


def claim(
    name: str,
    storage_class: str | None = None,
    *,
    volume: str = "",
    size: str = "",
    lost: bool = False,
    access: str = "ReadWriteOnce",
) -> Obj:
    """A PVC; with `volume`, fully bound to it (as the binder leaves it)."""
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if volume:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    claim_spec: Obj = {"accessModes": [access]}
    if storage_class is not None:
        claim_spec["storageClassName"] = storage_class
    if volume:
        claim_spec["volumeName"] = volume
    if size:
        claim_spec["resources"] = {"requests": {"storage": size}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": claim_spec,
        "status": {"phase": "Lost" if lost else ("Bound" if volume else "Pending")},
    }


def volume(
    name: str,
    storage_class: str = "",
    *,
    size: str = "1Gi",
    affinity_of: dict[str, list[str]] | None = None,
    labels: dict[str, str] | None = None,
    access: str = "ReadWriteOnce",
) -> Obj:
    volume_spec: Obj = {"accessModes": [access], "capacity": {"storage": size}}
    if storage_class:
        volume_spec["storageClassName"] = storage_class
    if affinity_of:
        expressions = [expression(k, "In", *v) for k, v in affinity_of.items()]
        volume_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": volume_spec,
        "status": {"phase": "Available"},
    }


def storage_class(name: str, mode: str | None, provisioner: str = "") -> Obj:
    found: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    if mode is not None:
        found["volumeBindingMode"] = mode
    found["provisioner"] = provisioner
    return found


def with_claims(*names: str) -> Obj:
    return {
        "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}} for i, n in enumerate(names)]
    }


@dataclass(frozen=True)
class Row:
    source: str
    name: str
    pod: Obj
    nodes: tuple[Obj, ...]
    want: dict[str, str]
    pods: tuple[Obj, ...] = ()
    storage: Storage = field(default_factory=Storage)
    namespaces: tuple[Obj, ...] = ()
    nominated: tuple[Obj, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.source}: {self.name}"


def outcome(row: Row) -> dict[str, str]:
    """Per node: `ok`, or the verdict of the funnel step that drops it."""
    view = TriageView(
        pod=row.pod,
        nodes=row.nodes,
        bound_pods=row.pods,
        events=(),
        now=NOW,
        peers=Peers(pods=row.pods, namespaces=row.namespaces),
        storage=row.storage,
        nominated_pods=row.nominated,
    )
    stages = funnel_of(view).stages
    found = {n["metadata"]["name"]: OK for n in stages[-1].kept}
    for stage in stages:
        for drop in stage.dropped:
            found[drop.node["metadata"]["name"]] = stage.step.verdict.value
    return found


# --- volumezone/volume_zone_test.go ----------------------------------------------------------------

BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"

SINGLE_ZONE = Storage(
    claims=(
        claim("PVC_1", volume="Vol_1"),
        claim("PVC_2", volume="Vol_2"),
        claim("PVC_3", volume="Vol_3"),
        claim("PVC_4", volume="Vol_not_exist"),
        claim("PVC_Stable_1", volume="Vol_Stable_1"),
        claim("PVC_Stable_2", volume="Vol_Stable_2"),
        claim("PVC_Stable_3", volume="Vol_Stable_3"),
    ),
    volumes=(
        volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
        volume("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
        volume("Vol_3", labels={BETA_REGION: "us-west1"}),
        volume("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
        volume("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
        volume("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    ),
)

MULTI_ZONE = Storage(
    claims=(
        claim("PVC_1", volume="Vol_1"),
        claim("PVC_2", volume="Vol_2"),
        claim("PVC_3", volume="Vol_3"),
        claim("PVC_4", volume="Vol_not_exist"),
        claim("PVC_Stable_1", volume="Vol_Stable_1"),
        claim("PVC_Stable_2", volume="Vol_Stable_2"),
    ),
    volumes=(
        volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
        volume("Vol_2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
        volume("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
        volume("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
        volume("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    ),
)

WITH_BINDING = Storage(
    claims=(
        claim("PVC_1", volume="Vol_1"),
        claim("PVC_NoSC", "Class_0"),
        claim("PVC_EmptySC"),
        claim("PVC_WaitSC", "Class_Wait"),
        claim("PVC_ImmediateSC", "Class_Immediate"),
    ),
    volumes=(volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),),
    classes=(
        storage_class("Class_Immediate", None),
        storage_class("Class_Wait", "WaitForFirstConsumer"),
    ),
)
"""`Class_Immediate` sets no binding mode, as in the upstream table: VolumeZone refuses the pod
("VolumeBindingMode not set"); in the whole scheduler VolumeBinding's PreFilter stops it first with
the same words, as an error."""


def zone_row(
    source: str, name: str, storage: Storage, claims: tuple[str, ...], labels: dict[str, str], want: str
) -> Row:
    spec = with_claims(*claims)
    return Row(
        source, name, pod("pod_1", **spec), (node("host1", **labels),), {"host1": want}, storage=storage
    )


V = PodVerdict.VOLUME.value
VOLUME_ZONE = [
    zone_row("TestSingleZone", "pod without volume", SINGLE_ZONE, (), {BETA_ZONE: "us-west1-a"}, OK),
    zone_row("TestSingleZone", "node without labels", SINGLE_ZONE, ("PVC_1",), {}, OK),
    zone_row(
        "TestSingleZone",
        "beta zone label matched",
        SINGLE_ZONE,
        ("PVC_1",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestSingleZone",
        "beta region label matched",
        SINGLE_ZONE,
        ("PVC_2",),
        {BETA_REGION: "us-west1", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestSingleZone",
        "beta region label doesn't match",
        SINGLE_ZONE,
        ("PVC_2",),
        {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "beta zone label doesn't match",
        SINGLE_ZONE,
        ("PVC_1",),
        {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "zone label matched",
        SINGLE_ZONE,
        ("PVC_Stable_1",),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestSingleZone",
        "region label matched",
        SINGLE_ZONE,
        ("PVC_Stable_2",),
        {REGION: "us-west1", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestSingleZone",
        "region label doesn't match",
        SINGLE_ZONE,
        ("PVC_Stable_2",),
        {REGION: "no_us-west1", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "zone label doesn't match",
        SINGLE_ZONE,
        ("PVC_Stable_1",),
        {ZONE: "no_us-west1-a", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "pv with zone and region, node with only zone",
        SINGLE_ZONE,
        ("PVC_Stable_3",),
        {ZONE: "us-west1-a"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "pv with zone,node with beta zone",
        SINGLE_ZONE,
        ("PVC_Stable_1",),
        {BETA_ZONE: "us-west1-a"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "pv with beta label,node with ga label, matched",
        SINGLE_ZONE,
        ("PVC_1",),
        {ZONE: "us-west1-a"},
        OK,
    ),
    zone_row(
        "TestSingleZone",
        "pv with beta label,node with ga label, don't match",
        SINGLE_ZONE,
        ("PVC_1",),
        {ZONE: "us-west1-b"},
        V,
    ),
    zone_row("TestMultiZone", "node without labels", MULTI_ZONE, ("PVC_3",), {}, OK),
    zone_row(
        "TestMultiZone",
        "beta zone label matched",
        MULTI_ZONE,
        ("PVC_3",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestMultiZone",
        "beta zone label doesn't match",
        MULTI_ZONE,
        ("PVC_1",),
        {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestMultiZone",
        "zone label matched",
        MULTI_ZONE,
        ("PVC_Stable_2",),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestMultiZone",
        "zone label doesn't match",
        MULTI_ZONE,
        ("PVC_Stable_1",),
        {ZONE: "us-west1-b", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestSingleZone",
        "pvc bound to a pv that does not exist (PVC_4)",
        SINGLE_ZONE,
        ("PVC_4",),
        {BETA_ZONE: "us-west1-a"},
        V,
    ),
    zone_row(
        "TestWithBinding",
        "label zone failure domain matched",
        WITH_BINDING,
        ("PVC_1",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        OK,
    ),
    zone_row(
        "TestWithBinding",
        "unbound volume empty storage class",
        WITH_BINDING,
        ("PVC_EmptySC",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestWithBinding",
        "unbound volume no storage class",
        WITH_BINDING,
        ("PVC_NoSC",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestWithBinding",
        "unbound volume immediate binding mode",
        WITH_BINDING,
        ("PVC_ImmediateSC",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        V,
    ),
    zone_row(
        "TestWithBinding",
        "unbound volume wait binding mode",
        WITH_BINDING,
        ("PVC_WaitSC",),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        V,
    ),
]
"""The last row: VolumeZone alone skips a WaitForFirstConsumer claim; in the whole scheduler
VolumeBinding then finds no PV of `Class_Wait` and the class has no provisioner, so no node fits."""


# --- volumerestrictions/volume_restrictions_test.go ---------------------------------------------------

RWOP, RWX = "ReadWriteOncePod", "ReadWriteMany"
ACCESS_CLAIMS = Storage(
    (
        claim("claim-with-rwop", volume="pv-rwop", access=RWOP),
        claim("claim-with-rwx", volume="pv-rwx", access=RWX),
    ),
    (volume("pv-rwop", access=RWOP), volume("pv-rwx", access=RWX)),
)
WITH_RWOP = pod("pod-with-rwop", on="node-1", **with_claims("claim-with-rwop"))
WITH_RWX = pod("pod-with-rwx", on="node-1", **with_claims("claim-with-rwx"))


def access_row(name: str, incoming: Obj, existing: tuple[Obj, ...], storage: Storage, want: str) -> Row:
    storage = Storage(storage.claims, storage.volumes, users=existing)
    return Row(
        "TestAccessModeConflicts", name, incoming, (node("node-1"),), {"node-1": want}, existing, storage
    )


VOLUME_RESTRICTIONS = [
    access_row("nothing", pod("pod-a"), (), Storage(), OK),
    access_row("failed to get PVC", pod("pod-a", **with_claims("claim-with-rwop")), (), Storage(), "volume"),
    access_row(
        "no access mode conflict",
        pod("pod-a", **with_claims("claim-with-rwop")),
        (WITH_RWX,),
        ACCESS_CLAIMS,
        OK,
    ),
    access_row(
        "access mode conflict",
        pod("pod-a", **with_claims("claim-with-rwop")),
        (WITH_RWOP, WITH_RWX),
        ACCESS_CLAIMS,
        "volume",
    ),
]


# --- volumebinding/binder_test.go: TestCapacity -------------------------------------------------------

NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
PROVISIONED = claim("provisioned-pvc", "waitClassWithProvisioner", size="1Gi")


def csi_driver(opt_in: bool) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": PROVISIONER},
        "spec": {"storageCapacity": opt_in},
    }


def capacity(storage_class: str, on: str = "", size: str = "", maximum: str = "") -> Obj:
    """`makeCapacity`: `nodeTopology` selects the node `on` by its key, or every node."""
    found: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": "net", "namespace": "default"},
        "storageClassName": storage_class,
        "nodeTopology": {"matchLabels": {NODE_KEY: on}} if on else {},
    }
    if size:
        found["capacity"] = size
    if maximum:
        found["maximumVolumeSize"] = maximum
    return found


CAPACITY_CLASS = "waitClassWithProvisioner"
CAPACITY_SCENARIOS: list[tuple[str, tuple[Obj, ...], str]] = [
    ("network-attached", (capacity(CAPACITY_CLASS, size="1Gi"),), OK),
    ("local-storage", (capacity(CAPACITY_CLASS, "node1", "1Gi"),), OK),
    (
        "multiple",
        (
            capacity(CAPACITY_CLASS, size="1Gi"),
            capacity(CAPACITY_CLASS, "node2", "1Gi"),
            capacity(CAPACITY_CLASS, "node1", "1Gi"),
        ),
        OK,
    ),
    ("no-storage", (), V),
    ("wrong-node", (capacity(CAPACITY_CLASS, "node2", "1Gi"),), V),
    ("wrong-storage-class", (capacity("waitClass", "node1", "1Gi"),), V),
    ("insufficient-storage", (capacity(CAPACITY_CLASS, "node1", "1Mi"),), V),
    ("insufficient-volume-size", (capacity(CAPACITY_CLASS, "node1", "1Gi", "1Mi"),), V),
    ("zero-storage", (capacity(CAPACITY_CLASS, "node1", "0Mi"),), V),
    ("zero-volume-size", (capacity(CAPACITY_CLASS, "node1", maximum="0Mi"),), V),
    ("nil-storage", (capacity(CAPACITY_CLASS, "node1"),), V),
]
"""(scenario, the CSIStorageCapacities, the answer on node1 when the driver publishes its capacity)."""

CAPACITY = [
    Row(
        "TestCapacity",
        f"CSIDriver.StorageCapacity={opt_in}: {scenario}",
        pod("test-pod", **with_claims("provisioned-pvc")),
        (node("node1", **{NODE_KEY: "node1"}),),
        {"node1": want if opt_in else OK},
        storage=Storage(
            (PROVISIONED,),
            classes=(storage_class(CAPACITY_CLASS, "WaitForFirstConsumer", PROVISIONER),),
            drivers=(csi_driver(opt_in),),
            capacities=capacities,
        ),
    )
    for opt_in in (True, False)
    for scenario, capacities, want in CAPACITY_SCENARIOS
]


# --- volumebinding/volume_binding_test.go ------------------------------------------------------------

WAIT = storage_class("wait-sc", "WaitForFirstConsumer")
WAIT_HDD = storage_class("wait-hdd-sc", "WaitForFirstConsumer")
IMMEDIATE = storage_class("immediate-sc", "Immediate")
CLASSES = (WAIT, WAIT_HDD, IMMEDIATE)
HOST = "kubernetes.io/hostname"


def binding_row(
    name: str, claims: tuple[str, ...], storage: Storage, nodes: tuple[Obj, ...], want: list[str]
) -> Row:
    storage = Storage(storage.claims, storage.volumes, CLASSES)
    return Row(
        "TestVolumeBinding",
        name,
        pod("pod-a", **with_claims(*claims)),
        nodes,
        {n["metadata"]["name"]: w for n, w in zip(nodes, want, strict=True)},
        storage=storage,
    )


ZONES = tuple(
    node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"}) for z in "abc" for n in "ab"
)

VOLUME_BINDING = [
    binding_row("pod has not pvcs", (), Storage(), (node("node-a"),), [OK]),
    binding_row(
        "all bound",
        ("pvc-a",),
        Storage((claim("pvc-a", "wait-sc", volume="pv-a"),), (volume("pv-a", "wait-sc"),)),
        (node("node-a"),),
        [OK],
    ),
    binding_row("PVC does not exist", ("pvc-a",), Storage(), (node("node-a"),), [V]),
    binding_row(
        "Part of PVCs do not exist",
        ("pvc-a", "pvc-b"),
        Storage((claim("pvc-a", "wait-sc", volume="pv-a"),)),
        (node("node-a"),),
        [V],
    ),
    binding_row(
        "immediate claims not bound",
        ("pvc-a",),
        Storage((claim("pvc-a", "immediate-sc"),)),
        (node("node-a"),),
        [V],
    ),
    binding_row(
        "unbound claims no matches", ("pvc-a",), Storage((claim("pvc-a", "wait-sc"),)), (node("node-a"),), [V]
    ),
    binding_row(
        "bound and unbound unsatisfied",
        ("pvc-a", "pvc-b"),
        Storage(
            (claim("pvc-a", "wait-sc", volume="pv-a"), claim("pvc-b", "wait-sc")),
            (volume("pv-a", "wait-sc", affinity_of={"foo": ["bar"]}),),
        ),
        (node("node-a", foo="barbar"),),
        [V],
    ),
    binding_row("pvc not found", ("pvc-a",), Storage(), (node("node-a"),), [V]),
    binding_row(
        "pv not found",
        ("pvc-a",),
        Storage((claim("pvc-a", "wait-sc", volume="pv-a"),)),
        (node("node-a"),),
        [V],
    ),
    binding_row(
        "pv not found claim lost",
        ("pvc-a",),
        Storage((claim("pvc-a", "wait-sc", volume="pv-a", lost=True),)),
        (node("node-a"),),
        [V],
    ),
    binding_row(
        "local volumes with close capacity are preferred",
        ("pvc-a",),
        Storage(
            (claim("pvc-a", "wait-sc", size="50Gi"),),
            (
                volume("pv-a-0", "wait-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-a-1", "wait-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-b-0", "wait-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
                volume("pv-b-1", "wait-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
            ),
        ),
        tuple(node(f"node-{n}", **{HOST: f"node-{n}"}) for n in "abc"),
        [OK, OK, V],
    ),
    binding_row(
        "local volumes with close capacity are preferred (multiple pvcs)",
        ("pvc-0", "pvc-1"),
        Storage(
            (claim("pvc-0", "wait-sc", size="50Gi"), claim("pvc-1", "wait-hdd-sc", size="100Gi")),
            (
                volume("pv-a-0", "wait-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-a-1", "wait-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-a-2", "wait-hdd-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-a-3", "wait-hdd-sc", size="200Gi", affinity_of={HOST: ["node-a"]}),
                volume("pv-b-0", "wait-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
                volume("pv-b-1", "wait-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
                volume("pv-b-2", "wait-hdd-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
                volume("pv-b-3", "wait-hdd-sc", size="100Gi", affinity_of={HOST: ["node-b"]}),
            ),
        ),
        tuple(node(f"node-{n}", **{HOST: f"node-{n}"}) for n in "abc"),
        [OK, OK, V],
    ),
    binding_row(
        "zonal volumes with close capacity are preferred",
        ("pvc-a",),
        Storage(
            (claim("pvc-a", "wait-sc", size="50Gi"),),
            tuple(
                volume(
                    f"pv-{z}-{i}",
                    "wait-sc",
                    size=size,
                    affinity_of={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]},
                )
                for z, size in (("a", "200Gi"), ("b", "100Gi"))
                for i in range(2)
            ),
        ),
        ZONES,
        [OK, OK, OK, OK, V, V],
    ),
]


# --- podtopologyspread/filtering_test.go (TestSingleConstraint, TestMultipleConstraints) ----------

FOO, BAR = exists("foo"), exists("bar")
IGNORE_AFFINITY = {"nodeAffinityPolicy": "Ignore"}
HONOR_TAINTS = {"nodeTaintsPolicy": "Honor"}


def four_nodes(foo: str = "", tainted: str = "", zones: bool = True) -> tuple[Obj, ...]:
    """node-a, node-b (zone1), node-x, node-y (zone2), each with its `node` label; the letters in
    `foo` also labelled foo="", those in `tainted` with the upstream rows' taint
    (`node.kubernetes.io/unschedulable:NoSchedule`, in `spec.taints`); without `zones`, no zone label."""
    found = []
    for n, z in (("a", "zone1"), ("b", "zone1"), ("x", "zone2"), ("y", "zone2")):
        node_labels = {
            "node": f"node-{n}",
            **({"zone": z} if zones else {}),
            **({"foo": ""} if n in foo else {}),
        }
        made = node(f"node-{n}", **node_labels)
        if n in tainted:
            made["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        found.append(made)
    return tuple(found)


def b1_b2_y1() -> tuple[Obj, ...]:
    """The pods of the upstream rows named p-b1, p-b2, p-y1, on node-a, node-b and node-y."""
    return tuple(
        pod(n, on=f"node-{on_node}", labels={"foo": ""})
        for n, on_node in (("p-b1", "a"), ("p-b2", "b"), ("p-y1", "y"))
    )


def on(*placed: str, ns: str = "default", **labels: str) -> tuple[Obj, ...]:
    """Existing pods `p-<node letter><i>` labelled `labels` (default foo=""), on `node-<letter>`."""
    found = []
    for name in placed:
        found.append(pod(name, on=f"node-{name[2]}", ns=ns, labels=labels or {"foo": ""}))
    return tuple(found)


def spread_row(
    name: str,
    pod_labels: dict[str, str],
    constraints: list[Obj],
    nodes: tuple[Obj, ...],
    pods: tuple[Obj, ...],
    want: dict[str, str],
    *,
    table: str = "TestSingleConstraint",
    **spec: Any,
) -> Row:
    incoming = pod("p", labels=pod_labels, topologySpreadConstraints=constraints, **spec)
    return Row(table, name, incoming, nodes, want, pods)


def multiple_row(
    name: str,
    pod_labels: dict[str, str],
    constraints: list[Obj],
    nodes: tuple[Obj, ...],
    pods: tuple[Obj, ...],
    want: dict[str, str],
    **spec: Any,
) -> Row:
    return spread_row(
        name, pod_labels, constraints, nodes, pods, want, table="TestMultipleConstraints", **spec
    )


S = PodVerdict.TOPOLOGY_SPREAD.value
L = PodVerdict.LABEL_MISMATCH.value
T = PodVerdict.TAINT.value
FOO_ONLY = {"foo": ""}
FOO_BAR = {"foo": "", "bar": ""}

TOPOLOGY_SPREAD = [
    spread_row(
        "no existing pods",
        {"foo": ""},
        [spread(1, "zone", FOO)],
        four_nodes(),
        (),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "no existing pods, incoming pod doesn't match itself",
        {"foo": ""},
        [spread(1, "zone", BAR)],
        four_nodes(),
        (),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "existing pods in a different namespace do not count",
        {"foo": ""},
        [spread(1, "zone", FOO)],
        four_nodes(),
        (
            pod("p-a1", on="node-a", ns="ns1", labels={"foo": ""}),
            pod("p-b1", on="node-a", ns="ns2", labels={"foo": ""}),
            *on("p-x1", "p-y1"),
        ),
        {"node-a": OK, "node-b": OK, "node-x": S, "node-y": S},
    ),
    spread_row(
        "existing pods do not match null selector",
        {"foo": ""},
        [spread(1, "zone", None)],
        four_nodes(),
        on("p-x1", "p-y1"),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "pods spread across zones as 3/3, all nodes fit",
        {"foo": ""},
        [spread(1, "zone", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        {"foo": ""},
        [spread(1, "zone", FOO)],
        (
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zon="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
            node("node-y", zone="zone2", node="node-y"),
        ),
        on("p-a1", "p-b1", "p-x1", "p-y1"),
        {"node-a": OK, "node-b": S, "node-x": S, "node-y": S},
    ),
    spread_row(
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        {"foo": ""},
        [spread(1, "rack", FOO)],
        (node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")),
        (),
        {"node-a": S, "node-x": S},
    ),
    spread_row(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        {"foo": ""},
        [spread(1, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": S},
    ),
    spread_row(
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        {"foo": ""},
        [spread(2, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": S, "node-b": OK, "node-x": OK, "node-y": S},
    ),
    spread_row(
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        {"bar": ""},
        [spread(1, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": S, "node-b": OK, "node-x": OK, "node-y": S},
    ),
    spread_row(
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits (real case)",
        {"foo": ""},
        [spread(1, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": OK, "node-b": L, "node-x": L, "node-y": S},
        affinity=node_affinity("node", "In", "node-a", "node-y"),
    ),
    spread_row(
        "terminating Pods should be excluded",
        {"foo": ""},
        [spread(1, "node", FOO)],
        (node("node-a", node="node-a"), node("node-b", node="node-b")),
        (pod("p-a", on="node-a", labels={"foo": ""}, terminating=True), *on("p-b")),
        {"node-a": OK, "node-b": S},
    ),
    spread_row(
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits (real case)",
        {"foo": ""},
        [spread(1, "zone", FOO)],
        four_nodes(),
        on("p-b1", "p-b2", "p-y1"),
        {"node-a": OK, "node-b": L, "node-x": S, "node-y": S},
        affinity=node_affinity("node", "NotIn", "node-b"),
    ),
    spread_row(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
        "then the third node fits",
        {"foo": ""},
        [spread(2, "node", FOO, min_domains=4)],
        tuple(node(f"node-{n}", node=f"node-{n}") for n in "abc"),
        on("p-a1", "p-a2", "p-b1", "p-b2", "p-c1"),
        {"node-a": S, "node-b": S, "node-c": OK},
    ),
    spread_row(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
        "then the all nodes fit",
        {"foo": ""},
        [spread(2, "node", FOO, min_domains=2)],
        tuple(node(f"node-{n}", node=f"node-{n}") for n in "abc"),
        on("p-a1", "p-a2", "p-b1", "p-b2", "p-c1"),
        {"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    spread_row(
        "soft spreadConstraints should be bypassed (TestPreFilterState)",
        {"foo": ""},
        [spread(1, "node", FOO, when="ScheduleAnyway")],
        four_nodes(),
        on("p-a1", "p-a2", "p-y1", "p-y2", "p-y3"),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
        "then the third and fourth nodes fit",
        FOO_ONLY,
        [spread(2, "zone", FOO, min_domains=3)],
        four_nodes(),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
        "then the all nodes fit",
        FOO_ONLY,
        [spread(2, "zone", FOO, min_domains=1)],
        four_nodes(),
        b1_b2_y1(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    spread_row(
        "NodeAffinityPolicy honored with labelSelectors",
        FOO_ONLY,
        [spread(1, "node", FOO)],
        four_nodes(foo="abx", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": L},
        nodeSelector={"foo": ""},
    ),
    spread_row(
        "NodeAffinityPolicy ignored with labelSelectors",
        FOO_ONLY,
        [spread(1, "node", FOO) | IGNORE_AFFINITY],
        four_nodes(foo="abx", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": L},
        nodeSelector={"foo": ""},
    ),
    spread_row(
        "NodeAffinityPolicy honored with nodeAffinity",
        FOO_ONLY,
        [spread(1, "node", FOO)],
        four_nodes(foo="abx", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": L},
        affinity=node_affinity("foo", "In", ""),
    ),
    spread_row(
        "NodeAffinityPolicy ignored with labelSelectors (the second row of that name: nodeAffinity)",
        FOO_ONLY,
        [spread(1, "node", FOO) | IGNORE_AFFINITY],
        four_nodes(foo="abx", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": L},
        affinity=node_affinity("foo", "In", ""),
    ),
    spread_row(
        "NodeTaintsPolicy honored",
        FOO_ONLY,
        [spread(1, "node", FOO) | HONOR_TAINTS],
        four_nodes(foo="abx", tainted="y", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": T},
    ),
    spread_row(
        "NodeTaintsPolicy ignored",
        FOO_ONLY,
        [spread(1, "node", FOO)],
        four_nodes(foo="abx", tainted="y", zones=False),
        b1_b2_y1(),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": T},
    ),
    multiple_row(
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        FOO_ONLY,
        [spread(1, "zone", FOO), spread(1, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3"),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": S},
    ),
    multiple_row(
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        FOO_ONLY,
        [spread(1, "zone", FOO), spread(1, "node", FOO)],
        four_nodes(),
        on("p-a1", "p-a2", "p-b1", "p-y1", "p-y2", "p-y3", "p-y4"),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    multiple_row(
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        FOO_BAR,
        [spread(1, "zone", FOO), spread(1, "node", BAR)],
        four_nodes(),
        (*on("p-a1"), *on("p-y1", bar="")),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": S},
    ),
    multiple_row(
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        FOO_BAR,
        [spread(1, "zone", FOO), spread(1, "node", BAR)],
        four_nodes(),
        (*on("p-a1"), *on("p-x1", "p-y1", bar="")),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    multiple_row(
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        FOO_BAR,
        [spread(1, "zone", FOO), spread(1, "node", BAR)],
        four_nodes(),
        (*on("p-a1", "p-y1", "p-y3"), *on("p-a2", "p-y2", **FOO_BAR)),
        {"node-a": S, "node-b": OK, "node-x": S, "node-y": S},
    ),
    multiple_row(
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        {"bar": ""},
        [spread(1, "zone", FOO), spread(1, "node", BAR)],
        four_nodes(),
        (*on("p-a1"), *on("p-x1", "p-y1", bar="")),
        {"node-a": OK, "node-b": OK, "node-x": S, "node-y": S},
    ),
    multiple_row(
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        FOO_ONLY,
        [spread(1, "zone", FOO), spread(1, "node", FOO)],
        (
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2"),
            node("node-y", zone="zone2", node="node-y"),
        ),
        on("p-a1", "p-y3"),
        {"node-a": S, "node-b": OK, "node-x": S, "node-y": S},
    ),
    multiple_row(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        FOO_ONLY,
        [spread(1, "zone", FOO), spread(1, "node", FOO) | IGNORE_AFFINITY],
        four_nodes(foo="abx"),
        on("p-a1", "p-b1", "p-y1"),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": L},
        nodeSelector={"foo": ""},
    ),
    multiple_row(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        FOO_ONLY,
        [spread(1, "zone", FOO) | HONOR_TAINTS, spread(1, "node", FOO)],
        four_nodes(foo="abx", tainted="y"),
        on("p-a1", "p-b1", "p-y1"),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": T},
    ),
    multiple_row(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        FOO_ONLY,
        [spread(1, "zone", FOO), spread(1, "node", FOO)],
        four_nodes(foo="axy", tainted="y"),
        on("p-a1", "p-b1", "p-y1"),
        {"node-a": S, "node-b": L, "node-x": OK, "node-y": T},
        nodeSelector={"foo": ""},
    ),
    multiple_row(
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        FOO_ONLY,
        [spread(1, "zone", FOO) | HONOR_TAINTS, spread(1, "node", FOO) | IGNORE_AFFINITY],
        four_nodes(foo="axy", tainted="y"),
        on("p-a1", "p-b1", "p-y1"),
        {"node-a": S, "node-b": L, "node-x": OK, "node-y": T},
        nodeSelector={"foo": ""},
    ),
    multiple_row(
        "two Constraints on zone, spreads = [3/3, 2/1]",
        FOO_BAR,
        [spread(1, "zone", BAR), spread(1, "zone", FOO)],
        four_nodes(),
        (*on("p-a1", "p-b1", "p-y2", **FOO_BAR), *on("p-a2", "p-y1", "p-y3")),
        {"node-a": S, "node-b": S, "node-x": OK, "node-y": OK},
    ),
    multiple_row(
        "two Constraints on zone, spreads = [3/4, 2/1]",
        FOO_BAR,
        [spread(1, "zone", BAR), spread(1, "zone", FOO)],
        four_nodes(),
        (*on("p-a1", "p-b1", "p-y2", **FOO_BAR), *on("p-a2", "p-y1", "p-y3", "p-y4")),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
]


# --- interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode) --------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
A = PodVerdict.POD_AFFINITY.value


def machine1() -> tuple[Obj, ...]:
    return (node("machine1", region="r1", zone="z11"),)


def affinity_row(
    name: str,
    labels: dict[str, str],
    rules: Obj,
    pods: tuple[Obj, ...],
    want: str,
    *,
    ns: str = "default",
    namespaces: tuple[Obj, ...] = (),
) -> Row:
    incoming = pod("p", ns=ns, labels=labels, affinity=rules) if rules else pod("p", ns=ns, labels=labels)
    return Row(
        "TestRequiredAffinitySingleNode",
        name,
        incoming,
        machine1(),
        {"machine1": want},
        pods,
        namespaces=namespaces,
    )


def namespace_object(name: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "uid": f"uid-namespace-{name}", "labels": labels},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


TEAMS = tuple(namespace_object(f"subteam{i}.team{t}", team=f"team{t}") for t in (1, 2) for i in (1, 2))
"""The Namespaces TestRequiredAffinitySingleNode gives the plugin's namespace lister (`namespaces`, in
`interpodaffinity/scoring_test.go`): two labelled team=team1, two team=team2. The namespaceSelector
rows put them in the view's `Peers.namespaces`, where the readers put the Namespaces they fetch."""
IN_TEAM1 = {"matchExpressions": [expression("team", "In", "team1")]}


def exists_term(key: str, topology_key: str) -> Obj:
    """A term matching the pods that have the label `key`."""
    return term(topology_key, expression(key, "Exists"))


IN_SECURITYSCAN = expression("service", "In", "securityscan", "value2")
IN_ANTIVIRUS = expression("service", "In", "antivirusscan", "value2")
def alone(labels: dict[str, str], rules: Obj | None = None, ns: str = "default") -> tuple[Obj, ...]:
    """The one existing pod of a single-node row, on machine1, with its required affinity rules."""
    spec: dict[str, Any] = {"affinity": rules} if rules else {}
    return (pod("e1", on="machine1", ns=ns, labels=labels, **spec),)


EXISTING = alone(POD_LABEL)
NOT_ABC_NOR_DEF = affinity(None, [exists_term("abc", "zone"), exists_term("def", "zone")])
"""The anti-affinity of both pods of the symmetry rows b1 and b2."""

INTER_POD_AFFINITY = [
    affinity_row(
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no "
        "existing pods",
        {},
        {},
        (),
        OK,
    ),
    affinity_row(
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
        "operator that matches the existing pod",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN)]),
        EXISTING,
        OK,
    ),
    affinity_row(
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using "
        "not in operator in labelSelector that matches the existing pod",
        POD_LABEL2,
        affinity([term("region", expression("service", "NotIn", "securityscan3", "value3"))]),
        EXISTING,
        OK,
    ),
    affinity_row(
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        POD_LABEL2,
        affinity([term("", IN_SECURITYSCAN, namespaces=["DiffNameSpace"])]),
        alone(POD_LABEL, ns="ns"),
        A,
    ),
    affinity_row(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        POD_LABEL,
        affinity([term("", IN_ANTIVIRUS)]),
        EXISTING,
        A,
    ),
    affinity_row(
        "satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution",
        POD_LABEL2,
        affinity(
            [
                term("region", expression("service", "Exists"), expression("wrongkey", "DoesNotExist")),
                term(
                    "region",
                    expression("service", "In", "securityscan"),
                    expression("service", "NotIn", "WrongValue"),
                ),
            ]
        ),
        EXISTING,
        OK,
    ),
    affinity_row(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule "
        "onto the node because one of the matchExpression item don't match.",
        POD_LABEL2,
        affinity(
            [
                term("region", expression("service", "Exists"), expression("wrongkey", "DoesNotExist")),
                term(
                    "region",
                    expression("service", "In", "securityscan2"),
                    expression("service", "NotIn", "WrongValue"),
                ),
            ]
        ),
        EXISTING,
        A,
    ),
    affinity_row(
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN)], [term("node", IN_ANTIVIRUS)]),
        EXISTING,
        OK,
    ),
    affinity_row(
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN)], [term("node", IN_ANTIVIRUS)]),
        (pod("e1", on="machine1", labels=POD_LABEL, affinity=affinity(None, [term("node", IN_ANTIVIRUS)])),),
        OK,
    ),
    affinity_row(
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN)], [term("zone", IN_SECURITYSCAN)]),
        EXISTING,
        A,
    ),
    affinity_row(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry "
        "with the existing pod",
        POD_LABEL,
        affinity([term("region", IN_SECURITYSCAN)], [term("node", IN_ANTIVIRUS)]),
        alone(POD_LABEL, affinity(None, [term("zone", IN_SECURITYSCAN)])),
        A,
    ),
    affinity_row(
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        POD_LABEL,
        affinity([term("region", expression("service", "NotIn", "securityscan", "value2"))]),
        (pod("e1", on="machine2", labels=POD_LABEL),),
        A,
    ),
    affinity_row(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
        "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        POD_LABEL,
        {},
        alone(POD_LABEL, affinity(None, [term("zone", IN_SECURITYSCAN)])),
        A,
    ),
    affinity_row(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
        "constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        POD_LABEL,
        {},
        (
            pod(
                "e1",
                on="machine1",
                labels=POD_LABEL,
                affinity=affinity(
                    None, [term("zone", expression("service", "NotIn", "securityscan", "value2"))]
                ),
            ),
        ),
        OK,
    ),
    affinity_row(
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry "
        "with incoming pod",
        POD_LABEL,
        affinity(None, [exists_term("service", "region"), exists_term("security", "region")]),
        alone(POD_LABEL2, affinity(None, [exists_term("security", "zone")])),
        A,
    ),
    affinity_row(
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        POD_LABEL,
        affinity(None, [exists_term("service", "zone"), exists_term("security", "zone")]),
        alone(POD_LABEL2, affinity(None, [exists_term("security", "zone")])),
        A,
    ),
    affinity_row(
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        POD_LABEL2,
        affinity(None, [exists_term("security", "zone")]),
        alone(POD_LABEL, affinity(None, [exists_term("service", "zone"), exists_term("security", "zone")])),
        A,
    ),
    affinity_row(
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        {"abc": "", "xyz": ""},
        NOT_ABC_NOR_DEF,
        alone({"def": "", "xyz": ""}, NOT_ABC_NOR_DEF),
        A,
    ),
    affinity_row(
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        {"def": "", "xyz": ""},
        NOT_ABC_NOR_DEF,
        alone({"abc": "", "xyz": ""}, NOT_ABC_NOR_DEF),
        A,
    ),
    affinity_row(
        "affinity with NamespaceSelector",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN, namespace_selector=IN_TEAM1)]),
        alone(POD_LABEL, ns="subteam1.team1"),
        OK,
        namespaces=TEAMS,
    ),
    affinity_row(
        "affinity with non-matching NamespaceSelector",
        POD_LABEL2,
        affinity([term("region", IN_SECURITYSCAN, namespace_selector=IN_TEAM1)]),
        alone(POD_LABEL, ns="subteam1.team2"),
        A,
        namespaces=TEAMS,
    ),
    affinity_row(
        "anti-affinity with matching NamespaceSelector",
        POD_LABEL2,
        affinity(None, [term("zone", IN_SECURITYSCAN, namespace_selector=IN_TEAM1)]),
        alone(POD_LABEL, ns="subteam2.team1"),
        A,
        ns="subteam1.team1",
        namespaces=TEAMS,
    ),
    affinity_row(
        "anti-affinity with matching all NamespaceSelector",
        POD_LABEL2,
        affinity(None, [term("zone", IN_SECURITYSCAN, namespace_selector={})]),
        alone(POD_LABEL, ns="subteam2.team1"),
        A,
        ns="subteam1.team1",
        namespaces=TEAMS,
    ),
    affinity_row(
        "anti-affinity with non-matching NamespaceSelector",
        POD_LABEL2,
        affinity(None, [term("zone", IN_SECURITYSCAN, namespace_selector=IN_TEAM1)]),
        alone(POD_LABEL, ns="subteam1.team2"),
        OK,
        ns="subteam1.team1",
        namespaces=TEAMS,
    ),
]


# --- interpodaffinity/filtering_test.go (TestRequiredAffinityMultipleNodes) -----------------------
# The upstream pods have no names and the namespace ""; here they are named (kubewhy tells pods apart
# by namespace and name) and in `default`, the incoming pod's namespace unless the row names one. In
# "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey
# matches" the upstream incoming pod carries nodeName nodeA, which its Filter does not read: here it is
# the pending pod asked about, with none.


def nodes_row(
    name: str, incoming: Obj, nodes: tuple[Obj, ...], pods: tuple[Obj, ...], want: list[str]
) -> Row:
    """`want`: the upstream table's statuses, in the order of `nodes`."""
    expected = {n["metadata"]["name"]: w for n, w in zip(nodes, want, strict=True)}
    return Row("TestRequiredAffinityMultipleNodes", name, incoming, nodes, expected, pods)


def china_india(*names: str) -> tuple[Obj, ...]:
    """Three nodes: region China, region China in az az1, region India."""
    first, second, third = names
    return (node(first, region="China"), node(second, region="China", az="az1"), node(third, region="India"))


def r1_hosts(*zones: str) -> tuple[Obj, ...]:
    """nodeA, nodeB, ... in region r1, in these zones, each its own hostname."""
    return tuple(
        node(f"node{letter}", region="r1", zone=zone, hostname=f"node{letter}")
        for letter, zone in zip("ABC", zones, strict=False)
    )


def anti(*rules: tuple[str, str]) -> Obj:
    """Required anti-affinity: one `Exists` term per (label key, topology key)."""
    return affinity(None, [exists_term(key, topology_key) for key, topology_key in rules])


FOO_BAR = {"foo": "bar"}
FOO_ABC = expression("foo", "In", "abc")

INTER_POD_AFFINITY_NODES = [
    nodes_row(
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one "
        "of them has an existing pod that matches the affinity rules",
        pod("p", affinity=affinity([term("region", expression("foo", "In", "bar"))])),
        china_india("node1", "node2", "node3"),
        (pod("p1", on="node1", labels=FOO_BAR),),
        [OK, OK, A],
    ),
    nodes_row(
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first "
        "pod of the collection should not be blocked from being scheduled onto any node, even there's no "
        "existing pod that matches the rule anywhere.",
        pod(
            "p",
            labels={"foo": "bar", "service": "securityscan"},
            affinity=affinity(
                [
                    term("zone", expression("foo", "In", "bar")),
                    term("zone", expression("service", "In", "securityscan")),
                ]
            ),
        ),
        (node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")),
        (pod("p1", on="nodeA", labels=FOO_BAR),),
        [OK, OK],
    ),
    nodes_row(
        "The first pod of the collection can only be scheduled on nodes labelled with the requested "
        "topology keys",
        pod(
            "p",
            labels={"foo": "bar", "service": "securityscan"},
            affinity=affinity(
                [
                    term("zone", expression("foo", "In", "bar")),
                    term("zone", expression("service", "In", "securityscan")),
                ]
            ),
        ),
        (node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")),
        (pod("p1", on="nodeA", labels=FOO_BAR),),
        [A, A],
    ),
    nodes_row(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod("p", affinity=affinity(None, [term("region", FOO_ABC)])),
        (node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")),
        (pod("p1", on="nodeA", labels={"foo": "abc"}),),
        [A, A],
    ),
    nodes_row(
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule "
        "matches a pod.",
        pod(
            "p",
            affinity=affinity(
                None, [term("region", FOO_ABC), term("zone", expression("service", "In", "securityscan"))]
            ),
        ),
        (
            node("nodeA", region="r1", zone="z1", hostname="nodeA"),
            node("nodeB", region="r1", zone="z2", hostname="nodeB"),
        ),
        (pod("p1", on="nodeA", labels={"foo": "abc", "service": "securityscan"}),),
        [A, A],
    ),
    nodes_row(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled "
        "onto nodeC",
        pod("p", affinity=affinity(None, [term("region", FOO_ABC)])),
        china_india("nodeA", "nodeB", "nodeC"),
        (pod("p1", on="nodeA", labels={"foo": "abc"}),),
        [A, A, OK],
    ),
    nodes_row(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled "
        "onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different "
        "namespace)",
        pod(
            "p",
            ns="NS1",
            labels={"foo": "123"},
            affinity=affinity(None, [term("region", expression("foo", "In", "bar"))]),
        ),
        china_india("nodeA", "nodeB", "nodeC"),
        (
            pod("p1", on="nodeA", ns="NS1", labels=FOO_BAR),
            pod(
                "p2",
                on="nodeC",
                ns="NS2",
                affinity=affinity(None, [term("region", expression("foo", "In", "123"))]),
            ),
        ),
        [A, A, OK],
    ),
    nodes_row(
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
        "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        pod("p", labels={"foo": ""}),
        r1_hosts("z1", "z1"),
        (pod("p1", on="nodeA", affinity=anti(("foo", "invalid-node-label"))),),
        [OK, OK],
    ),
    nodes_row(
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey "
        "matches",
        pod("p", affinity=anti(("foo", "invalid-node-label"))),
        r1_hosts("z1", "z1"),
        (pod("p1", on="nodeA", labels={"foo": ""}),),
        [OK, OK],
    ),
    nodes_row(
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        pod("p", labels={"foo": "", "bar": ""}),
        r1_hosts("z1", "z2"),
        (
            pod("p1", on="nodeA", affinity=anti(("foo", "zone"))),
            pod("p2", on="nodeA", affinity=anti(("bar", "region"))),
        ),
        [A, A],
    ),
    nodes_row(
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
        "violates one anti-affinity rule of existingPod",
        pod("p", affinity=anti(("foo", "zone"), ("bar", "region"))),
        r1_hosts("z1", "z2"),
        (pod("p1", on="nodeA", labels={"foo": ""}), pod("p2", on="nodeB", labels={"bar": ""})),
        [A, A],
    ),
    nodes_row(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as a single term match - case when one term has invalid topologyKey",
        pod("p", labels={"foo": "", "bar": ""}),
        r1_hosts("z1", "z2"),
        (pod("p1", on="nodeA", affinity=anti(("foo", "invalid-node-label"), ("bar", "zone"))),),
        [A, OK],
    ),
    nodes_row(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as a single term match - case when one term has invalid topologyKey",
        pod("p", affinity=anti(("foo", "invalid-node-label"), ("bar", "zone"))),
        r1_hosts("z1", "z2"),
        (pod("podA", on="nodeA", labels={"foo": "", "bar": ""}),),
        [A, OK],
    ),
    nodes_row(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as a single term match - case when all terms have valid topologyKey",
        pod("p", labels={"foo": "", "bar": ""}),
        r1_hosts("z1", "z2"),
        (pod("p1", on="nodeA", affinity=anti(("foo", "region"), ("bar", "zone"))),),
        [A, A],
    ),
    nodes_row(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as a single term match - case when all terms have valid topologyKey",
        pod("p", affinity=anti(("foo", "region"), ("bar", "zone"))),
        r1_hosts("z1", "z2"),
        (pod("p1", on="nodeA", labels={"foo": "", "bar": ""}),),
        [A, A],
    ),
    nodes_row(
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity "
        "term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        pod("p", labels={"foo": "", "bar": ""}),
        r1_hosts("z1", "z2", "z3"),
        (
            pod("p1", on="nodeA", affinity=anti(("foo", "zone"), ("labelA", "zone"))),
            pod("p2", on="nodeB", affinity=anti(("bar", "zone"), ("labelB", "zone"))),
        ),
        [A, A, OK],
    ),
    nodes_row(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
        pod("p", affinity=affinity([exists_term("foo", "region"), exists_term("bar", "zone")])),
        r1_hosts("z1", "z1"),
        (pod("pod1", on="nodeA", labels={"foo": "", "bar": ""}),),
        [OK, OK],
    ),
    nodes_row(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
        pod("p", affinity=affinity([exists_term("foo", "region"), exists_term("bar", "zone")])),
        r1_hosts("z1", "z2"),
        (pod("pod1", on="nodeA", labels={"foo": ""}), pod("pod2", on="nodeB", labels={"bar": ""})),
        [A, A],
    ),
]

ROWS = [
    *VOLUME_ZONE,
    *VOLUME_RESTRICTIONS,
    *CAPACITY,
    *VOLUME_BINDING,
    *TOPOLOGY_SPREAD,
    *INTER_POD_AFFINITY,
    *INTER_POD_AFFINITY_NODES,
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_upstream_row_gets_the_schedulers_answer(row: Row) -> None:
    assert outcome(row) == row.want


@pytest.mark.parametrize("row", [r for r in ROWS if OK not in r.want.values()], ids=lambda r: r.id)
def test_a_row_that_leaves_no_node_is_that_steps_verdict(row: Row) -> None:
    peers = Peers(pods=row.pods, namespaces=row.namespaces)
    view = TriageView(row.pod, row.nodes, row.pods, (), NOW, peers=peers, storage=row.storage)
    verdicts = {PodVerdict(w) for w in row.want.values()}
    assert classify(view).verdict in verdicts
