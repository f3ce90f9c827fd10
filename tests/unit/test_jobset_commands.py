"""The kubectl commands the JobSet explainers build: one invocation each, every value quoted, names
that could not exist refused, and the changing ones marked."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from diagnosis.commands import collect
from diagnosis.jobset import commands as kubectl
from diagnosis.model import Command


def test_values_are_quoted_once_and_read_back_whole() -> None:
    command = kubectl.jobset_version()
    assert (
        command.text == "kubectl get pods -n jobset-system -o 'jsonpath={.items[*].spec.containers[*].image}'"
    )
    assert shlex.split(command.text)[-1] == "jsonpath={.items[*].spec.containers[*].image}"


def test_a_child_jobs_pods_are_found_as_the_webhook_finds_the_leader() -> None:
    command = kubectl.job_pods("llm", "maxtext", "slice", "1")
    assert command is not None
    assert command.text == (
        "kubectl get pods -n llm -l jobset.sigs.k8s.io/jobset-name=maxtext,"
        "jobset.sigs.k8s.io/replicatedjob-name=slice,jobset.sigs.k8s.io/job-index=1 -o wide"
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda bad: kubectl.describe_jobset(bad, "js"),
        lambda bad: kubectl.describe_jobset("ns", bad),
        lambda bad: kubectl.child_pods("ns", bad),
        lambda bad: kubectl.job_pods("ns", "js", bad, "0"),
        lambda bad: kubectl.events_of("ns", bad, "Job"),
        lambda bad: kubectl.logs("ns", "pod", bad, False),
        lambda bad: kubectl.describe_quota("ns", bad),
        lambda bad: kubectl.nodes_with_label(bad),
        lambda bad: kubectl.delete_pod("ns", bad, "why"),
        lambda bad: kubectl.resume(bad, "js"),
    ],
)
@pytest.mark.parametrize(
    "bad", ["$(reboot)", "a b", "../x", "x;y", "", "A" * 300, "-n", "ns\nkubectl delete"]
)
def test_names_that_could_not_exist_give_no_command(build: Callable[[str], Command | None], bad: str) -> None:
    assert build(bad) is None


def test_isolating_a_node_is_destructive_and_says_when() -> None:
    unproven = kubectl.isolate_node("gke-a-b-1234abcd-x1y2", proven=False)
    proven = kubectl.isolate_node("gke-a-b-1234abcd-x1y2", proven=True)
    assert all(c is not None and c.changes and "only once its conditions show" in c.purpose for c in unproven)
    assert all(c is not None and c.changes and "again and again" in c.purpose for c in proven)
    assert kubectl.isolate_node("bad node", proven=True) == ()


def test_collect_drops_refused_and_repeated_commands_in_order() -> None:
    first = kubectl.runtimeclasses()
    second = kubectl.failed_creates_everywhere()
    assert collect(first, None, second, first) == (first, second)
