"""The watch cache against a real kube-apiserver 1.34, read as the bot's ServiceAccount: it keeps up
through every way the server ends or refuses a watch, and after each its answers are the ones a direct
read gives.

- a watch the server ends (each lasts `watch_seconds`, here 5 s) is resumed from its revision, with
  no second LIST;
- bookmarks (`allowWatchBookmarks`) move the revision on while nothing the cache keeps changes;
- a revision compacted away in etcd (its HTTP gateway) cannot be resumed: 410 Gone, and the cache
  lists again. Nodes have no watch cache in this server (`--watch-cache-sizes=nodes#0`), so their
  watches go to etcd and meet its compaction (the server's own watch cache keeps a window of
  events, and its bookmarks: pods keep theirs);
- objects that change while the cache makes its first (paged) LIST are all there once it is synced;
- kube-apiserver restarted over the same etcd: the cache reconnects and follows the changes made after.

Every wait is for a condition (the cache's state, a revision, the audit log), never for time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cluster.cache import BOUND_PODS, CacheOptions, ClusterCache
from cluster.live import LiveReader
from cluster.transport import Retry
from devtools.corpus import ROOT, cases
from devtools.kubereal import Api, Server, missing, serve
from diagnosis.model import PodVerdict
from diagnosis.objects import name
from diagnosis.triage.classify import classify
from tests.real.support import BOT, loaded, said

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]

LAB = ROOT / "bot" / "demo" / "gpu-lab.json"
NAMESPACE = "gpu-triage"
HOLDER = "case-ok"
"""Holds 1 of lab-node-0's 2 GPUs; the tests delete it."""
ASKED = [case for case in cases("triage") if case.snapshot == LAB and case.name != HOLDER]
PENDING = "case-exhaust"
"""Asks 2 GPUs of lab-node-0: exhausted while HOLDER is there, schedulable once it is gone."""
OPTIONS = CacheOptions(watch_seconds=5, backoff=Retry(attempts=4, base=0.05, cap=0.5))
"""Watches the server ends every 5 s (and bookmarks 2 s before), reconnections within half a second."""
CHURN = "churn"
FILLERS = 600
"""Bound pods in the churn namespace beside the lab's: the first LIST of pods takes two pages of 500."""


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """This module's own server: nodes without a watch cache (their watches read etcd, see above)."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    with serve(("--watch-cache-sizes=nodes#0",)) as running:
        yield running


@pytest.fixture
def lab(server: Server) -> Iterator[None]:
    with loaded(server, LAB):
        yield


@pytest.fixture(autouse=True)
def nothing_but_the_cache_complains(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Read as the ServiceAccount, nothing logs a warning or an error but the cache saying how it
    keeps up (a watch cut, a 410, a reconnection)."""
    with caplog.at_level(logging.INFO):
        yield
    complaints = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name != "cluster.cache"
    ]
    assert complaints == []


@asynccontextmanager
async def synced(kubeconfig: Path) -> AsyncIterator[tuple[LiveReader, ClusterCache]]:
    """A reader whose cache (`OPTIONS`) is synced, and that cache."""
    reader = LiveReader.from_kubeconfig(str(kubeconfig), None, 30.0, cache=OPTIONS)
    cache = reader.cache
    assert cache is not None
    try:
        cache.start()
        assert await cache.wait_synced(120), cache.state
        yield reader, cache
    finally:
        await reader.aclose()


async def agree(kubeconfig: Path, cached: LiveReader) -> dict[str, str]:
    """Every lab case asked through the cache (which must answer: no note that nodes were read
    directly) and directly: the same answers. The verdicts, by pod."""
    direct = LiveReader.from_kubeconfig(str(kubeconfig), None, 30.0)
    verdicts = {}
    try:
        for case in ASKED:
            view, prepared = await cached.triage_view(case.namespace, case.name)
            assert view.notes == (), view.notes
            answer = classify(view, prepared)
            assert said(answer) == said(classify(*await direct.triage_view(case.namespace, case.name))), (
                case.id
            )
            verdicts[case.name] = str(answer.verdict)
    finally:
        await direct.aclose()
    return verdicts


async def until(condition: Callable[[], bool]) -> None:
    """Wait until `condition()` holds: the cache applies what the server sends in threads of its own,
    and the audit log is written by the server; there is nothing to await, so it is polled."""
    async with asyncio.timeout(120):
        while not condition():  # noqa: ASYNC110 (polls state kept by other threads and processes)
            await asyncio.sleep(0.02)


def holds(cache: ClusterCache, pod: str) -> bool:
    return pod in {name(p) for p in cache.pods_in(NAMESPACE)}


def delete(server: Server, namespace: str, pod: str, api: Api | None = None) -> None:
    (api or server.admin).call(
        "DELETE", f"/api/v1/namespaces/{namespace}/pods/{pod}", query={"gracePeriodSeconds": "0"}
    )


def touch(server: Server) -> int:
    """Write an object the cache does not keep (a ConfigMap): etcd's revision moves on. Its
    resourceVersion."""
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "touch-"}}
    made = server.admin.call("POST", path, body)
    server.admin.call("DELETE", f"{path}/{made['metadata']['name']}")
    return int(made["metadata"]["resourceVersion"])


class Requests:
    """The bot's requests in the audit log from a point on: (verb, resource, query) of each, as the
    server began to answer it (a watch is logged when it starts, and again when it ends)."""

    def __init__(self, server: Server) -> None:
        self._path = server.audit_log
        self._mark = self._path.stat().st_size

    def made(self, verb: str, resource: str) -> list[dict[str, str]]:
        with self._path.open("rb") as log:
            log.seek(self._mark)
            events = [json.loads(line) for line in log.read().splitlines()]
        first = "ResponseStarted" if verb == "watch" else "ResponseComplete"
        return [
            {k: v[0] for k, v in parse_qs(urlsplit(e["requestURI"]).query).items()}
            for e in events
            if e.get("user", {}).get("username") == BOT
            and e.get("stage") == first
            and e.get("verb") == verb
            and e.get("objectRef", {}).get("resource") == resource
        ]


