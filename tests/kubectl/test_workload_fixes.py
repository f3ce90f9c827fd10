"""A LeaderWorkerSet's, TrainJob's or JobSet gang's fix is a command that works and a change that
removes the cause it names. The real kubectl runs each of the fix's commands against the API simulator
serving the case's snapshot, with `--dry-run=client`: a patch, label or scale prints the object as
changed, which replaces the old one; a deleted pod is left out. The snapshot so changed is asked
again, as the controllers have not acted yet: a fix that ends the cause's objects (a leader on a node
that is gone, groups placed in part, a TrainJob suspended by hand) moves the answer to another
verdict, or lets the blocking pod fit; a fix to what a controller or scheduler reads (a startup or
restart policy, a node's label, a PodGroup's minMember) is no longer offered, its cause gone. The
command that installs Trainer's default runtimes reads a remote kustomization and is not run here."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from cluster.snapshot import SnapshotReader
from devtools.apisim import serve
from devtools.botenv import kubectl
from devtools.corpus import Case, answer, cases
from devtools.kubereal import objects_of
from diagnosis.lws.keys import GROUP_INDEX_LABEL
from diagnosis.model import Diagnosis, Fix, PodVerdict
from diagnosis.objects import kind, labels, name, namespace
from diagnosis.trainjob.explain import DEFAULT_RUNTIMES

pytestmark = pytest.mark.kubectl


def _answer(snapshot: Path, case: Case) -> Diagnosis:
    return asyncio.run(answer(SnapshotReader.from_path(snapshot), case))


WORKLOADS = ("leaderworkerset", "trainjob", "clustertrainingruntime", "podgroup")


def _own(answer: Diagnosis, fix: Fix) -> bool:
    """A fix the workload's explainer makes: to the workload or its runtime, or, for workers not
    created, to the leader or its node (a blocking pod's triage makes the others, tested with it)."""
    return fix.objects[0].split("/")[0] in WORKLOADS or answer.verdict == "workers-not-created"


FIXED = [
    (case, fix)
    for case in (
        *cases("lws"),
        *cases("trainjob"),
        *(c for c in cases("jobset") if c.verdict == "gang-unsatisfiable"),
    )
    for found in [_answer(case.snapshot, case)]
    for fix in found.fixes
    if fix.objects and _own(found, fix)
]
"""Every fix of the corpus's LeaderWorkerSet and TrainJob answers that their explainers make, and of a
JobSet's gang."""

ENDS = ("delete", "scale")
"""Verbs whose change a re-read sees at once: the object gone, fewer groups."""


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return kind(obj), namespace(obj), name(obj)


def _changed(
    objects: list[dict[str, Any]], argv: list[str], kubeconfig: str, home: Path
) -> list[dict[str, Any]]:
    """The objects once kubectl has made the change `argv` (a kubectl command line, without `kubectl`)
    as a client-side dry run."""
    verb = argv[0]
    printing = [] if verb == "delete" else ["-o", "json"]
    done = kubectl([*argv, "--dry-run=client", *printing], kubeconfig, home)
    assert done.returncode == 0, f"{shlex.join(argv)}\n{done.stderr.strip()}"
    if verb == "delete":  # kubectl delete pod NAME -n NS
        gone = ("Pod", argv[argv.index("-n") + 1], argv[2])
        assert gone in {_key(o) for o in objects}
        return [o for o in objects if _key(o) != gone]
    written = json.loads(done.stdout)
    if verb == "scale":
        # A client-side dry run of scale prints the object as read: the count is the command's, and the
        # LWS controller removes the groups past it.
        replicas = int(argv[-1].removeprefix("--replicas="))
        written["spec"]["replicas"] = replicas
        objects = [o for o in objects if not _past(o, name(written), replicas)]
    return [written if _key(o) == _key(written) else o for o in objects]


def _past(obj: dict[str, Any], lws: str, replicas: int) -> bool:
    index = labels(obj).get(GROUP_INDEX_LABEL)
    mine = labels(obj).get("leaderworkerset.sigs.k8s.io/name") == lws
    return mine and index is not None and int(index) >= replicas


@pytest.mark.parametrize(("case", "fix"), FIXED, ids=[f"{c.id}:{f.summary[:40]}" for c, f in FIXED])
def test_a_workload_fix_runs_and_removes_its_cause(case: Case, fix: Fix, tmp_path: Path) -> None:
    before = _answer(case.snapshot, case)
    commands = [shlex.split(c.text) for c in fix.commands]
    assert commands
    assert all(c.changes for c in fix.commands)
    if any(DEFAULT_RUNTIMES in argv for argv in commands):
        assert commands == [["kubectl", "apply", "--server-side", "-k", DEFAULT_RUNTIMES]]
        return
    objects = objects_of(case.snapshot)
    with serve(case.snapshot) as sim:
        for argv in commands:
            assert argv[0] == "kubectl"
            objects = _changed(objects, argv[1:], sim.kubeconfig, tmp_path)
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    after = _answer(changed, case)
    if any(argv[1] in ENDS for argv in commands) or "resume" in fix.summary:
        # Another verdict, or the blocking pod now fits: the scheduler places it at its next attempt.
        assert after.verdict != before.verdict or after.pod_verdict is PodVerdict.SCHEDULABLE, after.summary
    else:
        assert fix.summary not in [f.summary for f in after.fixes], after.summary
        assert after.evidence != before.evidence


def test_the_corpus_has_a_workload_fix_of_each_kind() -> None:
    verbs = {shlex.split(c.text)[1] for _, f in FIXED for c in f.commands}
    assert {"patch", "label", "delete", "scale", "apply"} <= verbs
