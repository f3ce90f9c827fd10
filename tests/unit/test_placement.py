"""The placement steps on what kube-scheduler's tables do not cover: CSI attach limits, StorageClass
allowedTopologies, a CSIStorageCapacity's unset maximumVolumeSize, the selected-node annotation,
generic ephemeral volumes, `matchLabelKeys` and `nodeTaintsPolicy` of spread constraints,
namespaceSelector of anti-affinity terms, unparsable selectors. Each expectation follows the
scheduler's code (`nodevolumelimits/csi.go`, `volumebinding/binder.go`, `podtopologyspread/common.go`,
`interpodaffinity/filtering.go`)."""

from __future__ import annotations

from typing import Any

from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify, funnel_of
from diagnosis.views import Peers, Storage, TriageView
from tests.unit.test_gpu_corpus import diagnose
from tests.unit.test_upstream_placement import (
    CAPACITY_CLASS,
    NODE_KEY,
    NOW,
    OK,
    PROVISIONED,
    PROVISIONER,
    Obj,
    Row,
    affinity,
    capacity,
    claim,
    csi_driver,
    exists,
    expression,
    node,
    outcome,
    pod,
    spread,
    storage_class,
    term,
    volume,
    with_claims,
)

V, S, A = PodVerdict.VOLUME.value, PodVerdict.TOPOLOGY_SPREAD.value, PodVerdict.POD_AFFINITY.value
DRIVER = "ebs.csi.aws.com"


def csinode(name: str, limit: int) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": limit}}]},
    }


def csi_volume(name: str, handle: str) -> Obj:
    found = volume(name, "gp3")
    found["spec"]["csi"] = {"driver": DRIVER, "volumeHandle": handle}
    return found


def row(name: str, incoming: Obj, nodes: tuple[Obj, ...], want: dict[str, str], **more: Any) -> Row:
    return Row("kubewhy", name, incoming, nodes, want, **more)


def attach_row(name: str, existing_claims: tuple[str, ...], want: str) -> Row:
    """node-a lets the EBS driver attach 2 volumes; a pod there uses `existing_claims`; the pod asked
    about uses data-0 (bound to vol-0)."""
    claims = tuple(claim(c, "gp3", volume=f"pv-{c}") for c in ("data-0", "data-1", "data-2"))
    volumes = tuple(csi_volume(f"pv-data-{i}", f"vol-{i}") for i in range(3))
    storage = Storage(
        claims, volumes, (storage_class("gp3", "WaitForFirstConsumer", DRIVER),), (csinode("node-a", 2),)
    )
    holder = pod("holder", on="node-a", **with_claims(*existing_claims))
    return row(
        name,
        pod("p", **with_claims("data-0")),
        (node("node-a"),),
        {"node-a": want},
        pods=(holder,),
        storage=storage,
    )


def test_the_attach_limit_counts_the_volumes_of_the_pods_on_the_node() -> None:
    assert outcome(attach_row("2 attached + 1 new > 2", ("data-1", "data-2"), V)) == {"node-a": V}
    assert outcome(attach_row("1 attached + 1 new = 2", ("data-1",), OK)) == {"node-a": OK}


def test_a_volume_already_attached_to_the_node_is_not_counted_again() -> None:
    assert outcome(attach_row("the pod's volume is one of the 2", ("data-0", "data-1"), OK)) == {"node-a": OK}


def test_an_unbound_claim_counts_as_a_new_volume_of_its_class_provisioner() -> None:
    base = attach_row("unbound", ("data-1", "data-2"), V)
    unbound = claim("scratch", "gp3")
    storage = Storage(
        (*base.storage.claims, unbound), base.storage.volumes, base.storage.classes, base.storage.csinodes
    )
    incoming = pod("p", **with_claims("scratch"))
    assert outcome(Row("kubewhy", "unbound", incoming, base.nodes, {}, base.pods, storage))["node-a"] == V


