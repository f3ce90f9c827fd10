"""Bad input never raises out of the JobSet explainers, and the same input gives the same answer:
arbitrary JSON in every slot of the view, real corpus objects with fields torn out or replaced by the
wrong type, and arbitrary pasted text."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from devtools.corpus import Case
from devtools.jobset_corpus.world import NOW
from diagnosis.jobset.admission import explain_message
from diagnosis.jobset.explain import explain
from diagnosis.model import Diagnosis, JobSetVerdict
from diagnosis.views import JobSetView
from tests.unit.hostile import SETTINGS, tear
from tests.unit.test_jobset_corpus import CASES, _items, view_of

EXAMPLES = settings(SETTINGS, max_examples=120)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(
        ["True", "False", "0", "Failed", "Pending", "FailedCreate", "RestartingJobSet", "jobset-x", ""]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = [
    "metadata",
    "spec",
    "status",
    "kind",
    "apiVersion",
    "involvedObject",
    "reason",
    "message",
    "conditions",
    "labels",
    "annotations",
    "name",
    "namespace",
    "uid",
    "ownerReferences",
    "restarts",
    "suspend",
    "nodeName",
    "phase",
    "replicatedJobs",
    "failurePolicy",
    "coordinator",
    "containerStatuses",
    "type",
]
fields = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)
objects = st.dictionaries(
    st.sampled_from(KEYS), st.one_of(json_values, fields, st.lists(fields, max_size=2)), max_size=5
)
"""Objects shaped like the API's (known keys, nested two levels) with anything at all in them."""


def _same_twice(view: JobSetView) -> Diagnosis:
    first = explain(view)
    assert explain(view) == first
    assert isinstance(first.verdict, JobSetVerdict)
    assert first.verdict is not JobSetVerdict.UNKNOWN
    return first


@EXAMPLES
@given(
    jobset=objects,
    jobs=st.lists(objects, max_size=3),
    pods=st.lists(objects, max_size=3),
    events=st.lists(objects, max_size=3),
    nodes=st.lists(objects, max_size=3),
    workloads=st.lists(objects, max_size=2),
)
def test_arbitrary_objects_never_raise(
    jobset: dict[str, Any],
    jobs: list[Any],
    pods: list[Any],
    events: list[Any],
    nodes: list[Any],
    workloads: list[Any],
) -> None:
    view = JobSetView(
        jobset, tuple(jobs), tuple(pods), tuple(events), tuple(nodes), tuple(pods), tuple(workloads), NOW
    )
    _same_twice(view)


@EXAMPLES
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32), odds=st.sampled_from([0.02, 0.08, 0.2, 0.5]))
def test_torn_real_objects_never_raise(case: Case, seed: int, odds: float) -> None:
    view = view_of(_items(case.snapshot), case.namespace, case.name)
    rng = random.Random(seed)
    torn = JobSetView(
        jobset=tear(view.jobset, rng, odds / 2),
        jobs=tuple(tear(o, rng, odds) for o in view.jobs),
        pods=tuple(tear(o, rng, odds) for o in view.pods),
        events=tuple(tear(o, rng, odds) for o in view.events),
        nodes=tuple(tear(o, rng, odds) for o in view.nodes),
        bound_pods=tuple(tear(o, rng, odds) for o in view.bound_pods),
        workloads=tuple(tear(o, rng, odds) for o in view.workloads),
        now=NOW,
    )
    _same_twice(torn)


@EXAMPLES
@given(case=st.sampled_from(CASES), now=st.datetimes(timezones=st.just(UTC)) | st.datetimes())
def test_any_reading_time_gives_the_same_verdict(case: Case, now: datetime) -> None:
    """`now` only dates the evidence; the verdict comes from the objects."""
    view = view_of(_items(case.snapshot), case.namespace, case.name, now)
    assert _same_twice(view).verdict == case.verdict


@EXAMPLES
@given(
    text=st.text(max_size=400)
    | st.builds(
        lambda a, b: a + b,
        st.text(max_size=50),
        st.sampled_from(
            [
                "follower pod node selector not set",
                "expected 1 leader pod (",
                "but got 7",
                "exceeded quota: ",
                'RuntimeClass "',
                "missing selector: ",
                "node does not have topology label: ",
                'failed calling webhook "',
                'no endpoints available for service "',
                "https://a.b.svc",
                'job "',
                "denied the request: ",
            ]
        ),
    )
)
def test_pasted_text_never_raises(text: str) -> None:
    first = explain_message(text)
    assert explain_message(text) == first
    assert first.next_commands


def test_names_that_could_not_exist_never_reach_a_command() -> None:
    (case,) = [c for c in CASES if c.snapshot.stem == "create-rejected-quota"]
    items = json.loads(json.dumps(_items(case.snapshot)))
    for obj in items:
        if obj["kind"] in ("JobSet", "Job", "Pod", "Event"):
            obj["metadata"]["namespace"] = "team-a; rm -rf /"
        if obj["kind"] == "Event":
            obj["involvedObject"]["namespace"] = "team-a; rm -rf /"
    view = view_of(tuple(items), "team-a; rm -rf /", case.name)
    answer = explain(view)
    assert answer.verdict == JobSetVerdict.CREATE_REJECTED
    assert all("rm -rf" not in c.text for c in answer.next_commands)
