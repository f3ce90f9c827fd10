"""A Kubernetes API server over HTTP that serves a snapshot: discovery, GET, LIST and WATCH with label
and field selectors, Tables for kubectl, pod logs, the API's Status errors, and injected faults.

Read-only over HTTP but for Leases (`WRITABLE`), which kubewhy's replicas create and update to elect
a leader (`cluster.lease`): POST creates one (409 AlreadyExists if it exists), PUT replaces one (409
Conflict unless the body carries the stored `resourceVersion`, as the API server's optimistic
concurrency requires). Any other write is recorded and refused (405), so a test can prove nothing else
tried to write. Tests change the cluster through the store (`sim.store.put(obj)`,
`sim.store.delete(kind, namespace, name)`), and open watches see the change.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from cluster.snapshot import SnapshotReader, YamlLoader
from devtools.apisim import resources
from devtools.apisim.faults import DROP, Fault, Faults
from devtools.apisim.resources import Resource, status_object
from devtools.apisim.selectors import SelectorError, parse_fields, parse_labels
from devtools.apisim.store import Entry, Selection, Store
from devtools.apisim.tables import table
from devtools.apisim.watch import DEFAULT_SECONDS, Watch

USER = "system:serviceaccount:kubewhy:kubewhy"
"""Who the simulator believes is calling (it appears in Forbidden messages, as on a real cluster)."""

TOKEN = "apisim-token"

_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
"""The verb the API server's RequestInfoFactory gives a write (k8s.io/apiserver pkg/endpoints/request)."""

WRITABLE = frozenset({("coordination.k8s.io", "leases")})
"""(group, resource) that may be created and updated over HTTP."""


