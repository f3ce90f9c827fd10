"""Snapshot files: every accepted form gives the same objects, every broken one a SnapshotError that
names the file and the problem, and the reader puts the right objects in each view."""

from __future__ import annotations

import copy
import gc
import json
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster import snapshot
from cluster.errors import NotFound, SnapshotError
from cluster.snapshot import SnapshotReader, load_objects
from diagnosis.objects import name

CLUSTER = Path(__file__).resolve().parent.parent / "cli" / "data" / "gpu-cluster.json"
"""Two GKE nodes (an A100 node tainted nvidia.com/gpu, a CPU node), pods in `ml` and `kube-system`,
their events as `kubectl get events -o json` prints them, a JobSet with its Job, a Job refused by a
GPU quota, and the quota."""


@pytest.fixture
def cluster() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CLUSTER.read_text())
    return loaded


def names(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    return [name(o) for o in objects]


def by_name(cluster: dict[str, Any], wanted: str) -> dict[str, Any]:
    return next(o for o in cluster["items"] if name(o) == wanted)


def as_events_k8s_io(event: dict[str, Any]) -> dict[str, Any]:
    """The same event as `kubectl get events.events.k8s.io -o json` serves it."""
    converted = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": event["metadata"],
        "eventTime": event.get("eventTime"),
        "reason": event["reason"],
        "regarding": event["involvedObject"],
        "note": event["message"],
        "type": event["type"],
        "reportingController": event.get("reportingComponent", ""),
        "reportingInstance": event.get("reportingInstance", ""),
    }
    if event.get("series"):
        converted["series"] = event["series"]
    if event.get("count"):
        converted |= {
            "deprecatedCount": event["count"],
            "deprecatedFirstTimestamp": event["firstTimestamp"],
            "deprecatedLastTimestamp": event["lastTimestamp"],
            "deprecatedSource": event["source"],
        }
    return converted


# --- accepted forms -------------------------------------------------------------------------------


def test_json_list_as_kubectl_prints_it(cluster: dict[str, Any]) -> None:
    assert load_objects(CLUSTER) == cluster["items"]


def test_yaml_list_reads_like_the_json_one(cluster: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump(cluster))
    assert load_objects(path) == cluster["items"]


def test_yaml_keeps_unquoted_timestamps_as_the_api_strings(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer-0\n  namespace: ml\n"
        "  creationTimestamp: 2026-11-29T08:44:51Z\n"
    )
    [pod] = load_objects(path)
    assert pod["metadata"]["creationTimestamp"] == "2026-11-29T08:44:51Z"


def test_multi_document_yaml_of_lists_and_objects(cluster: dict[str, Any], tmp_path: Path) -> None:
    nodes = [o for o in cluster["items"] if o["kind"] == "Node"]
    rest = [o for o in cluster["items"] if o["kind"] != "Node"]
    node_list = {"apiVersion": "v1", "kind": "List", "items": nodes}
    path = tmp_path / "snapshot.yml"
    path.write_text(yaml.safe_dump_all([node_list, None, *rest]))
    assert load_objects(path) == nodes + rest


def test_folder_of_files_in_name_order_ignoring_others(cluster: dict[str, Any], tmp_path: Path) -> None:
    items = cluster["items"]
    (tmp_path / "b-pods.yaml").write_text(yaml.safe_dump_all([o for o in items if o["kind"] == "Pod"]))
    (tmp_path / "a-nodes.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [o for o in items if o["kind"] == "Node"]})
    )
    (tmp_path / "c-rest.yml").write_text(
        yaml.safe_dump(
            {
                "kind": "List",
                "apiVersion": "v1",
                "items": [o for o in items if o["kind"] not in ("Pod", "Node")],
            }
        )
    )
    (tmp_path / "README.md").write_text("taken on 2026-11-29 with kubectl get … -o json")
    (tmp_path / "older").mkdir()
    (tmp_path / "older" / "broken.json").write_text("{")
    loaded = load_objects(tmp_path)
    assert [o["kind"] for o in loaded[:2]] == ["Node", "Node"]
    assert sorted(names(loaded)) == sorted(names(items))