def cache_lists(requests: Requests, resource: str) -> int:
    """The cache's LISTs of `resource`, each counted once (not page by page; the direct reader's carry
    a narrower selector)."""
    selector = BOUND_PODS if resource == "pods" else None
    made = requests.made("list", resource)
    return sum(1 for q in made if q.get("fieldSelector") == selector and "continue" not in q)


async def test_a_watch_the_server_ends_is_resumed_from_its_revision(
    server: Server, bot: Path, lab: None
) -> None:
    requests = Requests(server)
    async with synced(bot) as (reader, cache):
        assert (await agree(bot, reader))[PENDING] == PodVerdict.EXHAUSTED
        await until(lambda: len(requests.made("watch", "pods")) >= 3)  # two ended by the server
        delete(server, NAMESPACE, HOLDER)
        await until(lambda: not holds(cache, HOLDER))
        assert (await agree(bot, reader))[PENDING] == PodVerdict.SCHEDULABLE
    watches = [q for q in requests.made("watch", "pods") if q.get("fieldSelector") == BOUND_PODS]
    assert all(q.get("resourceVersion") for q in watches)
    assert cache_lists(requests, "pods") == 1


async def test_bookmarks_move_the_revision_on(server: Server, bot: Path, lab: None) -> None:
    async with synced(bot) as (reader, cache):
        written = touch(server)  # no pod changes: only a bookmark can tell the cache of this revision
        await until(lambda: int(cache.revisions["pods"]) >= written)
        assert int(cache.revisions["nodes"]) < written  # no watch cache for nodes, no bookmarks
        await agree(bot, reader)


async def test_a_revision_compacted_away_lists_again(
    server: Server, bot: Path, lab: None, caplog: pytest.LogCaptureFixture
) -> None:
    requests = Requests(server)
    async with synced(bot) as (reader, cache):
        listed = int(cache.revisions["nodes"])
        touch(server)
        compacted = server.compact()
        assert compacted > listed
        await until(lambda: int(cache.revisions["nodes"] or 0) >= compacted and cache.synced)
        assert cache_lists(requests, "nodes") == 2
        assert any(
            "nodes listing again" in r.getMessage() and "410" in r.getMessage() for r in caplog.records
        )
        delete(server, NAMESPACE, HOLDER)
        await until(lambda: not holds(cache, HOLDER))
        assert (await agree(bot, reader))[PENDING] == PodVerdict.SCHEDULABLE


@contextmanager
def churning(server: Server) -> Iterator[tuple[list[int], Callable[[], None]]]:
    """Bound pods replaced one by one in another thread for the block (each filler deleted, a new pod
    made): yields the resourceVersions written so far, and a function that stops it."""
    api = Api(server.url, server.ca, server.admin_token)
    stop, written = threading.Event(), list[int]()

    def churn() -> None:
        for index in range(FILLERS):
            if stop.is_set():
                return
            delete(server, CHURN, f"filler-{index}", api)
            made = api.call("POST", f"/api/v1/namespaces/{CHURN}/pods", _pod(f"new-{index}"))
            written.append(int(made["metadata"]["resourceVersion"]))

    thread = threading.Thread(target=churn, name="churn")
    thread.start()

    def stopped() -> None:
        stop.set()
        thread.join()

    try:
        yield written, stopped
    finally:
        stopped()
        api.close()


def _pod(pod: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod, "namespace": CHURN},
        "spec": {"nodeName": "churn-node", "containers": [{"name": "c", "image": "busybox"}]},
    }


async def test_pods_that_change_during_the_first_list_are_all_there(
    server: Server, bot: Path, lab: None
) -> None:
    server.admin.call("POST", "/api/v1/namespaces", {"metadata": {"name": CHURN}})
    for index in range(FILLERS):
        server.admin.call("POST", f"/api/v1/namespaces/{CHURN}/pods", _pod(f"filler-{index}"))
    requests = Requests(server)
    with churning(server) as (written, stop):
        await until(lambda: len(written) > 0)
        before = len(written)
        async with synced(bot) as (reader, cache):
            assert len(written) > before  # pods changed while the cache listed them
            stop()
            await until(lambda: int(cache.revisions["pods"]) >= written[-1])
            served = server.admin.call(
                "GET", f"/api/v1/namespaces/{CHURN}/pods", query={"fieldSelector": BOUND_PODS}
            )
            assert {name(p) for p in cache.pods_in(CHURN)} == {name(p) for p in served["items"]}
            assert any(n.startswith("new-") for n in {name(p) for p in cache.pods_in(CHURN)})
            await agree(bot, reader)
    assert cache_lists(requests, "pods") == 1
    server.admin.call("DELETE", f"/api/v1/namespaces/{CHURN}/pods", query={"gracePeriodSeconds": "0"})


async def test_a_restarted_api_server_is_followed_again(server: Server, bot: Path, lab: None) -> None:
    async with synced(bot) as (reader, cache):
        assert (await agree(bot, reader))[PENDING] == PodVerdict.EXHAUSTED
        await asyncio.to_thread(server.restart)  # the cache's loop keeps running meanwhile
        delete(server, NAMESPACE, HOLDER)
        await until(lambda: not holds(cache, HOLDER) and cache.synced)
        assert (await agree(bot, reader))[PENDING] == PodVerdict.SCHEDULABLE
