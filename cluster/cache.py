"""A watch-backed cache of one cluster's nodes and bound pods, for `/triage` on large clusters (opt-in).

Without it, a pod that may go to hundreds of nodes needs the bound pods of each of them: on 5,000 nodes
and 100,000 pods, about 1,400 calls and 114 MB for one unpinned GPU pod. With it, the live reader takes
the candidate nodes and their pods from memory, and reads only the pod and its events from the API.

Each resource is kept as client-go's reflector keeps it: LIST in pages, then WATCH from the list's
`resourceVersion`; a watch that ends is resumed from the last `resourceVersion` seen (of an event or
a bookmark); a 410 Gone means changes were missed, so the resource is listed again; other errors are
retried with backoff. A 403 stops the cache with the rule to grant, unless the resource was watched
before: a restarting API server refuses everyone until its authorizer has read the roles again.
Pods are those bound to a node and not terminal (`BOUND_PODS`): a pod that finishes or is deleted
leaves the watch's selection and arrives as DELETED.

Every bound pod is kept, in a compact form (`compact_pod`): the diagnosis counts each against its node
(devices, cpu, memory, the pod count, host ports: `diagnosis.triage.resources.counted`), and reads
only a pod's identity, owner, node, priority, phase, terminating state and requests, which pods of one
template share, plus its required pod anti-affinity (which may repel the pod asked about) and the
PVCs of its volumes (which count against a CSI attach limit). The pods that a pod's affinity or
spread constraints select by label are not taken from the cache: the live reader asks the API server
for them with the label selector. `compact_node` keeps what the diagnosis reads of a node. At most
`max_objects` objects are kept: past that the cache stops, frees what it holds and says why in
`state`; the reader then reads the cluster directly, as without a cache.

Beside them, what says whether a node will come for a pending pod, small and read by every `/triage`
of one: Karpenter's NodePools and NodeClaims (where the cluster serves them) and cluster-autoscaler's
status ConfigMap (watched by its name). RBAC may refuse these apart: a 403 ends their reflector only,
and the reader reads them directly.

Threads: LIST pages are read by the transport's worker threads. A watch's response is read line by
line in the cache's own threads (one per watch; the official client's `Watch` would turn every event
into a generated model, the slow path raw JSON avoids, and resumes a 410 with the same stale
`resourceVersion`), each line decoded there. Events are applied on the event loop, so the store needs
no lock and cannot change while a reader reads it between two awaits.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any, TypeVar

import msgspec
import urllib3

from cluster.compact import BOUND_POD, NODE, compact_node, compact_pending, compact_pod
from cluster.errors import ClusterError, Forbidden, NotFound, Unavailable
from cluster.kube import ApiClient, iter_resp_lines
from cluster.transport import (
    WHOLE,
    Decoder,
    Expired,
    ReadStats,
    Retry,
    Target,
    Transport,
    page_items,
    truncate,
)
from diagnosis.dra_objects import GROUP, Dra, Inventory, claim, device_class, resource_slice
from diagnosis.objects import (
    Object,
    labels,
    mapping,
    meta,
    name,
    namespace,
    spec,
    text,
    uid,
)
from diagnosis.relations import NOT_TERMINAL
from diagnosis.triage.findings import Findings
from diagnosis.triage.resources import NodePods, effective_requests, group_pods, in_order
from diagnosis.views import STATUS_CONFIGMAP

T = TypeVar("T")

log = logging.getLogger(__name__)

BOUND_PODS = f"spec.nodeName!=,{NOT_TERMINAL}"
"""The pods that count against a node's allocatable (`diagnosis.relations.holds_node`)."""

UNSCHEDULED_PODS = "spec.nodeName=,status.phase=Pending"
"""The pods waiting for a node (kept with `CacheOptions.pending`, for the sentinel): a pod that is
bound, or fails before it is, leaves the watch's selection and arrives as DELETED."""

KARPENTER_GROUP = "karpenter.sh"

Key = tuple[str, str] | str
"""(namespace, name), namespace "" for nodes; or a bound pod's uid (`_by_uid`)."""


@dataclass(frozen=True)
class CacheOptions:
    """How much a cache may hold and how it keeps up."""

    max_objects: int = 300_000
    """Nodes plus the bound pods kept. Past it the cache stops
    and the reader reads directly."""
    watch_seconds: int = 300
    """How long each watch request lasts before it is resumed (the API server ends it then)."""
    stale_seconds: float = 30.0
    """How long the cache still answers after losing its watch, while it reconnects: the data is at
    most this old. Beyond it, the reader reads directly until the watch is back."""
    pending: bool = False
    """Also keep the unscheduled pods that ask for a device (`UNSCHEDULED_PODS`, `compact_pending`):
    the sentinel reads them to find stuck workloads (`bot.sentinel`), `/triage` the pods that compete
    for the same nodes."""
    backoff: Retry = field(default_factory=lambda: Retry(attempts=8, base=0.5, cap=30.0))
    """Waits between reconnections: the n-th failure in a row waits as this policy's n-th retry, and
    every failure from its last attempt on as the last (reconnections never end)."""