def test_allowed_topologies_exclude_the_nodes_outside_them() -> None:
    limited = storage_class("zonal", "WaitForFirstConsumer", "pd.csi.storage.gke.io")
    limited["allowedTopologies"] = [
        {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["us-central1-a"]}]}
    ]
    storage = Storage((claim("cache", "zonal"),), (), (limited,))
    nodes = (
        node("in-a", **{"topology.kubernetes.io/zone": "us-central1-a"}),
        node("in-b", **{"topology.kubernetes.io/zone": "us-central1-b"}),
    )
    found = outcome(row("allowedTopologies", pod("p", **with_claims("cache")), nodes, {}, storage=storage))
    assert found == {"in-a": OK, "in-b": V}


def test_a_claim_given_another_node_refuses_every_other_node() -> None:
    chosen = claim("cache", "wait")
    chosen["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "node-b"}
    storage = Storage(
        (chosen,), (), (storage_class("wait", "WaitForFirstConsumer", "pd.csi.storage.gke.io"),)
    )
    found = outcome(
        row(
            "selected-node",
            pod("p", **with_claims("cache")),
            (node("node-a"), node("node-b")),
            {},
            storage=storage,
        )
    )
    assert found == {"node-a": V, "node-b": OK}


def test_a_generic_ephemeral_volume_waits_for_its_claim_and_needs_it_to_be_the_pods() -> None:
    incoming = pod(
        "trainer", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]
    )
    view = TriageView(incoming, (node("node-a"),), (), (), NOW)
    missing = classify(view)
    assert missing.verdict is PodVerdict.VOLUME
    assert (
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "trainer-scratch"'
        in missing.summary
    )
    stranger = claim("trainer-scratch", "wait", volume="pv-x")
    stranger["metadata"]["ownerReferences"] = [
        {"kind": "Pod", "name": "other", "uid": "uid-other", "controller": True}
    ]
    storage = Storage(
        (stranger,), (volume("pv-x", "wait"),), (storage_class("wait", "WaitForFirstConsumer"),)
    )
    refused = classify(TriageView(incoming, (node("node-a"),), (), (), NOW, storage=storage))
    assert "was not created for pod default/trainer (pod is not owner)" in refused.summary
    stranger["metadata"]["ownerReferences"][0].update(name="trainer", uid="uid-default-trainer")
    assert (
        classify(TriageView(incoming, (node("node-a"),), (), (), NOW, storage=storage)).verdict
        is PodVerdict.SCHEDULABLE
    )


def test_match_label_keys_narrow_the_spread_to_the_pods_own_revision() -> None:
    """Pods of the previous revision do not count once `pod-template-hash` is a matchLabelKey."""
    constraint = {
        **spread(1, "zone", {"matchLabels": {"app": "asr"}}),
        "matchLabelKeys": ["pod-template-hash"],
    }
    nodes = (node("node-a", zone="z1"), node("node-b", zone="z2"))
    old = tuple(
        pod(f"old-{i}", on="node-a", labels={"app": "asr", "pod-template-hash": "v1"}) for i in range(2)
    )
    incoming = pod(
        "p", labels={"app": "asr", "pod-template-hash": "v2"}, topologySpreadConstraints=[constraint]
    )
    assert outcome(row("new revision", incoming, nodes, {}, pods=old)) == {"node-a": OK, "node-b": OK}
    plain = pod(
        "p",
        labels={"app": "asr", "pod-template-hash": "v2"},
        topologySpreadConstraints=[constraint | {"matchLabelKeys": []}],
    )
    assert outcome(row("any revision", plain, nodes, {}, pods=old)) == {"node-a": S, "node-b": OK}


