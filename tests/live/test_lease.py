"""Leader election on a Lease, over HTTP against the API simulator: one leader at a time, a released
Lease taken over at the other's next try, an abandoned one once it expires (with what its holder
carried), and the API server's optimistic concurrency (409) deciding a race."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
from kubernetes.config import new_client_from_config

from cluster.errors import Conflict
from cluster.lease import GROUP, Elector, LeaseOptions
from cluster.live import LiveReader
from cluster.transport import Target, Transport
from devtools.apisim import Simulator, serve
from devtools.apisim.resources import lookup

NAMESPACE = "kubewhy"
OPTIONS = LeaseOptions(NAMESPACE, duration=1.0, renew_deadline=0.7, retry=0.1)
LEASES = lookup(GROUP, "v1", "leases")
assert LEASES is not None
NAMESPACE_OBJECT = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with serve([NAMESPACE_OBJECT]) as sim:
        yield sim


@pytest.fixture
async def electors(sim: Simulator) -> AsyncIterator[list[Elector]]:
    readers = [LiveReader.from_kubeconfig(sim.kubeconfig, None) for _ in range(2)]
    electors = [reader.elector(OPTIONS, f"replica-{i}") for i, reader in enumerate(readers)]
    yield electors
    for elector, reader in zip(electors, readers, strict=True):
        await elector.aclose()
        await reader.aclose()


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _one_leader(electors: list[Elector]) -> Elector:
    waits = [asyncio.create_task(e.leading.wait()) for e in electors]
    try:
        async with asyncio.timeout(10):
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    leaders = [e for e in electors if e.is_leader]
    assert len(leaders) == 1
    return leaders[0]


async def _renewals(sim: Simulator, count: int, electors: list[Elector]) -> None:
    """Wait for `count` more updates of the Lease, checking meanwhile that never two lead."""
    start = len(sim.requests)
    async with asyncio.timeout(10):
        while sum(r.verb == "update" and r.resource == "leases" for r in sim.requests[start:]) < count:
            assert sum(e.is_leader for e in electors) <= 1
            await asyncio.sleep(0.01)


async def test_one_replica_leads_and_a_released_lease_passes_to_the_other(
    sim: Simulator, electors: list[Elector]
) -> None:
    inherited: list[str] = []
    for elector in electors:
        elector.inherit = inherited.append
    tasks = [asyncio.create_task(e.run()) for e in electors]
    try:
        first = await _one_leader(electors)
        other = next(e for e in electors if e is not first)
        await _renewals(sim, 5, electors)
        assert first.is_leader
        assert not other.leading.is_set()
        assert other.holder == first.identity

        await _stop(tasks[electors.index(first)])  # as at shutdown: stop trying, then release
        await first.release()
        assert not first.is_leader
        async with asyncio.timeout(10):
            await other.leading.wait()
        assert (other.holder, other.transitions) == (other.identity, 1)
        assert inherited == []  # a holder that released the Lease ended its work itself
    finally:
        for task in tasks:
            await _stop(task)
    (stored,) = sim.store.collection(LEASES).entries.values()
    assert stored.obj["spec"]["holderIdentity"] == other.identity
    assert {r.verb for r in sim.requests if r.resource == "leases"} == {"get", "create", "update"}


async def test_an_abandoned_lease_is_taken_once_it_expires_with_what_its_holder_carried(
    sim: Simulator, electors: list[Elector]
) -> None:
    inherited: list[str] = []
    electors[0].carry = lambda: '[["C0ONCALL", "1.000100"]]'
    electors[1].inherit = inherited.append
    first_task = asyncio.create_task(electors[0].run())
    try:
        await _one_leader(electors[:1])
        await _renewals(sim, 1, electors[:1])  # the holder writes what it carries at each renewal
    finally:
        await _stop(first_task)  # a replica killed mid-term: it neither renews nor releases
    second_task = asyncio.create_task(electors[1].run())
    try:
        async with asyncio.timeout(10):
            while not electors[1].is_leader:
                assert not electors[0].is_leader or not electors[1].leading.is_set()
                await asyncio.sleep(0.01)
        assert not electors[0].is_leader  # it stopped leading on its own, past its renew deadline
        assert electors[1].transitions == 1
        assert inherited == ['[["C0ONCALL", "1.000100"]]']
    finally:
        await _stop(second_task)


async def test_a_write_from_a_stale_read_is_refused_with_409(sim: Simulator) -> None:
    api = Transport(new_client_from_config(config_file=sim.kubeconfig))  # type: ignore[no-untyped-call]  # untyped in kubernetes
    collection = Target("create", "leases", NAMESPACE, GROUP)
    target = Target("update", "leases", NAMESPACE, GROUP, "race")
    try:
        lease = {"apiVersion": f"{GROUP}/v1", "kind": "Lease", "metadata": {"name": "race"}, "spec": {}}
        created = (await api.send(collection, "POST", lease)).body
        with pytest.raises(Conflict, match="already exists"):
            await api.send(collection, "POST", lease)
        mine = created | {"spec": {"holderIdentity": "a"}}
        updated = (await api.send(target, "PUT", mine)).body
        assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
        with pytest.raises(Conflict, match="the object has been modified"):
            await api.send(target, "PUT", created | {"spec": {"holderIdentity": "b"}})
        read = (await api.send(target, "GET")).body
        assert read["spec"] == {"holderIdentity": "a"}
    finally:
        await api.close()
