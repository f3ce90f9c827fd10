"""The per-node LISTs of a large read (`Transport.lists`, more than `WORKERS` of them) go over aiohttp
on the event loop, not through the client's urllib3 pool: they read what the client reads, page after
page, count what they cost, and fail as every other call fails — the same retries within the same
bound, the same typed errors, the proxy of the environment. Most tests here send them one at a time
(`WORKERS` set to 1), so that each request is the one the test expects. (Over TLS with a client
certificate: the real API server tier, `tests/real`.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import yaml
from kubernetes.config import new_client_from_config

from cluster import transport
from cluster.compact import BOUND_POD
from cluster.errors import Forbidden, Unavailable
from cluster.transport import WORKERS, Retry, Target, Transport
from devtools.apisim import Faults, Simulator, serve
from devtools.botenv import refused_port
from diagnosis.relations import NOT_TERMINAL
from tests.live.support import GPU_CLUSTER, settled

PODS = Target("list", "pods")
L4 = {"fieldSelector": f"spec.nodeName=gke-ml-prod-l4-spot-9d81e0c2-q4rt,{NOT_TERMINAL}"}
"""The pods bound to the L4 node: asked twice, two LISTs one after the other (`one_at_a_time`)."""


@asynccontextmanager
async def api(
    sim: Simulator, call_timeout: float = 5.0, kubeconfig: str | None = None
) -> AsyncIterator[Transport]:
    config = kubeconfig or sim.kubeconfig
    made = Transport(new_client_from_config(config_file=config), call_timeout)  # type: ignore[no-untyped-call]
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with serve(GPU_CLUSTER) as running:
        yield running


@pytest.fixture(autouse=True)
def no_faults(sim: Simulator) -> Iterator[None]:
    yield
    sim.faults.clear()


@pytest.fixture
def one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two LISTs or more go over aiohttp, over one connection, one after the other."""
    monkeypatch.setattr(transport, "WORKERS", 1)


async def _per_node(api: Transport) -> list[dict[str, str]]:
    """One query per node of the cluster: the pods bound to it that have not ended."""
    nodes = await api.items(Target("list", "nodes"))
    return [{"fieldSelector": f"spec.nodeName={n['metadata']['name']},{NOT_TERMINAL}"} for n in nodes]


def _since(sim: Simulator, start: int) -> list[str]:
    return [r.query.get("fieldSelector", "") for r in sim.requests[start:]]


@pytest.mark.parametrize("kept", [None, BOUND_POD], ids=["whole", "kept"])
async def test_each_list_reads_what_the_clients_own_call_reads(
    sim: Simulator, kept: transport.Kept | None
) -> None:
    async with api(sim) as reader:
        queries = await _per_node(reader) * 4
        assert len(queries) > WORKERS
        expected = [await reader.items(PODS, kept, **query) for query in queries]
        before = reader.stats.calls, reader.stats.bytes
        found = await reader.lists(PODS, queries, kept)
    assert found == expected
    assert sum(map(len, found)) > len(queries)  # every node holds pods: not a comparison of empties
    assert reader.stats.calls - before[0] == len(queries)
    assert reader.stats.bytes - before[1] > 0


