"""The sentinel, end to end: two `kubewhy serve` processes share one API simulator (served with
watches) and one local Slack, under one Lease. Pods go pending, cross the threshold, are posted once,
change verdict, get placed and are resolved; a JobSet enters a restart loop; a burst of 200 pods from
5 workloads gives 5 incidents; a Silence chosen on the replica that does not lead is honoured; the
Lease holder is killed mid-incident and the other replica resumes and resolves it.

Every threshold is made small through the config (seconds, not minutes), and every test waits for the
condition it needs (the local Slack's `wait_for`), never for time to pass.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from slack_sdk import WebClient

from bot.app import assemble, build_client
from bot.clusters import Clusters
from bot.incidents import HELD, IncidentMeta, Member
from bot.localslack import BOT_ID, Message
from bot.sentinel import PART, part_metadata
from bot.settings import ClusterConfig, Config, SentinelConfig
from cluster.lease import CARRIED
from devtools.apisim import Simulator, serve
from devtools.apisim.resources import Resource, lookup
from devtools.botenv import KUBEWHY, bot_env, free_port
from devtools.slack import DevSlack, block_action
from devtools.workloads import NODE, POOL, gpu_node, gpu_pod, placed
from tests.slack.support import GPU_LAB, ONCALL, ROOT, TOKEN, Bot, shown

NAMESPACE = "kubewhy"
RESTARTS = ROOT / "bot" / "demo" / "jobset-preemption-restarts.json"

CHANNELS = LIFECYCLE, EARLY, BURST, LOOP, QUIET, LIMITED, FAILOVER, PEOPLE, THREAD, PROBE = tuple(
    f"C0SENT{i}" for i in range(10)
)


def _resource(group: str, version: str, plural: str) -> Resource:
    found = lookup(group, version, plural)
    assert found is not None
    return found


JOBSETS = _resource("jobset.x-k8s.io", "v1alpha2", "jobsets")
LEASES = _resource("coordination.k8s.io", "v1", "leases")
FAST = {"enabled": True, "pending_minutes": 0.01}
"""Reported after 0.6 s of waiting."""


def payload(message: Message) -> dict[str, Any]:
    """The incident's metadata payload (the message is one of the bot's incidents)."""
    assert message.metadata is not None
    found: dict[str, Any] = message.metadata["event_payload"]
    return found


def names(message: Message) -> list[str]:
    """The workloads an incident lists."""
    return [w["name"] for w in payload(message)["workloads"]]


def elsewhere(pod: dict[str, Any], pool: str) -> dict[str, Any]:
    """The pod asking for a pool no node is in: a cause of its own (label-mismatch, naming the pool)."""
    return pod | {"spec": pod["spec"] | {"nodeSelector": {POOL: pool}}}


@dataclass
class Replicas:
    slack: DevSlack
    sim: Simulator
    bots: list[Bot]
    start: Callable[[], Bot]
    """Start one more replica, stopped at the end of the module."""

    def incidents(self, channel: str) -> list[Message]:
        return [
            m
            for m in self.slack.channel_messages(channel)
            if m.bot_id and (m.metadata or {}).get("event_type") == "kubewhy_incident"
        ]

    def incident(
        self, channel: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 20
    ) -> Message:
        """The channel's one incident, once its metadata satisfies `predicate`."""

        def found() -> Message | None:
            messages = self.incidents(channel)
            assert len(messages) <= 1, [shown(m) for m in messages]
            return messages[0] if messages and predicate(payload(messages[0])) else None

        return self.slack.wait_for(found, timeout)

    def duplicates(self) -> int:
        """Workloads listed by more than one incident message, over every channel of the module."""
        listed = [
            (m.channel, w["namespace"], w["kind"], w["name"])
            for c in CHANNELS
            for m in self.incidents(c)
            for w in payload(m)["workloads"]
        ]
        return len(listed) - len(set(listed))

    def leader(self) -> Bot:
        def leading() -> list[Bot]:
            return [
                b
                for b in self.bots
                if b.process.poll() is None and "kubewhy_lease_leading 1.0" in b.get("/metrics").body
            ]

        return self.slack.wait_for(lambda: next(iter(leading()), None))


def _start(slack: DevSlack, folder: Path, config_file: Path) -> Bot:
    port = free_port()
    log = folder / f"serve-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(KUBEWHY), "serve"],
            env=bot_env(slack, port, config_file),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    bot = Bot(f"http://127.0.0.1:{port}", slack, process, log)
    deadline = time.monotonic() + 30
    while bot.get_quietly("/healthz") != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"kubewhy serve did not start:\n{log.read_text()}")
        time.sleep(0.05)
    return bot


