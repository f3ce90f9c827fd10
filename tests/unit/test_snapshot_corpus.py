"""Every corpus case read from its snapshot file by `SnapshotReader` gets the expected answer: the
snapshot path puts the right objects in each view (the unit tests of the classifier and explainer
build their views by hand)."""

from __future__ import annotations

import pytest

from cluster.snapshot import SnapshotReader
from devtools.corpus import Case, cases
from handlers import lws
from handlers.jobset import why
from handlers.reply import Scope
from handlers.triage import triage


@pytest.mark.parametrize("case", cases("triage"), ids=lambda c: c.id)
async def test_triage_corpus(case: Case) -> None:
    scope = Scope(str(case.snapshot))
    reply = await triage(SnapshotReader.from_path(case.snapshot), case.namespace, case.name, scope)
    assert reply.diagnosis.verdict == case.verdict
    assert reply.cluster == str(case.snapshot)


@pytest.mark.parametrize("case", cases("jobset"), ids=lambda c: c.id)
async def test_jobset_corpus(case: Case) -> None:
    reader, scope = SnapshotReader.from_path(case.snapshot), Scope(str(case.snapshot))
    answer = (await why(reader, case.namespace, case.name, scope)).diagnosis
    assert (answer.verdict, answer.pod_verdict, answer.cause) == (case.verdict, case.pod_verdict, case.cause)


@pytest.mark.parametrize("case", cases("lws"), ids=lambda c: c.id)
async def test_lws_corpus(case: Case) -> None:
    reader, scope = SnapshotReader.from_path(case.snapshot), Scope(str(case.snapshot))
    answer = (await lws.why(reader, case.namespace, case.name, scope)).diagnosis
    assert (answer.verdict, answer.pod_verdict, answer.cause) == (case.verdict, case.pod_verdict, case.cause)


@pytest.mark.parametrize("case", cases("trainjob"), ids=lambda c: c.id)
async def test_trainjob_corpus(case: Case) -> None:
    """`/jobset why` on a TrainJob's name answers about the TrainJob."""
    reader, scope = SnapshotReader.from_path(case.snapshot), Scope(str(case.snapshot))
    reply = await why(reader, case.namespace, case.name, scope)
    assert reply.target is not None
    assert reply.target.kind == "trainjob"
    answer = reply.diagnosis
    assert (answer.verdict, answer.pod_verdict, answer.cause) == (case.verdict, case.pod_verdict, case.cause)