def asks_devices(pod: Object) -> bool:
    """Whether the (compacted) pod asks for an extended resource or names a ResourceClaim."""
    return holds_devices(pod) or bool(spec(pod).get("resourceClaims"))


def _namespace_of(pod: Object) -> tuple[str, ...]:
    return (namespace(pod),)


def holds_devices(pod: Object) -> bool:
    """Whether the (compacted) pod holds an extended resource."""
    return bool(effective_requests(pod))


def _everything(_: Object) -> bool:
    return True


def _unindexed(_: Object) -> tuple[str, ...]:
    return ()


def compact_whole(obj: Object) -> dict[str, Any]:
    """An autoscaler object without its managed fields (all the rest is read, or names what
    is read)."""
    kept = dict(obj)
    metadata = dict(meta(obj))
    metadata.pop("managedFields", None)
    kept["metadata"] = metadata
    return kept


def deep_size(roots: Iterable[object], held: Iterable[object] = ()) -> int:
    """Bytes taken by the objects reachable from `roots` through dicts, lists, tuples, sets and the
    attributes of instances, each object counted once (strings shared between objects, such as
    interned namespaces, count once), leaving out the objects `held` (counted elsewhere) and what only
    they reach. An instance's attributes are read from its slots, or from its attribute dict (which
    reading makes, where the instance kept its attributes without one)."""
    seen: set[int] = set(map(id, held))
    stack = list(roots)
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        elif slots := _slots(type(obj)):
            stack.extend(getattr(obj, slot) for slot in slots if hasattr(obj, slot))
        elif isinstance(attributes := getattr(obj, "__dict__", None), dict):
            stack.append(attributes)
    return total


_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(kind: type) -> tuple[str, ...]:
    """The slots of instances of `kind` (those of its bases too), worked out once per type."""
    found = _SLOTS.get(kind)
    if found is None:
        named = (getattr(base, "__slots__", ()) for base in kind.__mro__)
        found = _SLOTS[kind] = tuple(
            slot
            for slots in named
            for slot in ((slots,) if isinstance(slots, str) else slots)
            if slot not in ("__dict__", "__weakref__")
        )
    return found


def _key(obj: Object) -> Key:
    return namespace(obj), name(obj)


def _by_uid(pod: Object) -> Key:
    """A bound pod's uid (which it holds anyway), or its (namespace, name) where it has none: a key
    tuple would take 56 bytes more for each of a cluster's pods (34 MiB on 65,000 nodes)."""
    return uid(pod) or _key(pod)


def _forget(findings: Findings, key: Key) -> None:
    findings.forget(key[1])


REPELLING = "!anti-affinity"
"""Where the pods index holds those with a required pod anti-affinity, beside their node's name
(which cannot hold a `!`)."""


def _node_of(pod: Object) -> tuple[str, ...]:
    """A pod's node; and `REPELLING`, for a pod whose required anti-affinity may refuse a pod across
    a domain (`compact_pod` keeps the affinity of those alone)."""
    node = text(spec(pod).get("nodeName"))
    return (node, REPELLING) if spec(pod).get("affinity") else (node,)


def _by_label(nodes: Iterable[Object], key: str) -> dict[str, tuple[Object, ...]]:
    """The nodes by their value of the label `key` (those without it left out)."""
    found: dict[str, list[Object]] = {}
    for node in nodes:
        value = labels(node).get(key)
        if isinstance(value, str):
            found.setdefault(value, []).append(node)
    return {value: tuple(matching) for value, matching in found.items()}


class _Overflow(Exception):
    """More objects than `max_objects`."""


@dataclass(frozen=True)
class Ungrouped:
    """The pods of the nodes whose group is not made yet, as they were when asked for, and where each
    node's pods stood then (the full list and the changes since it): `ClusterCache.keep`."""

    pods: Mapping[str, tuple[Object, ...]]
    marks: Mapping[str, tuple[int, int]]


# — one resource: LIST, then WATCH —