def test_overlapping_files_give_each_object_once(cluster: dict[str, Any], tmp_path: Path) -> None:
    items = cluster["items"]
    (tmp_path / "all.json").write_text(json.dumps(cluster))
    ml_pods = [o for o in items if o["kind"] == "Pod" and o["metadata"]["namespace"] == "ml"]
    newer = copy.deepcopy(ml_pods)
    newer[0]["status"]["phase"] = "Running"
    (tmp_path / "pods-ml.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": newer}))
    loaded = load_objects(tmp_path)
    assert sorted(names(loaded)) == sorted(names(items))
    assert newer[0] in loaded


async def test_an_event_saved_through_both_apis_counts_once(cluster: dict[str, Any]) -> None:
    event = by_name(cluster, "finetune-llama-0.187c4a1e9f2b3d5a")
    view, _ = await SnapshotReader([*cluster["items"], as_events_k8s_io(event)]).triage_view(
        "ml", "finetune-llama-0"
    )
    assert names(view.events) == ["finetune-llama-0.187c4a1e9f2b3d5a"]


async def test_a_pod_given_twice_holds_its_node_once(cluster: dict[str, Any]) -> None:
    trainer = by_name(cluster, "trainer-workers-0-0-b8mzq")
    view, _ = await SnapshotReader([*cluster["items"], copy.deepcopy(trainer)]).triage_view(
        "ml", "finetune-llama-0"
    )
    assert names(view.bound_pods) == ["nvidia-gpu-device-plugin-small-cos-4kq7r", "trainer-workers-0-0-b8mzq"]


def test_single_object(cluster: dict[str, Any], tmp_path: Path) -> None:
    pod = by_name(cluster, "finetune-llama-0")
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod))
    assert load_objects(path) == [pod]


def test_json_without_a_json_name_as_from_process_substitution(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "63"
    path.write_text(json.dumps(cluster))
    assert load_objects(path) == cluster["items"]


def test_typed_api_list_items_take_the_list_kind(cluster: dict[str, Any], tmp_path: Path) -> None:
    """`kubectl get --raw /api/v1/pods` serves a PodList whose items carry no kind."""
    pods = [
        {k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
        for o in cluster["items"]
        if o["kind"] == "Pod"
    ]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": pods}))
    loaded = load_objects(path)
    assert {(o["apiVersion"], o["kind"]) for o in loaded} == {("v1", "Pod")}
    assert names(loaded) == [p["metadata"]["name"] for p in pods]


def test_unknown_kinds_are_ignored(cluster: dict[str, Any], tmp_path: Path) -> None:
    strangers = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "finetune-llama-0", "namespace": "ml"},
        },
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "trainer", "namespace": "ml"}},
        {
            "apiVersion": "example.com/v1",
            "kind": "Workload",
            "metadata": {"name": "trainer", "namespace": "ml"},
        },
        {"apiVersion": "example.com/v1", "kind": "Pod", "metadata": {"name": "imposter", "namespace": "ml"}},
    ]
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({**cluster, "items": strangers + cluster["items"]}))
    assert load_objects(path) == cluster["items"]


async def test_the_reader_ignores_unknown_kinds_too(cluster: dict[str, Any]) -> None:
    imposter = {
        "apiVersion": "example.com/v1",
        "kind": "Pod",
        "metadata": {"name": "imposter", "namespace": "ml"},
    }
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "finetune-llama-0", "namespace": "ml"},
    }
    reader = SnapshotReader([imposter, *cluster["items"], config])
    view, _ = await reader.triage_view("ml", "finetune-llama-0")
    assert view.pod is by_name(cluster, "finetune-llama-0")
    with pytest.raises(NotFound):
        await reader.triage_view("ml", "imposter")


@pytest.mark.parametrize("enabled", [True, False])
def test_a_small_snapshot_leaves_the_cycle_collector_as_it_was(enabled: bool) -> None:
    frozen = gc.get_freeze_count()
    (gc.enable if enabled else gc.disable)()
    try:
        load_objects(CLUSTER)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert gc.get_freeze_count() == frozen


