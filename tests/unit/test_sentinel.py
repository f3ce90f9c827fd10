"""The sentinel's pure parts: what a pod's workload is, how waiting pods group into incidents, how
restarts are counted in a window, what a channel's messages say about its incidents, and incident
messages that Slack accepts and that say only what they should."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from bot.blocks import plain_text
from bot.checks import Check
from bot.incident_message import incident_message
from bot.incidents import (
    HOUR,
    SUMMARY_CHARS,
    Blocked,
    ChannelState,
    Incident,
    IncidentMeta,
    Member,
    assign,
    held_metadata,
)
from bot.localslack import BOT_ID, block_problem
from bot.settings import MentionConfig, SentinelConfig
from bot.stuck import Cause, RestartCounter, Stuck, blocked_by, node_on_its_way, waiting_workloads
from diagnosis.model import (
    Autoscaling,
    Diagnosis,
    Fix,
    Holding,
    JobSetVerdict,
    NodeComing,
    PodVerdict,
    TrainJobVerdict,
)
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


def test_a_trainjobs_pods_are_one_workload_named_after_the_trainjob_not_its_jobset() -> None:
    """Its pods name the JobSet (named as the TrainJob); its answer is about the TrainJob: the incident
    names the TrainJob, keeps one key across sweeps, and its re-check asks `/jobset why` again."""
    pods = [
        pod(f"llama-sft-node-0-{i}", labels={"jobset.sigs.k8s.io/jobset-name": "llama-sft"}) for i in range(2)
    ]
    (stuck,) = waiting_workloads("prod", pods).values()
    diagnosis = Diagnosis(TrainJobVerdict.GANG_UNSATISFIABLE, "why", (), ())
    answered = Check(
        stuck.target, Reply(Ref("trainjob", "ml", "llama-sft"), diagnosis), datetime(2026, 12, 1, tzinfo=UTC)
    )
    named = stuck.named_by(answered)
    assert (named.kind, named.key) == ("TrainJob", stuck.key)
    listed = incident(verdict="gang-unsatisfiable", workloads=(Member.of(named),))
    assert listed.what == "TrainJob ml/llama-sft"
    assert listed.member_keys == {stuck.key}
    assert listed.workloads[0].checked("prod") == Target(
        kind="jobset", namespace="ml", name="llama-sft", cluster="prod"
    )
    assert stuck.named_by(_check(JobSetVerdict.PODS_PENDING)).kind == "JobSet"  # a JobSet's own answer


def test_an_lws_incident_is_re_checked_by_the_lws_explainer() -> None:
    lws = member("llama", kind="LeaderWorkerSet", target="llama")
    assert lws.checked("prod").kind == "leaderworkerset"
    assert member().checked("prod").kind == "pod"


def test_a_pod_never_scheduled_has_waited_since_it_was_created() -> None:
    """Not since the PodScheduled condition's lastTransitionTime, which the scheduler may write at any
    attempt (the same rule as the answers' `pending_since`, `diagnosis.relations.waiting_since`)."""
    later = pod("late", created="2026-12-01T10:00:00Z")
    later["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-12-01T10:05:00Z"}
    ]
    (stuck,) = waiting_workloads("prod", [later]).values()
    assert stuck.since == datetime(2026, 12, 1, 10, 0, tzinfo=UTC).timestamp()


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


CAUSE = "0123456789abcdef"


def member(name: str = "trainer", **changes: Any) -> Member:
    fields: dict[str, Any] = {
        "namespace": "ml",
        "kind": "Deployment",
        "name": name,
        "target": f"{name}-7d9f-000",
        "pods": 12,
        "since": T0,
    }
    return Member(**(fields | changes))


def incident(**changes: Any) -> IncidentMeta:
    fields: dict[str, Any] = {
        "cluster": "prod",
        "cause": "pending",
        "blocked_by": CAUSE,
        "verdict": "exhausted",
        "summary": "gpu-0 has 0 nvidia.com/gpu free of 8 (8 held by ml/big); the pod asks 8",
        "workloads": (member(),),
        "pods": 12,
        "since": T0,
    }
    return IncidentMeta(**(fields | changes))


