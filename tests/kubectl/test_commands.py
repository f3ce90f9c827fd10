"""Every command kubewhy suggests runs when pasted. Each read-only `Command` of every corpus answer is
run by the real kubectl on a person's machine, against the API simulator serving that snapshot, and
must exit 0: through a configured cluster, as `kubewhy serve` answers (the config, `Clusters.scope`,
the check), and as the CLI answers with the kubeconfig a person named. Commands that change the
cluster are never run, and are always marked so."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import checks
from bot.clusters import Clusters, build_reader
from bot.settings import Config
from cluster.live import LiveReader
from cluster.reader import Reader
from devtools.apisim import Simulator, serve
from devtools.botenv import KUBEWHY, kubectl, refused_port
from devtools.corpus import Case, cases
from handlers.reply import Reply
from handlers.requests import Kind, Target
from tests.live.support import OWN_JOBSET, OWN_TRIAGE

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


def _verb(text: str) -> str:
    argv = shlex.split(text)
    assert argv[0] == "kubectl", text
    words = iter(argv[1:])
    for word in words:
        if word in _VALUED_FLAGS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    raise AssertionError(f"no kubectl verb in {text!r}")


CONTEXTS = {
    "gpu-pool": "gke_acme_us-central1_gpu-pool",
    "lab": "lab-admin",
    "default": None,
    "prod": "gke_acme_us-central1_prod",
}
"""The clusters of `CONFIG`, and the kubectl context their commands must name (None: none)."""

DIRECT = {"enabled": False}
"""Read directly, without starting a cache."""

CONFIG = {
    "default_cluster": "default",
    "clusters": {
        # Read through the bot's kubeconfig, with a context named, or through its current one.
        "gpu-pool": {"kubeconfig": "kubeconfig", "context": CONTEXTS["gpu-pool"], "cache": DIRECT},
        "lab": {"kubeconfig": "kubeconfig", "cache": DIRECT},
        # Read with the pod's ServiceAccount: the shipped ConfigMap's cluster, and one that names the
        # context people reach it with.
        "default": {"in_cluster": True, "cache": DIRECT},
        "prod": {"in_cluster": True, "context": CONTEXTS["prod"], "cache": DIRECT},
    },
}
"""The bot's config file; its kubeconfig's current context is `lab-admin`."""

ASKED_AS: dict[str, Kind] = {
    "triage": "pod",
    "jobset": "jobset",
    "lws": "leaderworkerset",
    "trainjob": "jobset",
}
"""The kind of Target each corpus's question asks about (a TrainJob's is `/jobset why` on its name)."""

AIMED = [(case, list(CONTEXTS)[i % len(CONTEXTS)]) for i, case in enumerate(CASES)]
"""Each case asked on one of the clusters in turn: every command is pasted, and each way of
configuring a cluster with dozens of answers."""

NAMED = [context for context in CONTEXTS.values() if context]

CLOUD_CLIS = frozenset({"gcloud", "aws", "az"})
"""The clouds' CLIs a fix that raises a node group's max size runs (`diagnosis.autoscaling.advice`)."""


@pytest.fixture(scope="module")
def nowhere() -> Iterator[int]:
    """A port that refuses every connection for as long as the module's tests run: the server of the
    `elsewhere` context (a port merely found free could be given to a simulator, which would answer)."""
    with refused_port() as port:
        yield port


def _kubeconfig(sim: Simulator, contexts: Sequence[str], current: str, nowhere: int) -> dict[str, Any]:
    """The simulator's kubeconfig with its context under each name of `contexts`, and one more,
    `elsewhere`, whose server (`nowhere`, a port) does not answer; `current` is the current context."""
    served: dict[str, Any] = yaml.safe_load(Path(sim.kubeconfig).read_text())
    (context,) = served["contexts"]
    elsewhere = {"name": "elsewhere", "cluster": {"server": f"http://127.0.0.1:{nowhere}"}}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [*served["clusters"], elsewhere],
        "users": served["users"],
        "contexts": [
            *({"name": name, "context": context["context"]} for name in contexts),
            {"name": "elsewhere", "context": {**context["context"], "cluster": "elsewhere"}},
        ],
        "current-context": current,
    }


def _answered_by_the_bot(sim: Simulator, case: Case, cluster: str, folder: Path, nowhere: int) -> Reply:
    """The answer `kubewhy serve` gives for the case asked on `cluster`, with CONFIG and the bot's
    kubeconfig in `folder`. An in-cluster cluster is read here through the simulator's own
    kubeconfig, as the test runs in no pod: what is tested is how its commands are aimed."""
    folder.mkdir()
    (folder / "kubeconfig").write_text(yaml.safe_dump(_kubeconfig(sim, NAMED, "lab-admin", nowhere)))
    config = Config.model_validate(CONFIG).relative_to(folder)
    target = Target(
        kind=ASKED_AS[case.kind],
        namespace=case.namespace,
        name=case.name,
        cluster=cluster,
    )

    async def ask() -> Reply:
        configured = config.clusters[cluster]
        reader: Reader = (
            LiveReader.from_kubeconfig(sim.kubeconfig, None)
            if configured.in_cluster
            else build_reader(configured)
        )
        clusters = Clusters({cluster: reader}, config)
        try:
            check = await checks.run(clusters.reader(target), target, clusters.scope(target))
        finally:
            await clusters.aclose()
        assert isinstance(check.outcome, Reply), check.outcome
        return check.outcome

    return asyncio.run(ask())


@pytest.mark.parametrize(("case", "cluster"), AIMED, ids=lambda v: v.id if isinstance(v, Case) else v)
def test_the_bots_commands_run_pasted_on_a_persons_machine(
    case: Case, cluster: str, tmp_path: Path, nowhere: int
) -> None:
    """The person's kubeconfig has the configured contexts, and a current one that answers nothing,
    but for a cluster whose commands name no context: then the current one is that cluster. The
    bot's own files are gone. A command that carried the bot's kubeconfig, a context the person has
    not, or no context where one is known, fails."""
    context = CONTEXTS[cluster]
    with serve(case.snapshot) as sim:
        reply = _answered_by_the_bot(sim, case, cluster, tmp_path / "bot", nowhere)
        shutil.rmtree(tmp_path / "bot")
        assert (reply.diagnosis.verdict, reply.cluster) == (case.verdict, cluster)
        person = tmp_path / "kubeconfig"
        current = "elsewhere" if context else "mine"
        person.write_text(yaml.safe_dump(_kubeconfig(sim, [*NAMED, "mine"], current, nowhere)))
        aim = ["kubectl", *(("--context", context) if context else ())]
        diagnosis = reply.diagnosis
        commands = [*diagnosis.next_commands, *(c for f in diagnosis.fixes for c in f.commands)]
        assert commands
        for command in commands:
            argv = shlex.split(command.text)
            if argv[0] in CLOUD_CLIS:
                # A node group's max size is the cloud's to change: its CLI names the cluster itself.
                assert command.changes, command.text
                assert "$CLUSTER" in argv, command.text
                continue
            assert argv[: len(aim)] == aim, command.text
            assert "--kubeconfig" not in argv, command.text
            if command.changes:
                continue
            # A command not marked `changes` reads: cordon, delete, patch, drain, label, taint… never pass.
            assert _verb(command.text) in READING, command.text
            done = kubectl(argv[1:], str(person), tmp_path)
            assert done.returncode == 0, f"{command.text}\n{done.stderr.strip()}"


LAB_CASES = [c for c in cases("triage") if c.snapshot.name == "gpu-lab.json"]


@pytest.mark.parametrize("case", LAB_CASES, ids=lambda c: c.id)
def test_the_clis_commands_carry_the_kubeconfig_the_person_named_and_the_context(
    case: Case, tmp_path: Path, nowhere: int
) -> None:
    """`kubewhy triage … --kubeconfig PATH` runs on the person's machine: its commands carry that
    path (theirs: they typed it) and the context it was read through (the current one, none being
    named). kubectl runs them with a KUBECONFIG whose current context answers nothing, so a command
    without them would fail."""
    with serve(case.snapshot) as sim:
        done = subprocess.run(
            [
                str(KUBEWHY),
                "triage",
                case.namespace,
                case.name,
                "--kubeconfig",
                sim.kubeconfig,
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        answer = json.loads(done.stdout)
        assert (answer["verdict"], answer["cluster"]) == (case.verdict, "apisim")
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_text(yaml.safe_dump(_kubeconfig(sim, [], "elsewhere", nowhere)))
        aim = ["kubectl", "--kubeconfig", sim.kubeconfig, "--context", "apisim"]
        assert answer["next_commands"]
        for text in answer["next_commands"]:
            argv = shlex.split(text)
            assert argv[:5] == aim, text
            if _verb(text) in READING:
                ran = kubectl(argv[1:], str(elsewhere), tmp_path)
                assert ran.returncode == 0, f"{text}\n{ran.stderr.strip()}"
