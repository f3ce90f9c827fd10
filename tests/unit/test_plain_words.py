"""The 3 a.m. screen over every answer of the corpus (`/triage`, `/jobset why`, LeaderWorkerSets,
TrainJobs, the *Will a node come?* cases) and of the random clusters: a cause line read at a glance,
evidence lines that fit, fixes in the user's words and ranked by harm, and a thread in the order a
person acts in (issue 26)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

from bot import blocks
from bot.checks import Check
from bot.render import as_text
from cluster.snapshot import SnapshotReader
from devtools import random_clusters
from devtools.corpus import Case, answer, every_case
from devtools.workloads import NODE, gpu_node, gpu_pod
from diagnosis.model import CAUSE_CHARS, EVIDENCE_CHARS, Diagnosis, Fix, Harm
from diagnosis.objects import Object, Ref, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify
from diagnosis.triage.resources import effective_requests
from diagnosis.workloads import top_owner
from handlers.reply import Reply, Scope
from handlers.requests import Kind, Target

CASES = every_case()

INTERNAL = (
    "cannot be shown",
    "kubewhy does not",
    "does not model",
    "not modelled",
    "nodes are not read",
    "no object says",
    "TODO",
    "FIXME",
)
"""Notes kubewhy's authors wrote to each other, never words for the person who asked."""

_PLACEHOLDER = re.compile(r"\{(?:[a-z]+_[a-z_]+|namespace)\}")
"""`{cluster_name}`, `{start_time}`, `{namespace}`…: a query's placeholder left unfilled (a jsonpath
template's `{end}` or `{.spec}` is not one)."""

_FREE_OF = re.compile(r"(\d+) (\S+) free of (\d+) \((\d+) held")


@cache
def _answered(case: Case) -> tuple[Diagnosis, tuple[Object, ...]]:
    """The case's diagnosis, and the pods its cluster holds (to know whose pods a fix ends)."""
    reader = SnapshotReader.from_path(case.snapshot)
    pods = tuple(o for o in json.loads(case.snapshot.read_text())["items"] if o.get("kind") == "Pod")
    return asyncio.run(answer(reader, case)), pods


def _random() -> list[Diagnosis]:
    found = []
    with TemporaryDirectory() as folder:
        for seed in range(300):
            snapshot = Path(folder) / f"random-{seed}.json"
            snapshot.write_text(json.dumps(random_clusters.scenario(seed)))
            reader = SnapshotReader.from_path(snapshot)
            view, _ = asyncio.run(reader.triage_view(random_clusters.NAMESPACE, random_clusters.POD))
            found.append(classify(view))
    return found


def _words_fit(d: Diagnosis) -> None:
    assert len(d.summary) <= CAUSE_CHARS, d.summary
    for line in (line for e in d.evidence for line in e.splitlines()):
        assert len(line) <= EVIDENCE_CHARS, line
    for text in (d.summary, *(f.summary for f in d.fixes), *(c.purpose for c in d.next_commands)):
        assert not [note for note in INTERNAL if note in text], text
    for free, resource, allocatable, held in _FREE_OF.findall(" ".join((d.summary, *d.evidence))):
        assert int(free) == int(allocatable) - int(held), (
            f"{free} {resource} free of {allocatable}, {held} held"
        )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_cause_line_and_the_evidence_are_plain_and_fit(case: Case) -> None:
    _words_fit(_answered(case)[0])


def test_the_random_clusters_answers_are_plain_and_fit() -> None:
    for diagnosis in _random():
        _words_fit(diagnosis)
        _ranked(diagnosis, ())