def test_an_open_incident_says_how_many_pods_wait_the_first_fix_and_offers_its_actions() -> None:
    message = incident_message(incident(), T0 + 720)
    assert block_problem(list(message.blocks)) is None
    shown = str(message.blocks)
    assert "exhausted: Deployment ml/trainer" in shown
    assert "*12 pods* waiting for a node for 12 min." in shown
    assert "gpu-0 has 0 nvidia.com/gpu free of 8 (8 held by ml/big); the pod asks 8" in shown
    assert "First fix" not in shown  # the diagnosis offered none
    with_fix = str(incident_message(incident(fix="free a GPU on gpu-0"), T0).blocks)
    assert "*First fix:* free a GPU on gpu-0" in with_fix
    assert all(
        action in shown for action in ("kubewhy_incident_recheck", "kubewhy_incident_ack", "kubewhy_silence")
    )
    assert message.text == "exhausted: Deployment ml/trainer"


def test_an_incident_of_several_workloads_lists_them_and_mentions_their_groups() -> None:
    workloads = tuple(member(f"w{i}", pods=2) for i in range(12))
    grouped = incident(workloads=workloads, more=3, pods=30, groups=("S0INFRA", "S0SERVE"))
    message = incident_message(grouped, T0 + 60)
    assert block_problem(list(message.blocks)) is None
    shown = plain_text(list(message.blocks))
    assert "exhausted: Deployment ml/w0 and 14 more workloads" in shown
    assert "30 pods of 15 workloads waiting for a node for 1 min." in shown
    assert "• Deployment ml/w9 · 2 pods" in shown
    assert "w10" not in shown
    assert "• and 5 more" in shown
    assert "cc <!subteam^S0INFRA> <!subteam^S0SERVE>" in shown
    assert message.text.endswith("<!subteam^S0INFRA> <!subteam^S0SERVE>")  # what notifies


def test_an_acknowledged_incident_says_who_and_when_in_place_and_drops_the_button() -> None:
    acked = incident(acked_by="U0ONCALL", acked_at=T0 + 60, checked_by="U0LEAD", checked_at=T0 + 120)
    shown = str(incident_message(acked, T0 + 180).blocks)
    assert "Acknowledged by <@U0ONCALL> at" in shown
    assert "Re-checked by <@U0LEAD> at" in shown
    assert "kubewhy_incident_ack" not in shown
    assert "kubewhy_incident_recheck" in shown


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
    assert "kubewhy_incident" not in shown


def test_silences_cover_their_incidents_workloads_or_namespaces_until_they_expire() -> None:
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    same = Stuck("prod", "ml", "Deployment", "trainer", "pending", T0, target)
    sibling = Stuck("prod", "ml", "Job", "eval", "pending", T0, target)
    elsewhere = Stuck("prod", "serving", "Job", "eval", "pending", T0, target)
    by_incident = incident(silenced_until=T0 + 60, silence_scope="incident")
    by_namespace = incident(silenced_until=T0 + 60, silence_scope="namespace")
    assert by_incident.silences(same, T0)
    assert not by_incident.silences(sibling, T0)
    assert by_namespace.silences(sibling, T0)
    assert not by_namespace.silences(elsewhere, T0)
    assert not by_namespace.silences(sibling, T0 + 61)
    state = ChannelState(silences=[by_incident])
    assert state.silenced_cause(CAUSE)
    assert not state.silenced_cause("fedcba9876543210")


def test_only_the_bots_own_well_formed_incident_messages_are_trusted() -> None:
    good = {"bot_id": BOT_ID, "metadata": incident().metadata()}
    assert IncidentMeta.from_message(good, BOT_ID) == incident()
    assert IncidentMeta.from_message(good | {"bot_id": "B0SOMEONEELSE"}, BOT_ID) is None
    forged = {
        "bot_id": BOT_ID,
        "metadata": {"event_type": "kubewhy_incident", "event_payload": {"name": "../x"}},
    }
    assert IncidentMeta.from_message(forged, BOT_ID) is None


def _check(
    verdict: PodVerdict | JobSetVerdict,
    pod_verdict: PodVerdict | None = None,
    summary: str = "why",
    holders: tuple[Holding, ...] = (),
    fixes: tuple[Fix, ...] = (),
) -> Check:
    kind: Literal["pod", "jobset"] = "jobset" if isinstance(verdict, JobSetVerdict) else "pod"
    diagnosis = Diagnosis(verdict, summary, (), (), pod_verdict=pod_verdict, holders=holders, fixes=fixes)
    target = Target(kind=kind, namespace="ml", name="x", cluster="prod")
    return Check(target, Reply(Ref(kind, "ml", "x"), diagnosis), datetime(2026, 12, 1, tzinfo=UTC))


def _holding(name: str, node: str = "gpu-0", own: bool = False) -> Holding:
    return Holding(
        "Deployment", "serving", name, (f"{name}-0",), (node,), {"nvidia.com/gpu": 1}, "", 0, False, own
    )