@contextmanager
def _stopped_at_the_end(bot: Bot) -> Iterator[None]:
    try:
        yield
    finally:
        if bot.process.poll() is None:
            bot.process.send_signal(signal.SIGTERM)
            assert bot.process.wait(30) == 0, bot.log.read_text()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    folder = tmp_path_factory.mktemp("sentinel")
    objects: list[Any] = [
        RESTARTS,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        gpu_node(NODE, 1),
        gpu_pod("ml-busy", "holder", 0, node=NODE),  # holds the node's one GPU
    ]
    with ExitStack() as stack:
        slack = stack.enter_context(DevSlack(bot_token=TOKEN))
        sim = stack.enter_context(serve(objects, now=datetime.now(UTC)))
        never = {"enabled": True, "pending_minutes": 10**6}  # the example's old pending pods stay quiet
        config = {
            "clusters": {"lab": {"kubeconfig": sim.kubeconfig, "timeout": 3}},
            "channels": {
                LIFECYCLE: {"namespaces": ["ml-life"], "sentinel": FAST},
                EARLY: {"namespaces": ["ml-early"], "sentinel": {"enabled": True, "pending_minutes": 0.05}},
                BURST: {"namespaces": ["ml-burst"], "sentinel": FAST},
                LOOP: {
                    "namespaces": ["llm"],
                    "sentinel": never | {"restarts": 3, "restarts_window_minutes": 10},
                },
                QUIET: {"namespaces": ["ml-quiet", "ml-loud"], "sentinel": FAST},
                LIMITED: {"namespaces": ["ml-limited"], "sentinel": FAST | {"max_posts_per_hour": 2}},
                FAILOVER: {"namespaces": ["ml-failover"], "sentinel": FAST},
                PEOPLE: {
                    "namespaces": ["ml-people"],
                    "sentinel": FAST | {"mention": {"label": "team", "groups": {"ml-infra": "S0INFRA"}}},
                },
                THREAD: {"namespaces": ["ml-thread"], "sentinel": never},
                PROBE: {"namespaces": ["ml-thread"], "sentinel": FAST},
            },
            "sentinel": {"interval_seconds": 0.2},
            "watch": {"interval_seconds": 0.3, "max_minutes": 1},
            "lease": {
                "namespace": NAMESPACE,
                "duration_seconds": 1.5,
                "renew_deadline_seconds": 1.0,
                "retry_seconds": 0.2,
            },
        }
        config_file = folder / "kubewhy.yaml"
        config_file.write_text(yaml.safe_dump(config))

        def start() -> Bot:
            bot = _start(slack, folder, config_file)
            stack.enter_context(_stopped_at_the_end(bot))
            return bot

        yield Replicas(slack, sim, [start(), start()], start)


