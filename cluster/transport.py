"""How kubewhy calls the API server: off the event loop, with a timeout, bounded retries, raw JSON,
typed errors, and a count of what it cost.

The official client's `ApiClient` sends every call: its configuration (kubeconfig, exec plugins and
token refresh, in-cluster, TLS) and its authentication, through `param_serialize` and `call_api`,
as its generated API classes do. Those classes are never imported: `kubernetes.client.api` and the
models it pulls in take most of a second to import (half a CLI run), and each generated method
validates its arguments with pydantic before it sends anything. A `Target` names the resource as
RBAC does, and its URL path follows the API's own layout (`/api/v1/…`, `/apis/GROUP/VERSION/…`).

The client is blocking (urllib3), so every call runs in this transport's own small thread pool,
tries, waits and pages included; but for the many small LISTs of `lists` (the bound pods of a pool,
node by node), which go over aiohttp on the event loop itself (see `lists`). Responses are read as
raw JSON bytes and decoded in the worker (for those LISTs, on the loop, answer by answer):
the generated models cost seconds of CPU on large lists (kubernetes-client/python#1921, #2284).
They are decoded by msgspec: on whole pages of pods as fast as orjson (the standard library's `json`
took 1.6× orjson's time), and it can decode a page into only the fields its reader keeps
(`Kept.page`): the bound pods of a large cluster are most of what a reader decodes.
Lists are read in pages of `PAGE_SIZE`, so no single answer has to carry a whole large cluster
within one timeout. A watch is opened here too (`stream`), and read by its caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import msgspec
import urllib3

from cluster.errors import ClusterError, Conflict, Forbidden, NotFound, Unavailable
from cluster.kube import ApiClient, ApiException, Configuration, should_bypass_proxies
from diagnosis.objects import Object, mapping, sequence, text

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

PAGE_SIZE = 500
"""Items per LIST page: kubectl's default `--chunk-size`."""

WORKERS = 16
"""Calls in flight at once, per reader: in its worker threads, and (apart) the LISTs of `lists`
over aiohttp. Also the size of urllib3's connection pool, so that every worker keeps its connection
alive between calls, and of the connections one `lists` opens. The per-node LISTs of a pod's pool
are hundreds of small answers, each waiting mostly for the network: at a 10 ms round trip, 700 of
them take 0.9 s 8 at a time, 0.45 s 16 at a time. The API server's priority and fairness (APF)
bounds what it serves of them at once, and answers a 429 beyond it, which is retried."""

_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
"""Throttling (API Priority and Fairness) and transient server errors. Other errors will not mend in
the next second."""

_BODY_LIMIT = 300
"""Characters of a response body that may reach a message or a log: enough for the API's Status
message, not enough to carry a whole object into Slack."""

_JSON = "application/json"
VERSION = "/version"
"""The non-resource URL every Kubernetes API server answers (`LiveReader.ping` reads it)."""
_PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

T = TypeVar("T")

Decoder = msgspec.json.Decoder[Any]

Keep = Callable[[Object], dict[str, Any] | None]
"""What a reader keeps of an item it lists (returning None: nothing)."""

WHOLE: Decoder = msgspec.json.Decoder()
"""Decodes JSON whole, as the API server sent it."""


@dataclass(frozen=True)
class Kept:
    """What a reader keeps of each item of a LIST, applied in the worker as each page is decoded, so
    that a page is freed before the next is read: the bound pods of a large cluster are held as the
    few fields the diagnosis reads (`cluster.compact.BOUND_POD`), not as 500 MB of decoded JSON that
    the cyclic collector walks again and again while they are read (on 5,000 nodes, a third of a
    direct `/triage`)."""

    item: Keep | None = None
    """What is kept of an item (returning None: nothing); None: the item as decoded."""
    page: Decoder = WHOLE
    """How a page is decoded: into the fields `item` reads, when it is given their schema. A page that
    does not fit the schema (an item shaped as no API server serves it) is decoded whole."""


class Expired(ClusterError):
    """410 Gone: a `continue` token or a watch's `resourceVersion` is older than the API server keeps;
    the reader must list again."""


def truncate(value: str, limit: int = _BODY_LIMIT) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else f"{flat[: limit - 1]}…"