def test_a_large_snapshot_is_kept_out_of_the_cycle_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "_LARGE", len(CLUSTER.read_text()))
    try:
        objects = load_objects(CLUSTER)
        assert gc.get_freeze_count() > len(objects)
        assert gc.isenabled()
    finally:
        gc.unfreeze()


# --- broken snapshots -----------------------------------------------------------------------------

TRUNCATED = '{\n    "apiVersion": "v1",\n    "items": [\n        {\n            "apiVersion": "v1",\n'


@pytest.mark.parametrize(
    ("file", "content", "problem"),
    [
        (
            "snapshot.json",
            TRUNCATED,
            "not valid JSON: Expecting property name enclosed in double quotes at line 6, column 1",
        ),
        ("snapshot.json", "", "not valid JSON: Expecting value at line 1, column 1"),
        (
            "snapshot.yaml",
            "kind: List\nitems:\n  - kind: Pod\n    metadata: {name: x\n",
            "not valid YAML: did not find expected ',' or '}' at line 5, column 1",
        ),
        ("snapshot.yaml", "kind: Pod\nx: \x07\n", "not valid YAML: unacceptable character #x0007"),
        (
            "snapshot.yaml",
            "kind: List\nitems:\n- kind: Pod\n  - kind: Node\n",
            "not valid YAML: did not find expected key at line 4, column 3",
        ),
        ("snapshot.yaml", "", "the file is empty"),
        ("snapshot.yaml", "---\n---\n", "the file is empty"),
        ("snapshot.json", "[]", "a list is not a Kubernetes List or object"),
        ("snapshot.yaml", "just words\n", "a string is not a Kubernetes List or object"),
        ("snapshot.json", '{"items": []}', "not a Kubernetes List or object: it has no kind"),
        (
            "snapshot.json",
            '{"kind": "List", "items": {"kind": "Pod"}}',
            "items of the List is a mapping, not a list",
        ),
        (
            "snapshot.json",
            '{"kind": "List", "items": [{"kind": "Pod"}, {"metadata": {}}]}',
            "items[1] has no kind",
        ),
        (
            "snapshot.json",
            '{"kind": "List", "items": ["Pod"]}',
            "items[0] is a string, not a Kubernetes object",
        ),
        (
            "snapshot.yaml",
            "kind: Node\n---\nkind: List\nitems:\n- apiVersion: v1\n",
            "document 2: items[0] has no kind",
        ),
    ],
)
def test_broken_file_names_the_file_and_the_problem(
    tmp_path: Path, file: str, content: str, problem: str
) -> None:
    path = tmp_path / file
    path.write_text(content)
    with pytest.raises(SnapshotError) as caught:
        load_objects(path)
    assert caught.value.path == str(path)
    assert problem in caught.value.problem
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no such file or folder") as caught:
        load_objects(tmp_path / "snapshot.json")
    assert caught.value.path == str(tmp_path / "snapshot.json")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_bytes(b'{"kind": "List", "items": [\xff]}')
    with pytest.raises(SnapshotError, match=r"not UTF-8 text \(byte 27\)"):
        load_objects(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text("{}")
    path.chmod(0)
    with pytest.raises(SnapshotError, match="permission denied"):
        load_objects(path)


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    with pytest.raises(SnapshotError, match=r"the folder holds no \.json, \.yaml or \.yml file") as caught:
        load_objects(tmp_path)
    assert caught.value.path == str(tmp_path)


def test_a_broken_file_in_a_folder_is_the_one_named(cluster: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(cluster))
    (tmp_path / "b.json").write_text(TRUNCATED)
    with pytest.raises(SnapshotError) as caught:
        load_objects(tmp_path)
    assert caught.value.path == str(tmp_path / "b.json")


def test_from_path_raises_the_same_error(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no such file"):
        SnapshotReader.from_path(tmp_path / "nope.yaml")


# --- the reader ----------------------------------------------------------------------------------


async def test_triage_view(cluster: dict[str, Any]) -> None:
    view, _ = await SnapshotReader(cluster["items"]).triage_view("ml", "finetune-llama-0")
    assert view.pod is by_name(cluster, "finetune-llama-0")
    assert names(view.nodes) == ["gke-ml-a100-pool-3f1c2b7e-7xkq", "gke-ml-default-pool-9a8b7c6d-2mfp"]
    # Bound pods of every namespace, but neither the Succeeded smoke test nor the pending pods.
    assert names(view.bound_pods) == ["nvidia-gpu-device-plugin-small-cos-4kq7r", "trainer-workers-0-0-b8mzq"]
    assert names(view.events) == ["finetune-llama-0.187c4a1e9f2b3d5a"]
    assert not view.prefiltered


async def test_triage_view_events_skip_an_earlier_pod_of_the_same_name(cluster: dict[str, Any]) -> None:
    earlier = copy.deepcopy(by_name(cluster, "finetune-llama-0.187c4a1e9f2b3d5a"))
    earlier["metadata"]["name"] = "finetune-llama-0.1879a0b1c2d3e4f5"
    earlier["involvedObject"]["uid"] = "0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a"
    service = copy.deepcopy(by_name(cluster, "finetune-llama-0.187c4a1e9f2b3d5a"))
    service["metadata"]["name"] = "finetune-llama-0.1879a0b1c2d3e4f6"
    service["involvedObject"] = {
        "apiVersion": "v1",
        "kind": "Service",
        "name": "finetune-llama-0",
        "namespace": "ml",
    }
    reader = SnapshotReader([*cluster["items"], earlier, service])
    view, _ = await reader.triage_view("ml", "finetune-llama-0")
    assert names(view.events) == ["finetune-llama-0.187c4a1e9f2b3d5a"]


async def test_events_of_both_apis_are_about_the_pod(cluster: dict[str, Any]) -> None:
    items = [as_events_k8s_io(o) if o["kind"] == "Event" else o for o in cluster["items"]]
    view, _ = await SnapshotReader(items).triage_view("ml", "trainer-workers-0-0-b8mzq")
    assert {e["apiVersion"] for e in view.events} == {"events.k8s.io/v1"}
    assert [e["reason"] for e in view.events] == ["Scheduled", "Pulled", "Created", "Started"]


async def test_jobset_view(cluster: dict[str, Any]) -> None:
    items = cluster["items"]
    jobset = by_name(cluster, "trainer")
    jobset_event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {
            "name": "trainer.187c3f02a9e8d7c6",
            "namespace": "ml",
            "creationTimestamp": "2026-11-29T06:12:31Z",
        },
        "eventTime": "2026-11-29T06:12:31.204117Z",
        "action": "Reconciling",
        "reason": "JobCreated",
        "note": "created job trainer-workers-0",
        "regarding": {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "trainer",
            "namespace": "ml",
            "uid": jobset["metadata"]["uid"],
        },
        "reportingController": "jobset",
        "reportingInstance": "jobset-controller-manager-7d9f8b6c5d-x2k4q",
        "type": "Normal",
    }
    owner = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "trainer",
        "uid": jobset["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    workload: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": "jobset-trainer-3c5e7",
            "namespace": "ml",
            "ownerReferences": [owner],
            "labels": {"kueue.x-k8s.io/job-uid": jobset["metadata"]["uid"]},
        },
        "spec": {"active": True, "queueName": "a100", "podSets": []},
    }
    other = copy.deepcopy(workload)
    other["metadata"]["name"] = "jobset-trainer-old-1a2b3"
    other["metadata"]["ownerReferences"][0]["uid"] = "9e8d7c6b-5a4f-3e2d-1c0b-a9f8e7d6c5b4"
    view = await SnapshotReader([*items, jobset_event, workload, other]).jobset_view("ml", "trainer")
    assert view.jobset is jobset
    assert names(view.jobs) == ["trainer-workers-0"]
    assert names(view.pods) == ["trainer-workers-0-0-b8mzq"]
    assert [e["reason"] for e in view.events] == [
        "JobCreated",
        "SuccessfulCreate",
        "Scheduled",
        "Pulled",
        "Created",
        "Started",
    ]
    assert names(view.workloads) == ["jobset-trainer-3c5e7"]
    assert len(view.nodes) == 2
    assert names(view.bound_pods) == ["nvidia-gpu-device-plugin-small-cos-4kq7r", "trainer-workers-0-0-b8mzq"]