@dataclass(frozen=True)
class Request:
    """One request as the API server's authorizer sees it (the attributes RBAC decides on)."""

    method: str
    path: str
    query: Mapping[str, str]
    verb: str
    """`get`, `list` or `watch` for resource requests (`get` for discovery and other paths); for
    writes, the verb RBAC names (`create`, `update`, `patch`, `delete`)."""
    group: str = ""
    version: str = ""
    resource: str = ""
    """Plural resource name; empty for non-resource paths (/api, /apis/…, /version)."""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    accept: str = ""
    at: float = field(default_factory=time.monotonic)
    """When it arrived (time.monotonic)."""

    @property
    def is_resource(self) -> bool:
        return bool(self.resource)

    @property
    def rbac_resource(self) -> str:
        """As an RBAC rule names it: `pods`, `pods/log`."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _json(status: int, doc: Any) -> Answer:
    return Answer(status, json.dumps(doc, separators=(",", ":")).encode())


def status_answer(status: int, message: str, details: Mapping[str, Any] | None = None) -> Answer:
    """An error as the API server writes it: a `Status` object."""
    return _json(status, status_object(status, message, dict(details or {})))


_NOT_SERVED = status_answer(404, "the server could not find the requested resource")


class _Expired(Exception):
    """A `continue` token this server did not issue (410 Gone, as for an expired token)."""


class Simulator:
    """The state of one simulated API server: its objects, the requests it received, its faults."""

    def __init__(self, store: Store, faults: Faults, now: datetime, absent: frozenset[str]) -> None:
        self.store = store
        self.faults = faults
        self.now = now
        """The cluster's clock: the `Date` of every answer and the reference for ages in Tables."""
        self.absent = absent
        self.requests: list[Request] = []
        self.url = ""
        self.kubeconfig = ""
        self.bookmark_seconds = 60.0
        """How often a watch that allows bookmarks gets one (the API server's is about a minute)."""
        self._lock = threading.Lock()
        self._served = resources.group_versions(absent)
        self._selections: dict[str, tuple[list[Entry], int]] = {}
        self._watches: list[tuple[Request, Watch]] = []

    def drop_watches(self, resource: str | None = None) -> int:
        """Cut the open watches (of `resource`, or all) mid-stream, without the end of the chunked
        body, as a restarting API server or a broken connection does. Returns how many were cut."""
        with self._lock:
            cut = [w for r, w in self._watches if resource is None or r.rbac_resource == resource]
        for watch in cut:
            watch.drop()
        return len(cut)

    def open_watches(self, resource: str | None = None) -> int:
        """How many watches (of `resource`, or all) are being served now."""
        with self._lock:
            return sum(1 for r, _ in self._watches if resource is None or r.rbac_resource == resource)

    @contextmanager
    def watching(self, request: Request, watch: Watch) -> Iterator[None]:
        """Count the watch among the open ones while it is served."""
        with self._lock:
            self._watches.append((request, watch))
        try:
            yield
        finally:
            with self._lock:
                self._watches.remove((request, watch))

    # — routing —

    def answer(
        self, method: str, target: str, accept: str, body: bytes = b""
    ) -> tuple[Request, Answer | Fault | Watch]:
        url = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        request, route = self._route(method, url.path, query, accept)
        with self._lock:
            self.requests.append(request)
        fault = self.faults.take(request)
        if self.faults.latency:
            time.sleep(self.faults.latency)
        self.faults.wait_for_release()
        if fault is not None and fault.status != 403:
            return request, fault
        if fault is not None:
            return request, self._forbidden(request)
        if method in ("POST", "PUT") and (request.group, request.resource) in WRITABLE:
            return request, self._write(request, body)
        if method != "GET":
            return request, status_answer(405, f"the simulator is read-only: {method} is not allowed")
        return request, route()

    def _route(
        self, method: str, path: str, query: dict[str, str], accept: str
    ) -> tuple[Request, Callable[[], Answer | Watch]]:
        """The request as the authorizer sees it, and how to answer it (once faults are applied)."""
        parts = [p for p in path.split("/") if p]
        plain = Request(method, path, query, _WRITE_VERBS.get(method, "get"), accept=accept)
        if path.rstrip("/") in ("/healthz", "/readyz", "/livez"):
            return plain, lambda: Answer(200, b"ok", "text/plain; charset=utf-8")
        if path.rstrip("/") == "/version":
            return plain, lambda: _json(200, resources.KUBERNETES_VERSION)
        if parts == ["api"]:
            return plain, lambda: _json(200, resources.api_versions(self.url.split("//", 1)[-1]))
        if parts == ["apis"]:
            return plain, lambda: _json(200, resources.api_group_list(self.absent))
        if len(parts) == 2 and parts[0] == "apis":
            return plain, lambda: self._group(parts[1])
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return plain, lambda: Answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
        gv = f"{group}/{version}" if group else version
        if not rest:
            return (
                plain,
                lambda: (
                    _json(200, resources.resource_list(gv, self._served[gv]))
                    if gv in self._served
                    else _NOT_SERVED
                ),
            )
        # As the API server's RequestInfoFactory reads a path: by its shape, whether or not the
        # resource exists (RBAC decides on these attributes).
        namespaced = rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize")
        namespace, rest = (rest[1], rest[2:]) if namespaced else ("", rest)
        plural, name, sub = [*rest, "", ""][:3]
        verb = "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list")
        if not name:
            # A LIST or WATCH of one name (`fieldSelector=metadata.name=NAME`) is authorized for that
            # name: `resourceNames` rules allow it (k8s.io/apiserver `pkg/endpoints/request/requestinfo.go`).
            name = _one_name(query.get("fieldSelector", ""))
        request = Request(
            method,
            path,
            query,
            _WRITE_VERBS.get(method, verb),
            group=group,
            version=version,
            resource=plural,
            subresource=sub,
            namespace=namespace,
            name=name,
            accept=accept,
        )
        resource = self._lookup(group, version, plural, bool(namespace))
        if resource is None or len(rest) > 3:
            return request, lambda: _NOT_SERVED
        return request, lambda: self._serve(request, resource)

    def _lookup(self, group: str, version: str, plural: str, namespaced: bool) -> Resource | None:
        resource = resources.lookup(group, version, plural)
        if resource is None or group in self.absent or (namespaced and not resource.namespaced):
            return None
        return resource

    def _group(self, name: str) -> Answer:
        versions = [gv for gv in self._served if gv.startswith(f"{name}/")]
        if not versions:
            return _NOT_SERVED
        return _json(200, resources.api_group(name, versions[0].split("/", 1)[1]))

    # — resources —

    def _serve(self, request: Request, resource: Resource) -> Answer | Watch:
        if request.verb == "watch":
            return self._watch(request, resource)
        if request.verb == "list":
            try:
                return self._list(request, resource)
            except _Expired as expired:
                return status_answer(410, f"the provided continue parameter is too old: {expired}")
        entry = self.store.collection(resource).entries.get((request.namespace, request.name))
        if entry is None:
            return self._not_found(request, resource)
        if request.subresource == "log" and resource.plural == "pods":
            return self._log(request, entry.obj)
        if request.subresource not in ("", "status"):
            return _NOT_SERVED
        return self._object(request, resource, entry)

    def _object(self, request: Request, resource: Resource, entry: Entry) -> Answer:
        obj = entry.as_served(resource)
        if "as=Table" in request.accept:
            return _json(
                200, table(resource, [obj], request.query.get("includeObject", "Metadata"), self.now)
            )
        if "as=PartialObjectMetadata" in request.accept:
            return _json(200, _partial(obj))
        return Answer(200, entry.encoded(resource, in_list=False))

    def _selection(self, request: Request, resource: Resource) -> Selection | Answer:
        """What a LIST or WATCH selects, or the API's 400 for a selector it cannot parse."""
        try:
            labels = parse_labels(request.query.get("labelSelector", ""))
            fields = parse_fields(request.query.get("fieldSelector", ""), resource.selectable)
        except SelectorError as e:
            return status_answer(
                400,
                f'Unable to find "{resource.group}/{resource.version}, '
                f'Resource={resource.plural}" that match label selector '
                f'"{request.query.get("labelSelector", "")}", field selector '
                f'"{request.query.get("fieldSelector", "")}": {e}',
            )
        return Selection.of(request.namespace, labels, fields, dict(resource.field_aliases))

    def _watch(self, request: Request, resource: Resource) -> Answer | Watch:
        selection = self._selection(request, resource)
        if isinstance(selection, Answer):
            return selection
        since, seconds = request.query.get("resourceVersion", ""), request.query.get("timeoutSeconds", "")
        if not all(value.isdigit() or value == "" for value in (since, seconds)):
            return status_answer(400, f"resourceVersion {since!r}, timeoutSeconds {seconds!r}: not numbers")
        bookmarks = request.query.get("allowWatchBookmarks") in ("true", "1")
        return Watch(
            self.store,
            resource,
            selection,
            int(since) if since not in ("", "0") else None,
            float(seconds) if seconds else DEFAULT_SECONDS,
            self.bookmark_seconds if bookmarks else None,
        )

    def _list(self, request: Request, resource: Resource) -> Answer:
        selection = self._selection(request, resource)
        if isinstance(selection, Answer):
            return selection
        entries, more = self._page(request, resource, selection)
        if "as=Table" in request.accept:
            include = request.query.get("includeObject", "Metadata")
            doc = table(resource, [e.as_served(resource) for e in entries], include, self.now)
            doc["metadata"].update(more)
            return _json(200, doc)
        if "as=PartialObjectMetadataList" in request.accept:
            return _json(
                200,
                {
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": more,
                    "items": [_partial(e.as_served(resource)) for e in entries],
                },
            )
        head = json.dumps(
            {
                "kind": resource.list_kind,
                "apiVersion": resource.group_version,
                "metadata": more,
            },
            separators=(",", ":"),
        )
        items = b",".join(e.encoded(resource, in_list=True) for e in entries)
        return Answer(200, head[:-1].encode() + b',"items":[' + items + b"]}")

    def _page(
        self, request: Request, resource: Resource, selection: Selection
    ) -> tuple[list[Entry], dict[str, Any]]:
        """One page of a LIST with `limit`, and the list metadata: the `resourceVersion` the list was
        read at (to watch from), and what leads to the next page (`continue`, `remainingItemCount`).
        The entries are selected once and kept for the continuations, so every page is of the same
        revision, as the API server serves them."""
        token = request.query.get("continue", "")
        if token:
            selection_id, _, start = token.partition(":")
            with self._lock:
                selected = self._selections.get(selection_id)
            if selected is None or not start.isdigit():
                raise _Expired(token)
            (entries, revision), offset = selected, int(start)
        else:
            with self.store.changed:
                entries, revision = self.store.collection(resource).select(selection), self.store.revision
            offset = 0
        limit = int(request.query["limit"]) if request.query.get("limit", "").isdigit() else 0
        at = {"resourceVersion": str(revision)}
        if not limit or offset + limit >= len(entries):
            return entries[offset:], at
        if not token:
            with self._lock:
                selection_id = str(len(self._selections))
                self._selections[selection_id] = (entries, revision)
        end = offset + limit
        return entries[offset:end], at | {
            "continue": f"{selection_id}:{end}",
            "remainingItemCount": len(entries) - end,
        }

    def _log(self, request: Request, pod: Mapping[str, Any]) -> Answer:
        """Logs, or the refusals a real cluster gives: a wrong container, and the kubelet's
        `validateContainerLogStatus` — no earlier run for `--previous`, a container still waiting
        (a crash-looping one shows its last run instead)."""
        name = pod["metadata"]["name"]
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        kinds = ("containers", "initContainers", "ephemeralContainers")
        containers = [c.get("name") for key in kinds for c in spec.get(key) or []]
        container = request.query.get("container") or (containers[0] if len(containers) == 1 else "")
        if not container:
            return status_answer(
                400,
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]",
            )
        if container not in containers:
            return status_answer(400, f"container {container} is not valid for pod {name}")
        if not spec.get("nodeName"):
            return Answer(200, b"", "text/plain")
        statuses = (
            s
            for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
            for s in status.get(key) or []
        )
        found = next((s for s in statuses if s.get("name") == container), None)
        if found is None:
            return status_answer(400, f'container "{container}" in pod "{name}" is not available')
        refusal = _unlogged(found, container, name, request.query.get("previous") in ("true", "1"))
        if refusal:
            return status_answer(400, refusal)
        line = f"{self.now:%Y-%m-%dT%H:%M:%SZ} simulated log of container {container} of pod {name}\n"
        return Answer(200, line.encode(), "text/plain")

    # — writes (Leases only) —

    def _write(self, request: Request, body: bytes) -> Answer:
        resource = self._lookup(request.group, request.version, request.resource, bool(request.namespace))
        if resource is None or not request.namespace or request.subresource:
            return _NOT_SERVED
        try:
            obj = json.loads(body)
        except ValueError:
            return status_answer(400, "the request body is not JSON")
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(metadata, dict) or not metadata.get("name"):
            return status_answer(422, f"{resource.kind} is invalid: metadata.name: Required value")
        name = str(metadata["name"])
        if request.method == "PUT" and name != request.name:
            return status_answer(400, "the name of the object does not match the name on the URL")
        qualified = self._qualified(resource.plural, resource.group)
        details = {"name": name, "group": resource.group, "kind": resource.plural}
        collection = self.store.collection(resource)
        with self.store.changed:  # read, compare and write as one step, as etcd's transaction does
            stored = collection.entries.get((request.namespace, name))
            if request.method == "POST" and stored is not None:
                return status_answer(409, f'{qualified} "{name}" already exists', details)
            if request.method == "PUT":
                if stored is None:
                    return self._not_found(request, resource)
                stored_version = str(stored.obj["metadata"].get("resourceVersion"))
                if str(metadata.get("resourceVersion", "")) != stored_version:
                    return status_answer(
                        409,
                        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been'
                        " modified; please apply your changes to the latest version and try again",
                        details,
                    )
            kept = (  # what the server sets; a PUT replaces the rest of the metadata (annotations too)
                {k: v for k, v in stored.obj["metadata"].items() if k in ("uid", "creationTimestamp")}
                if stored is not None
                else {
                    "uid": f"sim-{resource.singular}-{uuid.uuid4().hex[:12]}",
                    "creationTimestamp": f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}",
                }
            )
            written = self.store.put(
                obj | {
                    "apiVersion": resource.group_version,
                    "kind": resource.kind,
                    "metadata": metadata | {"namespace": request.namespace} | kept,
                }
            )
        return _json(201 if request.method == "POST" else 200, written)

    # — errors —

    @staticmethod
    def _qualified(resource_name: str, group: str) -> str:
        return f"{resource_name}.{group}" if group else resource_name

    def _not_found(self, request: Request, resource: Resource) -> Answer:
        return status_answer(
            404,
            f'{self._qualified(resource.plural, resource.group)} "{request.name}" not found',
            {"name": request.name, "group": resource.group, "kind": resource.plural},
        )

    def _forbidden(self, request: Request) -> Answer:
        what = self._qualified(request.rbac_resource, request.group)
        subject = f'{what} "{request.name}"' if request.name else what
        where = f'in the namespace "{request.namespace}"' if request.namespace else "at the cluster scope"
        message = (
            f'{subject} is forbidden: User "{USER}" cannot {request.verb} resource '
            f'"{request.rbac_resource}" in API group "{request.group}" {where}'
        )
        details = {"group": request.group, "kind": request.resource}
        if request.name:
            details["name"] = request.name
        return status_answer(403, message, details)

    def fault_answer(self, fault: Fault) -> Answer:
        message = fault.message or {
            429: "Too many requests, please try again later.",
            500: "Internal error occurred: etcdserver: request timed out",
            503: "the server is currently unable to handle the request",
        }.get(fault.status, f"simulated failure {fault.status}")
        answer = status_answer(fault.status, message)
        if fault.retry_after is not None:
            answer.headers["Retry-After"] = fault.retry_after
        return answer