Query = str | int | bool | None
"""A query parameter's value, as the API names the parameter (`fieldSelector`, `limit`); None: left out."""


@dataclass(frozen=True)
class Target:
    """What a call reads, as RBAC names it: errors say exactly what was refused or missing. A
    `resource` beginning with `/` is a non-resource URL (`/version`)."""

    verb: str
    resource: str
    namespace: str | None = None
    group: str = ""
    name: str = ""
    kind: str = ""
    """The noun of a NotFound (`pod`, `jobset`); defaults to the resource."""
    version: str = "v1"

    @property
    def path(self) -> str:
        """The URL path: the collection for `list` and `watch`, the object when `name` is given."""
        if self.resource.startswith("/"):
            return self.resource
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        scope = f"/namespaces/{quote(self.namespace, safe='')}" if self.namespace else ""
        one = f"/{quote(self.name, safe='')}" if self.name else ""
        return f"{root}{scope}/{self.resource}{one}"


@dataclass
class ReadStats:
    """What a reader cost the API server, for benchmarks and logs."""

    calls: int = 0
    """HTTP requests sent, retries included."""
    bytes: int = 0
    """Response body bytes received."""
    retries: int = 0

    def __str__(self) -> str:
        return f"{self.calls} calls, {self.bytes} bytes, {self.retries} retries"

    def add(self, other: ReadStats) -> None:
        self.calls += other.calls
        self.bytes += other.bytes
        self.retries += other.retries