def _ranked(d: Diagnosis, pods: tuple[Object, ...]) -> None:
    assert [f.harm for f in d.fixes] == sorted(f.harm for f in d.fixes), [f.summary for f in d.fixes]
    # A pod already being deleted is past its controller's say: its replacement is made already.
    owners = {(namespace(p), name(p)): top_owner(p) for p in pods if "deletionTimestamp" not in p["metadata"]}
    for fix in d.fixes:
        for ended in (o.split("/", 2)[1:] for o in fix.objects if o.startswith("pod/")):
            owner = owners.get((ended[0], ended[1]))
            if owner is None or owner.kind == "Pod" or fix.harm is Harm.KEEPS:
                continue
            # A pod a controller owns is named by its workload; a Deployment's is never ended alone.
            assert f"{owner.kind} " in fix.summary, fix.summary
            assert owner.name in fix.summary, fix.summary
            if owner.kind in ("Deployment", "ReplicaSet"):
                assert any(c.text.startswith("kubectl scale ") for c in fix.commands), fix.summary


def _shrinks(before: Object, fix: Fix) -> bool:
    """The fix lowers what the pod requests of some resource."""
    if fix.pod_patch is None:
        return False
    after = effective_requests(merge_patch(before, fix.pod_patch))
    return any(after.get(r, 0) < n for r, n in effective_requests(before).items())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fixes_come_least_harm_first_and_name_the_workload_they_touch(case: Case) -> None:
    diagnosis, pods = _answered(case)
    _ranked(diagnosis, pods)
    asked = next((p for p in pods if (namespace(p), name(p)) == (case.namespace, case.name)), None)
    for fix in diagnosis.fixes:
        if asked is not None and _shrinks(asked, fix):
            assert fix.harm is Harm.SHRINKS, fix.summary


_KINDS: dict[str, Kind] = {
    "triage": "pod",
    "jobset": "jobset",
    "lws": "leaderworkerset",
    "trainjob": "trainjob",
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_thread_leads_with_the_first_fixs_command_and_says_each_cause_once(case: Case) -> None:
    diagnosis, _ = _answered(case)
    reply = Reply.of(Ref(_KINDS[case.kind], case.namespace, case.name), diagnosis, Scope("prod"))
    text = as_text(reply)
    target = Target(kind=_KINDS[case.kind], namespace=case.namespace, name=case.name, cluster="prod")
    check = Check(target, reply, datetime.now(UTC))
    thread = "\n".join(blocks.plain_text(m.blocks) for m in blocks.detail_messages(check))
    for shown in (text, thread):
        assert not _PLACEHOLDER.findall(shown)
        fixed = reply.diagnosis.fixes[0].commands if reply.diagnosis.fixes else ()
        if set(fixed) & set(reply.diagnosis.next_commands):
            first = min(reply.diagnosis.next_commands, key=lambda c: shown.index(c.text))
            assert first in fixed
    if diagnosis.cause is not None:
        assert text.count(str(diagnosis.cause)) == 1, text


def test_the_sentinel_frees_a_node_held_by_a_deployment_by_scaling_it_down(tmp_path: Path) -> None:
    """The sentinel's burst: pods of five Deployments wait for the one GPU a Deployment's pod holds."""
    items = [gpu_node(NODE, 1), gpu_pod("ml-busy", "holder", 0, node=NODE)]
    items += [gpu_pod("ml-burst", f"burst-{i}", 0) for i in range(5)]
    snapshot = tmp_path / "burst.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    view, _ = asyncio.run(
        SnapshotReader.from_path(snapshot).triage_view("ml-burst", "burst-0-7d9f8c6b5-00000")
    )
    found = classify(view)
    assert "0 nvidia.com/gpu free of 1 (1 held by ml-busy/holder-7d9f8c6b5-00000)" in found.summary
    first = found.fixes[0]
    assert first.summary.startswith(f"free {NODE}: scale Deployment ml-busy/holder down by 1 ")
    assert [c.text for c in first.commands] == [
        "kubectl annotate pod holder-7d9f8c6b5-00000 -n ml-busy "
        "controller.kubernetes.io/pod-deletion-cost=-2147483648 --overwrite",
        "kubectl scale deployment holder -n ml-busy --current-replicas=1 --replicas=0",
    ]
    assert not any(c.text.startswith("kubectl delete pod holder-") for f in found.fixes for c in f.commands)
