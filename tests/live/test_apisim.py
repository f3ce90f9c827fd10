"""The API simulator answers as an API server does, on the wire: selectors, both event APIs, Status
errors, pages, logs, and refusals of writes. (kubectl's own use of it is in tests/kubectl.)"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import pytest

from devtools.apisim import TOKEN, USER, Simulator, serve
from devtools.apisim.resources import lookup
from devtools.apisim.selectors import parse_fields, parse_labels
from devtools.apisim.store import Collection, Key, Selection, Store
from tests.live import generated
from tests.live.support import GPU_CLUSTER

A100 = "gke-ml-prod-a100-pool-3f9c2a1b-7xkq"


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with serve(GPU_CLUSTER) as running:
        yield running


def _call(
    sim: Simulator, path: str, method: str = "GET", accept: str = "application/json", **query: Any
) -> Any:
    url = f"{sim.url}{path}?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(
        url, method=method, headers={"Authorization": f"Bearer {TOKEN}", "Accept": accept}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            body = answer.read()
            return (
                answer.status,
                answer.headers,
                json.loads(body) if "json" in answer.headers["Content-Type"] else body,
            )
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, refused.headers, json.loads(refused.read())


def _names(sim: Simulator, path: str, **query: Any) -> list[str]:
    status, _, body = _call(sim, path, **query)
    assert status == 200, body
    return [item["metadata"]["name"] for item in body["items"]]


@pytest.mark.parametrize(
    ("selector", "pools"),
    [
        ("cloud.google.com/gke-nodepool in (a100-pool,l4-spot)", ["a100-pool", "a100-pool", "l4-spot"]),
        ("cloud.google.com/gke-nodepool notin (a100-pool, l4-spot)", ["cpu-pool", "cpu-pool"]),
        ("cloud.google.com/gke-nodepool==l4-spot", ["l4-spot"]),
        ("cloud.google.com/gke-nodepool!=cpu-pool", ["a100-pool", "a100-pool", "l4-spot"]),
        ("cloud.google.com/gke-spot", ["l4-spot"]),
        ("!cloud.google.com/gke-accelerator", ["cpu-pool", "cpu-pool"]),
        (
            "cloud.google.com/gke-accelerator,cloud.google.com/gke-provisioning=standard",
            ["a100-pool", "a100-pool"],
        ),
        ("cloud.google.com/gke-max-pods-per-node<100", []),
        ("cloud.google.com/gke-cpu-scaling-level>8", ["a100-pool", "a100-pool"]),
    ],
)
def test_label_selectors(sim: Simulator, selector: str, pools: list[str]) -> None:
    _, _, body = _call(sim, "/api/v1/nodes", labelSelector=selector)
    assert [n["metadata"]["labels"]["cloud.google.com/gke-nodepool"] for n in body["items"]] == pools


def test_field_selectors_on_pods(sim: Simulator) -> None:
    pods = [o for o in json.loads(GPU_CLUSTER.read_text())["items"] if o["kind"] == "Pod"]
    bound = sorted(
        p["metadata"]["name"]
        for p in pods
        if p["spec"].get("nodeName") == A100 and p["status"]["phase"] != "Succeeded"
    )
    pending = sorted(
        p["metadata"]["name"]
        for p in pods
        if p["metadata"]["namespace"] == "ml-train"
        and not p["spec"].get("nodeName")
        and p["status"]["phase"] == "Pending"
    )
    assert len(bound) == 3
    assert (
        sorted(_names(sim, "/api/v1/pods", fieldSelector=f"spec.nodeName={A100},status.phase!=Succeeded"))
        == bound
    )
    assert (
        sorted(
            _names(
                sim, "/api/v1/namespaces/ml-train/pods", fieldSelector="spec.nodeName=,status.phase==Pending"
            )
        )
        == pending
    )
    assert sorted(_names(sim, "/api/v1/pods", fieldSelector=r"metadata.name=notebook-bob")) == [
        "notebook-bob"
    ]


@pytest.mark.parametrize("selector", ["app in ()", "app=a=b", "app in (a", "=a", "app!", "Bad Key=x"])
def test_a_malformed_label_selector_is_refused(sim: Simulator, selector: str) -> None:
    status, _, body = _call(sim, "/api/v1/pods", labelSelector=selector)
    assert (status, body["reason"]) == (400, "BadRequest")


def test_an_unsupported_field_is_refused_as_the_api_does(sim: Simulator) -> None:
    status, _, body = _call(sim, "/api/v1/pods", fieldSelector="spec.containers=main")
    assert status == 400
    assert body["reason"] == "BadRequest"
    assert body["message"].endswith("field label not supported: spec.containers")


def test_one_event_through_both_event_apis(sim: Simulator) -> None:
    _, _, core = _call(
        sim, "/api/v1/namespaces/ml-train/events", fieldSelector="involvedObject.name=notebook-alice"
    )
    _, _, new = _call(
        sim,
        "/apis/events.k8s.io/v1/namespaces/ml-train/events",
        fieldSelector="regarding.name=notebook-alice",
    )
    (old_style,), (new_style,) = core["items"], new["items"]
    assert old_style["metadata"]["uid"] == new_style["metadata"]["uid"]
    assert old_style["message"] == new_style["note"]
    assert old_style["involvedObject"] == new_style["regarding"]
    assert old_style["reportingComponent"] == new_style["reportingController"] == "default-scheduler"


def test_typed_lists_leave_kind_out_of_items_and_custom_resources_keep_it(sim: Simulator) -> None:
    _, _, pods = _call(sim, "/api/v1/namespaces/ml-serve/pods")
    _, _, jobsets = _call(sim, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml-train/jobsets")
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert all("kind" not in p for p in pods["items"])
    assert [j["kind"] for j in jobsets["items"]] == ["JobSet"]


def test_not_found_is_a_status(sim: Simulator) -> None:
    status, _, pod = _call(sim, "/api/v1/namespaces/ml-train/pods/nope")
    _, _, jobset = _call(sim, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml-train/jobsets/nope")
    assert status == 404
    assert (pod["kind"], pod["reason"], pod["message"]) == ("Status", "NotFound", 'pods "nope" not found')
    assert jobset["message"] == 'jobsets.jobset.x-k8s.io "nope" not found'


def test_forbidden_is_a_status_naming_user_verb_resource_and_scope() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.forbid("workloads")
        sim.faults.forbid("nodes", verb="get")
        _, _, listed = _call(sim, "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml-train/workloads")
        _, _, got = _call(sim, f"/api/v1/nodes/{A100}")
        status, _, _ = _call(sim, "/api/v1/nodes")
    assert listed["message"] == (
        f'workloads.kueue.x-k8s.io is forbidden: User "{USER}" cannot list resource "workloads" '
        'in API group "kueue.x-k8s.io" in the namespace "ml-train"'
    )
    assert got["message"] == (
        f'nodes "{A100}" is forbidden: User "{USER}" cannot get resource "nodes" in API group ""'
        " at the cluster scope"
    )
    assert status == 200


def test_pages_cover_the_list_once(sim: Simulator) -> None:
    everything = _names(sim, "/api/v1/pods")
    seen, token = [], None
    while True:
        _, _, page = _call(sim, "/api/v1/pods", limit=4, **({"continue": token} if token else {}))
        seen += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == len(everything) - len(seen)
    assert seen == everything


def test_metadata_only_lists(sim: Simulator) -> None:
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    _, _, body = _call(sim, "/api/v1/namespaces/ml-serve/pods", accept=accept)
    assert body["kind"] == "PartialObjectMetadataList"
    assert {tuple(item) for item in body["items"]} == {("kind", "apiVersion", "metadata")}


@pytest.mark.parametrize(
    ("pod", "query", "status", "said"),
    [
        ("ml-serve/vllm-llama3-8b-7d9f8b6c5-k2xjp", {"container": "main"}, 200, b"simulated log"),
        (
            "ml-serve/vllm-llama3-8b-7d9f8b6c5-k2xjp",
            {"container": "main", "previous": "true"},
            400,
            'previous terminated container "main" in pod "vllm-llama3-8b-7d9f8b6c5-k2xjp" not found',
        ),
        (
            "ml-serve/vllm-llama3-8b-7d9f8b6c5-k2xjp",
            {"container": "sidecar"},
            400,
            "container sidecar is not valid for pod vllm-llama3-8b-7d9f8b6c5-k2xjp",
        ),
        ("ml-train/notebook-alice", {"container": "main"}, 200, b""),
    ],
    ids=["running", "no-previous", "wrong-container", "unscheduled"],
)
def test_logs_as_the_kubelet_gives_them(
    sim: Simulator, pod: str, query: dict[str, str], status: int, said: Any
) -> None:
    namespace, name = pod.split("/")
    got, _, body = _call(sim, f"/api/v1/namespaces/{namespace}/pods/{name}/log", accept="*/*", **query)
    assert got == status
    assert said in body if isinstance(said, bytes) else body["message"] == said


def test_writes_are_recorded_and_refused() -> None:
    with serve(GPU_CLUSTER) as sim:
        status, _, body = _call(sim, f"/api/v1/nodes/{A100}", method="PATCH")
    assert status == 405
    assert body["reason"] == "MethodNotAllowed"
    assert [(r.verb, r.resource, r.name) for r in sim.requests] == [("patch", "nodes", A100)]


def test_the_clock_is_the_snapshots(sim: Simulator) -> None:
    _, headers, _ = _call(sim, "/version")
    assert parsedate_to_datetime(headers["Date"]) == sim.now
    assert sim.now.isoformat() == "2026-11-29T08:49:57+00:00"


def test_without_a_group_its_paths_are_not_found() -> None:
    with serve(GPU_CLUSTER, without=["kueue.x-k8s.io"]) as sim:
        _, _, groups = _call(sim, "/apis")
        status, _, _ = _call(sim, "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml-train/workloads")
    assert "kueue.x-k8s.io" not in {g["name"] for g in groups["groups"]}
    assert status == 404


def _store_and_selection(
    group: str, plural: str, namespace: str, labels: str, fields: str
) -> tuple[Collection, Selection]:
    store = Store([*json.loads(GPU_CLUSTER.read_text())["items"], *generated.cluster(10, 10).objects])
    resource = lookup(group, "v1", plural)
    assert resource is not None
    selection = Selection.of(
        namespace,
        parse_labels(labels),
        parse_fields(fields, resource.selectable),
        dict(resource.field_aliases),
    )
    return store.collection(resource), selection


def _every_object_matched(collection: Collection, selection: Selection) -> list[Key]:
    """What the selection selects, found the slow way: every object matched, then sorted."""
    return sorted(key for key, entry in collection.entries.items() if selection.matches(entry.obj))


def _selected(collection: Collection, selection: Selection) -> list[Key]:
    return [collection.key_of(entry.obj) for entry in collection.select(selection)]


SELECTIONS = [
    ("", "pods", "", "", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"),
    ("", "pods", "", "", "spec.nodeName=,status.phase==Pending"),
    ("", "pods", "ml-train", "", "spec.nodeName!="),
    ("", "pods", "", "", f"spec.nodeName={A100},status.phase!=Succeeded"),
    ("", "pods", "", "", f"spec.nodeName={A100},status.phase!=Succeeded,status.phase!=Failed"),
    ("", "pods", "", "app", "status.phase=Running"),
    ("", "pods", "", "app!=vllm,!owner", "metadata.name!=notebook-bob"),
    ("", "pods", "", "", "metadata.namespace!=kube-system,spec.restartPolicy=Never"),
    ("", "pods", "", "", ""),
    ("", "nodes", "", "cloud.google.com/gke-nodepool!=cpu-pool", "spec.unschedulable!=true"),
    ("", "events", "ml-train", "", "type=Warning,involvedObject.name!=notebook-bob"),
    ("events.k8s.io", "events", "", "", "regarding.kind=Pod,reportingController!=x"),
]


@pytest.mark.parametrize(("group", "plural", "namespace", "labels", "fields"), SELECTIONS)
def test_indexes_select_what_matching_every_object_selects(
    group: str, plural: str, namespace: str, labels: str, fields: str
) -> None:
    collection, selection = _store_and_selection(group, plural, namespace, labels, fields)
    expected = _every_object_matched(collection, selection)
    assert expected  # each selection selects something, so a wrong index shows
    assert _selected(collection, selection) == expected


def test_indexed_selections_follow_writes() -> None:
    collection, selection = _store_and_selection(
        "", "pods", "", "", "spec.nodeName!=,status.phase!=Succeeded"
    )
    before = _selected(collection, selection)
    pending = next(e.obj for e in collection.entries.values() if not e.obj["spec"].get("nodeName"))
    placed = {
        **pending,
        "spec": {**pending["spec"], "nodeName": A100},
        "status": {**pending["status"], "phase": "Running"},
    }
    collection.add(placed)
    gone = before[0]
    collection.remove(gone)
    after = _selected(collection, selection)
    assert after == _every_object_matched(collection, selection)
    assert collection.key_of(placed) in after
    assert gone not in after
