"""What kubewhy says instead of a bare "not found": close names, and what the API refused to create."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.missing import creation_rejections, similar_names

PODS = [
    "trainer-workers-0-0-b8mzq",
    "trainer-workers-0-1-x7k2p",
    "trainer-workers-1-0-q9zfw",
    "finetune-llama-0",
    "notebook-gpu",
    "web-7d9f8b6c5d-2xkqp",
]


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        # The pod's name without the suffix the Job controller generated, then look-alikes.
        (
            "trainer-workers-0-0",
            ("trainer-workers-0-0-b8mzq", "trainer-workers-1-0-q9zfw", "trainer-workers-0-1-x7k2p"),
        ),
        # A stale name from an earlier attempt: the same stem with a new suffix first.
        (
            "trainer-workers-0-1-zz2zz",
            ("trainer-workers-0-1-x7k2p", "trainer-workers-0-0-b8mzq", "trainer-workers-1-0-q9zfw"),
        ),
        # A prefix at a dash: the family, closest length first.
        (
            "trainer-workers-0",
            ("trainer-workers-0-0-b8mzq", "trainer-workers-0-1-x7k2p", "trainer-workers-1-0-q9zfw"),
        ),
        ("web", ("web-7d9f8b6c5d-2xkqp",)),
        # Typos.
        ("finetune-lama-0", ("finetune-llama-0",)),
        ("notebok-gpu", ("notebook-gpu",)),
        # Nothing alike.
        ("postgres-0", ()),
    ],
)
def test_similar_names(asked: str, expected: tuple[str, ...]) -> None:
    assert similar_names(asked, PODS) == expected


def test_similar_names_limit_and_order_do_not_depend_on_the_listing() -> None:
    assert similar_names("trainer-workers-0", PODS, limit=1) == ("trainer-workers-0-0-b8mzq",)
    assert similar_names("trainer-workers-0", reversed(PODS)) == similar_names("trainer-workers-0", PODS)


def test_similar_names_never_offer_the_name_asked() -> None:
    assert similar_names("notebook-gpu", ["notebook-gpu", "notebook-gpu"]) == ()
    assert similar_names("notebook-gpu", []) == ()


def failed_create(
    name: str, namespace: str, kind: str, owner: str, message: str, last: str
) -> dict[str, Any]:
    """A FailedCreate event as the Job/ReplicaSet controller records it (legacy recorder)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-11-29T08:20:07Z"},
        "involvedObject": {"apiVersion": "batch/v1", "kind": kind, "name": owner, "namespace": namespace},
        "reason": "FailedCreate",
        "message": message,
        "source": {"component": "job-controller"},
        "firstTimestamp": "2026-11-29T08:20:07Z",
        "lastTimestamp": last,
        "count": 9,
        "type": "Warning",
    }


QUOTA = (
    'Error creating: pods "batch-infer-{}" is forbidden: exceeded quota: gpu-quota, requested:'
    " requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=11, limited: requests.nvidia.com/gpu=16"
)
RUNTIME_CLASS = (
    'Error creating: pods "dcgm-exporter-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
)
WEBHOOK = (
    'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
)


def test_creation_rejections_newest_first_once_each_naming_the_controller() -> None:
    events = [
        failed_create("a", "ml", "Job", "batch-infer", QUOTA.format("1-q2wzh"), "2026-11-29T08:38:12Z"),
        failed_create("b", "ml", "Job", "batch-infer", QUOTA.format("0-7tq4v"), "2026-11-29T08:43:49Z"),
        failed_create("c", "ml", "DaemonSet", "dcgm-exporter", RUNTIME_CLASS, "2026-11-29T08:10:00Z"),
        failed_create("d", "ml", "Job", "trainer-workers-1", WEBHOOK, "2026-11-29T08:40:00Z"),
    ]
    assert creation_rejections(events, "ml") == (
        f"Job batch-infer: {QUOTA.format('0-7tq4v')}",
        f"Job trainer-workers-1: {WEBHOOK}",
        f"DaemonSet dcgm-exporter: {RUNTIME_CLASS}",
    )


def test_creation_rejections_only_of_the_namespace_and_only_refusals() -> None:
    scheduled = failed_create(
        "e", "ml", "Job", "batch-infer", "Created pod: batch-infer-0-7tq4v", "2026-11-29T08:44:00Z"
    )
    scheduled["reason"] = "SuccessfulCreate"
    scheduled["type"] = "Normal"
    elsewhere = failed_create(
        "f", "ml-staging", "Job", "batch-infer", QUOTA.format("0-abcde"), "2026-11-29T08:44:00Z"
    )
    assert creation_rejections([scheduled, elsewhere], "ml") == ()


def test_creation_rejections_read_the_events_api_and_jobset_refusals() -> None:
    refused_job = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "trainer.187c3f02a9e8d7c6", "namespace": "ml"},
        "eventTime": "2026-11-29T08:41:00.000000Z",
        "reason": "JobCreationFailed",
        "note": 'job "trainer-workers-0" creation failed with error: jobs.batch "trainer-workers-0" is'
        " forbidden: exceeded quota: jobs, requested: count/jobs.batch=1, used: count/jobs.batch=20,"
        " limited: count/jobs.batch=20",
        "regarding": {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "trainer",
            "namespace": "ml",
        },
        "type": "Warning",
    }
    [rejection] = creation_rejections([refused_job], "ml")
    assert rejection.startswith('JobSet trainer: job "trainer-workers-0" creation failed')


def test_creation_rejections_at_most_the_limit() -> None:
    events = [
        failed_create(
            f"e{i}", "ml", "Job", f"job-{i}", f"Error creating: refused {i}", f"2026-11-29T08:0{i}:00Z"
        )
        for i in range(8)
    ]
    assert creation_rejections(events, "ml") == tuple(
        f"Job job-{i}: Error creating: refused {i}" for i in (7, 6, 5, 4, 3)
    )