def test_a_pending_pod_is_posted_once_follows_its_verdict_and_is_resolved_in_place(
    replicas: Replicas,
) -> None:
    pod = replicas.sim.store.put(gpu_pod("ml-life", "trainer", 0))
    incident = replicas.incident(LIFECYCLE, lambda p: p["thread_done"])  # posted, with its thread
    assert replicas.duplicates() == 0
    posted = payload(incident)
    (workload,) = posted["workloads"]
    assert (workload["kind"], workload["name"], posted["verdict"], posted["pods"]) == (
        "Deployment",
        "trainer",
        "exhausted",
        1,
    )
    assert "exhausted: Deployment ml-life/trainer" in shown(incident)
    assert "*1 pod* waiting for a node" in shown(incident) or "1 pod waiting for a node" in shown(incident)
    assert "Evidence" in shown(replicas.bots[0].thread(LIFECYCLE, incident.ts)[0])

    # the cluster changes: the node is tainted, the verdict follows in place and in the thread
    node = gpu_node(NODE, 1)
    node["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "maintenance", "effect": "NoSchedule"}]
    replicas.sim.store.put(node)
    try:
        replicas.incident(LIFECYCLE, lambda p: p["verdict"] == "taint")
        lines = replicas.slack.wait_for(
            lambda: [
                m for m in replicas.slack.thread(LIFECYCLE, incident.ts) if "verdict changed" in shown(m)
            ]
        )
        assert "*exhausted* → *taint*" in shown(lines[0]) or "exhausted → taint" in shown(lines[0])
    finally:
        replicas.sim.store.put(gpu_node(NODE, 1))

    # the pod is placed: the same message is marked resolved, with the time it took
    replicas.sim.store.put(placed(pod))
    resolved = replicas.incident(LIFECYCLE, lambda p: "resolved" in p)
    assert "resolved: Deployment ml-life/trainer" in shown(resolved)
    assert "No pod waits any more" in shown(resolved)
    assert replicas.slack.wait_for(
        lambda: [m for m in replicas.slack.thread(LIFECYCLE, incident.ts) if "Resolved" in shown(m)]
    )
    assert len(replicas.incidents(LIFECYCLE)) == 1


def test_a_replica_starts_without_bolts_warning_about_a_second_token(replicas: Replicas) -> None:
    """bolt warns "As you gave client as well, token will be unused." when SLACK_BOT_TOKEN is still in
    the environment beside the client it is given."""
    logs = [bot.log for bot in replicas.bots]
    replicas.slack.wait_for(lambda: all("kubewhy is serving" in log.read_text() for log in logs) or None)
    assert not [log for log in logs if "will be unused" in log.read_text()]


def test_pods_that_leave_pending_before_the_threshold_are_not_posted(replicas: Replicas) -> None:
    quick = replicas.sim.store.put(gpu_pod("ml-early", "quick", 0))
    replicas.sim.store.put(gpu_pod("ml-early", "slow", 0))
    replicas.sim.store.put(placed(quick, "elsewhere"))  # bound before its 3 s were up
    slow = replicas.incident(EARLY, lambda p: True)  # both began waiting at once: by now `quick` would be due
    assert names(slow) == ["slow"]
    assert [names(m) for m in replicas.incidents(EARLY)] == [["slow"]]


def test_a_burst_of_200_pods_from_5_workloads_blocked_by_one_full_node_is_one_incident_listing_them(
    replicas: Replicas,
) -> None:
    workloads = [f"burst-{i}" for i in range(5)]
    for index in range(40):
        for name in workloads:
            replicas.sim.store.put(gpu_pod("ml-burst", name, index))
    incident = replicas.incident(BURST, lambda p: p["pods"] == 200, 30)
    assert sorted(names(incident)) == workloads
    assert "*200 pods* of 5 workloads waiting" in str(incident.blocks)
    assert all(f"Deployment ml-burst/{name} · 40 pods" in shown(incident) for name in workloads)
    assert "exhausted: Deployment ml-burst/burst-" in shown(incident)
    assert "and 4 more workloads" in shown(incident)

    # one workload's pods are placed elsewhere: the incident shrinks in place
    for index in range(40):
        replicas.sim.store.delete("Pod", "ml-burst", f"burst-4-7d9f8c6b5-{index:05d}")
    shrunk = replicas.incident(BURST, lambda p: p["pods"] == 160)
    assert (shrunk.ts, sorted(names(shrunk))) == (incident.ts, workloads[:4])
    assert replicas.duplicates() == 0


def test_a_jobset_restart_loop_is_one_incident_with_its_cause_and_the_gke_workflow(
    replicas: Replicas,
) -> None:
    jobset = replicas.sim.store.collection(JOBSETS).entries["llm", "llama3-70b-ft"].obj
    for restarts in (5, 6, 7):  # three more restarts, each seen by a sweep or not: counted either way
        replicas.sim.store.put(jobset | {"status": jobset["status"] | {"restarts": restarts}})
    incident = replicas.incident(LOOP, lambda p: p["cause"] == "restarts" and p["restarts"] >= 3)
    loop = payload(incident)
    assert (names(incident), loop["verdict"]) == (["llama3-70b-ft"], "restarting")
    assert "restart cause: *node-preemption*" in str(incident.blocks)
    thread = replicas.bots[0].thread(LOOP, incident.ts)
    assert "kube_jobset_restarts" in " ".join(shown(m) for m in thread)
    assert len(replicas.incidents(LOOP)) == 1


def test_a_silence_chosen_on_either_replica_is_honoured_by_the_leader(replicas: Replicas) -> None:
    replicas.sim.store.put(gpu_pod("ml-quiet", "first", 0))
    incident = replicas.incident(QUIET, lambda p: p["thread_done"])  # the leader is done writing it
    follower = next(b for b in replicas.bots if b is not replicas.leader())
    click = block_action(
        incident, "kubewhy_silence", "", user=ONCALL, response_url=replicas.slack.response_url()
    )
    click["actions"] = [
        {
            "type": "static_select",
            "action_id": "kubewhy_silence",
            "block_id": "incident",
            "selected_option": {"value": "namespace:60", "text": {"type": "plain_text", "text": "namespace"}},
            "action_ts": f"{time.time():.6f}",
        }
    ]
    assert follower.interact(click).status == 200
    replicas.incident(QUIET, lambda p: p.get("silence_scope") == "namespace")

    replicas.sim.store.put(elsewhere(gpu_pod("ml-quiet", "second", 0), "a"))  # silenced with its namespace
    replicas.sim.store.put(elsewhere(gpu_pod("ml-loud", "third", 0), "a"))  # not silenced: posted

    def third() -> list[Message] | None:
        found = [m for m in replicas.incidents(QUIET) if names(m) == ["third"]]
        return found or None

    replicas.slack.wait_for(third)
    assert sorted(names(m)[0] for m in replicas.incidents(QUIET)) == ["first", "third"]
    silenced = replicas.slack.find(QUIET, incident.ts)
    assert silenced is not None
    assert "silenced by <@U0ONCALL>" in str(silenced.blocks)


def test_past_the_hourly_limit_one_summary_line_counts_the_workloads_not_posted(replicas: Replicas) -> None:
    for name in ("a", "b", "c", "d"):  # four causes: each asks for a pool of its own
        replicas.sim.store.put(elsewhere(gpu_pod("ml-limited", name, 0), name))

    def summary() -> list[Message] | None:
        found = [
            m
            for m in replicas.slack.channel_messages(LIMITED)
            if (m.metadata or {}).get("event_type") == HELD
        ]
        return found if found and "2 more stuck workloads not posted" in shown(found[0]) else None

    (line,) = replicas.slack.wait_for(summary)
    assert "at most 2 per hour" in shown(line)
    assert len(replicas.incidents(LIMITED)) == 2
    replicas.sim.store.put(elsewhere(gpu_pod("ml-limited", "e", 0), "e"))
    replicas.slack.wait_for(
        lambda: "3 more stuck workloads" in shown(replicas.slack.channel_messages(LIMITED)[-1])
    )
    assert (
        len(replicas.slack.channel_messages(LIMITED)) == 3
    )  # two incidents and the one line, updated in place


def test_a_watch_started_on_one_replica_is_stopped_from_the_other(replicas: Replicas) -> None:
    """Slack delivers each mention to either replica: the thread's watch markers tell them apart."""
    channel = "C0WATCHING"
    pod = replicas.sim.store.put(gpu_pod("ml-watch", "trainer", 0))
    first, second = replicas.bots
    first.command(f"ml-watch {pod['metadata']['name']}", channel)
    verdict = first.verdict(channel)
    first.mention(channel, "watch", thread_ts=verdict.ts)
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, "Watching ml-watch/"))
    second.mention(channel, "watch", thread_ts=verdict.ts)  # not a second watch
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, "Already watching ml-watch/"))

    second.mention(channel, "stop", thread_ts=verdict.ts, user="U0LEAD")
    (stopped,) = replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, "stopped by <@U0LEAD>"))
    assert stopped == f":octagonal_sign: Watch of ml-watch/{pod['metadata']['name']} stopped by <@U0LEAD>."
    assert len(said(replicas, channel, verdict.ts, "Watching ml-watch/")) == 1
    second.mention(channel, "stop", thread_ts=verdict.ts)
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, "Nothing is being watched"))