async def test_jobset_view_keeps_children_of_another_namespace_out(cluster: dict[str, Any]) -> None:
    stray = copy.deepcopy(by_name(cluster, "trainer-workers-0"))
    stray["metadata"]["namespace"] = "ml-staging"
    view = await SnapshotReader([*cluster["items"], stray]).jobset_view("ml", "trainer")
    assert [j["metadata"]["namespace"] for j in view.jobs] == ["ml"]


def test_now_is_the_newest_time_the_objects_record(cluster: dict[str, Any]) -> None:
    # The A100 node's last heartbeat, 08:44:51Z, is newer than any event (08:43:49Z).
    assert SnapshotReader(cluster["items"]).now == datetime(2026, 11, 29, 8, 44, 51, tzinfo=UTC)


def test_now_counts_an_event_series(cluster: dict[str, Any]) -> None:
    event = copy.deepcopy(by_name(cluster, "finetune-llama-0.187c4a1e9f2b3d5a"))
    event["series"]["lastObservedTime"] = "2026-11-29T08:47:03.000001Z"
    reader = SnapshotReader([*cluster["items"], as_events_k8s_io(event)])
    assert reader.now == datetime(2026, 11, 29, 8, 47, 3, 1, tzinfo=UTC)


def test_now_given_wins_and_none_found_is_the_epoch(cluster: dict[str, Any]) -> None:
    given = datetime(2027, 1, 1, tzinfo=UTC)
    assert SnapshotReader(cluster["items"], now=given).now == given
    assert SnapshotReader([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]).now == datetime(
        1970, 1, 1, tzinfo=UTC
    )