def test_workloads_blocked_by_the_same_holders_on_the_same_nodes_share_a_cause_whatever_they_ask() -> None:
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    one = Stuck("prod", "ml", "Deployment", "a", "pending", T0, target)
    two = Stuck("prod", "team-b", "Job", "b", "pending", T0, target)
    full = (_holding("holder"),)
    asks_1 = _check(PodVerdict.EXHAUSTED, summary="gpu-0 has 0 free; the pod asks 1", holders=full)
    asks_2 = _check(PodVerdict.EXHAUSTED, summary="gpu-0 has 0 free; the pod asks 2", holders=full)
    assert blocked_by(one, asks_1) == blocked_by(two, asks_2)
    other_node = _check(PodVerdict.EXHAUSTED, holders=(_holding("holder", "gpu-1"),))
    other_holder = _check(PodVerdict.EXHAUSTED, holders=(_holding("batch"),))
    tainted = _check(PodVerdict.TAINT, holders=full)
    causes = {blocked_by(one, c) for c in (asks_1, other_node, other_holder, tainted)}
    assert len(causes) == 4
    own = _check(PodVerdict.EXHAUSTED, summary="x", holders=(_holding("a", own=True),))
    assert blocked_by(one, own) == blocked_by(one, _check(PodVerdict.EXHAUSTED, summary="x"))
    untaint = Fix("remove the taint", None, ("gpu-0",), objects=("node/gpu-0",))
    tolerate = Fix("tolerate it", {"spec": {}}, ("gpu-0",))
    by_node = _check(PodVerdict.TAINT, summary="a", fixes=(untaint, tolerate))
    assert blocked_by(one, by_node) == blocked_by(
        two, _check(PodVerdict.TAINT, summary="b", fixes=(untaint,))
    )
    assert blocked_by(one, _check(PodVerdict.LABEL_MISMATCH, summary="no node has x=y")) != blocked_by(
        one, _check(PodVerdict.LABEL_MISMATCH, summary="no node has x=z")
    )


def test_an_incident_continues_the_group_of_its_cause_else_the_one_holding_most_of_its_workloads() -> None:
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    a, b, c = (Stuck("prod", "ml", "Deployment", n, "pending", T0, target) for n in ("a", "b", "c"))
    check = _check(PodVerdict.TAINT)
    first = Incident(incident(blocked_by="1" * 16, workloads=(member("a"), member("b"))), "1.0")
    second = Incident(incident(blocked_by="2" * 16, workloads=(member("c"),)), "2.0")
    groups = {
        "3" * 16: [Blocked(a, check), Blocked(b, check)],  # the cause of `first` changed: a node was tainted
        "2" * 16: [Blocked(c, check)],
        "4" * 16: [Blocked(Stuck("prod", "ml", "Job", "new", "pending", T0, target), check)],
    }
    assert assign([first, second], groups) == {"3" * 16: first, "2" * 16: second}


def test_an_incident_that_grows_keeps_its_first_workloads_words_and_a_new_verdict_opens_a_thread_round() -> (
    None
):
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    old = Blocked(
        Stuck("prod", "ml", "Deployment", "old", "pending", T0, target, pods=2), _check(PodVerdict.TAINT)
    )
    late = Blocked(
        Stuck("prod", "ml", "Job", "late", "pending", T0 + 5, target, pods=3), _check(PodVerdict.TAINT)
    )
    opened = IncidentMeta.opened(CAUSE, [late, old], ["S0INFRA"])
    assert ([m.name for m in opened.workloads], opened.pods, opened.groups) == (
        ["old", "late"],
        5,
        ("S0INFRA",),
    )
    assert (opened.thread, opened.thread_done, opened.since) == (0, False, T0)
    same = opened.model_copy(update={"thread_done": True}).followed(CAUSE, [old], [], quiet=False)
    assert (same.thread, same.thread_done, same.pods, same.groups) == (0, True, 2, ("S0INFRA",))
    moved = Blocked(old.stuck, _check(PodVerdict.EXHAUSTED))
    changed = same.followed("f" * 16, [moved], [], quiet=False)
    assert (changed.verdict, changed.was, changed.thread, changed.thread_done) == (
        "exhausted",
        "taint",
        1,
        False,
    )
    assert same.followed("f" * 16, [moved], [], quiet=True).thread == 0


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