@dataclass(frozen=True)
class _Resource:
    plural: str
    field_selector: str | None
    compact: Callable[[Object], Any]
    """What is kept of each object as it arrives: what the diagnosis reads of it in the object's shape
    (`cluster.compact`), or for DRA objects, that read into the diagnosis's own shape
    (`diagnosis.dra_objects`), and nothing more: a ResourceSlice of 8 GPUs takes 26 KB decoded, 7 KB
    parsed."""
    keep: Callable[[Any], bool]
    """Whether a compacted object is kept (the others are dropped as they arrive)."""
    index: Callable[[Any], tuple[str, ...]]
    """What the objects are looked up by: bound pods by their node's name, unscheduled pods by their
    namespace."""
    optional: bool = False
    """A group the cluster may not serve (`resource.k8s.io` where DRA is off): a 404 ends the
    reflector, and the cache is synced without it."""
    changed: Callable[[Key], None] | None = None
    """Told the key of each object that changes or goes."""
    group: str = ""
    label: str = ""
    """How `held` (and `/metrics`) names what it keeps, when not by its plural."""
    namespace: str | None = None
    """The one namespace it is listed and watched in (None: all)."""
    refusable: bool = False
    """A read RBAC may leave out (the autoscalers' objects): a 403 ends the reflector, not the cache,
    and the reader reads them directly."""
    page: Decoder = WHOLE
    """How a LIST's page is decoded: into the fields `compact` reads, for the nodes and the bound pods
    (`cluster.compact.NODE`, `BOUND_POD`)."""
    key: Callable[[Object], Key] = _key
    """What an object is kept by (`items`): its (namespace, name), or a bound pod's uid (`_by_uid`)."""