async def test_missing_pod_names_close_pods_and_creation_refusals(cluster: dict[str, Any]) -> None:
    with pytest.raises(NotFound) as caught:
        await SnapshotReader(cluster["items"]).triage_view("ml", "trainer-workers-0-0")
    error = caught.value
    assert (error.kind, error.namespace, error.name) == ("pod", "ml", "trainer-workers-0-0")
    assert error.missing.similar == ("trainer-workers-0-0-b8mzq",)
    assert error.missing.rejections == (
        'Job batch-infer: Error creating: pods "batch-infer-0-7tq4v" is forbidden: exceeded quota: gpu-quota,'
        " requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=11,"
        " limited: requests.nvidia.com/gpu=16",
    )


async def test_missing_pod_in_another_namespace_sees_nothing_of_ml(cluster: dict[str, Any]) -> None:
    with pytest.raises(NotFound) as caught:
        await SnapshotReader(cluster["items"]).triage_view("kube-system", "finetune-llama-0")
    assert caught.value.missing.similar == ()
    assert caught.value.missing.rejections == ()


async def test_missing_jobset_names_close_jobsets(cluster: dict[str, Any]) -> None:
    with pytest.raises(NotFound) as caught:
        await SnapshotReader(cluster["items"]).jobset_view("ml", "trainr")
    assert caught.value.kind == "jobset"
    assert caught.value.missing.similar == ("trainer",)


async def test_ping_needs_nothing(cluster: dict[str, Any]) -> None:
    await SnapshotReader(cluster["items"]).ping()  # raises if it needed a cluster


async def test_the_same_snapshot_gives_equal_views(cluster: dict[str, Any]) -> None:
    first = await SnapshotReader.from_path(CLUSTER).triage_view("ml", "notebook-gpu")
    second = await SnapshotReader.from_path(CLUSTER).triage_view("ml", "notebook-gpu")
    assert first == second
