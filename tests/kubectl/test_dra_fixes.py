"""A fix to a ResourceClaim or ResourceClaimTemplate is a command that works and a change that opens
what it says. Their spec cannot be updated in place, so the fix writes the object as patched
(`kubectl patch --dry-run=client -o yaml > FILE`) and recreates it from the file. Here the real
kubectl writes that object against the API simulator serving the snapshot; put in the snapshot in
place of the old one (for a template, its spec in the claim the controller makes from it for the
pod), the verdict moves past the step the fix is for, and the nodes that pass every check are the
fix's `opens`."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.apisim import serve
from devtools.botenv import kubectl
from devtools.corpus import Case
from diagnosis.dra_objects import Dra, pod_claims
from diagnosis.model import Diagnosis, Fix, PodVerdict
from diagnosis.objects import kind, name, namespace
from diagnosis.triage.classify import classify, passing
from tests.unit.test_fixes import ANSWERS, LADDER
from tests.unit.test_gpu_corpus import items, view_of

pytestmark = pytest.mark.kubectl

WRITTEN = " > "
"""Where the written object goes: the command before it is what kubectl runs."""

RECREATING = [
    (c, d, f)
    for c, d in ANSWERS
    for f in d.fixes
    if any(cmd.changes and "--dry-run=client" in cmd.text for cmd in f.commands)
]


def _written(fix: Fix, kubeconfig: str, home: Path) -> dict[str, Any]:
    """The object the fix's first command writes, as the real kubectl writes it."""
    command = next(c for c in fix.commands if "--dry-run=client" in c.text)
    argv = shlex.split(command.text.split(WRITTEN)[0])
    done = kubectl(argv[1:], kubeconfig, home)
    assert done.returncode == 0, f"{command.text}\n{done.stderr.strip()}"
    written = yaml.safe_load(done.stdout)
    assert isinstance(written, dict)
    return written


def _recreated(
    objects: Sequence[Mapping[str, Any]], written: dict[str, Any], pod: Mapping[str, Any]
) -> list[Any]:
    """The snapshot's objects once the written object replaces the old one; a template's spec is
    also the spec of the claim made from it for the pod (its pod is recreated, so its claim is too)."""
    key = (kind(written), namespace(written), name(written))
    found = [written if (kind(o), namespace(o), name(o)) == key else o for o in objects]
    if kind(written) != "ResourceClaimTemplate":
        return found
    made = {c.generated for c in pod_claims(pod) if c.template == name(written) and c.generated}
    return [
        {**o, "spec": written["spec"]["spec"]}
        if kind(o) == "ResourceClaim" and namespace(o) == namespace(pod) and name(o) in made
        else o
        for o in found
    ]


@pytest.mark.parametrize(
    ("case", "before", "fix"), RECREATING, ids=[f"{c.id}:{f.summary[:40]}" for c, _, f in RECREATING]
)
def test_a_recreated_claim_moves_the_verdict_past_its_step_and_opens_what_it_says(
    case: Case, before: Diagnosis, fix: Fix, tmp_path: Path
) -> None:
    with serve(case.snapshot) as sim:
        written = _written(fix, sim.kubeconfig, tmp_path)
    view = view_of(case.snapshot, case.namespace, case.name)
    after = replace(view, dra=Dra.of(_recreated(items(case.snapshot), written, view.pod)))
    assert LADDER.index(PodVerdict(classify(after).verdict)) > LADDER.index(PodVerdict(before.verdict))
    assert passing(after) == fix.opens
    assert fix.opens
    saved = next(c for c in fix.commands if WRITTEN in c.text).text.split(WRITTEN)[1]
    assert [c.text for c in fix.commands if c.text.startswith("kubectl replace")] == [
        f"kubectl replace --force -f {saved}"
    ]


def test_the_corpus_recreates_claims_for_each_dra_funnel_verdict() -> None:
    fixed = {PodVerdict(d.verdict) for _, d, _ in RECREATING}
    assert {PodVerdict.NO_GPU_NODE, PodVerdict.ALLOCATABLE_ZERO, PodVerdict.EXHAUSTED} <= fixed
