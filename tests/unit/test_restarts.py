"""Restart loops: when a JobSet counts as restarting, the order in which causes are weighed, the
repeat-offender node, the coordinator, and the GKE workflow's queries. Each test changes one field of a
corpus snapshot and shows the answer follow it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from diagnosis.jobset import gke, restarts
from diagnosis.jobset.explain import explain
from diagnosis.jobset.family import Family
from diagnosis.model import JobSetVerdict, RestartCause
from diagnosis.objects import kind, name
from tests.unit.test_jobset_corpus import CASES, view_of

Json = dict[str, Any]
"""An object as decoded from the snapshot file, for tests to change."""
Edit = Callable[[list[Json]], None]


def family(stem: str, edit: Edit | None = None) -> Family:
    (case,) = [c for c in CASES if c.snapshot.stem == stem]
    items = json.loads(case.snapshot.read_text())["items"]
    if edit is not None:
        edit(items)
    return Family.of(view_of(tuple(items), case.namespace, case.name))


def _of(items: list[Json], kind_: str) -> list[Json]:
    return [o for o in items if kind(o) == kind_]


def test_no_restarts_no_loop() -> None:
    assert restarts.loop(family("running-steady")) is None


def test_a_finished_restart_is_not_a_loop() -> None:
    """RestartingJobSet=False (JobsReady), no restart event, no earlier attempt left: running."""
    assert restarts.loop(family("running-after-restarts")) is None


def test_restart_events_alone_make_a_loop_on_old_versions() -> None:
    loop = restarts.loop(family("restarting-app-failure"))
    assert loop is not None
    assert any("No RestartingJobSet condition" in s and "v0.12.0" in s for s in loop.signs)


def test_the_condition_makes_a_loop_and_dates_the_last_restart() -> None:
    loop = restarts.loop(family("restarting-unknown"))
    assert loop is not None
    assert loop.last_restart == datetime(2026, 11, 29, 8, 58, 30, tzinfo=UTC)
    assert not any("No RestartingJobSet condition" in s for s in loop.signs)


def test_node_shutdown_outweighs_the_exit_codes_it_causes() -> None:
    """The preempted pods' containers exited 143; that is the node's doing, not the program's."""
    assert restarts.cause(family("jobset-preemption-restarts")).cause is RestartCause.NODE_PREEMPTION

    def forget_how_they_ended(items: list[Json]) -> None:
        for pod in _of(items, "Pod"):
            pod["status"].pop("reason", None)
            pod["status"]["conditions"] = [
                c for c in pod["status"].get("conditions", []) if c["type"] != "DisruptionTarget"
            ]

    found = restarts.cause(family("jobset-preemption-restarts", forget_how_they_ended))
    assert found.cause is RestartCause.APP_FAILURE
    assert "exited 143" in found.evidence[0]


def test_spot_nodes_alone_point_at_preemption() -> None:
    assert restarts.cause(family("restarting-unknown")).cause is RestartCause.UNKNOWN

    def on_spot(items: list[Json]) -> None:
        for node in _of(items, "Node"):
            node["metadata"]["labels"]["eks.amazonaws.com/capacityType"] = "SPOT"

    found = restarts.cause(family("restarting-unknown", on_spot))
    assert found.cause is RestartCause.NODE_PREEMPTION
    assert "eks.amazonaws.com/capacityType=SPOT" in found.evidence[0]


def test_a_failed_node_is_named_and_isolating_it_is_marked_destructive() -> None:
    found = restarts.cause(family("restarting-node-failure"))
    assert found.cause is RestartCause.NODE_FAILURE
    (bad,) = found.nodes
    assert found.repeat_nodes == ()
    answer = explain(family("restarting-node-failure").view)
    changing = [c for c in answer.next_commands if c.changes]
    assert [c.text for c in changing] == [
        f"kubectl cordon {bad}",
        f"kubectl drain {bad} --ignore-daemonsets --delete-emptydir-data",
    ]
    assert all(c.purpose.startswith("DESTRUCTIVE (only once its conditions show") for c in changing)


