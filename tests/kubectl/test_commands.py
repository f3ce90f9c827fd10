"""Every command kubewhy suggests is one that works: each read-only `Command` of every corpus answer
is run by the real kubectl against the API simulator serving that snapshot, and must exit 0.
Commands that change the cluster are never run, and are always marked so."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest

from devtools.apisim import Simulator, serve
from devtools.botenv import kubectl
from diagnosis.jobset.explain import explain
from diagnosis.model import Command, Diagnosis
from diagnosis.triage.classify import classify
from tests.corpus import Case, cases
from tests.live.support import OWN_JOBSET, OWN_TRIAGE, live_reader

pytestmark = pytest.mark.kubectl

CASES = [*cases("triage"), *OWN_TRIAGE, *cases("jobset"), *OWN_JOBSET]

READING = frozenset(
    {
        "get",
        "describe",
        "logs",
        "events",
        "explain",
        "api-resources",
        "api-versions",
        "version",
        "top",
        "cluster-info",
    }
)
"""kubectl verbs that only read."""

_VALUED_FLAGS = frozenset(
    {
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "-s",
        "--server",
        "--cluster",
        "--user",
        "--as",
        "--token",
    }
)
"""Global flags that may come before the verb, each taking the next word as its value."""


def _answer(sim: Simulator, case: Case) -> Diagnosis:
    """The answer the bot gives for the case, read through the live path from `sim`."""

    async def read() -> Diagnosis:
        async with live_reader(sim) as reader:
            if case.kind == "triage":
                return classify(await reader.triage_view(case.namespace, case.name))
            return explain(await reader.jobset_view(case.namespace, case.name))

    return asyncio.run(read())


def _verb(command: Command) -> str:
    argv = shlex.split(command.text)
    assert argv[0] == "kubectl", command.text
    words = iter(argv[1:])
    for word in words:
        if word in _VALUED_FLAGS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    raise AssertionError(f"no kubectl verb in {command.text!r}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_read_commands_exit_0(case: Case, tmp_path: Path) -> None:
    with serve(case.snapshot) as sim:
        answer = _answer(sim, case)
        assert answer.verdict == case.verdict
        for command in (c for c in answer.next_commands if not c.changes):
            done = kubectl(shlex.split(command.text)[1:], sim.kubeconfig, tmp_path)
            assert done.returncode == 0, f"{command.text}\n{done.stderr.strip()}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_only_reading_commands_are_unmarked(case: Case) -> None:
    """A command not marked `changes` reads: cordon, delete, patch, drain, label, taint… never pass."""
    with serve(case.snapshot) as sim:
        answer = _answer(sim, case)
    unmarked = {c.text: _verb(c) for c in answer.next_commands if not c.changes}
    assert {text: verb for text, verb in unmarked.items() if verb not in READING} == {}