class _Reflector:
    """One resource kept current: its objects by key, the revision they are at, and where it stands."""

    def __init__(self, cache: ClusterCache, resource: _Resource) -> None:
        self.cache = cache
        self.resource = resource
        self.items: dict[Key, Any] = {}
        """What is kept of each object (`resource.compact`), by its namespace and name."""
        self.indexed: dict[str, dict[Key, Any]] = {}
        """The objects by each of their `resource.index` values."""
        self.grouped: dict[str, NodePods] = {}
        """The objects of an index value as one group (a node's pods: `ClusterCache.groups`), made
        when first asked for and dropped when any of them changes."""
        self.changes: dict[str, int] = {}
        """How often the objects of each index value changed since the last full list (`listings`):
        a group made of them meanwhile is not kept (`ClusterCache.keep`)."""
        self.listings = 0
        self.absent = False
        """The API server does not serve this (optional) resource."""
        self.refused = False
        """RBAC refused this (refusable) resource: the reader reads it directly."""
        self.version = 0
        """Counts the changes to `items`: what is worked out from them is worked out again."""
        self._work: tuple[int, dict[Hashable, Any]] = (-1, {})
        """What was worked out of `items` (`until_change`), at its `version`."""
        self.listing = 0
        """Objects read so far by a LIST in progress (they count against the cap)."""
        self.listed = False
        """The objects are complete as of `revision`, and every change since has been applied."""
        self.revision = ""
        self.phase = "waiting to list"
        self.lost_at: float | None = None
        """When the watch was lost (time.monotonic), while it is being reconnected."""
        self.heard_at: float | None = None
        """When the API server last told this resource's reflector anything (time.monotonic): a LIST
        page, a watch event or a bookmark."""
        self.watched = False
        """A watch of it was served once: RBAC allows it (a later 403 is retried)."""
        self._failures = 0

    def current(self, now: float) -> bool:
        return self.listed and (
            self.lost_at is None or now - self.lost_at <= self.cache.options.stale_seconds
        )

    def describe(self) -> str:
        return f"{self.resource.plural} {self.phase}"

    async def run(self) -> None:
        """LIST and WATCH until stopped: the loop of client-go's reflector."""
        while True:
            try:
                if not self.listed:
                    await self._list()
                await self._watch()
            except Expired as err:
                self._forget(f"listing again: {err.message}")
            except Forbidden as err:
                if self.resource.refusable and not self.watched:
                    self.refused, self.phase = True, f"refused: {err}"
                    self.cache.changed()
                    return
                if not self.watched:
                    self.cache.stop(str(err))
                    return
                # Allowed before: an API server that restarts refuses every request until its RBAC
                # authorizer has read the roles again. Retried, as any other error.
                await self._back_off(err)
            except NotFound:
                if not self.resource.optional:
                    raise
                self.absent, self.phase = True, "not served by the API server"
                self.cache.changed()
                return
            except _Overflow as err:
                self.cache.stop(str(err))
                return
            except ClusterError as err:
                await self._back_off(err)

    async def _list(self) -> None:
        self.phase = "listing"
        self.cache.changed()
        found: dict[Key, Any] = {}
        revision = ""
        try:
            async for page in self.cache.api.pages(
                Target("list", self.resource.plural, self.resource.namespace, self.resource.group),
                self.resource.page,
                fieldSelector=self.resource.field_selector,
            ):
                revision = revision or text(mapping(page.get("metadata")).get("resourceVersion"))
                self.heard_at = time.monotonic()
                for item in page_items(page):
                    obj = self.resource.compact(item)
                    if self.resource.keep(obj):
                        found[self.resource.key(item)] = obj
                self.listing = len(found)
                self.phase = f"listing ({len(found):,} so far)"
                self.cache.check_size()
        finally:  # a LIST that failed or overflowed holds nothing
            self.listing = 0
        self.revision, self.listed, self.lost_at = revision, True, None
        self.phase = "listed"
        self.replace(found)
        # What was listed lives until it changes, and holds no cycle: the cyclic collector is kept from
        # walking it again and again (on 65,000 nodes, one pass over their pods held the event loop
        # 1.5 s, and the passes took a fifth of the CPU of a sentinel's sweep; `make bench`, g).
        gc.freeze()
        log.info("cache of %s: %d %s listed", self.cache.api.server, len(found), self.resource.plural)

    async def _watch(self) -> None:
        """One watch request, from `revision` until the API server ends it (normally after
        `watch_seconds`); events are applied as they come."""
        options = self.cache.options
        response = await self.cache.api.stream(
            Target("watch", self.resource.plural, self.resource.namespace, self.resource.group),
            read_timeout=options.watch_seconds + self.cache.api.timeout,
            fieldSelector=self.resource.field_selector,
            resourceVersion=self.revision,
            allowWatchBookmarks=True,
            timeoutSeconds=options.watch_seconds,
        )
        self.phase, self.lost_at, self.watched = "watching", None, True
        self.cache.changed()
        lines = iter_resp_lines(response)
        loop = asyncio.get_running_loop()
        try:
            while (
                read := await loop.run_in_executor(self.cache.threads, self._next_event, lines)
            ) is not None:
                event, size = read
                self.cache.api.stats.bytes += size
                self._apply(event)
        finally:
            # A watch cancelled (the cache stopped, or asyncio.run cancelling what is left of a loop)
            # leaves a thread blocked reading it, which holds the response until the server's next line,
            # a bookmark a minute on: closing it would block the event loop that long. Shut down first,
            # it wakes that thread.
            with suppress(ValueError, RuntimeError, OSError):
                response.shutdown()
            response.close()
            response.release_conn()
        self._failures = 0

    def _next_event(self, lines: Iterator[str]) -> tuple[dict[str, Any], int] | None:
        """In a cache thread: the next event of the watch and its size, or None when the API server
        ended the watch."""
        server = self.cache.api.server
        try:
            line = next((line for line in lines if line.strip()), None)
        except (urllib3.exceptions.HTTPError, OSError) as err:
            raise Unavailable(
                server, f"the watch of {self.resource.plural} was cut: {truncate(str(err))}"
            ) from err
        if line is None:
            return None
        try:
            return dict(mapping(WHOLE.decode(line))), len(line)
        except msgspec.DecodeError as err:
            raise Unavailable(server, f"a watch event is not JSON: {truncate(line)}") from err

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = text(event.get("type")), mapping(event.get("object"))
        self.heard_at = time.monotonic()
        if kind == "ERROR":
            said = f"HTTP {obj.get('code')}: {truncate(text(obj.get('message')))}"
            if obj.get("code") == 410:
                raise Expired(f"the watch of {self.resource.plural} expired ({said})", "list again")
            raise ClusterError(f"the watch of {self.resource.plural} failed ({said})")
        if kind in ("ADDED", "MODIFIED"):
            compact, key = self.resource.compact(obj), self.resource.key(obj)
            if not self.resource.keep(compact):
                self._remove(key)
            elif self.items.get(key) != compact:
                # A change of nothing kept (a node's heartbeat, a pod's IP) leaves the object as it
                # was: what questions worked out of it still holds.
                self._put(key, compact)
                self.cache.check_size()
        elif kind == "DELETED":
            self._remove(self.resource.key(obj))
        self.revision = text(meta(obj).get("resourceVersion")) or self.revision
        self._failures = 0

    def _forget(self, why: str) -> None:
        """Changes were missed: free the objects (they are stale) and list again."""
        self.listed, self.revision, self.phase = False, "", why
        self.replace({})
        log.warning("cache of %s: %s %s", self.cache.api.server, self.resource.plural, why)

    async def _back_off(self, err: ClusterError) -> None:
        self._failures += 1
        if self.lost_at is None:
            self.lost_at = time.monotonic()
        backoff = self.cache.options.backoff
        wait = backoff.delay(min(self._failures, backoff.attempts - 1), None) or backoff.cap
        self.phase = f"retrying in {wait:.1f} s after: {err.message}"
        log.warning("cache of %s: %s %s", self.cache.api.server, self.resource.plural, self.phase)
        self.cache.changed()
        await asyncio.sleep(wait)

    # — the objects —

    def until_change(self, what: Hashable, work: Callable[[], T]) -> T:
        """`work()`, worked out of these objects alone (`what` says which work), once until one of
        them changes: every question about the same objects takes it as worked out."""
        if self._work[0] != self.version:
            self._work = (self.version, {})
        kept = self._work[1]
        if what not in kept:
            kept[what] = work()
        found: T = kept[what]
        return found

    def replace(self, items: dict[Key, Any]) -> None:
        if (changed := self.resource.changed) is not None:
            for key in self.items:
                changed(key)
        self.items, self.indexed, self.grouped, self.changes = {}, {}, {}, {}
        self.listings += 1
        self.version += 1
        for key, obj in items.items():
            self._put(key, obj)
        self.cache.changed()

    def _put(self, key: Key, obj: Any) -> None:
        self.version += 1
        self._remove(key)
        self.items[key] = obj
        for value in self.resource.index(obj):
            self.indexed.setdefault(value, {})[key] = obj
            self._regroup(value)

    def _remove(self, key: Key) -> None:
        old = self.items.pop(key, None)
        if old is not None and self.resource.changed is not None:
            self.resource.changed(key)
        self.version += old is not None
        for value in self.resource.index(old) if old is not None else ():
            self._regroup(value)
            found = self.indexed[value]
            del found[key]
            if not found:
                del self.indexed[value]

    def _regroup(self, value: str) -> None:
        """The objects of this index value changed: their group is made again when next asked for."""
        self.grouped.pop(value, None)
        self.changes[value] = self.changes.get(value, 0) + 1


