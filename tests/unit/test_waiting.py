"""How long a pod has waited (`pending_since`, the first screen's "pending for", the sentinel's
threshold): one rule, `diagnosis.relations.waiting_since`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from diagnosis.relations import waiting_since
from diagnosis.triage.kueue import admitted_at

CREATED = "2026-11-29T08:00:00Z"


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ml", "uid": "u1", "creationTimestamp": CREATED},
        "spec": {"containers": [{"name": "main"}], **spec},
        "status": {
            "phase": "Pending",
            "conditions": [
                # written at the scheduler's last attempt, seconds before the reading
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "lastTransitionTime": "2026-11-29T08:59:58Z",
                },
            ],
        },
    }


def test_a_pod_never_scheduled_waits_since_it_was_created() -> None:
    assert waiting_since(_pod()) == datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


def test_a_gated_pod_waits_since_it_was_created() -> None:
    gated = _pod(schedulingGates=[{"name": "kueue.x-k8s.io/admission"}])
    assert waiting_since(gated, datetime(2026, 11, 29, 8, 30, tzinfo=UTC)) == datetime(
        2026, 11, 29, 8, 0, tzinfo=UTC
    )


def test_a_pod_whose_gates_were_lifted_waits_since_then() -> None:
    workload = {
        "metadata": {
            "name": "pod-p-1a2b3",
            "namespace": "ml",
            "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "u1"}],
        },
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2026-11-29T08:40:00Z"},
                {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-11-29T08:41:00Z"},
            ]
        },
    }
    pod = _pod()
    lifted = admitted_at(pod, [workload])
    assert lifted == datetime(2026, 11, 29, 8, 41, tzinfo=UTC)
    assert waiting_since(pod, lifted) == lifted


def test_a_pod_that_runs_or_ended_does_not_wait() -> None:
    running = _pod(nodeName="n1")
    running["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert waiting_since(running) is None
    running["status"]["phase"] = "Succeeded"
    assert waiting_since(running) is None
