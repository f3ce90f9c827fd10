"""The API simulator's WATCH, on the wire, as the API server serves it: a list's resourceVersion to
start from, one JSON event per line in a chunked body, selectors that turn a change into ADDED or
DELETED, bookmarks, the end at timeoutSeconds, and a 410 Expired ERROR for a revision too old."""

from __future__ import annotations

import copy
import http.client
import json
import os
import resource
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from devtools.apisim import TOKEN, Simulator, serve
from tests.live.support import GPU_CLUSTER

A100 = "gke-ml-prod-a100-pool-3f9c2a1b-7xkq"
SWEEP = "sweep-lr-3e4-2-bk9vd"
"""Running on A100, holding one GPU."""


def _get(sim: Simulator, path: str, **query: Any) -> Any:
    url = f"{sim.url}{path}?{urllib.parse.urlencode(query)}"
    return urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"}))


def _json(sim: Simulator, path: str, **query: Any) -> Any:
    with _get(sim, path, **query) as answer:
        return json.load(answer)


def _events(
    sim: Simulator, path: str, change: Callable[[], object] = lambda: None, /, **query: Any
) -> list[Any]:
    """The events of a watch until it ends (`timeoutSeconds`), `change` made once it is open."""
    with _get(sim, path, watch="true", **query) as answer:
        assert answer.headers["Transfer-Encoding"] == "chunked"
        threading.Thread(target=change).start()
        return [json.loads(line) for line in answer]


def _seen(events: list[Any]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


def _pod(sim: Simulator, name: str) -> dict[str, Any]:
    return copy.deepcopy(_json(sim, f"/api/v1/namespaces/ml-train/pods/{name}"))


def test_a_watch_from_a_lists_revision_streams_the_changes_after_it() -> None:
    with serve(GPU_CLUSTER) as sim:
        listed = _json(sim, "/api/v1/namespaces/ml-train/pods")["metadata"]["resourceVersion"]
        changed = sim.store.put(_pod(sim, SWEEP) | {"status": {"phase": "Running", "message": "changed"}})
        gone = sim.store.delete("Pod", "ml-train", "notebook-alice")
        events = _events(sim, "/api/v1/namespaces/ml-train/pods", resourceVersion=listed, timeoutSeconds=1)
    assert _seen(events) == [("MODIFIED", SWEEP), ("DELETED", "notebook-alice")]
    assert [e["object"]["metadata"]["resourceVersion"] for e in events] == [
        changed["metadata"]["resourceVersion"],
        gone["metadata"]["resourceVersion"],
    ]
    assert int(gone["metadata"]["resourceVersion"]) == int(listed) + 2


def _cordoned_while_watching() -> list[Any]:
    """The events of a watch of nodes during which the A100 node is cordoned."""
    with serve(GPU_CLUSTER) as sim:
        listed = _json(sim, "/api/v1/nodes")["metadata"]["resourceVersion"]
        node = _json(sim, f"/api/v1/nodes/{A100}")
        node["spec"]["unschedulable"] = True
        return _events(
            sim, "/api/v1/nodes", lambda: sim.store.put(node), resourceVersion=listed, timeoutSeconds=1
        )


def test_a_change_made_while_watching_is_pushed() -> None:
    events = _cordoned_while_watching()
    assert _seen(events) == [("MODIFIED", A100)]
    assert events[0]["object"]["spec"]["unschedulable"] is True


def test_a_watch_on_a_descriptor_past_1023_is_served() -> None:
    """A test serving many clusters at once holds more than 1,024 descriptors: a watch accepted past
    them streams as any other (`select.select` refuses such a descriptor; the simulator polls)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1400
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the process may open {hard} files, fewer than {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    fillers = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        events = _cordoned_while_watching()
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert _seen(events) == [("MODIFIED", A100)]


def test_under_a_field_selector_leaving_is_deleted_and_entering_is_added() -> None:
    """The cache's own selection: a pod that finishes leaves it, a pod that is bound enters it."""
    with serve(GPU_CLUSTER) as sim:
        bound = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
        listed = _json(sim, "/api/v1/pods", fieldSelector=bound)["metadata"]["resourceVersion"]
        sim.store.put(_pod(sim, SWEEP) | {"status": {"phase": "Succeeded"}})
        placed = _pod(sim, "notebook-carol")
        placed["spec"]["nodeName"] = A100
        sim.store.put(placed)
        sim.store.put(_pod(sim, "notebook-bob"))  # pending before and after: not in the selection
        events = _events(sim, "/api/v1/pods", fieldSelector=bound, resourceVersion=listed, timeoutSeconds=1)
    assert _seen(events) == [("DELETED", SWEEP), ("ADDED", "notebook-carol")]
    assert events[0]["object"]["status"]["phase"] == "Succeeded"


def test_under_a_label_selector_too() -> None:
    with serve(GPU_CLUSTER) as sim:
        query = {"labelSelector": "cloud.google.com/gke-nodepool=a100-pool"}
        listed = _json(sim, "/api/v1/nodes", **query)["metadata"]["resourceVersion"]
        node = _json(sim, f"/api/v1/nodes/{A100}")
        node["metadata"]["labels"]["cloud.google.com/gke-nodepool"] = "retired"
        sim.store.put(node)
        events = _events(sim, "/api/v1/nodes", resourceVersion=listed, timeoutSeconds=1, **query)
    assert _seen(events) == [("DELETED", A100)]


def test_without_a_revision_a_watch_starts_with_every_object_added() -> None:
    with serve(GPU_CLUSTER) as sim:
        events = _events(sim, "/api/v1/nodes", timeoutSeconds=1)
        names = [n["metadata"]["name"] for n in _json(sim, "/api/v1/nodes")["items"]]
    assert _seen(events) == [("ADDED", n) for n in names]


def test_bookmarks_carry_the_current_revision() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.bookmark_seconds = 0.2
        listed = _json(sim, "/api/v1/nodes")["metadata"]["resourceVersion"]
        sim.store.delete("Pod", "ml-train", "notebook-alice")  # a change the node watch does not show
        events = _events(
            sim, "/api/v1/nodes", resourceVersion=listed, timeoutSeconds=1, allowWatchBookmarks="true"
        )
        now = sim.store.revision
    assert events
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert events[-1]["object"] == {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(now)},
    }