def test_a_channel_read_back_keeps_each_causes_newest_message_its_silences_and_the_summary_line() -> None:
    """Messages come newest first, as conversations.history gives them."""
    silenced = incident(silenced_until=T0 + 60, silence_scope="namespace", silenced_by="U0ONCALL")
    older = incident(verdict="taint")
    other = incident(blocked_by="e" * 16, workloads=(member("eval"),), since=T0 - 2 * HOUR)
    found = [
        {"ts": f"{T0 - 10:.6f}", "bot_id": BOT_ID, "metadata": silenced.metadata()},
        {"ts": f"{T0 - 15:.6f}", "bot_id": "B0SOMEONEELSE", "metadata": held_metadata(["forged"])},
        {"ts": f"{T0 - 20:.6f}", "bot_id": BOT_ID, "metadata": held_metadata(["prod/ml/Job/a"])},
        {"ts": f"{T0 - 30:.6f}", "bot_id": BOT_ID, "metadata": older.metadata()},
        {"ts": f"{T0 - 2 * HOUR:.6f}", "bot_id": BOT_ID, "metadata": other.metadata()},
    ]
    state = ChannelState.read(found, BOT_ID, T0)
    assert state.incidents[CAUSE] == Incident(silenced, f"{T0 - 10:.6f}")
    assert state.incidents["e" * 16].meta == other
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


def test_a_workload_is_told_to_the_user_group_its_label_names() -> None:
    target = Target(kind="pod", namespace="ml", name="p", cluster="prod")
    stuck = Stuck("prod", "ml", "Deployment", "a", "pending", T0, target, labels={"team": "ml-infra"})
    mention = MentionConfig(label="team", groups={"ml-infra": "S0123ABCD"})
    assert stuck.group(mention) == "S0123ABCD"
    assert stuck.group(None) is None
    assert stuck.group(MentionConfig(label="owner", groups={"ml-infra": "S0123ABCD"})) is None
    with pytest.raises(ValueError, match="not a user group ID"):
        MentionConfig(label="team", groups={"ml-infra": "U0123"})


def _waiting_on(state: NodeComing, minutes_ago: float) -> Check:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    node = Autoscaling(
        state, "cluster-autoscaler", at - timedelta(minutes=minutes_ago), headline=f"Node: {state}"
    )
    diagnosis = Diagnosis(PodVerdict.EXHAUSTED, "why", (), (), autoscaling=node)
    target = Target(kind="pod", namespace="ml", name="x", cluster="prod")
    return Check(target, Reply(Ref("pod", "ml", "x"), diagnosis), at)


@pytest.mark.parametrize(
    ("check", "waited"),
    [
        (_waiting_on(NodeComing.COMING, 3), True),  # cluster-autoscaler is adding a node
        (_waiting_on(NodeComing.QUEUED, 14), True),
        (_waiting_on(NodeComing.COMING, 16), False),  # past the 15 min provision timeout
        (_waiting_on(NodeComing.FAILED, 1), False),
        (_waiting_on(NodeComing.NOT_COMING, 1), False),
        (_check(PodVerdict.EXHAUSTED), False),  # no autoscaler seen
    ],
)
def test_a_node_on_its_way_is_waited_for_until_the_provision_timeout(check: Check, waited: bool) -> None:
    assert node_on_its_way(check) is waited


def test_an_incident_says_whether_a_node_will_come_and_redraws_it_in_place() -> None:
    target = Target(kind="pod", namespace="ml", name="x", cluster="prod")
    stuck = Stuck("prod", "ml", "Deployment", "x", "pending", T0, target, pods=2)
    opened = IncidentMeta.opened(CAUSE, [Blocked(stuck, _waiting_on(NodeComing.QUEUED, 30))], [])
    shown = plain_text(list(incident_message(opened, T0 + 1800).blocks))
    assert "waiting for a node" in shown
    assert "Node: queued" in shown
    failed = opened.followed(CAUSE, [Blocked(stuck, _waiting_on(NodeComing.FAILED, 1))], [], quiet=False)
    assert failed.node == "Node: failed"
    assert "Node: failed" in plain_text(list(incident_message(failed, T0 + 1900).blocks))


def test_workloads_waiting_for_the_same_node_share_a_cause_though_each_waits_for_its_own() -> None:
    def waiting(pod: str) -> Check:
        wait = Fix("Wait: cluster-autoscaler is bringing a node", None, (), objects=(f"pod/ml/{pod}",))
        return _check(PodVerdict.NO_GPU_NODE, summary="no node has nvidia.com/gpu", fixes=(wait,))

    one, two = (
        Stuck("prod", "ml", "Deployment", n, "pending", T0, Target(kind="pod", namespace="ml", name=f"{n}-0"))
        for n in ("a", "b")
    )
    assert blocked_by(one, waiting("a-0")) == blocked_by(two, waiting("b-0"))