def test_honoured_taints_remove_a_domain_from_the_minimum() -> None:
    """With nodeTaintsPolicy Honor, an empty zone whose only node is tainted is no domain: the minimum
    is the other zone's count, so a second pod there is allowed (Ignore: the empty zone keeps it 0)."""
    tainted = node("node-c", zone="z3")
    tainted["spec"]["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    nodes = (node("node-a", zone="z1"), node("node-b", zone="z2"), tainted)
    existing = (pod("e1", on="node-a", labels={"foo": ""}), pod("e2", on="node-b", labels={"foo": ""}))
    ignore = pod("p", labels={"foo": ""}, topologySpreadConstraints=[spread(1, "zone", exists("foo"))])
    honor = pod(
        "p",
        labels={"foo": ""},
        topologySpreadConstraints=[spread(1, "zone", exists("foo")) | {"nodeTaintsPolicy": "Honor"}],
    )
    assert outcome(row("ignore", ignore, nodes, {}, pods=existing)) == {
        "node-a": S,
        "node-b": S,
        "node-c": PodVerdict.TAINT.value,
    }
    assert outcome(row("honor", honor, nodes, {}, pods=existing)) == {
        "node-a": OK,
        "node-b": OK,
        "node-c": PodVerdict.TAINT.value,
    }


def test_nodes_outside_the_pods_node_affinity_are_no_domain_unless_the_policy_ignores_it() -> None:
    """nodeAffinityPolicy Honor (the default): a zone whose only node the pod's nodeSelector excludes
    is no domain, so the minimum is the other zones' count and a second pod in one is allowed. With
    Ignore the excluded zone counts, empty: the minimum is 0 and every zone with a pod is full."""
    nodes = (
        node("node-a", zone="z1", pool="gpu"),
        node("node-b", zone="z2", pool="gpu"),
        node("node-c", zone="z3"),
    )
    existing = (pod("e1", on="node-a", labels={"foo": ""}), pod("e2", on="node-b", labels={"foo": ""}))
    honor = pod(
        "p",
        labels={"foo": ""},
        nodeSelector={"pool": "gpu"},
        topologySpreadConstraints=[spread(1, "zone", exists("foo"))],
    )
    ignore = pod(
        "p",
        labels={"foo": ""},
        nodeSelector={"pool": "gpu"},
        topologySpreadConstraints=[spread(1, "zone", exists("foo")) | {"nodeAffinityPolicy": "Ignore"}],
    )
    outside = PodVerdict.LABEL_MISMATCH.value
    honored = outcome(row("honor", honor, nodes, {}, pods=existing))
    assert honored == {"node-a": OK, "node-b": OK, "node-c": outside}
    ignored = outcome(row("ignore", ignore, nodes, {}, pods=existing))
    assert ignored == {"node-a": S, "node-b": S, "node-c": outside}


def test_an_existing_pods_namespace_selector_is_matched_against_the_pods_namespace_labels() -> None:
    """The cache keeps batch pods off its node: only a pod whose Namespace is labelled tier=batch is
    repelled."""
    rule = term("kubernetes.io/hostname", {"key": "workload", "operator": "In", "values": ["batch"]})
    rule["namespaceSelector"] = {"matchLabels": {"tier": "batch"}}
    cache = pod(
        "cache-0",
        on="node-a",
        ns="platform",
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [rule]}},
    )
    nodes = (node("node-a", **{"kubernetes.io/hostname": "node-a"}),)
    incoming = pod("p", ns="nightly", labels={"workload": "batch"})

    def verdict(tier: str) -> PodVerdict:
        namespace = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "nightly", "labels": {"tier": tier}},
        }
        view = TriageView(incoming, nodes, (cache,), (), NOW, peers=Peers(namespaces=(namespace,)))
        verdict = classify(view).verdict
        assert isinstance(verdict, PodVerdict)
        return verdict

    assert verdict("batch") is PodVerdict.POD_AFFINITY
    assert verdict("online") is PodVerdict.SCHEDULABLE


def test_a_selector_that_does_not_parse_refuses_every_node() -> None:
    bad = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}, "topologyKey": "zone"}
    incoming = pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [bad]}})
    diagnosis = classify(TriageView(incoming, (node("node-a", zone="z1"),), (), (), NOW))
    assert diagnosis.verdict is PodVerdict.POD_AFFINITY
    assert "parsing pod" in diagnosis.summary


def test_a_spread_fix_raises_max_skew_to_the_least_skew_a_node_would_make() -> None:
    found = diagnose("tests/corpus/triage/gke-spread-zones-l4.json", "speech", "whisper-asr-hn97p7mmcq-hfvjn")
    first = found.fixes[0]
    assert first.summary.startswith(
        "raise the maxSkew of the spread over topology.kubernetes.io/zone from 1 to 2"
    )
    assert first.pod_patch is not None
    assert first.pod_patch["spec"]["topologySpreadConstraints"][0]["maxSkew"] == 2
    assert first.opens == ("gke-ml-prod-l4-pool-be4a34b2-4gg6",)
    assert "ScheduleAnyway" in found.fixes[1].summary