@dataclass(frozen=True)
class Retry:
    """Bounded exponential backoff: `attempts` tries in all, waiting `base`, 2×`base`… at most `cap`
    seconds between them, or what the server's Retry-After asks when it asks more. A server asking
    for more than `cap` is not waited for: the answer would come too late to help anyone."""

    attempts: int = 3
    base: float = 0.2
    cap: float = 5.0

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before try `attempt + 1`, or None to give up."""
        if attempt >= self.attempts or (retry_after is not None and retry_after > self.cap):
            return None
        backoff = min(self.cap, self.base * 2.0 ** (attempt - 1)) * (0.5 + random.random() / 2)
        return max(backoff, retry_after or 0.0)


@dataclass(frozen=True)
class Response:
    body: dict[str, Any]
    headers: Mapping[str, str]
    """As the answer came (read when asked: a LIST's pages never are)."""

    @property
    def date(self) -> datetime | None:
        """The API server's clock at the answer (its `Date` header)."""
        return _date(self.headers)


class Transport:
    """One API client, its thread pool, its retry policy and its statistics.

    A call runs whole in a worker thread: its tries, the waits between them, the reading of each
    answer and its decoding, every page of a LIST. The event loop is woken once per call, not once per
    try or page. Each wake-up is a hand-over of the GIL between threads, and on a busy process each
    costs milliseconds: per request, they cost more than the request itself. Many LISTs at once
    (`lists`) go over aiohttp on the event loop instead, in no thread at all."""

    def __init__(self, api_client: ApiClient, timeout: float = 5.0, retry: Retry | None = None) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.retry = retry or Retry()
        self.stats = ReadStats()
        self.server = str(api_client.configuration.host)
        self.received: list[dict[str, Any]] | None = None
        """When a list, every answer decoded is added to it, Lists and objects as the server sent
        them (`cluster.capture`)."""
        self._executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="kubewhy-api")
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    async def get(self, target: Target, **query: Query) -> Response:
        """GET one object (or /version). A 404 raises NotFound for `target`."""
        return await self._in_worker(lambda cost: self._fetch(target, query, _JSON, cost))

    async def items(self, target: Target, kept: Kept | None = None, **query: Query) -> list[dict[str, Any]]:
        """Every item of a LIST, page after page, each with its apiVersion and kind (typed lists
        leave them out of their items; readers and the diagnosis expect them, as kubectl prints),
        or what `kept` keeps of it."""
        return await self._in_worker(lambda cost: self._items(target, query, _JSON, cost, kept))

    async def lists(
        self, target: Target, queries: Sequence[Mapping[str, Query]], kept: Kept | None = None
    ) -> list[list[dict[str, Any]]]:
        """The items of one LIST of `target` per query (or what `kept` keeps of them), in order: the
        per-node reads of bound pods, a few to tens of thousands of small LISTs.

        Up to `WORKERS` of them, each is a call of its own in the worker threads (one round). More go
        over aiohttp on the event loop, `WORKERS` at once over as many connections, each answer
        decoded as it comes: with urllib3 in worker threads, the threads' hand-overs of the GIL and
        urllib3's own work cost more CPU than decoding the answers (on the bench's 10,000-node
        cluster, by hand, the 1,432 LISTs of a pinned pod, decoded and kept: 0.75 s of CPU over
        urllib3 in 16 threads, 0.6 s in one, 0.35 s over aiohttp; `bench/RESULTS.md`, round 18).
        aiohttp takes 80 ms to import, a quarter of a CLI run on a small cluster: it is imported
        only for such a read. The requests (their URLs and the ApiClient's headers, refreshing its
        token when due: a credential plugin may take seconds) are made in a worker thread, all at
        once. The first LIST that fails stops the others. However many `lists` run at once (a burst
        of questions to `kubewhy serve`), this reader has at most `WORKERS` of their LISTs in flight
        (`_in_flight`), as it has at most `WORKERS` calls in its threads."""
        if len(queries) <= WORKERS:
            return list(await asyncio.gather(*(self.items(target, kept, **query) for query in queries)))
        asked = [{**query, "limit": PAGE_SIZE} for query in queries]
        requests = await self._in_worker(partial(self._requests, target, asked))
        waiting = iter(enumerate(zip(asked, requests, strict=True)))
        found: list[list[dict[str, Any]]] = [[] for _ in queries]
        cost = ReadStats()

        async def drain(session: aiohttp.ClientSession) -> None:
            for index, (query, request) in waiting:
                found[index] = await self._listed(session, target, query, request, cost, kept)

        try:
            async with self._session() as session, asyncio.TaskGroup() as group:
                for _ in range(WORKERS):
                    group.create_task(drain(session))
        except* (ClusterError, NotFound) as failed:
            first = failed.exceptions[0]
            raise first from first.__cause__  # its own cause, not the group
        finally:
            self.stats.add(cost)
        return found

    async def pages(
        self, target: Target, decoder: Decoder = WHOLE, **query: Query
    ) -> AsyncIterator[dict[str, Any]]:
        """The pages of a LIST, each as the API server sent it (its `metadata.resourceVersion` is the
        revision the whole list was read at) or as `decoder` reads it, each read in a worker thread as
        the caller asks for it."""
        cost = ReadStats()
        paged = self._paged(target, query, _JSON, cost, decoder)
        loop = asyncio.get_running_loop()
        try:
            while (page := await loop.run_in_executor(self._executor, next, paged, None)) is not None:
                yield page
        finally:
            self.stats.add(cost)

    async def names(self, target: Target, **query: Query) -> list[str]:
        """The names of the objects a LIST would return, read as metadata only (a fraction of the bytes)."""
        partial = await self._in_worker(lambda cost: self._items(target, query, _PARTIAL_LIST, cost))
        return [text(mapping(item.get("metadata")).get("name")) for item in partial]

    async def stream(self, target: Target, read_timeout: float, **query: Query) -> urllib3.BaseHTTPResponse:
        """Open a WATCH of `target` with `query` and return its unread response, for the caller to
        read line by line in a thread of its own. `read_timeout` bounds each wait for a line, so it
        must exceed the watch's `timeoutSeconds`."""
        watch = {**query, "watch": True}
        timeout = (self.timeout, read_timeout)
        return await self._in_worker(
            lambda cost: self._retried(target, lambda: self._open(target, watch, _JSON, timeout), cost)
        )

    async def send(self, target: Target, method: str, body: Mapping[str, Any] | None = None) -> Response:
        """`method` (GET, POST, PUT) on `target`'s path with a JSON `body`, for the one object kubewhy
        writes, in its own namespace: its Lease (`cluster.lease`). A 404 raises NotFound, a 409
        Conflict."""

        def call(cost: ReadStats) -> Response:
            response = self._retried(
                target, lambda: self._open(target, {}, _JSON, self.timeout, method, body), cost
            )
            data = response.data
            cost.bytes += len(data)
            return Response(_decode(data, self.server), response.headers)

        return await self._in_worker(call)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        await asyncio.get_running_loop().run_in_executor(None, self.api_client.close)

    # — on the event loop (`lists`) —

    def _session(self) -> aiohttp.ClientSession:
        """A session for one `lists`: `WORKERS` connections, the client configuration's TLS, the
        timeouts of the urllib3 calls (`timeout` to connect, and for each read), and no header beyond
        the ApiClient's (aiohttp would ask for gzip, which urllib3 does not). One per call, closed with
        it: a session belongs to one event loop, a reader may outlive several (its tests').

        aiohttp sends a GET whose connection closed before its answer again at once, uncounted
        (RFC 9112 §9.3.1.1); kubewhy's own policy does (`Retry`), as urllib3's retries are off
        (`cluster.live.connect`). aiohttp has no public switch for it; `tests/live/test_lists.py`
        fails if the one it has stops working."""
        import aiohttp

        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=WORKERS),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=self.timeout),
            skip_auto_headers=("Accept-Encoding",),
        )
        session._retry_connection = False
        return session

    @cached_property
    def _route(self) -> dict[str, Any]:
        """How each request of `lists` goes, as urllib3's pool does from the same configuration
        (`kubernetes.client.rest.RESTClientObject`): its TLS (`_tls`) and the server name it checks,
        and its proxy unless its `no_proxy` spares the server."""
        config = self.api_client.configuration
        route: dict[str, Any] = {"ssl": _tls(config) if self.server.startswith("https:") else True}
        checked = config.assert_hostname
        name = config.tls_server_name or (checked if isinstance(checked, str) else None)
        if name:
            route["server_hostname"] = name
        if config.proxy and not should_bypass_proxies(self.server, config.no_proxy or ""):
            route |= {"proxy": config.proxy, "proxy_headers": config.proxy_headers}
        return route

    def _in_flight(self) -> asyncio.Semaphore:
        """A slot for one LIST of `lists`, shared by all of this reader's on the running event loop
        (a semaphore belongs to one loop; a reader may outlive several, its tests')."""
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(WORKERS)
        return slots

    async def _listed(
        self,
        session: aiohttp.ClientSession,
        target: Target,
        query: Mapping[str, Query],
        request: Prepared,
        cost: ReadStats,
        kept: Kept | None,
    ) -> list[dict[str, Any]]:
        """The items of one LIST of `lists`, page after page (`request`: its first page's)."""
        decoder, keep = _how(kept)
        found: list[dict[str, Any]] = []
        while True:
            page = self._body(await self._got(session, target, request, cost), cost, decoder)
            found.extend(kept_items(page, keep))
            token = _continued(page)
            if token is None:
                return found
            asked = [{**query, "continue": token}]
            (request,) = await self._in_worker(partial(self._requests, target, asked))

    def _requests(
        self, target: Target, queries: Sequence[Mapping[str, Query]], _cost: ReadStats
    ) -> list[Prepared]:
        """The requests of `lists` for `queries`, made in a worker thread, where no wait holds the event
        loop: the ApiClient may run a credential plugin (seconds), and the first call loads aiohttp
        (80 ms) and reads the client's TLS files (`_route`)."""
        import aiohttp  # noqa: F401  (loaded here for `_session` and `_got`)

        self._route  # noqa: B018  (worked out here, once)
        return [self._prepared(target, query, _JSON) for query in queries]

    async def _got(
        self, session: aiohttp.ClientSession, target: Target, request: Prepared, cost: ReadStats
    ) -> bytes:
        """One GET's body, tried within the policy (`_retried`, on the loop)."""
        import aiohttp

        dropped = (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientOSError)
        attempt = 0
        while True:
            attempt += 1
            cost.calls += 1
            try:
                async with self._in_flight(), session.get(
                    request.url, headers=request.headers, **self._route
                ) as answer:
                    data = await answer.read()
                if 200 <= answer.status <= 299:
                    return data
                refused = ApiException(answer.status, answer.reason, body=data.decode("utf-8", "replace"))
                refused.headers = answer.headers
                wait = self._answered(target, refused, attempt)
            except aiohttp.ClientConnectorError as err:
                raise Unavailable(self.server, _connector_cause(err)) from err
            except TimeoutError as err:
                raise Unavailable(self.server, _timed_out(self.timeout)) from err
            except dropped as err:  # closed before its answer: a GET may be sent again
                wait = self._dropped(attempt, err)
            except aiohttp.ClientError as err:
                raise Unavailable(self.server, _other(err)) from err
            self._retrying(target, attempt, wait, cost)
            await asyncio.sleep(wait)

    # — either —

    def _answered(self, target: Target, err: ApiException, attempt: int) -> float:
        """Seconds to wait before trying again after the API server answered `err` (throttled, or a
        transient error), or the error it makes ours."""
        retried = err.status in _RETRIED_STATUS
        wait = self.retry.delay(attempt, _retry_after(err)) if retried else None
        if wait is None:
            raise self._error(target, err, attempt) from _truncated(err)
        return wait

    def _dropped(self, attempt: int, err: Exception) -> float:
        """Seconds to wait before sending a GET again whose connection closed before its answer."""
        wait = self.retry.delay(attempt, None)
        if wait is None:
            raise Unavailable(
                self.server, f"the connection was closed without an answer ({attempt} tries)"
            ) from err
        return wait

    def _retrying(self, target: Target, attempt: int, wait: float, cost: ReadStats) -> None:
        cost.retries += 1
        log.info("retrying %s %s in %.2f s (try %d failed)", target.verb, target.resource, wait, attempt)

    def _body(self, data: bytes, cost: ReadStats, decoder: Decoder) -> dict[str, Any]:
        """An answer decoded by `decoder`; whole while the answers are recorded (`received`)."""
        cost.bytes += len(data)
        body = _decode(data, self.server, WHOLE if self.received is not None else decoder)
        if self.received is not None:
            self.received.append(body)
        return body

    def _prepared(
        self,
        target: Target,
        query: Mapping[str, Query],
        accept: str,
        verb: str = "GET",
        content: Mapping[str, Any] | None = None,
    ) -> Prepared:
        """A request as the generated API methods make it: the ApiClient's URL and headers, its
        BearerToken authentication (refreshed by an exec plugin when due: in a worker thread)."""
        json_body = {"Content-Type": _JSON} if content is not None else {}
        method, url, headers, body, _ = self.api_client.param_serialize(
            verb,
            target.path,
            query_params=[(k, v) for k, v in query.items() if v is not None],
            header_params={"Accept": accept, **json_body},
            body=None if content is None else dict(content),
            auth_settings=["BearerToken"],
        )
        return Prepared(method, url, headers, body)

    async def _in_worker(self, call: Callable[[ReadStats], T]) -> T:
        """`call(cost)` in a worker thread; what it cost is added to the statistics, failed or not."""
        cost = ReadStats()
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, call, cost)
        finally:
            self.stats.add(cost)

    # — in a worker thread —

    def _items(
        self,
        target: Target,
        query: Mapping[str, Query],
        accept: str,
        cost: ReadStats,
        kept: Kept | None = None,
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        decoder, keep = _how(kept)
        for page in self._paged(target, query, accept, cost, decoder):
            found.extend(kept_items(page, keep))
        return found

    def _paged(
        self, target: Target, query: Mapping[str, Query], accept: str, cost: ReadStats, decoder: Decoder
    ) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            ask = {**query, "limit": PAGE_SIZE, "continue": token}
            page = self._fetch(target, ask, accept, cost, decoder).body
            yield page
            token = _continued(page)
            if token is None:
                return

    def _fetch(
        self,
        target: Target,
        query: Mapping[str, Query],
        accept: str,
        cost: ReadStats,
        decoder: Decoder = WHOLE,
    ) -> Response:
        """One GET, tried within the policy, its body read and decoded by `decoder` (a page of 500 pods
        is ~10 ms of JSON parsing: in this thread, not on the event loop); whole while the answers are
        recorded (`received`)."""
        response = self._retried(target, lambda: self._open(target, query, accept, self.timeout), cost)
        return Response(self._body(response.data, cost, decoder), response.headers)

    def _retried(self, target: Target, send: Callable[[], T], cost: ReadStats) -> T:
        """`send()`, retried within the policy (waiting in this thread); the client's errors made ours."""
        attempt = 0
        while True:
            attempt += 1
            cost.calls += 1
            try:
                return send()
            except ApiException as err:
                wait = self._answered(target, err, attempt)
            except urllib3.exceptions.ProtocolError as err:  # dropped before an answer: a GET may be re-sent
                wait = self._dropped(attempt, err)
            except urllib3.exceptions.HTTPError as err:
                raise Unavailable(self.server, _transport_cause(err, self.timeout)) from err
            self._retrying(target, attempt, wait, cost)
            time.sleep(wait)

    def _open(
        self,
        target: Target,
        query: Mapping[str, Query],
        accept: str,
        timeout: float | tuple[float, float],
        verb: str = "GET",
        content: Mapping[str, Any] | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """Send a request (a GET, unless `verb` says otherwise, with `content` as its JSON body,
        `_prepared`) and return the response unread; an answer that is not 2xx raises the client's
        ApiException, its body read."""
        sent = self._prepared(target, query, accept, verb, content)
        answer = self.api_client.call_api(
            sent.method, sent.url, sent.headers, sent.body, _request_timeout=timeout
        )
        if not 200 <= answer.status <= 299:
            answer.read()  # type: ignore[no-untyped-call]  # untyped in kubernetes.client.rest
            raise ApiException.from_response(http_resp=answer, body=None, data=None)
        response: urllib3.BaseHTTPResponse = answer.response
        return response

    def _error(self, target: Target, err: ApiException, attempts: int) -> ClusterError | NotFound:
        status = err.status or 0
        said = _status_message(err)
        if status == 404 and target.resource == VERSION:
            # Every Kubernetes API serves /version: a 404 there means the server URL is not one (a
            # wrong path prefix, or another service at that address), not that an object is missing.
            return Unavailable(
                self.server,
                f"HTTP 404 on /version: this URL does not serve the Kubernetes API ({said}); check the"
                " server URL and its path prefix in the kubeconfig",
            )
        if status == 404:
            return NotFound(target.kind or target.resource, target.namespace or "", target.name)
        if status == 403:
            return Forbidden(target.verb, target.resource, target.namespace, target.group)
        if status == 409:
            return Conflict(f"cannot {target.verb} {target.resource} {target.name}: {said}", "read it again")
        if status == 410:
            return Expired(
                f"the Kubernetes API at {self.server} no longer serves {target.resource} from that point"
                f" (HTTP 410 Gone: {said})",
                "list again",
            )
        if status == 401:
            return ClusterError(
                f"unauthorized: the Kubernetes API at {self.server} rejected kubewhy's credentials ({said})",
                "refresh the kubeconfig's credentials (kubectl get --raw /version tests them)"
                " or the ServiceAccount token",
            )
        if status == 0:  # the client's wrapping of a TLS failure (kubernetes.client.rest)
            return Unavailable(self.server, f"TLS failed: {truncate(str(err.reason or ''))}")
        if status in _RETRIED_STATUS:
            retry_after = _retry_after(err)
            why = (
                f"the server asked to retry after {retry_after:g} s"
                if retry_after is not None and retry_after > self.retry.cap
                else f"after {attempts} {'try' if attempts == 1 else 'tries'}"
            )
            return Unavailable(
                self.server, f"HTTP {status} {err.reason or ''} ({why}): {said}".replace("  ", " ")
            )
        return ClusterError(
            f"the Kubernetes API at {self.server} refused to {target.verb} {target.resource}:"
            f" HTTP {status}: {said}",
            "this is likely a kubewhy bug or an API version it does not know: please report this message",
        )


def page_items(page: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items of a LIST page, each given its apiVersion and kind (in place: a page is decoded
    afresh for its reader, and copying every item would cost more than the decoding)."""
    version, kind = page.get("apiVersion"), text(page.get("kind")).removesuffix("List")
    found = []
    for item in sequence(page.get("items")):
        if isinstance(item, dict):
            item.setdefault("apiVersion", version)
            item.setdefault("kind", kind)
            found.append(item)
    return found


@dataclass(frozen=True)
class Prepared:
    """A request made by the ApiClient (`Transport._prepared`)."""

    method: str
    url: str
    headers: dict[str, str]
    body: Any


def _how(kept: Kept | None) -> tuple[Decoder, Keep | None]:
    """How a LIST's pages are decoded, and what is kept of each item (None: the item)."""
    return (WHOLE, None) if kept is None else (kept.page, kept.item)


def kept_items(page: Mapping[str, Any], keep: Keep | None) -> list[dict[str, Any]]:
    """What a reader keeps of a LIST page's items (`page_items`): each as `keep` keeps it, or whole."""
    items = page_items(page)
    return items if keep is None else [k for i in items if (k := keep(i)) is not None]


def _continued(page: Mapping[str, Any]) -> str | None:
    """The `continue` token of a LIST page, when more pages follow."""
    return text(mapping(page.get("metadata")).get("continue")) or None


def _truncated(err: ApiException) -> ApiException:
    """The exception, its body cut short: it stays in the chain, and may reach a log."""
    if isinstance(err.body, str):
        err.body = truncate(err.body)
    elif isinstance(err.body, bytes):
        err.body = truncate(err.body.decode("utf-8", "replace"))
    return err


def _status_message(err: ApiException) -> str:
    body = err.body.decode("utf-8", "replace") if isinstance(err.body, bytes) else str(err.body or "")
    try:
        said = text(mapping(json.loads(body)).get("message"))
    except ValueError:
        said = ""
    return truncate(said or body or str(err.reason or ""))


def _retry_after(err: ApiException) -> float | None:
    value = mapping(err.headers).get("Retry-After") if err.headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _transport_cause(err: urllib3.exceptions.HTTPError, timeout: float) -> str:
    """What went wrong on the way, in words: DNS, refused, timeout, TLS. (urllib3 makes a failed
    connection a kind of timeout, so the connection errors are told apart first.)"""
    if isinstance(err, urllib3.exceptions.NameResolutionError):
        return _DNS
    if isinstance(err, urllib3.exceptions.NewConnectionError):
        return _refused(err, err.__cause__ or err.__context__)
    if isinstance(err, urllib3.exceptions.TimeoutError):
        return _timed_out(timeout)
    if isinstance(err, urllib3.exceptions.SSLError):
        return _tls_failed(err)
    return _other(err)


def _tls(config: Configuration) -> ssl.SSLContext:
    """The TLS context of the client configuration: its CA, client certificate, verification."""
    context = ssl.create_default_context(cafile=config.ssl_ca_cert, cadata=config.ca_cert_data)
    if not config.verify_ssl or config.assert_hostname is False:
        context.check_hostname = False
    if not config.verify_ssl:
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context


def _connector_cause(err: aiohttp.ClientConnectorError) -> str:
    """Why a connection of `lists` failed, in the words of `_transport_cause`."""
    import aiohttp

    if isinstance(err, aiohttp.ClientConnectorDNSError):
        return _DNS
    if isinstance(err, aiohttp.ClientSSLError):
        return _tls_failed(err)
    if isinstance(err, aiohttp.ClientProxyConnectionError):
        return truncate(f"the proxy refused the connection: {err}")
    return _refused(err, err.os_error)


_DNS = "the server's host name does not resolve (DNS)"


def _refused(err: Exception, why: BaseException | None) -> str:
    """A connection that failed: refused, or what else the system said."""
    return "connection refused" if isinstance(why, ConnectionRefusedError) else truncate(str(err))


def _timed_out(timeout: float) -> str:
    return f"no answer within {timeout:g} s (timed out)"


def _tls_failed(err: Exception) -> str:
    return f"TLS failed: {truncate(str(err))}"


def _other(err: Exception) -> str:
    return truncate(f"{type(err).__name__}: {err}")


def _decode(data: bytes, server: str, decoder: Decoder = WHOLE) -> dict[str, Any]:
    try:
        try:
            body = decoder.decode(data)
        except msgspec.ValidationError:  # valid JSON, not shaped as the decoder's schema says
            body = WHOLE.decode(data)
    except msgspec.DecodeError as err:
        raise Unavailable(
            server, f"the answer is not JSON: {truncate(data.decode('utf-8', 'replace'))}"
        ) from err
    return dict(mapping(body))


def _date(headers: Mapping[str, str]) -> datetime | None:
    value = headers.get("Date")
    try:
        return parsedate_to_datetime(value) if isinstance(value, str) else None
    except (TypeError, ValueError):
        return None
