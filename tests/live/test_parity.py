"""The live path answers as the snapshot path does: every corpus case, served over HTTP by the API
simulator and read by the real `kubernetes` client, gets the verdict that reading the same snapshot
file gives — and the one the corpus expects. With the cache of nodes and bound pods on, every case
gets the same diagnosis as a direct read of every pod (`--all-pods`), and reads no node and no bound
pod from the API."""

from __future__ import annotations

import pytest

from cluster.snapshot import SnapshotReader
from devtools.apisim import Request, serve
from devtools.corpus import Case, answer, cases
from diagnosis import events
from diagnosis.jobset.explain import explain
from diagnosis.lws.explain import explain as explain_lws
from diagnosis.model import Diagnosis
from diagnosis.objects import Object, name, namespace, spec, uid
from diagnosis.triage.classify import classify, serving_nothing
from diagnosis.views import JobSetView, TriageView
from tests.live.support import OWN_JOBSET, OWN_TRIAGE, cached_reader, live_reader

TRIAGE = [*cases("triage"), *OWN_TRIAGE]
JOBSET = [*cases("jobset"), *OWN_JOBSET]
LWS = cases("lws")
TRAINJOB = cases("trainjob")


def _fixes(answer: Diagnosis) -> list[tuple[str, tuple[str, ...]]]:
    """Each fix and the nodes it is proven to open: a live read reads the nodes and pods its check
    needs (a workload's: those of its pods' node pools and of its exclusive-topology labels too)."""
    return [(f.summary, f.opens) for f in answer.fixes]


def _uids(objects: tuple[Object, ...]) -> list[str]:
    return sorted(uid(o) for o in objects)


def _served(objects: tuple[Object, ...]) -> tuple[Object, ...]:
    """What an API server can hold of these: one object per namespace and name (a snapshot may list a
    deleted Job beside the one recreated under its name; the later one is the live one)."""
    return tuple({(namespace(o), name(o)): o for o in objects}.values())


@pytest.mark.parametrize("case", TRIAGE, ids=lambda c: c.id)
async def test_triage_verdict_is_the_snapshots(case: Case) -> None:
    snapshot = SnapshotReader.from_path(case.snapshot)
    offline, _ = await snapshot.triage_view(case.namespace, case.name)
    with serve(case.snapshot, now=snapshot.now) as sim:
        async with live_reader(sim) as reader:
            view, prepared = await reader.triage_view(case.namespace, case.name)

    live, expected = classify(view, prepared), classify(offline)
    assert live.verdict == expected.verdict == case.verdict
    assert live.summary == expected.summary
    assert _fixes(live) == _fixes(expected)
    assert uid(view.pod) == uid(offline.pod)
    assert _uids(view.events) == _uids(offline.events)
    assert {r.verb for r in sim.requests} <= {"get", "list"}


@pytest.mark.parametrize("case", JOBSET, ids=lambda c: c.id)
async def test_jobset_view_holds_the_snapshots_objects(case: Case) -> None:
    """The objects of the JobSet are the same, and every pending pod triages the same from the
    live view's nodes and bound pods as from the whole snapshot's."""
    snapshot = SnapshotReader.from_path(case.snapshot)
    offline = await snapshot.jobset_view(case.namespace, case.name)
    with serve(case.snapshot, now=snapshot.now) as sim:
        async with live_reader(sim) as reader:
            view = await reader.jobset_view(case.namespace, case.name)

    assert uid(view.jobset) == uid(offline.jobset)
    for field in ("jobs", "pods", "events", "workloads"):
        assert _uids(getattr(view, field)) == _uids(_served(getattr(offline, field))), field
    bound_to = {spec(p).get("nodeName") for p in view.pods}
    assert bound_to & {name(n) for n in offline.nodes} <= {name(n) for n in view.nodes}
    for pod in view.pods:
        assert _pod_triage(view, pod) == _pod_triage(offline, pod), name(pod)


def _pod_triage(view: JobSetView, pod: Object) -> str:
    about = tuple(e for e in view.events if events.is_about(e, pod))
    return classify(TriageView(pod, view.nodes, view.bound_pods, about, view.now, dra=view.dra)).verdict


@pytest.mark.parametrize("case", JOBSET, ids=lambda c: c.id)
async def test_jobset_verdict_is_the_snapshots(case: Case) -> None:
    snapshot = SnapshotReader.from_path(case.snapshot)
    expected = explain(await snapshot.jobset_view(case.namespace, case.name))
    with serve(case.snapshot, now=snapshot.now) as sim:
        async with live_reader(sim) as reader:
            got = explain(await reader.jobset_view(case.namespace, case.name))

    assert (got.verdict, got.cause, got.pod_verdict) == (
        expected.verdict,
        expected.cause,
        expected.pod_verdict,
    )
    assert (got.verdict, got.pod_verdict, got.cause) == (case.verdict, case.pod_verdict, case.cause)
    assert _fixes(got) == _fixes(expected)