@pytest.mark.usefixtures("one_at_a_time")
async def test_a_list_longer_than_a_page_is_read_page_after_page(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with api(sim) as reader:
        queries = await _per_node(reader)
        whole = await reader.lists(PODS, queries)
        monkeypatch.setattr(transport, "PAGE_SIZE", 1)
        start = len(sim.requests)
        paged = await reader.lists(PODS, queries)
    assert paged == whole
    sent = sim.requests[start:]
    assert len(sent) == sum(len(items) or 1 for items in whole) > len(queries)
    assert sum("continue" in r.query for r in sent) == len(sent) - len(queries)


@pytest.mark.usefixtures("one_at_a_time")
async def test_server_errors_are_retried_then_answered(sim: Simulator) -> None:
    async with api(sim) as reader:
        queries = await _per_node(reader)
        expected = await reader.lists(PODS, queries)
        start = len(sim.requests)
        sim.faults.fail(500, times=2, resource="pods", verb="list")
        found = await reader.lists(PODS, queries)
    assert found == expected
    assert reader.stats.retries == 2
    assert _since(sim, start) == [queries[0]["fieldSelector"]] * 3 + [q["fieldSelector"] for q in queries[1:]]


@pytest.mark.usefixtures("one_at_a_time")
async def test_throttling_waits_as_long_as_retry_after_asks(sim: Simulator) -> None:
    async with api(sim) as reader:
        start = len(sim.requests)
        sim.faults.throttle(times=1, retry_after=1, resource="pods")
        await reader.lists(PODS, [L4, L4])
    throttled, again, _ = sim.requests[start:]
    assert again.at - throttled.at >= 1.0


@pytest.mark.usefixtures("one_at_a_time")
async def test_a_failing_server_is_given_up_after_the_bound(sim: Simulator) -> None:
    async with api(sim) as reader:
        start = len(sim.requests)
        sim.faults.fail(503, times=None, resource="pods")
        with pytest.raises(Unavailable) as down:
            await reader.lists(PODS, [L4, L4])
    assert len(sim.requests) - start == Retry().attempts  # and the second LIST is never sent
    assert f"HTTP 503 Service Unavailable (after {Retry().attempts} tries)" in down.value.message


async def test_a_refusal_is_named_as_rbac_names_it(sim: Simulator) -> None:
    async with api(sim) as reader:
        queries = await _per_node(reader) * 4
        sim.faults.forbid("pods", verb="list")
        with pytest.raises(Forbidden) as refused:
            await reader.lists(PODS, queries)
    assert (refused.value.verb, refused.value.resource, refused.value.namespace) == ("list", "pods", None)


@pytest.mark.usefixtures("one_at_a_time")
async def test_a_dropped_connection_is_retried(sim: Simulator) -> None:
    async with api(sim) as reader:
        expected = await reader.lists(PODS, [L4, L4])
        start = len(sim.requests)
        sim.faults.drop(times=1, resource="pods")
        assert await reader.lists(PODS, [L4, L4]) == expected
    assert reader.stats.retries == 1
    assert len(sim.requests) - start == 3


@pytest.mark.usefixtures("one_at_a_time")
async def test_connections_dropped_every_time_make_it_unavailable(sim: Simulator) -> None:
    async with api(sim) as reader:
        start = len(sim.requests)
        sim.faults.drop(times=None, resource="pods")
        with pytest.raises(Unavailable, match=r"closed without an answer \(3 tries\)"):
            await reader.lists(PODS, [L4, L4])
    assert len(sim.requests) - start == Retry().attempts  # aiohttp sent none again by itself


@pytest.mark.usefixtures("one_at_a_time")
async def test_a_slow_server_times_out() -> None:
    with serve(GPU_CLUSTER, Faults(latency=1.0)) as slow:
        async with api(slow, call_timeout=0.3) as reader:
            with pytest.raises(Unavailable, match=r"no answer within 0\.3 s \(timed out\)") as late:
                await reader.lists(PODS, [L4, L4])
    assert late.value.server == slow.url


async def test_the_caller_giving_up_stops_the_lists(sim: Simulator) -> None:
    """Cancelled (a Slack answer past its deadline), no LIST is sent after those in flight."""
    async with api(sim) as reader:
        queries = [L4] * (3 * WORKERS)
        start = len(sim.requests)
        sim.faults.hold()
        try:
            reading = asyncio.ensure_future(reader.lists(PODS, queries))
            await settled(lambda: len(sim.requests) - start == WORKERS)
            reading.cancel()
            with pytest.raises(asyncio.CancelledError):
                await reading
        finally:
            sim.faults.release()
    assert len(sim.requests) - start == WORKERS


@pytest.mark.usefixtures("one_at_a_time")
async def test_lists_at_once_share_the_readers_slots(sim: Simulator) -> None:
    """Two reads at once (two questions to `kubewhy serve`) have `WORKERS` LISTs in flight between
    them, not each: here one, the other read's waiting for it."""
    async with api(sim) as reader:
        start = len(sim.requests)
        sim.faults.hold()
        try:
            both = asyncio.gather(reader.lists(PODS, [L4, L4]), reader.lists(PODS, [L4, L4]))
            await settled(lambda: len(sim.requests) - start == 1)
            with pytest.raises(TimeoutError):  # nothing more comes while the one LIST is held
                await asyncio.wait_for(settled(lambda: len(sim.requests) - start > 1), 0.5)
        finally:
            sim.faults.release()
        first, second = await both
    assert first == second != []
    assert len(sim.requests) - start == 4


def _kubeconfig(tmp_path: Path, sim: Simulator, server: str) -> str:
    """The simulator's kubeconfig, naming `server` instead (TLS left unverified)."""
    config = yaml.safe_load(Path(sim.kubeconfig).read_text())
    config["clusters"][0]["cluster"] = {"server": server, "insecure-skip-tls-verify": True}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.mark.usefixtures("one_at_a_time")
async def test_a_refused_connection_is_said(sim: Simulator, tmp_path: Path) -> None:
    with refused_port() as port:
        async with api(sim, kubeconfig=_kubeconfig(tmp_path, sim, f"http://127.0.0.1:{port}")) as reader:
            with pytest.raises(Unavailable, match="connection refused"):
                await reader.lists(PODS, [L4, L4])


@pytest.mark.usefixtures("one_at_a_time")
async def test_tls_to_a_plain_http_server_fails_on_tls(sim: Simulator, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, sim, sim.url.replace("http://", "https://"))
    async with api(sim, kubeconfig=config) as reader:
        with pytest.raises(Unavailable, match="TLS failed"):
            await reader.lists(PODS, [L4, L4])


@pytest.mark.usefixtures("one_at_a_time")
async def test_the_proxy_of_the_environment_is_used(sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    start = len(sim.requests)
    with refused_port() as port:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        async with api(sim) as reader:
            with pytest.raises(Unavailable, match="the proxy refused the connection"):
                await reader.lists(PODS, [L4, L4])
    assert len(sim.requests) == start
