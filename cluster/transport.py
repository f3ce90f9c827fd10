"""How kubewhy calls the API server: off the event loop, with a timeout, bounded retries, raw JSON,
typed errors, and a count of what it cost.

The official client is blocking (urllib3), so every call runs in this transport's own small thread
pool. Responses are read as raw JSON (`_preload_content=False`): the generated models cost seconds
of CPU on large lists (kubernetes-client/python#1921, #2284). Lists are read in pages of
`PAGE_SIZE`, so no single answer has to carry a whole large cluster within one timeout. A watch is
opened here too (`stream`), and read by its caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from cluster.errors import ClusterError, Forbidden, NotFound, Unavailable
from diagnosis.objects import mapping, sequence, text

log = logging.getLogger(__name__)

PAGE_SIZE = 500
"""Items per LIST page: kubectl's default `--chunk-size`."""

WORKERS = 8
"""Calls in flight at once, per reader. Also the size of urllib3's connection pool, so that every
worker keeps its connection alive between calls."""

_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
"""Throttling (API Priority and Fairness) and transient server errors. Other errors will not mend in
the next second."""

_BODY_LIMIT = 300
"""Characters of a response body that may reach a message or a log: enough for the API's Status
message, not enough to carry a whole object into Slack."""

VERSION = "version"
"""The Target resource of `GET /version`, which every Kubernetes API server answers."""

_PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

T = TypeVar("T")


class Expired(ClusterError):
    """410 Gone: a `continue` token or a watch's `resourceVersion` is older than the API server keeps;
    the reader must list again."""


def truncate(value: str, limit: int = _BODY_LIMIT) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else f"{flat[: limit - 1]}…"


@dataclass(frozen=True)
class Target:
    """What a call reads, as RBAC names it: errors say exactly what was refused or missing."""

    verb: str
    resource: str
    namespace: str | None = None
    group: str = ""
    name: str = ""
    kind: str = ""
    """The noun of a NotFound (`pod`, `jobset`); defaults to the resource."""


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
    date: datetime | None
    """The API server's clock at the answer (its `Date` header)."""