def test_a_colliding_jobset_is_the_fix_of_the_leader_it_keeps_out() -> None:
    found = diagnose(
        "tests/corpus/jobset/leader-pending-exclusive-collision.json",
        "llm",
        "llama-70b-sft-b-trainer-0-0-v7pbg",
    )
    assert found.summary.startswith(
        "Every node left is refused by JobSet exclusive placement (one child Job per "
        "cloud.google.com/gke-nodepool domain): both cloud.google.com/gke-nodepool domains are held by "
        "JobSet llm/llama-70b-sft-a"
    )
    # Its Jobs are named in the evidence.
    assert "Job llama-70b-sft-a-trainer-1 of JobSet llama-70b-sft-a" in " ".join(found.evidence).replace(
        "\n", " "
    )
    (fix,) = found.fixes
    assert fix.summary.startswith("end or wait for JobSet llm/llama-70b-sft-a")
    assert fix.pod_patch is None
    assert len(fix.opens) == 8
    assert all(o.startswith("pod/llm/llama-70b-sft-a-") for o in fix.objects)


def test_unmet_pod_affinity_is_fixed_by_dropping_it_and_nothing_else() -> None:
    found = diagnose(
        "tests/corpus/triage/gke-pod-affinity-cache-zone.json", "recsys", "ranker-jztgn48jw7-g595p"
    )
    (fix,) = found.fixes
    assert fix.pod_patch == {
        "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}
    }
    assert len(fix.opens) == 2



def capacity_view(found: Obj) -> TriageView:
    """The pod asks a 1Gi claim of a class whose driver publishes its capacity; node1 has `found`."""
    return TriageView(
        pod=pod("p", **with_claims("provisioned-pvc")),
        nodes=(node("node1", **{NODE_KEY: "node1"}),),
        bound_pods=(),
        events=(),
        now=NOW,
        storage=Storage(
            (PROVISIONED,),
            classes=(storage_class(CAPACITY_CLASS, "WaitForFirstConsumer", PROVISIONER),),
            drivers=(csi_driver(True),),
            capacities=(found,),
        ),
    )


def test_a_capacity_without_a_maximum_volume_size_is_read_by_its_capacity() -> None:
    """`volumeLimit`: `maximumVolumeSize` when set, else `capacity` (a snapshot may write an unset
    field as null); the answer gives the sizes the scheduler compared."""
    unset = {**capacity(CAPACITY_CLASS, "node1", "2Gi"), "maximumVolumeSize": None}
    assert classify(capacity_view(unset)).verdict == PodVerdict.SCHEDULABLE
    found = classify(capacity_view(capacity(CAPACITY_CLASS, "node1", "2Gi", "512Mi")))
    assert found.verdict == PodVerdict.VOLUME
    assert "PVC provisioned-pvc asks 1Gi; StorageClass waitClassWithProvisioner has at most 512Mi there" in (
        found.summary
    )


# --- pods nominated to a node: the scheduler filters that node with them and without them
# (`RunFilterPluginsWithNominatedPods`), so they count there, and on no other node of their domain.

TWO_ZONES = (node("node-a", zone="z1"), node("node-b", zone="z2"), node("node-c", zone="z2"))


def nominated(name: str, to: str, priority: int, labels: dict[str, str], **spec: Any) -> Obj:
    """An unbound pod the scheduler nominated to node `to` after preempting pods there."""
    found = pod(name, labels=labels, priority=priority, **spec)
    found["status"]["nominatedNodeName"] = to
    return found


def serve_pod(to: str, priority: int = 1000, **spec: Any) -> Obj:
    return nominated("serve-0", to, priority, {"app": "serve"}, **spec)


AVOIDS_SERVE = affinity(None, [term("zone", expression("app", "In", "serve"))])


