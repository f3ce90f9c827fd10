"""The commands /triage suggests: one kubectl invocation each, safely quoted, names checked, changing
ones marked; and the read commands run for real, by kubectl, against the API simulator serving the
snapshot they were made from."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from devtools.apisim import serve
from devtools.botenv import kubectl as kubectl_run
from devtools.corpus import Case
from diagnosis.commands import describe, events_about
from diagnosis.model import Command
from diagnosis.triage import commands as kubectl
from diagnosis.triage.classify import classify
from diagnosis.triage.steps.allocatable_zero import node_offer
from diagnosis.triage.steps.exhausted import consumers
from diagnosis.triage.steps.taint import node_taints, uncordon
from tests.unit.test_gpu_corpus import CASES, items, view_of

READ_VERBS = {"get", "describe", "logs"}
WRITTEN = " > "
"""A command that writes the object a fix recreates from: `kubectl patch … --dry-run=client -o yaml > F`."""


def commands(case: Case) -> tuple[Command, ...]:
    return classify(view_of(case.snapshot, case.namespace, case.name)).next_commands


ALL = [(case, command) for case in CASES for command in commands(case)]


def test_every_verdict_suggests_commands() -> None:
    assert all(commands(case) for case in CASES)


@pytest.mark.parametrize(("case", "command"), ALL, ids=[f"{c.id}:{i}" for i, (c, _) in enumerate(ALL)])
def test_one_kubectl_invocation_in_canonical_quoting(case: Case, command: Command) -> None:
    text, _, saved = command.text.partition(WRITTEN)
    argv = shlex.split(text)
    assert argv[0] == "kubectl"
    assert shlex.join(argv) == text  # every value quoted exactly where the shell needs it
    assert command.purpose
    verb = argv[1]
    assert (verb not in READ_VERBS) is command.changes, command.text
    # `cordon`: only a node whose NVIDIA driver does not load (a placed pod's fix); `rollout restart`:
    # only Kueue, once its configuration is changed.
    changing = {"uncordon", "cordon", "delete", "label", "patch", "replace", "annotate", "scale", "rollout"}
    assert verb in READ_VERBS | changing
    assert verb != "rollout" or argv[2:5] == ["restart", "deployment", "kueue-controller-manager"]
    # A claim or template is patched only as a file to recreate from (their spec cannot be updated in
    # place); a Deployment's strategy, a device plugin DaemonSet's tolerations (or the GPU Operator's
    # ClusterPolicy that writes them) and a ClusterQueue's quota are patched in place; a pod only
    # loses its scheduling gates (the one change the API allows to them).
    recreated = verb == "patch" and argv[2] in ("resourceclaim", "resourceclaimtemplate")
    assert recreated == bool(saved) == ("--dry-run=client" in argv)
    ungated = argv[2:3] == ["pod"] and '[{"op":"remove","path":"/spec/schedulingGates"}]' in argv
    in_place = ("deployment", "daemonset", "clusterpolicy", "clusterqueue")
    assert verb != "patch" or recreated or argv[2] in in_place or ungated
    assert not saved or (shlex.quote(saved) == saved and saved.endswith(".yaml"))


def test_changing_commands_are_marked() -> None:
    command = uncordon("gpu-node-a")
    assert command is not None
    assert command.changes
    assert command.text == "kubectl uncordon gpu-node-a"


@pytest.mark.parametrize("bad", ["Gpu-Node", "node;reboot", "a b", "-o", "$(id)", "", "x" * 254, "nodé"])
def test_names_that_cannot_exist_give_no_command(bad: str) -> None:
    assert kubectl.node_details(bad) is None
    assert node_taints(bad) is None
    assert uncordon(bad) is None
    assert kubectl.device_plugin_pods(bad) is None
    assert consumers(bad, ["nvidia.com/gpu"]) is None
    assert node_offer(bad, ["nvidia.com/gpu"]) is None
    assert describe("pod", bad, "trainer-0", "the pod") is None
    assert describe("pod", "ml", bad, "the pod") is None
    assert events_about("ml", bad, "the pod's events") is None
    assert kubectl.kueue_workloads(bad) is None


def test_resource_names_are_checked_and_escaped() -> None:
    assert kubectl.nodes_offer(["nvidia.com/gpu';reboot'"]) is None
    offer = kubectl.nodes_offer(["nvidia.com/mig-1g.5gb"])
    assert offer is not None
    assert offer.text == (
        "kubectl get nodes -o 'custom-columns=NAME:.metadata.name,"
        "MIG-1G.5GB_CAPACITY:.status.capacity.nvidia\\.com/mig-1g\\.5gb,"
        "MIG-1G.5GB_ALLOCATABLE:.status.allocatable.nvidia\\.com/mig-1g\\.5gb'"
    )
    assert kubectl.nodes_with_labels(["bad key", "nvidia.com/gpu.product"]).text == (
        "kubectl get nodes -L nvidia.com/gpu.product"
    )


def test_device_plugin_logs_only_for_nvidia() -> None:
    assert kubectl.device_plugin_logs(["amd.com/gpu"]) is None
    logs = kubectl.device_plugin_logs(["nvidia.com/mig-3g.20gb"])
    assert logs is not None
    assert (
        logs.text == "kubectl logs -n gpu-operator -l app=nvidia-device-plugin-daemonset --prefix --tail=50"
    )


def _shape(case: Case, text: str) -> str:
    """The command with its names taken out: commands that differ only in names test the same thing."""
    names = [o["metadata"]["name"] for o in items(case.snapshot) if o["kind"] == "Node"]
    for name in sorted([*names, case.name, case.namespace], key=len, reverse=True):
        text = text.replace(name, "<name>")
    return text


def _examples() -> dict[Path, list[str]]:
    """One read command of each shape, by the snapshot it was made from."""
    first: dict[str, tuple[Path, str]] = {}
    for case, command in ALL:
        if not command.changes:
            first.setdefault(_shape(case, command.text), (case.snapshot, command.text))
    by_snapshot: dict[Path, list[str]] = {}
    for snapshot, text in first.values():
        by_snapshot.setdefault(snapshot, []).append(text)
    return by_snapshot


EXAMPLES = _examples()


@pytest.mark.kubectl
@pytest.mark.parametrize("snapshot", sorted(EXAMPLES), ids=lambda p: p.stem)
def test_read_commands_run_against_the_snapshot(snapshot: Path, tmp_path: Path) -> None:
    """Each shape of read command, run by real kubectl against the simulator serving the snapshot it
    was made from, exits 0 (an unknown flag, a bad JSONPath or field selector would not)."""
    with serve(snapshot) as sim:
        for text in EXAMPLES[snapshot]:
            done = kubectl_run(shlex.split(text)[1:], sim.kubeconfig, tmp_path)
            assert done.returncode == 0, f"{text}\n{done.stderr}"