def test_the_same_host_failing_in_two_attempts_is_called_out() -> None:
    def failed_before(items: list[Json]) -> None:
        stuck = next(o for o in items if kind(o) == "Pod" and o["metadata"].get("deletionTimestamp"))
        earlier = copy.deepcopy(stuck)
        earlier["metadata"]["name"] += "-old"
        earlier["metadata"]["uid"] = "5e0c2d4b-0000-4000-8000-000000000001"
        earlier["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] = "1"
        items.append(earlier)

    found = restarts.cause(family("restarting-node-failure", failed_before))
    (bad,) = found.repeat_nodes
    assert any(
        e.startswith("Host h-") and "attempts 1, 2" in e and "again and again" in e for e in found.evidence
    )
    answer = explain(family("restarting-node-failure", failed_before).view)
    assert [c.purpose.split(":")[0] for c in answer.next_commands if c.changes] == [
        "DESTRUCTIVE (it fails again and again)"
    ] * 2
    assert all(bad in c.text for c in answer.next_commands if c.changes)


def test_the_coordinator_is_found_from_the_spec() -> None:
    lead = restarts.coordinator(family("restarting-app-failure"))
    assert lead is not None
    assert name(lead).startswith("bert-large-mlm-driver-0-0-")

    def no_coordinator(items: list[Json]) -> None:
        for jobset in _of(items, "JobSet"):
            del jobset["spec"]["coordinator"]

    assert restarts.coordinator(family("restarting-app-failure", no_coordinator)) is None
    found = restarts.cause(family("restarting-app-failure", no_coordinator))
    assert found.cause is RestartCause.APP_FAILURE
    assert not any("Coordinator" in e for e in found.evidence)


def test_preempted_pods_point_at_pod_preemption() -> None:
    found = restarts.cause(family("restarting-pod-preemption"))
    assert found.cause is RestartCause.POD_PREEMPTION
    assert "PreemptionByScheduler" in found.evidence[0]


def test_gke_is_recognised_by_its_node_pool_label() -> None:
    assert gke.is_gke(family("jobset-preemption-restarts").view.nodes)
    assert not gke.is_gke(family("restarting-pod-preemption").view.nodes)


def test_the_cluster_name_comes_from_gke_node_names_or_stays_a_placeholder() -> None:
    node = {
        "metadata": {
            "name": "gke-ml-prod-a3-spot-pool-0cbd6165-7wnb",
            "labels": {gke.NODEPOOL_LABEL: "a3-spot-pool"},
        }
    }
    assert gke.cluster_name([node]) == ("ml-prod", "gke-ml-prod-a3-spot-pool-0cbd6165-7wnb")
    renamed = copy.deepcopy(node)
    renamed["metadata"]["name"] = "gke-ml-prod-a3-spot-p-0cbd6165-7wnb"  # GKE shortened the pool name
    assert gke.cluster_name([renamed]) is None
    # Without the cluster's name every query would keep a placeholder: none is given.
    assert gke.restart_snippets(None, "llm", "train", "train-w-0-0-", None) == ()
    # Without the last restart's time, only the queries that need no window are.
    timeless = gke.restart_snippets("ml-prod", "llm", "train", "train-w-0-0-", None)
    assert [s.language for s in timeless] == ["promql", "promql", "promql", "mql", "promql", "mql"]


def test_the_window_is_thirty_minutes_either_side_of_the_last_restart() -> None:
    when = datetime(2026, 11, 29, 8, 54, tzinfo=UTC)
    (nodepool_logs,) = [
        s
        for s in gke.restart_snippets("ml-prod", "llm", "train", "train-w-0-0-", when)
        if s.title.startswith("Step 2") and s.language == "logging"
    ]
    assert nodepool_logs.text == (
        'resource.type="gke_nodepool" AND resource.labels.cluster_name="ml-prod" AND '
        'timestamp >= "2026-11-29T08:24:00Z" AND timestamp <= "2026-11-29T09:24:00Z"'
    )


def test_hostile_names_never_reach_the_queries() -> None:
    when = datetime(2026, 11, 29, 8, 54, tzinfo=UTC)
    assert gke.restart_snippets('x" OR "1"="1', "ns", "js", "js-w-0-0-", when) == ()
    texts = "\n".join(s.text for s in gke.restart_snippets("ml-prod", "ns", 'js"}', 'js"}-w-0-0-', when))
    assert 'js"}' not in texts
    assert texts  # the queries that name no JobSet are kept


def test_a_restarting_jobset_is_restarting_before_its_pods_are_pending() -> None:
    """The new attempt's pods wait for nodes: symptoms of the loop, not a verdict of their own."""
    assert explain(family("restarting-pod-preemption").view).verdict == JobSetVerdict.RESTARTING