def test_a_pod_nominated_to_a_node_meets_the_pods_anti_affinity_there_alone() -> None:
    incoming = pod("p", labels={"app": "train"}, affinity=AVOIDS_SERVE)
    found = outcome(row("own anti-affinity", incoming, TWO_ZONES, {}, nominated=(serve_pod("node-b"),)))
    assert found == {"node-a": OK, "node-b": A, "node-c": OK}
    view = TriageView(incoming, TWO_ZONES[1:2], (), (), NOW, nominated_pods=(serve_pod("node-b"),))
    answer = classify(view)
    held = "dropped node-b (zone=z2 holds default/serve-0 (nominated to node-b), matching the pod's"
    assert held in "".join(answer.evidence)
    assert "pods that keep it out: default/serve-0 (nominated to node-b)" in answer.evidence
    ending = answer.fixes[0]  # checked: the funnel run again without the nominated pod
    assert (ending.objects, ending.opens) == (("pod/default/serve-0",), ("node-b",))


def test_a_nominated_pod_of_lower_priority_is_not_counted() -> None:
    incoming = pod("p", labels={"app": "train"}, priority=2000, affinity=AVOIDS_SERVE)
    found = outcome(row("lower priority", incoming, TWO_ZONES, {}, nominated=(serve_pod("node-b"),)))
    assert found == {"node-a": OK, "node-b": OK, "node-c": OK}


AVOIDS_TRAIN = affinity(None, [term("zone", expression("app", "In", "train"))])


def test_a_nominated_pods_anti_affinity_refuses_its_node_once_the_filter_runs() -> None:
    """InterPodAffinity's PreFilter skips the plugin when the pod has no terms of its own and no bound
    pod's anti-affinity matches it: then a nominated pod's anti-affinity is met nowhere."""
    repelling = serve_pod("node-b", affinity=AVOIDS_TRAIN)
    incoming = pod("p", labels={"app": "train"})
    skipped = outcome(row("skipped", incoming, TWO_ZONES, {}, nominated=(repelling,)))
    assert skipped == {"node-a": OK, "node-b": OK, "node-c": OK}
    bound = pod("batch-0", on="node-a", labels={"app": "batch"}, affinity=AVOIDS_TRAIN)
    run = outcome(row("run", incoming, TWO_ZONES, {}, pods=(bound,), nominated=(repelling,)))
    assert run == {"node-a": A, "node-b": A, "node-c": OK}


def test_a_nominated_pod_does_not_satisfy_the_pods_affinity() -> None:
    """The pass without it must pass too: only bound pods meet the pod's required affinity."""
    incoming = pod(
        "p", labels={"app": "train"}, affinity=affinity([term("zone", expression("app", "In", "serve"))])
    )
    alone = outcome(row("only nominated", incoming, TWO_ZONES, {}, nominated=(serve_pod("node-b"),)))
    assert alone == {"node-a": A, "node-b": A, "node-c": A}
    bound = pod("serve-1", on="node-c", labels={"app": "serve"})
    both = outcome(row("bound too", incoming, TWO_ZONES, {}, pods=(bound,), nominated=(serve_pod("node-b"),)))
    assert both == {"node-a": A, "node-b": OK, "node-c": OK}


def test_pods_nominated_to_a_node_count_in_its_domain_when_the_spread_is_checked_there() -> None:
    """z1 holds 1 matching pod, z2 none; 2 matching pods are nominated to node-b: there z2 counts 2, the
    minimum becomes 1 and the pod makes a skew of 2. node-c, in z2 too, is filtered without them."""
    constraint = spread(1, "zone", {"matchLabels": {"app": "train"}})
    incoming = pod("p", labels={"app": "train"}, topologySpreadConstraints=[constraint])
    placed = (pod("train-0", on="node-a", labels={"app": "train"}),)
    coming = tuple(nominated(f"train-{i}", "node-b", 1000, {"app": "train"}) for i in (1, 2))
    found = outcome(row("spread", incoming, TWO_ZONES, {}, pods=placed, nominated=coming))
    assert found == {"node-a": S, "node-b": S, "node-c": OK}
    stages = funnel_of(TriageView(incoming, TWO_ZONES, placed, (), NOW, nominated_pods=coming)).stages
    (refused,) = [d for s in stages for d in s.dropped if d.node["metadata"]["name"] == "node-b"]
    assert refused.why == (
        "zone=z2 has 2 matching pods (2 nominated to the node) + this pod, min 1: skew 2 > maxSkew 1"
    )
