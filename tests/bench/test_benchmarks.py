"""Every benchmark runs end to end on a tiny cluster, against the real parts (the API simulator in its
own process, the live reader, real kubectl, `kubewhy serve` with the local Slack). Nothing here
asserts a duration: these tests check that each benchmark measures what it claims to."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bench import burst, classifier, jobset, soak, sweep, triage
from bench.__main__ import BEGIN, END, QUICK, _sizes, write_markdown
from bench.apiserver import ROOT, Served, simulated
from bench.clusters import Size, run_p95_size
from bench.timing import Row, Sample, repeat, table
from bench.triage import Caps, Stopped, kubectl_json
from bot.metrics import Metrics
from cluster.live import LiveReader
from devtools.apisim import serve
from devtools.cluster import NOW, generate
from devtools.dra_cluster import on_dra
from diagnosis.dra_objects import Dra
from diagnosis.model import NodeComing, PodVerdict
from diagnosis.objects import name
from diagnosis.triage.classify import classify

TINY = {"nodes": 40, "pods_per_node": 10, "slices": 2, "hosts_per_slice": 4}


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with simulated(
        TINY["nodes"], TINY["pods_per_node"], slices=TINY["slices"], hosts_per_slice=TINY["hosts_per_slice"]
    ) as cluster:
        yield cluster


async def test_kubewhy_with_and_without_cache_and_the_baseline_give_the_same_verdict(served: Served) -> None:
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    async with triage.cached_reader(served, sync_timeout_s=30) as (cached, sync):
        try:
            first = await triage.first_question(cached, served.unpinned)
            assert (first.verdict, first.sample and first.sample.runs) == ("exhausted", 1)
            again = await triage.measure_new_placement(cached, served.pinned, runs=2, budget_s=10)
            assert (again.verdict, again.sample and again.sample.runs) == ("exhausted", 2)
            colder = triage.cache_row(served, "kubewhy + cache, first question", "pinned pod", again)
            assert (colder.met, colder.target) == ("", "")
            for case, pod in (("pinned pod", served.pinned), ("unpinned pod", served.unpinned)):
                direct = await triage.measure_kubewhy(reader, pod, runs=2, budget_s=10)
                from_cache = await triage.measure_kubewhy(cached, pod, runs=2, budget_s=10)
                theirs = triage.measure_baseline(served, pod, runs=1, budget_s=10, caps=Caps(30, 2))
                assert direct.sample is not None
                assert from_cache.sample is not None
                assert theirs.sample is not None
                assert (direct.sample.runs, from_cache.sample.runs, theirs.sample.runs) == (2, 2, 1)
                assert direct.verdict == from_cache.verdict == theirs.verdict == "exhausted"
                # From the cache, only the pod, its events and the pods nominated to a node (never
                # bound, so not in the cache) are read from the API: the cache keeps whether an
                # autoscaler is there (its status ConfigMap, Karpenter's NodePools and NodeClaims).
                assert from_cache.detail.startswith("3 calls")
                row = triage.kubewhy_row(served, "kubewhy", case, direct, theirs)
                assert "× faster" in row.result
        finally:
            await reader.aclose()
    assert sync.result.startswith(f"synced: {served.nodes} nodes")
    assert triage.baseline_row(served, "pinned pod", theirs).case.startswith("kubectl ×3")


def test_the_watchdog_stops_kubectl_past_its_time_cap() -> None:
    cluster = generate(**TINY)
    with serve(cluster.objects(), now=NOW) as sim, tempfile.TemporaryDirectory() as cache:
        sim.faults.latency = 3.0
        with pytest.raises(Stopped, match=r"kubectl get nodes stopped after \d+ s"):
            kubectl_json(sim.kubeconfig, cache, ["get", "nodes"], Caps(seconds=0.5, rss_gib=8))


async def test_a_cluster_error_is_reported_in_the_row_not_raised() -> None:
    cluster = generate(**TINY)
    with serve(cluster.objects(), now=NOW) as sim:
        sim.faults.forbid("pods")
        here = Served(
            url=sim.url,
            kubeconfig=sim.kubeconfig,
            nodes=len(cluster.nodes),
            pods=len(cluster.pods),
            objects=0,
            pinned=cluster.pinned,
            unpinned=cluster.unpinned,
            jobset=cluster.jobset,
            samples=(),
            startup_s=0,
            rss_mib=0,
        )
        reader = LiveReader.from_kubeconfig(here.kubeconfig, None)
        try:
            refused = await triage.measure_kubewhy(reader, here.pinned, runs=3, budget_s=5)
            row = await jobset.measure(reader, here, "kubewhy", runs=1, budget_s=5)
        finally:
            await reader.aclose()
    assert refused.sample is None
    assert refused.failure.startswith("failed after")
    assert "forbidden" in refused.failure.lower()
    assert (row.runs, row.met) == ("0", "NO")
    assert "forbidden" in row.result.lower()
    assert triage.kubewhy_row(here, "kubewhy", "pinned pod", refused, refused).median == "—"


async def test_the_classifier_is_timed_on_the_view_the_live_reader_reads(served: Served) -> None:
    cluster = generate(**TINY)
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        for pod, prefiltered in ((cluster.unpinned, False), (cluster.pinned, True)):
            ours, _ = classifier.view_of(cluster, pod, prefiltered)
            live, _ = await reader.triage_view(*pod)
            assert sorted(map(name, ours.nodes)) == sorted(map(name, live.nodes))
            assert sorted(map(name, ours.bound_pods)) == sorted(map(name, live.bound_pods))
            assert ours.prefiltered == live.prefiltered
    finally:
        await reader.aclose()
    async with triage.cached_reader(served, 30) as (cached, _):
        for pod, prefiltered in ((cluster.unpinned, False), (cluster.pinned, True)):
            ours, prepared = classifier.view_of(cluster, pod, prefiltered, devices_only=True)
            served_view, kept = await cached.triage_view(*pod)
            assert sorted(ours.nodes, key=name) == sorted(served_view.nodes, key=name)
            assert sorted(ours.bound_pods, key=name) == sorted(served_view.bound_pods, key=name)
            # The pods grouped by node as the cache groups them, and findings kept for the next question.
            assert prepared.grouped is not None
            assert kept.grouped is not None
            assert {n: sorted(g.pods, key=name) for n, g in prepared.grouped.items()} == {
                n: sorted(g.pods, key=name) for n, g in kept.grouped.items()
            }
            assert (prepared.findings is None, kept.findings is None) == (False, False)
    rows = classifier.measure(cluster, "tiny", runs=2, budget_s=5)
    # each pod on both views, then the drained fleet where the unpinned pod reaches node-resources
    assert [r.result.split(";")[0] for r in rows] == ["exhausted"] * 4 + ["node-resources"] * 2
    assert sum(r.case.endswith("as the cache serves it") for r in rows) == 3
    assert all("MiB" in r.result for r in rows)


async def test_the_classifier_is_timed_on_dra_views_as_the_live_reader_reads_them() -> None:
    """With the GPUs as DRA devices, the view the classifier is timed on holds the DRA objects parsed,
    and gives the verdict the live reader's view gives: every GPU of the pods' pool is held by a claim
    (exhausted)."""
    converted = on_dra(generate(**TINY))
    cluster, dra = converted.cluster, Dra.of(converted.dra_objects)
    with serve(converted.objects(), now=NOW) as sim:
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None)
        try:
            for pod, prefiltered in ((cluster.unpinned, False), (cluster.pinned, True)):
                ours, prepared = classifier.view_of(cluster, pod, prefiltered, dra=dra)
                live, read = await reader.triage_view(*pod)
                assert sorted(map(name, ours.nodes)) == sorted(map(name, live.nodes))
                assert sorted(map(name, ours.bound_pods)) == sorted(map(name, live.bound_pods))
                assert classify(ours, prepared).verdict == classify(live, read).verdict
                assert classify(ours, prepared).verdict is PodVerdict.EXHAUSTED
        finally:
            await reader.aclose()
    rows = classifier.measure(cluster, "tiny, GPUs by DRA", runs=1, budget_s=5, dra=dra)
    assert [r.case for r in rows] == [
        "unpinned pod, all nodes, read directly",
        "pinned pod, nodes prefiltered, read directly",
        "unpinned pod, as the cache serves it",
        "pinned pod, as the cache serves it",
    ]
    assert [r.result.split(";")[0] for r in rows] == ["exhausted"] * 4
    assert all("MiB" in r.result for r in rows)


async def test_the_autoscaling_row_is_timed_through_the_cache_on_a_cluster_whose_autoscaler_speaks() -> None:
    """The cluster carries cluster-autoscaler's status and its events; through the cache the pinned
    pod reads the pod, its events, the nominated pods and (its scale-up named a group) the events on
    the status ConfigMap, and a node is coming for it; the row has the 100 ms target."""
    size = Size(TINY["nodes"], TINY["pods_per_node"], 1, 0, 0, slices=2, hosts_per_slice=4, autoscaling=True)
    plan = replace(QUICK, sizes=(size,))
    with simulated(
        size.nodes, size.pods_per_node, slices=2, hosts_per_slice=4, autoscaling=True
    ) as cluster:
        assert cluster.label.endswith(", autoscaling on")
        reader = LiveReader.from_kubeconfig(cluster.kubeconfig, None)
        try:
            read = await reader.triage_view(*cluster.pinned)
            found = classify(*read)
        finally:
            await reader.aclose()
        assert found.autoscaling is not None
        assert found.autoscaling.state is NodeComing.COMING
        rows = await run_p95_size(size, plan, cluster)
    cached = {r.case: r for r in rows if r.case.startswith("kubewhy + cache, ")}
    assert set(cached) == {"kubewhy + cache, pinned pod", "kubewhy + cache, unpinned pod"}
    assert cached["kubewhy + cache, pinned pod"].result.startswith("exhausted, 4 calls")
    assert cached["kubewhy + cache, unpinned pod"].result.startswith("exhausted, 3 calls")
    assert {r.target for r in cached.values()} == {"p95 < 100 ms"}
    assert {r.met for r in cached.values()} <= {"yes", "NO"}


def test_a_size_may_ask_for_gpus_by_dra_or_an_autoscaler_that_speaks() -> None:
    dra, speaks, plain = _sizes("5000x10dra,5000x10autoscaling,1000x10")
    assert (dra.dra, dra.autoscaling, dra.nodes) == (True, False, 5000)
    assert (speaks.dra, speaks.autoscaling, speaks.nodes) == (False, True, 5000)
    assert (plain.dra, plain.autoscaling, plain.nodes) == (False, False, 1000)
    with pytest.raises(argparse.ArgumentTypeError, match="autoscaling"):
        _sizes("5000autoscaling")


def test_a_size_the_plan_has_is_measured_as_planned() -> None:
    """`--sizes 65000x10` alone measures what `make bench` measures there: 1,000 pending pods and
    the sentinel's sweeps; a size the plan lacks takes the smallest size's measurement."""
    huge, huge_dra, other = _sizes("65000x10,65000x10dra,20000x10")
    assert (huge.pending, huge.sweeps, huge.baseline_runs) == (1000, 3, 0)
    assert (huge_dra.dra, huge_dra.sweeps) == (True, 0)
    assert (other.nodes, other.pending, other.sweeps, other.kubewhy_runs) == (20000, None, 0, 20)


async def test_jobset_why_finds_the_pending_leader(served: Served) -> None:
    reader = LiveReader.from_kubeconfig(served.kubeconfig, None)
    try:
        row = await jobset.measure(reader, served, "kubewhy", runs=2, budget_s=10)
    finally:
        await reader.aclose()
    assert row.runs == "2"
    assert row.result.startswith("leader-pending (leader: exhausted)")


@pytest.mark.parametrize("cached", [False, True])
async def test_the_burst_goes_through_kubewhy_serve_and_every_command_is_answered(
    served: Served, cached: bool
) -> None:
    acks, late, answers, probes, lag = await burst.measure(served, count=3, late=1, cached=cached)
    assert acks.runs == "3"
    assert acks.result.endswith("; 4 × HTTP 200 (all)")
    assert late.runs == "1"
    assert answers.runs == "4"
    assert "4/4 answered" in answers.result
    assert int(probes.runs) > 0
    assert acks.case.startswith(
        "kubewhy serve (cache on: the default)," if cached else "kubewhy serve, cache off,"
    )
    # The bot's own lag samples cover the burst (one every 25 ms while it answered), read from /metrics.
    assert lag.case.endswith("event-loop lag inside, every 25 ms")
    assert int(lag.runs) > 0
    assert re.fullmatch(r"\d+ samples > 100 ms; worst in (\(.+, .+\]|> 5\.00 s)", lag.result)
    assert (lag.met == "yes") == lag.result.startswith("0 samples")


def test_the_lag_histogram_is_read_from_the_bots_metrics() -> None:
    metrics = Metrics()
    before = burst.Lag.scraped(metrics.exposition().decode())
    for seconds in (0.001, 0.002, 0.003, 0.02, 0.3):
        metrics.loop_lagged(seconds)
    lag = burst.Lag.scraped(metrics.exposition().decode()).since(before)
    assert lag.samples == 5
    assert lag.above(burst.STALL_S) == 1
    assert lag.worst == "(250 ms, 500 ms]"
    assert (lag.quantile(0.5), lag.quantile(0.95)) == ("≤ 5.0 ms", "≤ 500 ms")
    metrics.loop_lagged(9.0)
    assert burst.Lag.scraped(metrics.exposition().decode()).since(before).worst == "> 5.00 s"
    assert burst.Lag(()).quantile(0.5) == burst.Lag(()).worst == "—"


def test_repeat_warms_up_then_stops_at_its_runs_or_its_budget() -> None:
    calls: list[int] = []

    def run() -> int:
        calls.append(1)
        return len(calls)

    sample, last = repeat(run, runs=3, warmup=2)
    assert (sample.runs, last) == (3, 5)
    calls.clear()
    sample, last = repeat(run, runs=100, budget_s=1e-9, warmup=1)
    assert (sample.runs, last) == (1, 1)  # a warm-up as long as half the budget is the only run
    calls.clear()
    sample, last = repeat(run, runs=100, budget_s=1e-9, warmup=0)
    assert (sample.runs, last) == (1, 1)


def test_p95_is_the_nearest_rank() -> None:
    assert Sample(tuple(float(i) for i in range(1, 21))).p95 == 19.0
    assert Sample((3.0, 1.0, 2.0)).p95 == 3.0
    assert Sample((3.0, 1.0, 2.0)).median == 2.0


def test_markdown_results_replace_only_the_marked_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nNotes above.\n")
    write_markdown(results, "first table")
    text = results.read_text()
    assert text.startswith("# Results\n\nNotes above.\n")
    assert f"{BEGIN}\nfirst table\n{END}" in text
    results.write_text(text + "\nNotes below.\n")
    write_markdown(results, "second table")
    assert (
        results.read_text() == f"# Results\n\nNotes above.\n\n{BEGIN}\nsecond table\n{END}\n\nNotes below.\n"
    )
    rows = [Row("a", "c", "case", "1", "1 ms", "1 ms", "ok")]
    assert table(rows).splitlines()[0].startswith("| Benchmark")


def test_python_m_bench_quick_prints_one_table_with_every_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--markdown", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| Benchmark")
    benchmarks = {line.split("|")[1].strip() for line in lines[1:]}
    expected = {"a. /triage", "b. classifier", "c. burst", "d. /jobset why", "e. live CLI", "f. soak"}
    assert benchmarks == expected
    cases = {line.split("|")[3].strip(): line for line in lines[1:]}
    live = cases["kubewhy triage through a kubeconfig, process start to exit"]
    assert "exhausted; 8 calls a run; CPU time " in live  # 5, and whether an autoscaler is there
    bare = {c: line for c, line in cases.items() if c.startswith("the same LISTs sent bare")}
    # Both pods' nodes are read one LIST a node on this cluster.
    assert [case.rpartition(", ")[2] for case in bare] == ["pinned pod", "unpinned pod"]
    for line in bare.values():
        assert "requests" in line
        assert "kubewhy's whole /triage takes" in line
        assert "its reads alone (every call, decoded; no classifying)" in line
    dra = [line for line in lines if "GPUs by DRA" in line and "kubewhy + cache, unpinned pod" in line]
    assert len(dra) == 1
    assert "| exhausted, 3 calls" in dra[0], dra[0].split("|")[7]  # the pod, its events, the nominated pods
    assert done.stdout.count("| Benchmark") == 1
    assert "- CPUs (nproc):" in done.stdout
    assert "python -m bench --quick" in out.read_text()


async def test_the_soak_answers_every_command_under_faults_and_reports_what_the_bot_holds() -> None:
    rows = await soak.measure(2 * soak.WAVE)
    answered, memory, files, log = rows
    assert answered.runs == str(2 * soak.WAVE)
    assert answered.met == "yes", answered.result
    assert " MiB" in memory.result
    assert files.result.startswith("files ")
    assert "connections " in files.result
    assert "0 tracebacks" in log.result


async def test_the_sentinels_sweep_is_measured_through_the_cache(served: Served) -> None:
    """The bot's own sentinel sweeps the tiny cluster's stuck workloads through a synced cache and
    posts them to the local Slack; the first sweep opens the incidents, the next ones follow them."""
    async with triage.cached_reader(served, sync_timeout_s=30) as (cached, _):
        rows = await sweep.measure(served, cached, sweeps=2)
    first, then = rows
    assert first.case == "kubewhy + cache, sentinel: first sweep (opens the incidents), CPU time"
    assert (first.runs, then.runs) == ("1", "1")
    posted = re.search(r"(\d+) pending pods asking for devices; (\d+) incidents posted", first.result)
    assert posted is not None
    assert int(posted[1]) > 0
    assert int(posted[2]) > 0  # its pods wait since long before now: stuck, and posted
    assert {first.met, then.met} <= {"yes", "NO"}
    assert first.target == "CPU < 5 s a sweep, no stall > 100 ms"


def test_the_triage_targets_of_each_size() -> None:
    def target(nodes: int, method: str, case: str) -> str:
        found = triage.target_for(nodes, method, case)
        return found.text() if found else ""

    assert target(1_000, "kubewhy", "pinned pod") == ""
    assert target(5_000, "kubewhy", "unpinned pod") == "≥10× faster, p95 < 1 s"
    assert target(10_000, "kubewhy", "pinned pod") == "≥10× faster, p95 < 1 s"
    assert target(10_000, "kubewhy", "unpinned pod") == "≥10× faster, p95 < 3 s"
    assert target(10_000, "kubewhy + cache", "unpinned pod") == "≥10× faster, p95 < 1 s"
    assert target(65_000, "kubewhy", "pinned pod") == "p95 < 15 s"
    assert target(65_000, "kubewhy + cache", "unpinned pod") == "p95 < 250 ms"