def _one_name(selector: str) -> str:
    """The name a field selector requires (`metadata.name=NAME` or `==`, as `RequiresExactMatch`), or ""."""
    for term in selector.split(","):
        key, equals, value = term.partition("=")
        if key.strip() == "metadata.name" and equals:
            return value.removeprefix("=").strip()
    return ""


def _unlogged(container_status: Mapping[str, Any], container: str, pod: str, previous: bool) -> str:
    """Why the kubelet has no log to give (its `validateContainerLogStatus`), or "" when it has one."""
    state = container_status.get("state") or {}
    last = (container_status.get("lastState") or {}).get("terminated") or {}
    running, terminated, waiting = state.get("running"), state.get("terminated"), state.get("waiting")
    if previous:
        return (
            ""
            if last.get("containerID")
            else f'previous terminated container "{container}" in pod "{pod}" not found'
        )
    if running is not None:
        return ""
    if terminated is not None or last:
        ran = (terminated or {}).get("containerID") or last.get("containerID")
        return "" if ran else f'container "{container}" in pod "{pod}" is terminated'
    if waiting is not None:
        reason = str(waiting.get("reason", ""))
        said = {
            "ErrImagePull": "image can't be pulled",
            "ImagePullBackOff": "trying and failing to pull image",
        }.get(reason, reason)
        return f'container "{container}" in pod "{pod}" is waiting to start: {said}'
    return f'container "{container}" in pod "{pod}" is waiting to start - no logs yet'