def said(replicas: Replicas, channel: str, thread_ts: str, words: str) -> list[str]:
    """The lines of the thread that say `words`."""
    return [shown(m) for m in replicas.slack.thread(channel, thread_ts) if words in shown(m)]


def test_a_watch_run_by_a_lease_holder_that_dies_is_resumed_by_the_new_holder(replicas: Replicas) -> None:
    """The holder writes its watches into the Lease at each renewal (`cluster.lease.CARRIED`)."""
    channel = "C0RESUMED"
    pod = replicas.sim.store.put(gpu_pod("ml-resume", "trainer", 0))
    what = f"ml-resume/{pod['metadata']['name']}"
    leader = replicas.leader()
    leader.command(what.replace("/", " "), channel)
    verdict = leader.verdict(channel)
    leader.mention(channel, "watch", thread_ts=verdict.ts)
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, f"Watching {what}:"))

    def carried() -> bool | None:
        lease = replicas.sim.store.collection(LEASES).entries[NAMESPACE, "kubewhy"].obj
        return verdict.ts in lease["metadata"].get("annotations", {}).get(CARRIED, "") or None

    replicas.slack.wait_for(carried)
    leader.process.kill()
    leader.process.wait()
    survivor = replicas.leader()
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, f"Watching {what} again"))
    survivor.mention(channel, "stop", thread_ts=verdict.ts, user="U0LEAD")
    replicas.slack.wait_for(lambda: said(replicas, channel, verdict.ts, "stopped by <@U0LEAD>"))
    replicas.bots[replicas.bots.index(leader)] = replicas.start()


