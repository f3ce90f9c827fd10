"""`kubewhy snapshot` over the API simulator: for every corpus case, the objects the live answer reads,
saved as a snapshot file, answer as the live cluster did, and hold no Secret and no ConfigMap but
cluster-autoscaler's status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot import render
from cluster import capture
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader
from devtools.apisim import serve
from devtools.corpus import Case, cases
from devtools.kubereal import objects_of
from diagnosis.objects import kind, name, namespace, uid
from handlers import jobset, lws
from handlers.reply import Reply, Scope
from handlers.triage import triage
from tests.live.support import live_reader

CASES = [*cases("triage"), *cases("jobset"), *cases("lws"), *cases("trainjob")]

SAID = ("verdict", "pod_verdict", "cause", "summary")
"""What an answer says, as the parity tests compare it (`tests/live/test_parity.py`): the evidence
differs where the live reader read less than a snapshot holds (the nodes of a nodeSelector, listed by
the server), and ages by the reading time (a snapshot's is its newest timestamp)."""


async def ask(reader: LiveReader | SnapshotReader, case: Case) -> Reply:
    """The case asked as its command asks it (a TrainJob by `jobset why` on its name)."""
    scope = Scope("corpus")
    if case.kind == "triage":
        return await triage(reader, case.namespace, case.name, scope)
    if case.kind == "lws":
        return await lws.why(reader, case.namespace, case.name, scope)
    return await jobset.why(reader, case.namespace, case.name, scope)


async def take(reader: LiveReader, case: Case) -> tuple[Reply, dict[str, object]]:
    """The live answer, and the snapshot of what it read."""
    replies: list[Reply] = []

    async def asked() -> None:
        replies.append(await ask(reader, case))

    taken = await capture.of(reader, asked)
    return replies[0], taken


def said(reply: Reply) -> dict[str, object]:
    """What the answer says, and whether a node will come (the state: the autoscalers' events on
    their own objects must be captured too)."""
    answer = render.as_json(reply)
    return {k: answer.get(k) for k in SAID} | {"autoscaling": (answer["autoscaling"] or {}).get("state")}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_the_captured_file_answers_as_the_live_cluster(case: Case, tmp_path: Path) -> None:
    with serve(case.snapshot) as sim:
        async with live_reader(sim) as reader:
            reply, taken = await take(reader, case)
    live = said(reply)
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(taken))
    assert said(await ask(SnapshotReader.from_path(path), case)) == live
    items = taken["items"]
    assert isinstance(items, list)
    assert "Secret" not in {kind(o) for o in items}
    assert {(namespace(o), name(o)) for o in items if kind(o) == "ConfigMap"} <= {capture.AUTOSCALER_STATUS}
    # The simulator makes the Namespace of every object, as a cluster has it: a read of one is kept.
    made = {f"sim-ns-{namespace(o)}" for o in objects_of(case.snapshot)}
    assert {uid(o) for o in items} <= {uid(o) for o in objects_of(case.snapshot)} | made
    assert all("managedFields" not in o["metadata"] for o in items)
