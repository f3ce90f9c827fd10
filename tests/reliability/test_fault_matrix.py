"""The fault matrix: every fault of the API server (or of the way to it) × `/triage`, `/jobset why`,
a watch and `/readyz`, through a running `kubewhy serve`, and what the person sees.

A fault on a read the verdict needs gives the `error` answer that names what failed and how to fix
it; a fault on a read that only enriches the answer (events, Kueue Workloads) gives the verdict, with
a line in the evidence saying what is missing; a fault that mends within the retry policy is not
seen at all. Nothing is ever a `not-found`, a 500 or a silence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.reliability.conftest import Rig
from tests.slack.support import ONCALL, new_channel, shown, verdict_payload

POD = "ml-train llama-ft-0-x7k2p"
"""Waits for two A100s: `exhausted`. Its check reads the pod, its events, nodes and bound pods."""
JOBSET = "ml-train resnet-dist"
"""Followers refused because the leader does not fit: `leader-pending`. Its check reads the JobSet,
its Jobs, pods, the namespace's events, Kueue Workloads and nodes."""


@dataclass(frozen=True)
class Fault:
    name: str
    inject: Callable[[Rig], None]
    cluster: str = "faulty"


def _latency(rig: Rig) -> None:
    rig.faulty.faults.latency = 3.0  # three times the cluster's timeout


FAULTS = {
    f.name: f
    for f in (
        Fault("403 get pods", lambda r: r.faulty.faults.forbid("pods", verb="get")),
        Fault("403 list pods", lambda r: r.faulty.faults.forbid("pods", verb="list")),
        Fault("403 events", lambda r: r.faulty.faults.forbid("events")),
        Fault("403 nodes", lambda r: r.faulty.faults.forbid("nodes")),
        Fault("403 jobsets", lambda r: r.faulty.faults.forbid("jobsets")),
        Fault("403 jobs", lambda r: r.faulty.faults.forbid("jobs")),
        Fault("403 workloads", lambda r: r.faulty.faults.forbid("workloads")),
        Fault("404 on every path", lambda r: r.faulty.faults.fail(404, times=None)),
        Fault("429 once, Retry-After 1", lambda r: r.faulty.faults.throttle(times=1, retry_after=1)),
        Fault("429, Retry-After 600", lambda r: r.faulty.faults.throttle(times=None, retry_after=600)),
        Fault("500", lambda r: r.faulty.faults.fail(500, times=None)),
        Fault("hang past the timeout", _latency),
        Fault("dropped connection", lambda r: r.faulty.faults.drop(times=None)),
        Fault("credential plugin hangs", lambda r: r.hang_plugin(True), cluster="plugin"),
    )
}

UNREADABLE = {
    "404 on every path": "HTTP 404 on /version: this URL does not serve the Kubernetes API",
    "429, Retry-After 600": "HTTP 429 Too Many Requests (the server asked to retry after 600 s)",
    "500": "HTTP 500 Internal Server Error (after 3 tries)",
    "hang past the timeout": "no answer within 1 s (timed out)",
    "dropped connection": "the connection was closed without an answer (3 tries)",
    "credential plugin hangs": "the kubeconfig's credential plugin",
}
"""What the person reads for the faults that leave no cluster to read, whatever the question."""

TRIAGE = {
    "403 get pods": ("error", "forbidden: cannot get pods in namespace ml-train"),
    "403 list pods": ("error", "forbidden: cannot list pods at cluster scope"),
    "403 events": ("exhausted", "events: forbidden — grant list on events"),
    "403 nodes": ("error", "forbidden: cannot list nodes at cluster scope"),
    "403 jobsets": ("exhausted", ""),
    "403 jobs": ("exhausted", ""),
    "403 workloads": ("exhausted", ""),
    "429 once, Retry-After 1": ("exhausted", ""),
} | {name: ("error", said) for name, said in UNREADABLE.items()}

JOBSET_WHY = {
    "403 get pods": ("leader-pending", ""),
    "403 list pods": ("error", "forbidden: cannot list pods in namespace ml-train"),
    # Without the FailedCreate events, a Job short of pods beside its Pending leader still says it.
    "403 events": ("leader-pending", "events: forbidden — grant list on events"),
    "403 nodes": ("error", "forbidden: cannot list nodes at cluster scope"),
    "403 jobsets": ("error", "forbidden: cannot get jobsets.jobset.x-k8s.io in namespace ml-train"),
    "403 jobs": ("error", "forbidden: cannot list jobs.batch in namespace ml-train"),
    "403 workloads": (
        "leader-pending",
        "Kueue workloads: forbidden — grant list on workloads.kueue.x-k8s.io",
    ),
    "429 once, Retry-After 1": ("leader-pending", ""),
} | {name: ("error", said) for name, said in UNREADABLE.items()}

