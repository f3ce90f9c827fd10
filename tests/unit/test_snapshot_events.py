"""The readers' shared helpers: event accessors over both event APIs, and how objects relate."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import pytest

from diagnosis import events
from diagnosis.objects import meta, parts, spec, status
from diagnosis.relations import holds_node, is_terminal, owned_by

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "trainer-workers-0-0-b8mzq",
        "namespace": "ml",
        "uid": "e3f5a7c9-4b6d-4e8f-a0b2-6d8f0b2d4f46",
    },
}
REF = {
    "apiVersion": "v1",
    "kind": "Pod",
    "name": "trainer-workers-0-0-b8mzq",
    "namespace": "ml",
    "uid": "e3f5a7c9-4b6d-4e8f-a0b2-6d8f0b2d4f46",
}

LEGACY = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {
        "name": "trainer-workers-0-0-b8mzq.187c3f02e9b7c4a1",
        "namespace": "ml",
        "creationTimestamp": "2026-11-29T06:12:39Z",
    },
    "involvedObject": {**REF, "fieldPath": "spec.containers{trainer}"},
    "reason": "BackOff",
    "message": "Back-off restarting failed container trainer in pod trainer-workers-0-0-b8mzq_ml(e3f5a7c9)",
    "source": {"component": "kubelet", "host": "gke-ml-a100-pool-3f1c2b7e-7xkq"},
    "firstTimestamp": "2026-11-29T06:12:39Z",
    "lastTimestamp": "2026-11-29T06:40:02Z",
    "count": 27,
    "type": "Warning",
    "eventTime": None,
    "reportingComponent": "kubelet",
    "reportingInstance": "gke-ml-a100-pool-3f1c2b7e-7xkq",
}
"""A kubelet event from the legacy recorder, as `kubectl get events -o json` serves it."""

SCHEDULER = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {
        "name": "finetune-llama-0.187c4a1e9f2b3d5a",
        "namespace": "ml",
        "creationTimestamp": "2026-11-29T07:58:02Z",
    },
    "eventTime": "2026-11-29T07:58:02.418226Z",
    "series": {"count": 14, "lastObservedTime": "2026-11-29T08:43:05.117442Z"},
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-gke-ml-cluster-4f2a",
    "action": "Scheduling",
    "reason": "FailedScheduling",
    "regarding": {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "finetune-llama-0",
        "namespace": "ml",
        "uid": "a9b1c3d5-6e8f-4a0b-c2d4-8f0b2d4f6b68",
    },
    "note": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
    "type": "Warning",
}
"""A scheduler event from the new recorder, as `kubectl get events.events.k8s.io -o json` serves it."""

LEGACY_VIA_EVENTS_API = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": LEGACY["metadata"],
    "eventTime": None,
    "reason": "BackOff",
    "regarding": LEGACY["involvedObject"],
    "note": LEGACY["message"],
    "type": "Warning",
    "deprecatedCount": 27,
    "deprecatedFirstTimestamp": "2026-11-29T06:12:39Z",
    "deprecatedLastTimestamp": "2026-11-29T06:40:02Z",
    "deprecatedSource": LEGACY["source"],
    "reportingController": "kubelet",
    "reportingInstance": "gke-ml-a100-pool-3f1c2b7e-7xkq",
}


@pytest.mark.parametrize("event", [LEGACY, LEGACY_VIA_EVENTS_API], ids=["v1", "events.k8s.io"])
def test_legacy_event_reads_the_same_through_both_apis(event: dict[str, Any]) -> None:
    assert events.regarding(event)["name"] == "trainer-workers-0-0-b8mzq"
    assert events.message(event).startswith("Back-off restarting failed container trainer")
    assert events.reason(event) == "BackOff"
    assert events.event_type(event) == "Warning"
    assert events.count(event) == 27
    assert events.last_time(event) == datetime(2026, 11, 29, 6, 40, 2, tzinfo=UTC)
    assert events.is_about(event, POD)


def test_new_recorder_event_counts_its_series() -> None:
    assert events.message(SCHEDULER) == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert events.count(SCHEDULER) == 14
    assert events.last_time(SCHEDULER) == datetime(2026, 11, 29, 8, 43, 5, 117442, tzinfo=UTC)
    assert not events.is_about(SCHEDULER, POD)


@pytest.mark.parametrize(
    ("fields", "count", "last"),
    [
        (
            {"eventTime": "2026-11-29T07:58:02.418226Z"},
            1,
            datetime(2026, 11, 29, 7, 58, 2, 418226, tzinfo=UTC),
        ),
        (
            {"count": True, "firstTimestamp": "2026-11-29T07:00:00Z"},
            1,
            datetime(2026, 11, 29, 7, 0, tzinfo=UTC),
        ),
        ({"count": "3", "lastTimestamp": "2026-11-29T07:00:00"}, 1, datetime(2026, 11, 29, 7, 0, tzinfo=UTC)),
        (
            {"count": 0, "lastTimestamp": None, "metadata": {"creationTimestamp": "2026-11-29T06:00:00Z"}},
            1,
            datetime(2026, 11, 29, 6, 0, tzinfo=UTC),
        ),
        ({"series": "3", "lastTimestamp": "not a time"}, 1, None),
        ({}, 1, None),
    ],
)
def test_missing_or_malformed_fields(fields: dict[str, Any], count: int, last: datetime | None) -> None:
    event = {"apiVersion": "v1", "kind": "Event", **fields}
    assert events.count(event) == count
    assert events.last_time(event) == last
    assert events.message(event) == ""
    assert events.regarding(event) == {}
    assert not events.is_about(event, POD)


@pytest.mark.parametrize(
    ("ref", "about"),
    [
        (REF, True),
        ({k: v for k, v in REF.items() if k != "uid"}, True),
        ({k: v for k, v in REF.items() if k != "kind"}, True),
        ({**REF, "uid": "0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a"}, False),
        ({**REF, "kind": "Service"}, False),
        ({**REF, "namespace": "ml-staging"}, False),
        ({**REF, "name": "trainer-workers-0-0"}, False),
    ],
    ids=["same", "no-uid", "no-kind", "earlier-pod", "other-kind", "other-namespace", "other-name"],
)
def test_is_about(ref: dict[str, Any], about: bool) -> None:
    assert events.is_about({**LEGACY, "involvedObject": ref}, POD) is about


def test_newest_first_is_stable_and_puts_undated_last() -> None:
    a = {"reason": "a", "lastTimestamp": "2026-11-29T06:00:00Z"}
    b = {"reason": "b"}
    c = {"reason": "c", "eventTime": "2026-11-29T08:00:00.000000Z"}
    d = {"reason": "d", "lastTimestamp": "2026-11-29T06:00:00+00:00"}
    e = {"reason": "e", "lastTimestamp": "2026-11-29T05:00:00"}
    assert [x["reason"] for x in events.newest_first([a, b, c, d, e])] == ["c", "a", "d", "e", "b"]


@pytest.mark.parametrize(
    ("pod_status", "node", "terminal", "holds"),
    [
        ({"phase": "Running"}, "n1", False, True),
        ({"phase": "Pending"}, "n1", False, True),
        ({"phase": "Unknown"}, "n1", False, True),
        ({"phase": "Succeeded"}, "n1", True, False),
        ({"phase": "Failed"}, "n1", True, False),
        ({"phase": "Pending"}, None, False, False),
        ({}, "", False, False),
    ],
)
def test_what_holds_a_node(pod_status: dict[str, Any], node: str | None, terminal: bool, holds: bool) -> None:
    pod = {**POD, "spec": {"nodeName": node} if node is not None else {}, "status": pod_status}
    assert is_terminal(pod) is terminal
    assert holds_node(pod) is holds


@pytest.mark.parametrize(
    "pod",
    [
        {**POD, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}},
        {**POD, "spec": {"nodeName": "n1"}},  # a compact Running pod: no status
        {**POD, "spec": {"nodeName": "n1"}, "status": None},
        {**POD, "spec": {"nodeName": "n1"}, "status": ["Running"]},
        {**POD, "spec": "n1", "status": {"phase": "Running"}},
        {"metadata": None, "spec": {"nodeName": "n1"}},
        MappingProxyType({**POD, "spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}}),
        ["not", "a", "pod"],
    ],
)
def test_parts_reads_each_part_as_its_own_accessor_does(pod: object) -> None:
    """`parts` is `meta`, `spec` and `status` in one call, a malformed part read as empty."""
    assert parts(pod) == (meta(pod), spec(pod), status(pod))
    assert all(isinstance(part, Mapping) for part in parts(pod))


def test_a_terminating_pod_still_holds_its_node() -> None:
    pod = {
        **POD,
        "metadata": {**POD["metadata"], "deletionTimestamp": "2026-11-29T08:44:00Z"},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"},
    }
    assert holds_node(pod)


JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "trainer", "namespace": "ml", "uid": "5d1e7a2c-9b3f-4c6d-8e1a-2f4b6c8d0e13"},
}


@pytest.mark.parametrize(
    ("refs", "owned"),
    [
        (
            [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "name": "trainer",
                    "uid": "5d1e7a2c-9b3f-4c6d-8e1a-2f4b6c8d0e13",
                    "controller": True,
                }
            ],
            True,
        ),
        ([{"kind": "JobSet", "name": "trainer"}], True),
        ([{"kind": "JobSet", "name": "trainer", "uid": "9e8d7c6b-5a4f-3e2d-1c0b-a9f8e7d6c5b4"}], False),
        ([{"kind": "Job", "name": "trainer"}], False),
        ([{"kind": "JobSet", "name": "other"}, {"kind": "JobSet", "name": "trainer"}], True),
        ("not a list", False),
        ([None, 3], False),
        ([], False),
    ],
)
def test_owned_by(refs: object, owned: bool) -> None:
    workload = {"kind": "Workload", "metadata": {"name": "jobset-trainer-3c5e7", "ownerReferences": refs}}
    assert owned_by(workload, JOBSET) is owned