@pytest.mark.parametrize("case", LWS, ids=lambda c: c.id)
async def test_lws_view_and_verdict_are_the_snapshots(case: Case) -> None:
    """The LeaderWorkerSet's StatefulSets, pods and events are the same, and so is the answer."""
    snapshot = SnapshotReader.from_path(case.snapshot)
    offline = await snapshot.lws_view(case.namespace, case.name)
    with serve(case.snapshot, now=snapshot.now) as sim:
        async with live_reader(sim) as reader:
            view = await reader.lws_view(case.namespace, case.name)

    assert uid(view.lws) == uid(offline.lws)
    for field in ("statefulsets", "pods", "events"):
        assert _uids(getattr(view, field)) == _uids(getattr(offline, field)), field
    got, expected = explain_lws(view), explain_lws(offline)
    assert (got.verdict, got.pod_verdict, got.cause, got.summary) == (
        expected.verdict,
        expected.pod_verdict,
        expected.cause,
        expected.summary,
    )
    assert (got.verdict, got.pod_verdict, got.cause) == (case.verdict, case.pod_verdict, case.cause)
    assert _fixes(got) == _fixes(expected)
    assert {r.verb for r in sim.requests} <= {"get", "list"}


@pytest.mark.parametrize("case", TRAINJOB, ids=lambda c: c.id)
async def test_trainjob_verdict_is_the_snapshots(case: Case) -> None:
    snapshot = SnapshotReader.from_path(case.snapshot)
    expected = await answer(snapshot, case)
    with serve(case.snapshot, now=snapshot.now) as sim:
        async with live_reader(sim) as reader:
            got = await answer(reader, case)

    assert (got.verdict, got.pod_verdict, got.summary) == (
        expected.verdict,
        expected.pod_verdict,
        expected.summary,
    )
    assert (got.verdict, got.pod_verdict, got.cause) == (case.verdict, case.pod_verdict, case.cause)
    assert _fixes(got) == _fixes(expected)
    assert {r.verb for r in sim.requests} <= {"get", "list"}


def _cacheable(request: Request) -> bool:
    """A read the cache answers instead: nodes, or pods selected by the node they are bound to (not
    the cache's own watches, which it may open once its lists are in, nor the unbound pods nominated
    to a node, which are read live). Pods selected by a label selector (the peers of pod affinity and
    spread) are read from the API server even with the cache."""
    selector = request.query.get("fieldSelector", "")
    by_node = "spec.nodeName" in selector and "nominatedNodeName" not in selector
    return request.verb != "watch" and (
        request.resource == "nodes" or (by_node and "labelSelector" not in request.query)
    )


@pytest.mark.parametrize("case", TRIAGE, ids=lambda c: c.id)
async def test_triage_with_the_cache_is_the_same_diagnosis(case: Case) -> None:
    with serve(case.snapshot, now=SnapshotReader.from_path(case.snapshot).now) as sim:
        async with live_reader(sim, all_pods=True) as direct, cached_reader(sim) as cached:
            view, prepared = await direct.triage_view(case.namespace, case.name)
            expected = classify(view, prepared)
            start = len(sim.requests)
            got = classify(*await cached.triage_view(case.namespace, case.name))
            asked = sim.requests[start:]

    assert got == expected
    assert got.verdict == case.verdict
    # The pods on nodes that serve no device are read live: the cache keeps only pods holding devices,
    # and the answer quotes the device plugin pods there.
    serving = {f"spec.nodeName={n}," for n in serving_nothing(view.pod, view.nodes)}
    uncached = [
        r for r in asked if _cacheable(r) and not any(s in r.query.get("fieldSelector", "") for s in serving)
    ]
    assert [r.path for r in uncached] == []


@pytest.mark.parametrize("case", JOBSET, ids=lambda c: c.id)
async def test_jobset_with_the_cache_is_the_same_diagnosis(case: Case) -> None:
    with serve(case.snapshot, now=SnapshotReader.from_path(case.snapshot).now) as sim:
        async with live_reader(sim) as direct, cached_reader(sim) as cached:
            expected = explain(await direct.jobset_view(case.namespace, case.name))
            start = len(sim.requests)
            got = explain(await cached.jobset_view(case.namespace, case.name))
            asked = sim.requests[start:]

    assert got == expected
    assert (got.verdict, got.pod_verdict, got.cause) == (case.verdict, case.pod_verdict, case.cause)
    assert [r.path for r in asked if _cacheable(r)] == []
