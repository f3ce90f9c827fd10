"""Slack text → typed requests (handlers/requests.py): every form README lists, and hostile text."""

from __future__ import annotations

import pytest

from handlers.requests import (
    Explain,
    FollowUp,
    Help,
    Target,
    UsageError,
    find_in_alert,
    parse_jobset,
    parse_mention,
    parse_triage,
)


def pod(namespace: str, name: str, cluster: str | None = None) -> Target:
    return Target(kind="pod", namespace=namespace, name=name, cluster=cluster)


def jobset(namespace: str, name: str, cluster: str | None = None) -> Target:
    return Target(kind="jobset", namespace=namespace, name=name, cluster=cluster)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ml trainer-0", pod("ml", "trainer-0")),
        ("ml/trainer-0", pod("ml", "trainer-0")),
        ("-n ml trainer-0", pod("ml", "trainer-0")),
        ("trainer-0 -n ml", pod("ml", "trainer-0")),
        ("--namespace=ml trainer-0", pod("ml", "trainer-0")),
        ("ml trainer-0 --cluster prod-eu", pod("ml", "trainer-0", "prod-eu")),
        ("--cluster=lab ml/trainer-0", pod("ml", "trainer-0", "lab")),
        ("  ml   web.v2-0  ", pod("ml", "web.v2-0")),
        ("", Help(topic="triage")),
        ("help", Help(topic="triage")),
    ],
)
def test_triage_forms(text: str, expected: Target | Help) -> None:
    assert parse_triage(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("ml", "give a namespace and a pod name"),
        ("a b c", "give a namespace and a pod name"),
        ("ML trainer-0", "'ML' is not a namespace name"),
        ("ml Trainer_0", "'Trainer_0' is not a Kubernetes object name"),
        ("ml ../etc/passwd", "'../etc/passwd' is not a Kubernetes object name"),
        ("ml x --cluster", "--cluster needs a value"),
        ("ml x --cluster Prod", "'Prod' is not a cluster name"),
        ("ml x --cluster a --cluster b", "--cluster is given twice"),
        ("ml x --force", "unknown option '--force'"),
        ("$(rm -rf /) x", "unknown option '-rf'"),
        ("ml `reboot`", "'`reboot`' is not a Kubernetes object name"),
        ("-n ml a b", "with -n NAMESPACE, give exactly one pod name"),
        ("ml " + "a" * 300, "is not a Kubernetes object name"),
    ],
)
def test_triage_refuses_malformed_text_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_triage(text)
    assert problem in refused.value.problem
    assert refused.value.topic == "triage"


def test_a_long_bad_value_is_echoed_shortened() -> None:
    with pytest.raises(UsageError) as refused:
        parse_triage("ml " + "X" * 5000)
    assert len(refused.value.problem) < 200


def test_slack_escaping_is_undone_before_parsing() -> None:
    """Slack sends `&`, `<`, `>` escaped; a name is judged on what the person typed."""
    with pytest.raises(UsageError) as refused:
        parse_triage("ml &lt;!channel&gt;")
    assert "'<!channel>'" in refused.value.problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("why ml llama", jobset("ml", "llama")),
        ("why ml/llama --cluster lab", jobset("ml", "llama", "lab")),
        ("why -n ml llama", jobset("ml", "llama")),
        ("WHY ml llama", jobset("ml", "llama")),
        ("help", Help(topic="jobset")),
        ("", Help(topic="jobset")),
        (
            'why admission webhook "mpod.kb.io" denied the request: follower pod node selector not set',
            Explain(
                message='admission webhook "mpod.kb.io" denied the request: follower pod node selector '
                "not set"
            ),
        ),
        (
            "why Error creating: pods &lt;x&gt; forbidden",
            Explain(message="Error creating: pods <x> forbidden"),
        ),
    ],
)
def test_jobset_forms(text: str, expected: Target | Explain | Help) -> None:
    assert parse_jobset(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("status ml llama", "unknown subcommand 'status'"),
        ("why", "give a namespace and a JobSet name, or paste the error message"),
        ("why ml", "give a namespace and a JobSet name"),
        ("why ml Llama", "'Llama' is not a Kubernetes object name"),
    ],
)
def test_jobset_refuses_malformed_text(text: str, problem: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_jobset(text)
    assert problem in refused.value.problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@U0KUBEWHY> recheck", FollowUp(action="recheck")),
        ("<@U0KUBEWHY|kubewhy> re-check", FollowUp(action="recheck")),
        ("<@U0KUBEWHY> watch", FollowUp(action="watch")),
        ("<@U0KUBEWHY> STOP", FollowUp(action="stop")),
        ("<@U0KUBEWHY>", Help(topic="mention")),
        ("<@U0KUBEWHY> help", Help(topic="mention")),
        ("<@U0KUBEWHY> triage ml trainer-0", pod("ml", "trainer-0")),
        ("hey <@U0KUBEWHY> triage ml/trainer-0 --cluster lab", pod("ml", "trainer-0", "lab")),
        ("<@U0KUBEWHY> jobset why ml llama", jobset("ml", "llama")),
        ("recheck <@U0KUBEWHY>", FollowUp(action="recheck")),
    ],
)
def test_mentions(text: str, expected: object) -> None:
    assert parse_mention(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("<@U0KUBEWHY> dance", "I don't know 'dance'"),
        ("<@U0KUBEWHY> watch ml/x", "`watch` takes nothing after it"),
        ("<@U0KUBEWHY> triage ml", "give a namespace and a pod name"),
    ],
)
def test_mentions_refused(text: str, problem: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_mention(text)
    assert problem in refused.value.problem
    assert refused.value.topic == "mention"


@pytest.mark.parametrize(
    ("alert", "expected"),
    [
        (
            '[FIRING:1] KubePodNotScheduled\n*Labels:* alertname="KubePodNotScheduled" namespace="ml-train"'
            ' pod="trainer-0" severity="warning"',
            pod("ml-train", "trainer-0"),
        ),
        (
            "Alert: JobSetStuck\n - namespace: ml\n - jobset_name: llama-pretrain",
            jobset("ml", "llama-pretrain"),
        ),
        ("namespace = ml, pod = web-0, jobset_name = big", pod("ml", "web-0")),
        ("*namespace*: `ml` *pod*: `w-1`", None),  # markup between a label and its value: not a label
        ("pod=trainer-0 only", None),
        ("namespace=ml pod=Trainer_0", None),
        ("", None),
    ],
)
def test_alert_labels(alert: str, expected: Target | None) -> None:
    assert find_in_alert(alert) == expected