class Transport:
    """One API client, its thread pool, its retry policy and its statistics."""

    def __init__(self, api_client: ApiClient, timeout: float = 5.0, retry: Retry | None = None) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.retry = retry or Retry()
        self.stats = ReadStats()
        self.server = str(api_client.configuration.host)
        self._executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="kubewhy-api")

    async def get(self, target: Target, call: Callable[..., Any], *args: Any, **params: Any) -> Response:
        """GET one object (or /version). A 404 raises NotFound for `target`."""
        return await self._request(target, call, args, params)

    async def items(
        self, target: Target, call: Callable[..., Any], *args: Any, **params: Any
    ) -> list[dict[str, Any]]:
        """Every item of a LIST, page after page, each with its apiVersion and kind (typed lists
        leave them out of their items; readers and the diagnosis expect them, as kubectl prints)."""
        return [item async for page in self.pages(target, call, *args, **params) for item in page_items(page)]

    async def pages(
        self, target: Target, call: Callable[..., Any], *args: Any, **params: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """The pages of a LIST, each as the API server sent it (its `metadata.resourceVersion` is the
        revision the whole list was read at)."""
        token: str | None = None
        while True:
            page = (
                await self._request(target, call, args, {**params, "limit": PAGE_SIZE, "_continue": token})
            ).body
            yield page
            token = text(mapping(page.get("metadata")).get("continue")) or None
            if token is None:
                return

    async def names(self, target: Target, call: Callable[..., Any], *args: Any) -> list[str]:
        """The names of the objects a LIST would return, read as metadata only (a fraction of the bytes)."""
        partial = await self.items(target, call, *args, _headers={"Accept": _PARTIAL_LIST})
        return [text(mapping(item.get("metadata")).get("name")) for item in partial]

    async def stream(
        self, target: Target, call: Callable[..., Any], *args: Any, read_timeout: float, **params: Any
    ) -> urllib3.BaseHTTPResponse:
        """Open a WATCH (`call` with watch=True and `params`) and return its unread response, for the
        caller to read line by line in a thread of its own. `read_timeout` bounds each wait for a
        line, so it must exceed the watch's `timeout_seconds`."""
        options = {"_preload_content": False, "_request_timeout": (self.timeout, read_timeout)}
        response: urllib3.BaseHTTPResponse = await self._retried(
            target, lambda: call(*args, watch=True, **options, **params)
        )
        return response

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        await asyncio.get_running_loop().run_in_executor(None, self.api_client.close)

    async def _request(
        self, target: Target, call: Callable[..., Any], args: tuple[Any, ...], params: Mapping[str, Any]
    ) -> Response:
        def fetch() -> tuple[int, dict[str, Any], Any]:
            # Decoded in the worker thread too: a page of 500 pods is ~15 ms of JSON parsing.
            data, headers = self._send(call, args, params)
            return len(data), _decode(data, self.server), headers

        size, body, headers = await self._retried(target, fetch)
        self.stats.bytes += size
        return Response(body, _date(headers))

    async def _retried(self, target: Target, send: Callable[[], T]) -> T:
        """`send()` in a worker thread, retried within the policy; the client's errors made ours."""
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            attempt += 1
            self.stats.calls += 1
            try:
                return await loop.run_in_executor(self._executor, send)
            except ApiException as err:
                retried = err.status in _RETRIED_STATUS
                wait = self.retry.delay(attempt, _retry_after(err)) if retried else None
                if wait is None:
                    raise self._error(target, err, attempt) from _truncated(err)
            except urllib3.exceptions.ProtocolError as err:  # dropped before an answer: a GET may be re-sent
                wait = self.retry.delay(attempt, None)
                if wait is None:
                    raise Unavailable(
                        self.server, f"the connection was closed without an answer ({attempt} tries)"
                    ) from err
            except urllib3.exceptions.HTTPError as err:
                raise Unavailable(self.server, _transport_cause(err, self.timeout)) from err
            self.stats.retries += 1
            log.info("retrying %s %s in %.2f s (try %d failed)", target.verb, target.resource, wait, attempt)
            await asyncio.sleep(wait)

    def _send(
        self, call: Callable[..., Any], args: tuple[Any, ...], params: Mapping[str, Any]
    ) -> tuple[bytes, Any]:
        """In a worker thread: the call and the reading of its body, both under the timeout."""
        arguments = {k: v for k, v in params.items() if v is not None}
        response = call(*args, _preload_content=False, _request_timeout=self.timeout, **arguments)
        return response.data, response.headers

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
    """The items of a LIST page, each with its apiVersion and kind."""
    implied = {"apiVersion": page.get("apiVersion"), "kind": text(page.get("kind")).removesuffix("List")}
    return [{**implied, **item} for item in map(mapping, sequence(page.get("items")))]


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
        return "the server's host name does not resolve (DNS)"
    if isinstance(err, urllib3.exceptions.NewConnectionError):
        refused = isinstance(err.__cause__ or err.__context__, ConnectionRefusedError)
        return "connection refused" if refused else truncate(str(err))
    if isinstance(err, urllib3.exceptions.TimeoutError):
        return f"no answer within {timeout:g} s (timed out)"
    if isinstance(err, urllib3.exceptions.SSLError):
        return f"TLS failed: {truncate(str(err))}"
    return truncate(f"{type(err).__name__}: {err}")


def _decode(data: bytes, server: str) -> dict[str, Any]:
    try:
        body = json.loads(data)
    except ValueError as err:
        raise Unavailable(
            server, f"the answer is not JSON: {truncate(data.decode('utf-8', 'replace'))}"
        ) from err
    return dict(mapping(body))


def _date(headers: Any) -> datetime | None:
    value = mapping(headers).get("Date") if isinstance(headers, Mapping) else None
    try:
        return parsedate_to_datetime(value) if isinstance(value, str) else None
    except (TypeError, ValueError):
        return None
