"""The per-node LISTs of a large read go over aiohttp (`Transport.lists`, more than `WORKERS` of them):
against a real kube-apiserver 1.34, over TLS, as the bot's ServiceAccount, they read what the client's
own calls read, and a direct `/triage` that sends them answers as the cluster's snapshot does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.config import new_client_from_config

from cluster.compact import BOUND_POD
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader
from cluster.transport import WORKERS, Target, Transport
from devtools.kubereal import Server, load, unload
from diagnosis.objects import name
from diagnosis.relations import NOT_TERMINAL, node_name
from diagnosis.triage.classify import classify
from tests.live.generated import NAMESPACE, UNPINNED, Generated, cluster

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def generated(server: Server) -> Iterator[Generated]:
    """80 nodes, 20 of them A100 nodes whose GPUs are all taken, 3 pods on each node."""
    made = cluster(nodes=80, pods_per_node=3)
    assert len(made.gpu_nodes) > WORKERS
    done = load(server.admin, made.objects)
    assert done.rejected == [], "\n".join(done.rejected)
    try:
        yield made
    finally:
        unload(server.admin, done)


async def test_each_list_reads_what_the_clients_own_call_reads(bot: Path, generated: Generated) -> None:
    api = Transport(new_client_from_config(config_file=str(bot)))  # type: ignore[no-untyped-call]
    try:
        queries = [{"fieldSelector": f"spec.nodeName={n},{NOT_TERMINAL}"} for n in generated.gpu_nodes]
        expected = [await api.items(Target("list", "pods"), BOUND_POD, **q) for q in queries]
        found = await api.lists(Target("list", "pods"), queries, BOUND_POD)
    finally:
        await api.close()
    assert found == expected
    assert all(len(pods) == 3 for pods in found)


async def test_a_direct_triage_answers_as_the_snapshot_does(bot: Path, generated: Generated) -> None:
    reader = LiveReader.from_kubeconfig(str(bot), None)
    try:
        view, prepared = await reader.triage_view(NAMESPACE, UNPINNED)
    finally:
        await reader.aclose()
    snapshot, from_snapshot = await SnapshotReader(generated.objects).triage_view(NAMESPACE, UNPINNED)
    on_gpu_nodes = [p for p in snapshot.bound_pods if node_name(p) in generated.gpu_nodes]
    assert sorted(map(name, view.bound_pods)) == sorted(map(name, on_gpu_nodes))
    assert len(view.bound_pods) == 3 * len(generated.gpu_nodes)
    assert classify(view, prepared).verdict is classify(snapshot, from_snapshot).verdict