WATCH = {
    name: ("error", said) if word == "error" else (word, "the verdict is still")
    for name, (word, said) in TRIAGE.items()
}
"""A watch of the pod says what /triage says: it posts when the verdict changes, and ends at its time
limit (3 s here) when it does not."""

READYZ = {name: (200, "ok") for name in FAULTS if name not in UNREADABLE} | {
    name: (503, said) for name, said in UNREADABLE.items()
}
"""/readyz asks each cluster for /version: a refusal of a resource leaves it ready."""


def answer(rig: Rig, command: str, text: str, cluster: str) -> tuple[str, str]:
    """Ask in a new channel; the verdict word and everything posted (verdict message and thread)."""
    channel = new_channel()
    sent = rig.bot.command(f"{text} --cluster {cluster}", channel, command=command)
    assert sent.status == 200, sent
    verdict = rig.bot.verdict(channel)
    word = verdict_payload(verdict)["verdict"]
    thread = rig.bot.thread(channel, verdict.ts) if word != "error" else []
    return word, "\n".join(shown(m) for m in [verdict, *thread])


@pytest.mark.parametrize("fault", list(TRIAGE))
def test_triage(clean: Rig, fault: str) -> None:
    FAULTS[fault].inject(clean)
    word, said = answer(clean, "/triage", POD, FAULTS[fault].cluster)
    assert (word, TRIAGE[fault][1] in said) == (TRIAGE[fault][0], True), said
    assert "cannot read cluster" in said if word == "error" else "not-found" not in said


@pytest.mark.parametrize("fault", list(JOBSET_WHY))
def test_jobset_why(clean: Rig, fault: str) -> None:
    FAULTS[fault].inject(clean)
    word, said = answer(clean, "/jobset", f"why {JOBSET}", FAULTS[fault].cluster)
    assert (word, JOBSET_WHY[fault][1] in said) == (JOBSET_WHY[fault][0], True), said
    assert "cannot read cluster" in said if word == "error" else "not-found" not in said


@pytest.mark.parametrize("fault", list(WATCH))
def test_watch(clean: Rig, fault: str) -> None:
    cluster = FAULTS[fault].cluster
    channel = new_channel()
    clean.bot.command(f"{POD} --cluster {cluster}", channel)
    verdict = clean.bot.verdict(channel)
    assert verdict_payload(verdict)["verdict"] == "exhausted"
    details = len(clean.bot.thread(channel, verdict.ts))
    clean.bot.mention(channel, "watch", thread_ts=verdict.ts)
    clean.slack.wait_for(lambda: any("Watching" in shown(m) for m in clean.slack.thread(channel, verdict.ts)))
    FAULTS[fault].inject(clean)
    expected, said = WATCH[fault]

    def seen() -> str | None:
        lines = [shown(m) for m in clean.slack.thread(channel, verdict.ts)[details:]]
        return next((line for line in lines if said in line), None)

    line = clean.slack.wait_for(seen)
    updated = clean.slack.find(channel, verdict.ts)
    assert updated is not None
    assert verdict_payload(updated)["verdict"] == expected, line
    if expected == "error":
        assert "Changed since the last check" in "\n".join(
            shown(m) for m in clean.slack.thread(channel, verdict.ts)
        )


@pytest.mark.parametrize("fault", list(READYZ))
def test_readyz(clean: Rig, fault: str) -> None:
    FAULTS[fault].inject(clean)
    ready = clean.bot.get("/readyz")
    status, said = READYZ[fault]
    assert ready.status == status, ready.body
    assert said in ready.json()["clusters"][FAULTS[fault].cluster], ready.body


def test_a_mention_whose_answer_slack_refuses_gets_the_apology_in_its_thread(rig: Rig) -> None:
    """Slack's side fails too: the verdict's post is refused once; the apology (with the request id
    of the log line) reaches the thread, where the person asked. An event has no response_url."""
    channel = new_channel()
    incident = rig.slack.post_as_user(channel, ONCALL, "the llama fine-tune is stuck again")
    rig.slack.fail("chat.postMessage", "fatal_error", channel=channel)
    rig.bot.mention(channel, f"triage {POD}", thread_ts=incident)
    apology = rig.slack.wait_for(
        lambda: [m for m in rig.slack.thread(channel, incident) if "Sorry, something went wrong" in shown(m)]
    )
    request_id = shown(apology[0]).split("request `")[1].split("`")[0]
    (logged,) = [line for line in rig.bot.log.read_text().splitlines() if f"request {request_id}" in line]
    assert logged.endswith(f"request {request_id} failed: Slack refused chat.postMessage: fatal_error")