FAILOVERS = int(os.environ.get("KUBEWHY_FAILOVERS", "2"))
"""Failovers in a run: `KUBEWHY_FAILOVERS=10 pytest -s -k killing tests/slack/test_sentinel.py` runs
ten and prints the figures."""


def test_killing_the_lease_holder_mid_incident_lets_the_other_resume_and_resolve_it(
    replicas: Replicas,
) -> None:
    """Each round: a workload is posted, the Lease holder is killed (SIGKILL: no release, so the other
    replica waits for the Lease to expire), the other takes over and resolves the incident in place,
    and a new replica takes the killed one's place."""
    takeovers = []
    for round_ in range(FAILOVERS):
        pod = replicas.sim.store.put(gpu_pod("ml-failover", f"trainer-{round_}", 0))
        name = f"trainer-{round_}"
        incident = replicas.slack.wait_for(partial(_open_incident, replicas, name))
        if round_ == 0:
            for i in range(250):  # people talk meanwhile: the incident is read back from the second page
                replicas.slack.post_as_user(FAILOVER, ONCALL, f"looking into it ({i})")
        leader = replicas.leader()
        killed = time.monotonic()
        leader.process.kill()
        leader.process.wait()
        survivor = replicas.leader()
        takeovers.append(time.monotonic() - killed)
        assert survivor is not leader

        replicas.sim.store.put(placed(pod, "elsewhere"))
        resolved = replicas.slack.wait_for(partial(_resolved, replicas, incident.ts))
        assert names(resolved) == [name]
        assert replicas.duplicates() == 0
        replicas.bots[replicas.bots.index(leader)] = replicas.start()
    metrics = survivor.get("/metrics").body
    assert metric(metrics, 'kubewhy_sentinel_incidents_total{event="resolved"}') >= 1
    assert metric(metrics, "kubewhy_lease_transitions") >= 1  # it took the Lease over
    assert metric(metrics, "kubewhy_lease_leading") == 1
    assert len(replicas.incidents(FAILOVER)) == FAILOVERS  # one message per incident, 0 duplicates
    sys.stdout.write(
        f"\n{FAILOVERS} failovers: {len(replicas.incidents(FAILOVER))} incident messages for {FAILOVERS}"
        f" incidents, {replicas.duplicates()} duplicates; takeover after SIGKILL"
        " (leaseDurationSeconds 2: 1.5 s rounded up; retry 0.2 s):"
        f" min {min(takeovers):.2f} s, median {statistics.median(takeovers):.2f} s,"
        f" max {max(takeovers):.2f} s\n"
    )


def _open_incident(replicas: Replicas, name: str) -> Message | None:
    """The open incident listing only `name`, once its thread is written."""
    found = [m for m in replicas.incidents(FAILOVER) if names(m) == [name] and "resolved" not in payload(m)]
    return found[0] if found and payload(found[0])["thread_done"] else None


def _resolved(replicas: Replicas, ts: str) -> Message | None:
    found = replicas.slack.find(FAILOVER, ts)
    return found if found is not None and "resolved" in payload(found) else None


def metric(exposition: str, sample: str) -> float:
    """The value of one sample in a Prometheus text exposition."""
    (value,) = (line.rsplit(" ", 1)[1] for line in exposition.splitlines() if line.startswith(sample + " "))
    return float(value)