def test_a_revision_older_than_the_history_is_410_expired() -> None:
    with serve(GPU_CLUSTER) as sim:
        listed = _json(sim, "/api/v1/pods")["metadata"]["resourceVersion"]
        sim.store.delete("Pod", "ml-train", "notebook-alice")
        sim.store.compact()
        events = _events(sim, "/api/v1/pods", resourceVersion=listed, timeoutSeconds=5)
    (error,) = events
    assert error["type"] == "ERROR"
    assert (error["object"]["code"], error["object"]["reason"]) == (410, "Expired")
    assert error["object"]["message"].startswith(f"too old resource version: {listed} (")


def test_every_page_of_a_list_is_of_the_revision_of_the_first() -> None:
    with serve(GPU_CLUSTER) as sim:
        first = _json(sim, "/api/v1/pods", limit=6)
        sim.store.delete("Pod", "ml-train", "notebook-alice")
        second = _json(sim, "/api/v1/pods", limit=6, **{"continue": first["metadata"]["continue"]})
        fresh = _json(sim, "/api/v1/pods", limit=6)
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert int(fresh["metadata"]["resourceVersion"]) == int(first["metadata"]["resourceVersion"]) + 1
    assert "notebook-alice" in {p["metadata"]["name"] for p in first["items"] + second["items"]}


def test_a_dropped_watch_is_cut_without_the_end_of_its_body() -> None:
    with serve(GPU_CLUSTER) as sim:
        listed = _json(sim, "/api/v1/nodes")["metadata"]["resourceVersion"]
        with _get(sim, "/api/v1/nodes", watch="true", resourceVersion=listed) as answer:
            assert sim.drop_watches("nodes") == 1
            with pytest.raises(http.client.IncompleteRead):
                answer.read()