def _partial(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Headers and body go out in two writes on a kept-alive connection: with Nagle's algorithm the
    second waits for the client's delayed ACK (about 40 ms a request)."""
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are recorded in `sim.requests`."""

    def date_time_string(self, timestamp: float | None = None) -> str:
        return formatdate(self.server.sim.now.timestamp(), usegmt=True)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        sim = self.server.sim
        request, outcome = sim.answer(self.command, self.path, self.headers.get("Accept", ""), body)
        if isinstance(outcome, Watch):
            with sim.watching(request, outcome):
                self._stream(outcome)
            return
        if isinstance(outcome, Fault):
            if outcome.status == DROP:
                self._cut()
                return
            outcome = sim.fault_answer(outcome)
        self.send_response(outcome.status)
        self.send_header("Content-Type", outcome.content_type)
        self.send_header("Content-Length", str(len(outcome.body)))
        self.send_header("Cache-Control", "no-cache, private")
        for name, value in outcome.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(outcome.body)

    def _stream(self, watch: Watch) -> None:
        """A watch's events as a chunked body, each line sent as it comes; a dropped watch is cut
        without the body's end."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        for line in watch.lines(self._hung_up):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        if watch.dropped.is_set():
            self._cut()
            return
        self.wfile.write(b"0\r\n\r\n")

    def _hung_up(self) -> bool:
        """The client closed the connection (it can send nothing else while a watch streams). Polled:
        `select.select` refuses a descriptor past 1023, which a test serving many clusters at once
        reaches."""
        poller = select.poll()
        poller.register(self.connection, select.POLLIN)
        if not poller.poll(0):
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return peeked == b""

    def _cut(self) -> None:
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    request_queue_size = 128
    """Connections the kernel holds before they are accepted. socketserver's default, 5, is overrun
    when a client opens its pool's 16 connections at once: the kernel drops the SYNs past it, and the
    client sends them again a second later (a second's stall that no real API server shows: Go listens
    with the kernel's own maximum, `net.core.somaxconn`)."""

    def __init__(self, sim: Simulator) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.sim = sim
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a timed-out or dropped call) is expected; anything else is a
        simulator bug and is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def close_connections(self) -> None:
        """Wake the handlers blocked on idle keep-alive connections so the server can stop."""
        with self._connections_lock:
            for connection in self._connections:
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