async def test_a_silence_chosen_after_the_read_back_survives_the_leaders_next_update() -> None:
    """The Silence is written by either replica at any time; the leader rewrites the message from what
    it read at the start of its sweep, so it reads the metadata again right before."""
    config = Config(clusters={"lab": ClusterConfig(snapshot=GPU_LAB)})
    with DevSlack(bot_token=TOKEN) as slack:
        async with aiohttp.ClientSession() as session:
            deps = assemble(config, Clusters.from_config(config), build_client(TOKEN, slack.api_url, session))
            deps.sentinel.bot_id = BOT_ID
            web = Member(namespace="ml", kind="Deployment", name="web", target="web-0", since=1.0)
            read_back = IncidentMeta(
                cluster="lab",
                cause="pending",
                blocked_by="0" * 16,
                verdict="taint",
                workloads=(web,),
                since=1.0,
            )
            posted = await deps.client.chat_postMessage(
                channel="C0RACE", text="taint", metadata=read_back.metadata()
            )
            silenced = read_back.model_copy(
                update={
                    "silenced_until": time.time() + 600,
                    "silence_scope": "incident",
                    "silenced_by": ONCALL,
                }
            )
            await deps.client.chat_update(
                channel="C0RACE", ts=posted["ts"], text="taint", metadata=silenced.metadata()
            )

            changed = read_back.model_copy(update={"verdict": "exhausted"})
            await deps.sentinel._update("C0RACE", posted["ts"], changed, time.time(), SentinelConfig())
    message = slack.find("C0RACE", posted["ts"])
    assert message is not None
    assert payload(message)["verdict"] == "exhausted"
    assert payload(message)["silenced_by"] == ONCALL
    assert "silenced by <@U0ONCALL>" in shown(message)


def _click(replicas: Replicas, incident: Message, action_id: str) -> None:
    """Click an incident's button on the replica that does not lead, while it runs (both serve Slack)."""
    leader = replicas.leader()
    follower = next((b for b in replicas.bots if b is not leader and b.process.poll() is None), leader)
    click = block_action(incident, action_id, "", user=ONCALL, response_url=replicas.slack.response_url())
    assert follower.interact(click).status == 200


def test_acknowledge_and_recheck_are_shown_in_place_and_the_teams_group_is_mentioned(
    replicas: Replicas,
) -> None:
    pod = gpu_pod("ml-people", "ranker", 0)
    pod["metadata"]["labels"]["team"] = "ml-infra"
    replicas.sim.store.put(pod)
    incident = replicas.incident(PEOPLE, lambda p: p["thread_done"])  # the leader is done writing it
    assert payload(incident)["groups"] == ["S0INFRA"]
    assert "cc <!subteam^S0INFRA>" in shown(incident)
    assert incident.text.endswith("<!subteam^S0INFRA>")

    _click(replicas, incident, "kubewhy_incident_ack")
    acked = replicas.incident(PEOPLE, lambda p: p.get("acked_by") == ONCALL)
    assert "Acknowledged by <@U0ONCALL>" in shown(acked)
    assert "kubewhy_incident_ack" not in str(acked.blocks)

    _click(replicas, acked, "kubewhy_incident_recheck")
    rechecked = replicas.incident(PEOPLE, lambda p: p.get("checked_by") == ONCALL)
    assert "Re-checked by <@U0ONCALL>" in shown(rechecked)
    assert payload(rechecked)["acked_by"] == ONCALL  # the leader's next redraws keep both
    replicas.slack.wait_for(lambda: payload(replicas.incidents(PEOPLE)[0])["thread_done"] or None)
    assert payload(replicas.incidents(PEOPLE)[0])["acked_by"] == ONCALL


def test_a_thread_its_poster_left_unfinished_is_completed_by_the_lease_holder(replicas: Replicas) -> None:
    """The poster died after the incident's channel message and its first thread message: the message
    says its thread round is not done, and the thread's messages say which parts are there."""
    replicas.sim.store.put(gpu_pod("ml-thread", "sweep", 0))
    probe = replicas.incident(PROBE, lambda p: p["thread_done"])  # the leader's cache has the pod
    meta = IncidentMeta.model_validate(payload(probe)).model_copy(update={"thread_done": False})
    client = WebClient(token=TOKEN, base_url=replicas.slack.api_url)
    posted = client.chat_postMessage(channel=THREAD, text="exhausted", metadata=meta.metadata())
    first = "first part, posted before the poster died"
    client.chat_postMessage(
        channel=THREAD, thread_ts=posted["ts"], text=first, metadata=part_metadata(meta.thread, 0)
    )

    completed = replicas.incident(THREAD, lambda p: p["thread_done"])
    assert completed.ts == posted["ts"]
    thread = replicas.slack.thread(THREAD, completed.ts)
    probe_thread = replicas.slack.thread(PROBE, probe.ts)
    assert [m.text for m in thread[1:]] == [m.text for m in probe_thread[1 : len(thread)]]
    assert thread[0].text == first
    assert len(thread) == len(probe_thread)  # nothing twice, nothing missing
    assert all((m.metadata or {}).get("event_type") == PART for m in thread)
