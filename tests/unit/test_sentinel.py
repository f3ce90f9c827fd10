"""The sentinel's pure parts: what a pod's workload is, how waiting pods group into incidents, how
restarts are counted in a window, what a channel's messages say about its incidents, and incident
messages that Slack accepts and that say only what they should."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from bot.checks import Check
from bot.incident_message import incident_message
from bot.incidents import HOUR, SUMMARY_CHARS, ChannelState, Incident, IncidentMeta, held_metadata
from bot.localslack import BOT_ID, block_problem
from bot.settings import SentinelConfig
from bot.stuck import Cause, RestartCounter, Stuck, waiting_workloads
from diagnosis.model import Diagnosis, JobSetVerdict, PodVerdict
from diagnosis.objects import Ref
from diagnosis.relations import workload
from handlers.reply import Reply
from handlers.requests import Target

T0 = 1_796_000_000.0
"""An epoch second in 2026."""


def pod(
    name: str,
    created: str = "2026-12-01T10:00:00Z",
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": labels or {},
            "ownerReferences": owners or [],
            "creationTimestamp": created,
            **metadata,
        },
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }


def owner(kind: str, name: str, controller: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": f"uid-{name}",
        "controller": controller,
    }


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        (
            pod("a", labels={"jobset.sigs.k8s.io/jobset-name": "llm"}, owners=[owner("Job", "llm-w-0")]),
            ("JobSet", "llm"),
        ),
        (
            pod("web-5d8f-x", labels={"pod-template-hash": "5d8f"}, owners=[owner("ReplicaSet", "web-5d8f")]),
            ("Deployment", "web"),
        ),
        (pod("rs-x", owners=[owner("ReplicaSet", "rs")]), ("ReplicaSet", "rs")),
        (pod("train-abc", owners=[owner("Job", "train")]), ("Job", "train")),
        (pod("db-0", owners=[owner("StatefulSet", "db")]), ("StatefulSet", "db")),
        (pod("x", owners=[owner("Foo", "not-it", controller=False), owner("Job", "it")]), ("Job", "it")),
        (pod("lonely"), ("Pod", "lonely")),
    ],
    ids=["jobset", "deployment", "replicaset-without-hash", "job", "statefulset", "controller-ref", "bare"],
)
def test_the_workload_of_a_pod(found: dict[str, Any], expected: tuple[str, str]) -> None:
    assert workload(found) == expected


def test_waiting_pods_group_into_one_incident_per_workload() -> None:
    pods = [
        pod(
            f"w{w}-7d9f-{i:03d}",
            created=f"2026-12-01T10:{i % 60:02d}:00Z",
            labels={"pod-template-hash": "7d9f"},
            owners=[owner("ReplicaSet", f"w{w}-7d9f")],
        )
        for w in range(5)
        for i in range(40)
    ]
    pods.append(pod("gone", deletionTimestamp="2026-12-01T11:00:00Z"))
    groups = waiting_workloads("prod", pods)
    assert sorted(s.name for s in groups.values()) == [f"w{w}" for w in range(5)]
    first = groups["prod", "ml", "Deployment", "w0", "pending"]
    assert first.pods == 40
    assert first.target == Target(kind="pod", namespace="ml", name="w0-7d9f-000", cluster="prod")
    assert first.since == groups["prod", "ml", "Deployment", "w4", "pending"].since  # the oldest pod's time


def test_a_jobsets_waiting_pods_are_diagnosed_through_the_jobset() -> None:
    pods = [pod(f"llm-w-0-{i}", labels={"jobset.sigs.k8s.io/jobset-name": "llm"}) for i in range(3)]
    (stuck,) = waiting_workloads("prod", pods).values()
    assert (stuck.kind, stuck.pods, stuck.target.kind, stuck.target.name) == ("JobSet", 3, "jobset", "llm")


def test_a_leaderworkersets_waiting_pods_are_one_workload_diagnosed_through_the_lws() -> None:
    """Every group's pods are one LeaderWorkerSet's: one incident, answered by the LWS explainer."""
    lws = {"leaderworkerset.sigs.k8s.io/name": "llama"}
    pods = [
        pod(f"llama-{g}-{w}", labels={**lws, "leaderworkerset.sigs.k8s.io/group-index": str(g)})
        for g in range(2)
        for w in (1, 2)
    ]
    (stuck,) = waiting_workloads("prod", pods).values()
    assert (stuck.kind, stuck.pods, stuck.target.kind, stuck.target.name) == (
        "LeaderWorkerSet",
        4,
        "leaderworkerset",
        "llama",
    )


def test_the_pod_scheduled_condition_dates_the_wait() -> None:
    later = pod("late", created="2026-12-01T10:00:00Z")
    later["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-12-01T10:05:00Z"}
    ]
    (stuck,) = waiting_workloads("prod", [later]).values()
    assert stuck.since == datetime(2026, 12, 1, 10, 5, tzinfo=UTC).timestamp()


def test_restarts_are_counted_from_what_this_replica_saw_within_the_window() -> None:
    counter = RestartCounter()
    counter.observe("prod", {("llm", "a"): 4, ("llm", "b"): 0}, T0)
    assert counter.loops("prod", 600, T0) == {}  # a first sight is a baseline, not a restart
    counter.observe("prod", {("llm", "a"): 6, ("llm", "b"): 0}, T0 + 60)
    counter.observe("prod", {("llm", "a"): 7, ("llm", "b"): 0}, T0 + 120)
    (loop,) = counter.loops("prod", 600, T0 + 120).values()
    assert (loop.name, loop.restarts, loop.since, loop.cause) == ("a", 3, T0 + 60, "restarts")
    assert counter.loops("other", 600, T0 + 120) == {}
    assert counter.loops("prod", 600, T0 + 800) == {}  # both restarts are older than the window
    counter.forget_before(T0 + 800)
    assert counter.loops("prod", 10**6, T0 + 800) == {}


def incident(**changes: Any) -> IncidentMeta:
    fields: dict[str, Any] = {
        "cluster": "prod",
        "namespace": "ml",
        "kind": "Deployment",
        "name": "trainer",
        "cause": "pending",
        "verdict": "exhausted",
        "summary": "gpu-0 has 0 nvidia.com/gpu free of 8; the pod asks 8",
        "pods": 12,
        "since": T0,
    }
    return IncidentMeta(**(fields | changes))


def test_an_open_incident_says_how_many_pods_wait_the_first_fix_and_offers_silence() -> None:
    message = incident_message(incident(), T0 + 720)
    assert block_problem(list(message.blocks)) is None
    shown = str(message.blocks)
    assert "exhausted: Deployment ml/trainer" in shown
    assert "*12 pods* waiting for a node for 12 min." in shown
    assert "gpu-0 has 0 nvidia.com/gpu free of 8; the pod asks 8" in shown
    assert "First fix" not in shown  # the diagnosis offered none
    with_fix = str(incident_message(incident(fix="free a GPU on gpu-0"), T0).blocks)
    assert "*First fix:* free a GPU on gpu-0" in with_fix
    assert "kubewhy_silence" in shown
    assert message.text == "exhausted: Deployment ml/trainer"


def test_people_and_cluster_text_cannot_become_markup_and_long_text_fits() -> None:
    message = incident_message(incident(summary="<!channel> " + "x" * (SUMMARY_CHARS - 11)), T0)
    assert block_problem(list(message.blocks)) is None
    assert "<!channel>" not in str(message.blocks)
    assert "&lt;!channel&gt;" in str(message.blocks)


def test_a_silenced_incident_names_who_silenced_it_until_when_and_drops_the_menu() -> None:
    silenced = incident(silenced_until=T0 + HOUR, silence_scope="namespace", silenced_by="U0ONCALL")
    shown = str(incident_message(silenced, T0).blocks)
    assert "Namespace silenced by <@U0ONCALL> until" in shown
    assert "kubewhy_silence" not in shown
    assert "kubewhy_silence" in str(incident_message(silenced, T0 + HOUR + 1).blocks)  # it has expired


def test_a_resolved_incident_says_so_in_place_with_the_time_it_took() -> None:
    shown = str(incident_message(incident(resolved=T0 + 840), T0 + 900).blocks)
    assert "resolved: Deployment ml/trainer" in shown
    assert "resolved 14 min after it began (it was *exhausted*)" in shown
    assert "kubewhy_silence" not in shown


def test_silences_cover_their_workload_or_namespace_until_they_expire() -> None:
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    same = Stuck("prod", "ml", "Deployment", "trainer", "pending", T0, target)
    sibling = Stuck("prod", "ml", "Job", "eval", "pending", T0, target)
    elsewhere = Stuck("prod", "serving", "Job", "eval", "pending", T0, target)
    by_workload = incident(silenced_until=T0 + 60, silence_scope="workload")
    by_namespace = incident(silenced_until=T0 + 60, silence_scope="namespace")
    assert by_workload.silences(same, T0)
    assert not by_workload.silences(sibling, T0)
    assert by_namespace.silences(sibling, T0)
    assert not by_namespace.silences(elsewhere, T0)
    assert not by_namespace.silences(sibling, T0 + 61)


def test_only_the_bots_own_well_formed_incident_messages_are_trusted() -> None:
    good = {"bot_id": BOT_ID, "metadata": incident().metadata()}
    assert IncidentMeta.from_message(good, BOT_ID) == incident()
    assert IncidentMeta.from_message(good | {"bot_id": "B0SOMEONEELSE"}, BOT_ID) is None
    forged = {
        "bot_id": BOT_ID,
        "metadata": {"event_type": "kubewhy_incident", "event_payload": {"name": "../x"}},
    }
    assert IncidentMeta.from_message(forged, BOT_ID) is None


def _check(verdict: PodVerdict | JobSetVerdict, pod_verdict: PodVerdict | None = None) -> Check:
    kind: Literal["pod", "jobset"] = "jobset" if isinstance(verdict, JobSetVerdict) else "pod"
    diagnosis = Diagnosis(verdict, "why", (), (), pod_verdict=pod_verdict)
    target = Target(kind=kind, namespace="ml", name="x", cluster="prod")
    return Check(target, Reply(Ref(kind, "ml", "x"), diagnosis), datetime(2026, 12, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("cause", "check", "ignore", "posted"),
    [
        ("pending", _check(PodVerdict.EXHAUSTED), (), True),
        ("pending", _check(PodVerdict.OK), (), False),  # placed meanwhile
        ("pending", _check(JobSetVerdict.PODS_PENDING, PodVerdict.GATED), ("gated",), False),
        ("restarts", _check(JobSetVerdict.RESTARTING), (), True),
        ("restarts", _check(JobSetVerdict.RUNNING), (), True),  # between two restarts
        ("restarts", _check(JobSetVerdict.FAILED), (), True),  # past maxRestarts
        ("restarts", _check(JobSetVerdict.COMPLETED), (), False),
        ("restarts", _check(JobSetVerdict.RESTARTING), ("restarting",), False),
    ],
)
def test_what_is_worth_posting(cause: Cause, check: Check, ignore: tuple[str, ...], posted: bool) -> None:
    target = Target(kind="pod", namespace="ml", name="x", cluster="prod")
    candidate = Stuck("prod", "ml", "JobSet", "x", cause, T0, target)
    assert candidate.worth_posting(check, SentinelConfig(ignore=ignore)) is posted


def test_a_channel_read_back_keeps_each_incidents_newest_message_its_silences_and_the_summary_line() -> None:
    """Messages come newest first, as conversations.history gives them."""
    silenced = incident(silenced_until=T0 + 60, silence_scope="namespace", silenced_by="U0ONCALL")
    older = incident(verdict="taint")
    other = incident(name="eval", since=T0 - 2 * HOUR)
    found = [
        {"ts": f"{T0 - 10:.6f}", "bot_id": BOT_ID, "metadata": silenced.metadata()},
        {"ts": f"{T0 - 15:.6f}", "bot_id": "B0SOMEONEELSE", "metadata": held_metadata(["forged"])},
        {"ts": f"{T0 - 20:.6f}", "bot_id": BOT_ID, "metadata": held_metadata(["prod/ml/Job/a"])},
        {"ts": f"{T0 - 30:.6f}", "bot_id": BOT_ID, "metadata": older.metadata()},
        {"ts": f"{T0 - 2 * HOUR:.6f}", "bot_id": BOT_ID, "metadata": other.metadata()},
    ]
    state = ChannelState.read(found, BOT_ID, T0)
    assert state.incidents[silenced.key] == Incident(silenced, f"{T0 - 10:.6f}")
    assert state.incidents[other.key].meta == other
    assert state.silences == [silenced]
    assert state.posted == 2  # the two messages of the last hour; `other` is older
    assert (state.held_ts, state.held) == (f"{T0 - 20:.6f}", ["prod/ml/Job/a"])
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    stuck = {
        s.key: s
        for s in (
            Stuck("prod", "ml", "Deployment", "trainer", "pending", T0 - HOUR, target),  # open already
            Stuck("prod", "serving", "Job", "late", "pending", T0 - HOUR, target),
            Stuck("prod", "serving", "Job", "early", "pending", T0 - 2 * HOUR, target),
            Stuck("prod", "serving", "Job", "new", "pending", T0 - 60, target),  # not due yet
            Stuck("prod", "ml", "Job", "quiet", "pending", T0 - HOUR, target),  # its namespace is silenced
        )
    }
    posted = state.to_post(stuck, SentinelConfig(), T0)
    assert [s.name for s in posted] == ["early", "late"]