ObjectsOrPaths = str | Path | Iterable[str | Path | Mapping[str, Any]]


@contextmanager
def serve(
    objects_or_paths: ObjectsOrPaths,
    faults: Faults | None = None,
    *,
    now: datetime | None = None,
    without: Sequence[str] = (),
) -> Iterator[Simulator]:
    """Serve the objects (snapshot files, folders, or objects; Lists are unpacked) on 127.0.0.1 at a
    free port until the block ends.

    `now` is the cluster's clock (default: the newest timestamp in the objects, so ages and the
    reading time are the same on every run). `without` names API groups the cluster lacks
    (e.g. `"kueue.x-k8s.io"` when Kueue is not installed): their paths answer 404.
    """
    objects = list(_objects(objects_or_paths))
    sim = Simulator(
        Store(objects), faults or Faults(), _whole_second(now or _clock(objects)), frozenset(without)
    )
    server = _Server(sim)
    sim.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    with tempfile.TemporaryDirectory(prefix="apisim-") as home:
        sim.kubeconfig = str(Path(home) / "kubeconfig")
        Path(sim.kubeconfig).write_text(yaml.safe_dump(_kubeconfig(sim.url)))
        thread.start()
        try:
            yield sim
        finally:
            sim.store.close()
            server.shutdown()
            server.close_connections()
            server.server_close()
            thread.join()