# — the cache —


class ClusterCache:
    """Nodes and bound pods of one cluster, kept current by watches. Start it with `start()` (on the
    event loop), wait with `wait_synced()`, read with `nodes()`, `node()` and `bound_pods()` while
    `synced`, and `aclose()` it."""

    def __init__(
        self, api_client: ApiClient, options: CacheOptions | None = None, timeout: float = 5.0
    ) -> None:
        self.options = options or CacheOptions()
        self.api = Transport(api_client, timeout)
        self.findings = Findings()
        """What questions found on the nodes, by placement (`Prepared.findings`)."""
        forget = partial(_forget, self.findings)
        # Each page decoded into the fields compact_node and compact_pod read (`NODE`, `BOUND_POD`).
        nodes = _Resource(
            "nodes", None, compact_node, _everything, _unindexed, changed=forget, page=NODE.page
        )
        self._nodes = _Reflector(self, nodes)
        pods = _Resource(
            "pods", BOUND_PODS, compact_pod, _everything, _node_of, page=BOUND_POD.page, key=_by_uid
        )
        self._pods = _Reflector(self, pods)
        unscheduled = _Resource(
            "pods", UNSCHEDULED_PODS, compact_pending, asks_devices, _namespace_of, label="unscheduled-pods"
        )
        self._pending = _Reflector(self, unscheduled)
        self._dra = {
            plural: _Reflector(
                self,
                _Resource(plural, None, parse, _everything, _unindexed, optional=True, group=GROUP),
            )
            for plural, parse in (
                ("deviceclasses", device_class),
                ("resourceclaims", claim),
                ("resourceslices", resource_slice),
            )
        }
        status_namespace, status_name = STATUS_CONFIGMAP
        self._autoscaling = {
            resource.plural: _Reflector(self, resource)
            for resource in (
                *(
                    _Resource(
                        plural,
                        None,
                        compact_whole,
                        _everything,
                        _unindexed,
                        optional=True,
                        group=KARPENTER_GROUP,
                        refusable=True,
                    )
                    for plural in ("nodepools", "nodeclaims")
                ),
                _Resource(
                    "configmaps",
                    f"metadata.name={status_name}",
                    compact_whole,
                    _everything,
                    _unindexed,
                    label=status_name,
                    namespace=status_namespace,
                    refusable=True,
                ),
            )
        }
        """What says whether a node will come (`autoscaler_objects`): Karpenter's NodePools and
        NodeClaims where the cluster serves them, cluster-autoscaler's status ConfigMap by its name
        (a watch that holds nothing until cluster-autoscaler writes it)."""
        self._reflectors = (
            self._nodes,
            self._pods,
            *((self._pending,) if self.options.pending else ()),
            *self._dra.values(),
            *self._autoscaling.values(),
        )
        # One thread blocks on each watch's next line.
        self.threads = ThreadPoolExecutor(len(self._reflectors), thread_name_prefix="kubewhy-watch")
        self._labelled: tuple[tuple[Object, ...], dict[str, dict[str, tuple[Object, ...]]]] = ((), {})
        """The nodes by their value of each label key asked (`nodes_labelled`), for this tuple of nodes."""
        self._inventory: tuple[tuple[int, int], Inventory] | None = None
        """The Inventory of the DeviceClasses and ResourceSlices at their reflectors' versions."""
        self._dra_objects: tuple[int, Dra] | None = None
        """The Dra of the claims at their reflector's version, on that Inventory (`dra`)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped: str | None = None
        self._progress = asyncio.Event()
        self.has_synced = False
        """It has been synced once (as client-go's HasSynced): a cache that falls behind later, or
        stops, leaves the reader to read directly, but the bot is ready."""

    @property
    def stats(self) -> ReadStats:
        """What keeping the cache has cost the API server (calls, bytes)."""
        return self.api.stats

    # — lifecycle —

    def start(self) -> None:
        """List and watch in the background (call it on the running event loop)."""
        if self._tasks or self._stopped is not None:
            return
        for reflector in self._reflectors:
            task = asyncio.get_running_loop().create_task(
                reflector.run(), name=f"kubewhy-cache-{reflector.resource.plural}"
            )
            task.add_done_callback(self._ended)
            self._tasks.append(task)

    async def wait_synced(self, timeout: float, complete: bool = False) -> bool:  # noqa: ASYNC109 (an answer, not an error, on timeout)
        """Wait up to `timeout` seconds for the cache to be synced (and, if `complete`, for every other
        resource it keeps too); whether it is (not an error when it is not: the reader reads directly
        meanwhile)."""

        def done() -> bool:
            return self.synced and (self.complete or not complete)

        with suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while not (done() or self.stopped):
                    await self._progress.wait()
        return done()

    def stop(self, why: str) -> None:
        """Stop for good: free everything, end the watches, and say why (the reader reads directly)."""
        if self._stopped is None:
            log.warning("cache of %s stopped: %s; reading the cluster directly", self.api.server, why)
            self._halt(why)

    async def aclose(self) -> None:
        self._halt("closed")
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.get_running_loop().run_in_executor(None, self.threads.shutdown)
        await self.api.close()

    def _halt(self, why: str) -> None:
        if self._stopped is not None:
            return
        self._stopped = why
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        for reflector in self._reflectors:
            # A LIST in progress ends at its next await; what it read is dropped now, not then. A watch
            # ends as it is cancelled (`_watch`).
            reflector.listed, reflector.listing = False, 0
            reflector.replace({})

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A reflector that ends by a bug stops the cache (the reader still answers), and is logged."""
        if not task.cancelled() and task.exception() is not None:
            log.error("cache of %s failed", self.api.server, exc_info=task.exception())
            self.stop(f"internal error: {task.exception()!r}")

    # — state —

    @property
    def stopped(self) -> bool:
        return self._stopped is not None

    @property
    def synced(self) -> bool:
        """Both resources are listed and watched (or reconnecting for less than `stale_seconds`)."""
        now = time.monotonic()
        return self._stopped is None and self._nodes.current(now) and self._pods.current(now)

    @property
    def complete(self) -> bool:
        """Every resource it keeps is listed, or not served, or refused: beyond the nodes and bound
        pods (`synced`), the pending pods, the DRA objects and the autoscalers' are there too."""
        return all(r.listed or r.absent or r.refused for r in self._reflectors)

    @property
    def condition(self) -> str:
        """One word for /readyz, /metrics and the answers: `ready` (answers come from the cache),
        `syncing` (its first LIST is not in yet), `resyncing` (it was ready, then fell behind: its
        watch is lost or it lists again), or `stopped` (for good: see `state`). Only `ready` answers
        from the cache; the others read the cluster directly."""
        if self._stopped is not None:
            return "stopped"
        if self.synced:
            return "ready"
        return "resyncing" if self.has_synced else "syncing"

    @property
    def state(self) -> str:
        """One line for /readyz and the logs."""
        if self._stopped is not None:
            return f"stopped: {self._stopped}; reading the cluster directly"
        if self.synced:
            dra = ", ".join(f"{len(r.items):,} {plural}" for plural, r in self._dra.items() if r.items)
            return f"synced: {len(self._nodes.items):,} nodes, {len(self._pods.items):,} bound pods" + (
                f"; {dra}" if dra else ""
            )
        return f"{self.condition}: {self._nodes.describe()}; {self._pods.describe()}"

    @property
    def watches(self) -> int:
        """How many watches it keeps open once started: one a resource it keeps (an optional resource
        the API server does not serve ends its reflector)."""
        return sum(1 for task in self._tasks if not task.done())

    @property
    def revisions(self) -> dict[str, str]:
        """The resourceVersion each resource is current at (of its last list, event or bookmark), by
        resource as `held` names them."""
        return {r.resource.label or r.resource.plural: r.revision for r in self._reflectors}

    @property
    def held(self) -> dict[str, int]:
        """The objects held, by resource (the count `max_objects` bounds)."""
        return {r.resource.label or r.resource.plural: len(r.items) + r.listing for r in self._reflectors}

    def estimated_bytes(self, sample: int = 200) -> int:
        """The memory the objects held take, estimated from a deep size walk of up to `sample` of
        each resource's objects (each a few hundred bytes; a walk of them all would take seconds on a
        large cluster), plus the dictionaries that hold and index them, and what the questions keep
        beside them (`grouped`, `findings`, what was worked out of the nodes), estimated the same way."""
        total = 0
        for reflector in self._reflectors:
            objects = list(islice(reflector.items.values(), sample))
            if objects:
                total += deep_size(objects) * len(reflector.items) // len(objects)
            total += sys.getsizeof(reflector.items) + sum(map(sys.getsizeof, reflector.indexed.values()))
        # What the questions keep beside the objects: the nodes' groups of their pods, and what was
        # found on the nodes (the pods and nodes themselves are counted above). Alike from node to
        # node: a quarter of the sample tells them.
        groups = list(islice(self._pods.grouped.values(), sample // 4))
        if groups:
            pods = (pod for group in groups for pod in group.pods)
            total += deep_size(groups, pods) * len(self._pods.grouped) // len(groups)
        found = list(islice(self.findings.kept(), sample // 4))
        if found:
            total += deep_size(found, self._nodes.items.values()) * len(self.findings) // len(found)
        # What was worked out of whole tuples of nodes (up to `Findings.WHOLE`): each may name every
        # node, a few tell them.
        worked = self.findings.worked_out()
        if worked:
            few = worked[:: max(len(worked) // 4, 1)]
            total += deep_size(few, self._nodes.items.values()) * len(worked) // len(few)
        return total

    def age(self, now: float | None = None) -> float | None:
        """Seconds since the API server last told the cache anything, for the resource heard from
        longest ago (a healthy watch hears at least a bookmark about every minute); None before
        anything was heard."""
        heard = [r.heard_at for r in (self._nodes, self._pods)]
        if any(h is None for h in heard):
            return None
        return (time.monotonic() if now is None else now) - min(h for h in heard if h is not None)

    def changed(self) -> None:
        """Note a change of state and wake whoever waits for one."""
        if self.synced and not self.has_synced:
            self.has_synced = True
            log.info("cache of %s %s", self.api.server, self.state)
        self._progress.set()
        self._progress = asyncio.Event()

    @property
    def dra_synced(self) -> bool:
        """The DRA objects are listed and watched (False where the cluster does not serve them)."""
        now = time.monotonic()
        return self._stopped is None and all(r.current(now) for r in self._dra.values())

    # — reading (only while `synced`) —

    def dra(self) -> Dra:
        """The DeviceClasses, ResourceClaims and ResourceSlices, parsed as they arrived (read only
        while `dra_synced`); templates are not kept (the reader reads the few it needs)."""
        classes, claims, slices = self._dra.values()
        version = (classes.version, slices.version)
        if self._inventory is None or self._inventory[0] != version:
            devices = Inventory(tuple(classes.items.values()), tuple(slices.items.values()))
            self._inventory = (version, devices)
        # One Dra while the claims are unchanged: who holds each device is then worked out once.
        devices = self._inventory[1]
        kept = self._dra_objects
        if kept is None or kept[0] != claims.version or kept[1].devices is not devices:
            kept = (claims.version, Dra(claims=tuple(claims.items.values()), devices=devices))
            self._dra_objects = kept
        return kept[1]

    def autoscaler_objects(self, plural: str) -> tuple[Object, ...] | None:
        """Karpenter's `nodepools` or `nodeclaims`, or the `configmaps` that are cluster-autoscaler's
        status (none or one); None while the cache cannot tell (not listed yet, lost, or refused by
        RBAC): the reader reads them then."""
        reflector = self._autoscaling[plural]
        if reflector.absent:
            return ()
        if self._stopped is not None or not reflector.current(time.monotonic()):
            return None
        return tuple(reflector.items.values())

    def until_nodes_change(self, what: Hashable, work: Callable[[], T]) -> T:
        """`work()`, worked out of the nodes alone (`what` says which work), once until a node
        changes: every question about the same nodes takes it as worked out."""
        return self._nodes.until_change(what, work)

    def nodes(self) -> tuple[Object, ...]:
        """Every node; the same tuple until a node changes (`diagnosis.triage.findings.Findings.of_nodes`
        keeps what questions work out of it)."""
        return self.until_nodes_change("nodes", lambda: tuple(self._nodes.items.values()))

    def node(self, node_name: str) -> Object | None:
        return self._nodes.items.get(("", node_name))

    async def nodes_labelled(self, key: str, value: str) -> tuple[Object, ...]:
        """The nodes with the label `key=value`. The nodes by their value of `key` are worked out for
        each key asked, once until a node changes, off the event loop (tens of milliseconds on 65,000
        nodes). An index of every label, kept as nodes change, would hold each node under each of its
        labels, some 25: about 70 MiB on 65,000 nodes."""
        nodes = self.nodes()
        if self._labelled[0] is not nodes:
            self._labelled = (nodes, {})
        by_key = self._labelled[1]
        found = by_key.get(key)
        if found is None:
            found = await asyncio.to_thread(_by_label, nodes, key)
            if self._labelled[0] is nodes:
                by_key[key] = found
        return found.get(value, ())

    @property
    def pending_synced(self) -> bool:
        """The unscheduled pods are listed and watched (`CacheOptions.pending`)."""
        return self.options.pending and self._stopped is None and self._pending.current(time.monotonic())

    def pending_pods(self, namespaces: Iterable[str] | None = None) -> tuple[Object, ...]:
        """The unscheduled pods that ask for a device (in these namespaces; None: all), while
        `pending_synced`; all of them as the same tuple until one changes (what questions work out
        of them is kept with it, `Findings.of_nodes`)."""
        if namespaces is None:
            return self._pending.until_change("all", lambda: tuple(self._pending.items.values()))
        on = self._pending.indexed
        return tuple(pod for ns in sorted(set(namespaces)) for pod in on.get(ns, {}).values())

    def pods_in(self, ns: str) -> tuple[Object, ...]:
        """The non-terminal bound pods of a namespace, compacted (their PVCs kept)."""
        return tuple(pod for pod in self._pods.items.values() if namespace(pod) == ns)

    def repelling_pods(self) -> tuple[Object, ...]:
        """Every non-terminal bound pod with a required pod anti-affinity, compacted."""
        return tuple(self._pods.indexed.get(REPELLING, {}).values())

    def bound_pods(self, node_names: Iterable[str]) -> tuple[Object, ...]:
        """The non-terminal pods bound to these nodes, compacted, any namespace
        (the only ones `diagnosis.triage.resources.holders` counts)."""
        on = self._pods.indexed
        return tuple(pod for n in sorted(set(node_names)) for pod in on.get(n, {}).values())

    def groups(self, node_names: Iterable[str]) -> tuple[dict[str, NodePods], Ungrouped]:
        """The pods bound to these nodes, node by node (`Prepared.grouped`): the groups already
        made, and the pods of the nodes whose group is not (`resources.group_pods` makes theirs, off
        the event loop: a few microseconds a pod; `keep` keeps them for the next question). A group
        serves every question until a pod of its node changes."""
        reflector = self._pods
        made, pods, marks = {}, {}, {}
        for node in set(node_names):
            if (group := reflector.grouped.get(node)) is not None:
                made[node] = group
            elif listed := reflector.indexed.get(node):
                pods[node] = tuple(listed.values())
                marks[node] = (reflector.listings, reflector.changes.get(node, 0))
        return made, Ungrouped(pods, marks)

    def keep(self, made: Mapping[str, NodePods], ungrouped: Ungrouped) -> None:
        """Keep the groups made of `ungrouped`'s pods, but those of a node whose pods changed since."""
        reflector = self._pods
        for node, group in made.items():
            if ungrouped.marks[node] == (reflector.listings, reflector.changes.get(node, 0)):
                reflector.grouped[node] = group

    def grouped(self, node_names: Iterable[str]) -> dict[str, NodePods]:
        """`groups`, those not made yet made here, in the order of the nodes' names."""
        made, ungrouped = self.groups(node_names)
        if ungrouped.pods:
            built = group_pods(ungrouped.pods)
            self.keep(built, ungrouped)
            made.update(built)
        return in_order(made)

    # — by the reflectors —

    def check_size(self) -> None:
        """Raise _Overflow past `max_objects` (the reflectors call it as objects come)."""
        held = sum(len(r.items) + r.listing for r in self._reflectors)
        if held > self.options.max_objects:
            raise _Overflow(
                f"the cluster has more nodes and bound pods than cache.max_objects"
                f" ({held:,} > {self.options.max_objects:,})"
            )
