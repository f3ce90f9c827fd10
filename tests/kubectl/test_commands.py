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
from devtools.corpus import Case, answer, cases
from diagnosis.model import Command, Diagnosis
from handlers.reply import Reply, Scope
from handlers.triage import triage
from tests.live.support import OWN_JOBSET, OWN_TRIAGE, live_reader

pytestmark = pytest.mark.kubectl

CASES = [*cases("triage"), *OWN_TRIAGE, *cases("jobset"), *OWN_JOBSET, *cases("lws"), *cases("trainjob")]

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
            return await answer(reader, case)

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


LAB_CASES = [c for c in cases("triage") if c.snapshot.name == "gpu-lab.json"]


@pytest.mark.parametrize("case", LAB_CASES, ids=lambda c: c.id)
def test_commands_aimed_at_a_named_context_work_without_a_current_one(case: Case, tmp_path: Path) -> None:
    """An answer read through a named kubeconfig and context aims every command at them: kubectl runs
    each one with no KUBECONFIG and no ~/.kube/config, so a command without them would fail."""

    async def read(sim: Simulator) -> Reply:
        async with live_reader(sim) as reader:
            return await triage(reader, case.namespace, case.name, Scope("lab", "apisim", sim.kubeconfig))

    with serve(case.snapshot) as sim:
        reply = asyncio.run(read(sim))
        aimed = ["kubectl", "--kubeconfig", sim.kubeconfig, "--context", "apisim"]
        commands = [*reply.diagnosis.next_commands, *(c for f in reply.diagnosis.fixes for c in f.commands)]
        assert commands
        for command in commands:
            argv = shlex.split(command.text)
            assert argv[:5] == aimed, command.text
            if command.changes:
                continue
            done = kubectl(argv[1:], sim.kubeconfig, tmp_path)
            assert done.returncode == 0, f"{command.text}\n{done.stderr.strip()}"