def _kubeconfig(url: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "apisim", "cluster": {"server": url}}],
        "users": [{"name": "kubewhy", "user": {"token": TOKEN}}],
        "contexts": [
            {"name": "apisim", "context": {"cluster": "apisim", "user": "kubewhy", "namespace": "default"}}
        ],
        "current-context": "apisim",
    }


def _objects(source: ObjectsOrPaths) -> Iterator[Mapping[str, Any]]:
    items: Iterable[str | Path | Mapping[str, Any]] = [source] if isinstance(source, str | Path) else source
    for item in items:
        if isinstance(item, Mapping):
            yield from _unpacked(item)
        else:
            yield from _load(Path(item))


def _unpacked(obj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The objects of a List (typed lists such as `PodList` leave kind out of their items), or the object."""
    list_kind = str(obj.get("kind", ""))
    if not (list_kind.endswith("List") and isinstance(obj.get("items"), list)):
        yield obj
        return
    implied = (
        {}
        if list_kind == "List"
        else {"apiVersion": obj.get("apiVersion"), "kind": list_kind[: -len("List")]}
    )
    for item in obj["items"]:
        if isinstance(item, Mapping):
            yield from _unpacked({**implied, **item})


def _load(path: Path) -> Iterator[Mapping[str, Any]]:
    """Every object of a snapshot file or folder. Not `cluster.snapshot.load_objects`, which keeps
    only the kinds kubewhy reads: the cluster a snapshot was taken from also had its LocalQueues,
    Services…, and the commands kubewhy suggests may show them."""
    files = (
        sorted(p for p in path.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
        if path.is_dir()
        else [path]
    )
    for file in files:
        raw = file.read_text()
        documents = [json.loads(raw)] if file.suffix == ".json" else yaml.load_all(raw, Loader=YamlLoader)
        for document in documents:
            if isinstance(document, Mapping):
                yield from _unpacked(document)


def _clock(objects: list[Mapping[str, Any]]) -> datetime:
    """The snapshot's own time, as SnapshotReader reads it (the newest time the objects record); the
    wall clock when the objects hold no time."""
    newest = SnapshotReader(objects).now
    return newest if newest.year > 1970 else datetime.now(UTC)


def _whole_second(moment: datetime) -> datetime:
    """Rounded up to the second HTTP dates carry, so that no object is newer than the server's clock."""
    return moment.replace(microsecond=0) + (timedelta(seconds=1) if moment.microsecond else timedelta())
