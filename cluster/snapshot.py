"""A saved cluster, read the way the live one is.

A snapshot is what `kubectl get nodes,pods,events,jobs,jobsets,resourcequotas,pvc,pv,storageclasses,
csinodes,csidrivers,csistoragecapacities,namespaces -A -o json` prints (a `List`; add
`resourceclaims,resourceclaimtemplates,deviceclasses,resourceslices` for DRA; `nodepools,nodeclaims,
provisioningrequests` and ConfigMap `kube-system/cluster-autoscaler-status` for autoscaling), the same
in YAML, a multi-document YAML file, a single object, or a folder of such files.
It is loaded and indexed once; every question is then answered from memory, and always the same way:
the reading time is the newest timestamp in the objects, not the clock.
"""

from __future__ import annotations

import codecs
import gc
import json
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cluster.errors import Missing, NotFound, SnapshotError
from cluster.reader import NAMED_KINDS, TriageRead
from diagnosis import events
from diagnosis.autoscaling import events_to_read
from diagnosis.dra_objects import GROUP, Dra
from diagnosis.dra_objects import KINDS as DRA_KINDS
from diagnosis.gang import api_of, named_by
from diagnosis.missing import creation_rejections, similar_names
from diagnosis.objects import Object, conditions, kind, labels, meta, name, namespace, status, text, timestamp
from diagnosis.relations import (
    JOBSET_NAME_LABEL,
    LWS_NAME_LABEL,
    holds_node,
    is_pending,
    is_terminal,
    nominated_node,
    owned_by,
)
from diagnosis.trainjob.explain import runtime_ref
from diagnosis.views import (
    STATUS_CONFIGMAP,
    Capacity,
    JobSetView,
    LwsView,
    Peers,
    Storage,
    TrainJobView,
    TriageView,
)

_SUFFIXES = (".json", ".yaml", ".yml")

MAX_BYTES = 2 * 2**30
"""The largest snapshot file read: 5,000 nodes with 100,000 pods are ~540 MB of JSON."""
_CHUNK = 2**20

_KINDS: Mapping[str, frozenset[str]] = {
    "Node": frozenset({""}),
    "Pod": frozenset({""}),
    "Event": frozenset({"", "events.k8s.io"}),
    "Job": frozenset({"batch"}),
    "JobSet": frozenset({"jobset.x-k8s.io"}),
    "ResourceQuota": frozenset({""}),
    "RuntimeClass": frozenset({"node.k8s.io"}),
    "Workload": frozenset({"kueue.x-k8s.io"}),
    "LocalQueue": frozenset({"kueue.x-k8s.io"}),
    "ClusterQueue": frozenset({"kueue.x-k8s.io"}),
    "PersistentVolumeClaim": frozenset({""}),
    "PersistentVolume": frozenset({""}),
    "StorageClass": frozenset({"storage.k8s.io"}),
    "CSINode": frozenset({"storage.k8s.io"}),
    "CSIDriver": frozenset({"storage.k8s.io"}),
    "CSIStorageCapacity": frozenset({"storage.k8s.io"}),
    "Namespace": frozenset({""}),
    "LeaderWorkerSet": frozenset({"leaderworkerset.x-k8s.io"}),
    "StatefulSet": frozenset({"apps"}),
    "DaemonSet": frozenset({"apps"}),
    "Deployment": frozenset({"apps"}),
    "TrainJob": frozenset({"trainer.kubeflow.org"}),
    "TrainingRuntime": frozenset({"trainer.kubeflow.org"}),
    "ClusterTrainingRuntime": frozenset({"trainer.kubeflow.org"}),
    "PodGroup": frozenset({"scheduling.x-k8s.io", "scheduling.volcano.sh"}),
    **{k: frozenset({GROUP}) for k in DRA_KINDS},
    "ConfigMap": frozenset({""}),
    "NodePool": frozenset({"karpenter.sh"}),
    "NodeClaim": frozenset({"karpenter.sh"}),
    "ProvisioningRequest": frozenset({"autoscaling.x-k8s.io"}),
}
"""The kinds kubewhy reads, with the API groups that serve them; other objects are ignored (of
ConfigMaps, all but cluster-autoscaler's status)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_JSON_START = re.compile(r"\s*[{\[]")

K = TypeVar("K", bound=Hashable)
Obj = TypeVar("Obj", bound=Object)


class YamlLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML, keeping timestamps as the strings the API serves (kubectl quotes them, people do not).
    libyaml's loader when PyYAML was built with it (a base mypy cannot check, picked at import)."""


YamlLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def load_objects(path: str | PathLike[str], max_bytes: int = MAX_BYTES) -> list[dict[str, Any]]:
    """The objects of the kinds kubewhy reads, from a snapshot file or a folder of them (`*.json`,
    `*.yaml`, `*.yml`, in name order), each once; no file larger than `max_bytes` is read. Raises
    SnapshotError naming the file and what is wrong."""
    root = Path(path)
    if not root.is_dir():
        return _distinct(_load_file(root, max_bytes))
    try:
        files = sorted(p for p in root.iterdir() if p.suffix in _SUFFIXES and p.is_file())
    except OSError as err:
        raise SnapshotError(str(root), _os_problem(err)) from err
    if not files:
        raise SnapshotError(str(root), "the folder holds no .json, .yaml or .yml file")
    return _distinct(obj for file in files for obj in _load_file(file, max_bytes))


def _distinct(objects: Iterable[Obj]) -> list[Obj]:
    """Each object once, the last copy read winning: files of a folder may overlap (`pods -A` beside
    `pods -n ml`), and an event may be saved through both event APIs. Counted twice, a pod would hold
    its GPUs twice."""
    return list({(kind(o), namespace(o), name(o)): o for o in objects}.values())


def _load_file(path: Path, max_bytes: int) -> list[dict[str, Any]]:
    raw = _read_text(path, max_bytes)
    documents = [d for d in _parse(path, raw) if d is not None]
    if not documents:
        raise SnapshotError(str(path), "the file is empty: it holds no Kubernetes List or object")
    objects: list[dict[str, Any]] = []
    for number, document in enumerate(documents, 1):
        where = f"document {number}: " if len(documents) > 1 else ""
        try:
            objects.extend(o for o in _objects(document) if _known(o))
        except ValueError as err:
            raise SnapshotError(str(path), f"{where}{err}") from None
    return objects


def _read_text(path: Path, max_bytes: int) -> str:
    """The file's text, read in chunks so that a device or a stream that never ends (`/dev/zero`, a
    runaway pipe) is refused as soon as it shows it is no snapshot, and at the latest at `max_bytes`."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    parts: list[str] = []
    size = 0
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK):
                if b"\0" in chunk:
                    raise SnapshotError(str(path), f"not text (a NUL byte at byte {size + chunk.index(0)})")
                if size + len(chunk) > max_bytes:
                    raise SnapshotError(str(path), f"larger than {max_bytes // 2**20} MiB: not read further")
                start = size - len(decoder.getstate()[0])  # where the bytes being decoded begin
                size += len(chunk)
                parts.append(decoder.decode(chunk))
            start = size - len(decoder.getstate()[0])
            parts.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError as err:
        raise SnapshotError(str(path), f"not UTF-8 text (byte {start + err.start})") from None
    except OSError as err:
        raise SnapshotError(str(path), _os_problem(err)) from err
    return "".join(parts)


def _parse(path: Path, raw: str) -> list[Any]:
    """The documents of the file: JSON when it is named so or reads like it (as from
    `--snapshot <(kubectl get … -o json)`), else YAML, which may hold several."""
    if path.suffix == ".json" or _JSON_START.match(raw):
        try:
            with _decoding(len(raw)):
                return [json.loads(raw)]
        except json.JSONDecodeError as err:
            raise SnapshotError(
                str(path), f"not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"
            ) from None
        except RecursionError:
            raise SnapshotError(str(path), "nested too deeply to be a Kubernetes List") from None
    try:
        with _decoding(len(raw)):
            return list(yaml.load_all(raw, Loader=YamlLoader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SnapshotError(str(path), f"not valid YAML: {err.problem or err.context}{at}") from None
    except yaml.YAMLError as err:
        raise SnapshotError(str(path), f"not valid YAML: {' '.join(str(err).split())}") from None
    except RecursionError:
        raise SnapshotError(str(path), "nested too deeply to be a Kubernetes List") from None


_LARGE = 32 * 2**20
"""Snapshot text from which the cycle collector's passes over the decoded objects cost seconds (about a
thousand nodes with their pods and events)."""


@contextmanager
def _decoding(size: int) -> Iterator[None]:
    """Keep the cycle collector out of decoding, which builds millions of containers with no cycle
    among them: left running, it walks everything built so far again and again (a 5,000-node,
    100,000-pod snapshot of 540 MB: 13 s to decode with it, 2.5 s without). A large snapshot's objects
    are then moved out of its sight for good (`gc.freeze`): they are read until the process ends,
    and each later full pass over them would cost seconds again. Small snapshots (tests, the demo)
    leave the collector as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if size >= _LARGE:
            gc.freeze()
        if was_enabled:
            gc.enable()


def _objects(document: object) -> Iterator[dict[str, Any]]:
    """The objects of one document: the items of a List, or the document itself. Raises ValueError
    saying what is wrong."""
    if not isinstance(document, dict):
        raise ValueError(f"a {_json_type(document)} is not a Kubernetes List or object")
    list_kind = document.get("kind")
    if not isinstance(list_kind, str) or not list_kind:
        raise ValueError("not a Kubernetes List or object: it has no kind")
    if not list_kind.endswith("List"):
        yield document
        return
    items = document.get("items")
    if items is None:
        return
    if not isinstance(items, list):
        raise ValueError(f"items of the {list_kind} is a {_json_type(items)}, not a list")
    # The API's own typed lists (`PodList`, from `kubectl get --raw`) leave kind out of their items.
    implied = {"apiVersion": document.get("apiVersion"), "kind": list_kind[: -len("List")]}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"items[{index}] is a {_json_type(item)}, not a Kubernetes object")
        if list_kind != "List" and "kind" not in item:
            item = {**implied, **item}
        if not isinstance(item.get("kind"), str) or not item["kind"]:
            raise ValueError(f"items[{index}] has no kind")
        yield item


def _known(obj: Object) -> bool:
    groups = _KINDS.get(kind(obj))
    if groups is None:
        return False
    if kind(obj) == "ConfigMap" and (namespace(obj), name(obj)) != STATUS_CONFIGMAP:
        return False
    api_version = text(obj.get("apiVersion"))
    return not api_version or api_version.rpartition("/")[0] in groups


def _json_type(value: object) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _os_problem(err: OSError) -> str:
    if isinstance(err, FileNotFoundError):
        return "no such file or folder"
    if isinstance(err, PermissionError):
        return "permission denied"
    return err.strerror or str(err)


class SnapshotReader:
    """A `cluster.reader.Reader` over objects held in memory, indexed once so that a question on a
    snapshot of thousands of nodes is a few dictionary lookups."""

    def __init__(self, objects: Iterable[Object], now: datetime | None = None) -> None:
        by_kind: defaultdict[str, list[Object]] = defaultdict(list)
        for obj in _distinct(o for o in objects if _known(o)):
            by_kind[kind(obj)].append(obj)
        self._nodes = tuple(by_kind["Node"])
        self._pods = {(namespace(p), name(p)): p for p in by_kind["Pod"]}
        self._bound_pods = tuple(p for p in by_kind["Pod"] if holds_node(p))
        self._nominated_pods = tuple(p for p in by_kind["Pod"] if nominated_node(p) and not is_terminal(p))
        self._pending_pods = tuple(p for p in by_kind["Pod"] if is_pending(p))
        self._jobsets = _by_name(by_kind["JobSet"])
        self._jobs_of_jobset = _group(by_kind["Job"], _jobset_key)
        self._pods_of_jobset = _group(by_kind["Pod"], _jobset_key)
        self._lws = _by_name(by_kind["LeaderWorkerSet"])
        self._of_lws = _group((*by_kind["Pod"], *by_kind["StatefulSet"]), _lws_key)
        self._trainjobs = _by_name(by_kind["TrainJob"])
        self._runtimes = _group(
            _of_kinds(by_kind, ("TrainingRuntime", "ClusterTrainingRuntime")), _runtime_key
        )
        self._podgroups = _group(by_kind["PodGroup"], _name_key)
        self._named = _group(_of_kinds(by_kind, NAMED_KINDS), _name_key)
        self._events_about = _group(by_kind["Event"], _regarding_key)
        self._events_in = _group(by_kind["Event"], namespace)
        self._workloads_in = _group(by_kind["Workload"], namespace)
        self._queues_in = _group(by_kind["LocalQueue"], namespace)
        self._cluster_queues = tuple(by_kind["ClusterQueue"])
        # The namespaces the snapshot shows: its Namespace objects and every object's namespace.
        self._namespaces = {name(n) for n in by_kind["Namespace"]} | {
            namespace(o) for group in by_kind.values() for o in group if namespace(o)
        }
        # The pod rules and volumes read from these (the classifier keeps the ones it needs).
        self._peers = Peers(pods=self._bound_pods, namespaces=tuple(by_kind["Namespace"]), all_pods=True)
        self._storage = Storage(
            claims=tuple(by_kind["PersistentVolumeClaim"]),
            volumes=tuple(by_kind["PersistentVolume"]),
            classes=tuple(by_kind["StorageClass"]),
            csinodes=tuple(by_kind["CSINode"]),
            drivers=tuple(by_kind["CSIDriver"]),
            capacities=tuple(by_kind["CSIStorageCapacity"]),
            users=self._bound_pods,
        )
        self._daemonsets = tuple(by_kind["DaemonSet"])
        self._dra = Dra.of(o for k in DRA_KINDS for o in by_kind[k])
        self._capacity = Capacity(
            status=next(iter(by_kind["ConfigMap"]), None),
            nodepools=tuple(by_kind["NodePool"]),
            nodeclaims=tuple(by_kind["NodeClaim"]),
            requests=tuple(by_kind["ProvisioningRequest"]),
        )
        self.now = now or _reading_time(o for group in by_kind.values() for o in group)
        """The time of the reading (deterministic: a snapshot answers the same way every time)."""

    @classmethod
    def from_path(cls, path: str | PathLike[str], now: datetime | None = None) -> SnapshotReader:
        return cls(load_objects(path), now)

    async def triage_view(self, namespace: str, pod: str) -> TriageRead:
        found = self._pods.get((namespace, pod))
        if found is None:
            raise self._not_found("pod", namespace, pod, self._pods)
        about = self._events(found)
        view = TriageView(
            pod=found,
            nodes=self._nodes,
            bound_pods=self._bound_pods,
            events=about,
            now=self.now,
            peers=self._peers,
            storage=self._storage,
            nominated_pods=self._nominated_pods,
            workloads=self._workloads_in.get(namespace, ()),
            queues=(*self._queues_in.get(namespace, ()), *self._cluster_queues),
            pending_pods=self._pending_pods,
            dra=self._dra,
            capacity=self._capacity_after(about),
            daemonsets=self._daemonsets,
        )
        return TriageRead(view)

    async def jobset_view(self, namespace: str, name: str) -> JobSetView:
        jobset = self._jobsets.get((namespace, name))
        if jobset is None:
            raise self._not_found("jobset", namespace, name, self._jobsets)
        jobs = self._jobs_of_jobset.get((namespace, name), ())
        pods = self._pods_of_jobset.get((namespace, name), ())
        about = self._events(jobset, *jobs, *pods)
        return JobSetView(
            jobset=jobset,
            jobs=jobs,
            pods=pods,
            events=about,
            nodes=self._nodes,
            bound_pods=self._bound_pods,
            workloads=tuple(w for w in self._workloads_in.get(namespace, ()) if owned_by(w, jobset)),
            now=self.now,
            podgroups=self._podgroups_of(pods),
            peers=self._peers,
            storage=self._storage,
            nominated_pods=self._nominated_pods,
            dra=self._dra,
            capacity=self._capacity_after(about),
        )

    async def lws_view(self, namespace: str, name: str) -> LwsView:
        lws = self._lws.get((namespace, name))
        if lws is None:
            raise self._not_found("leaderworkerset", namespace, name, self._lws)
        members = self._of_lws.get((namespace, name), ())
        pods = tuple(o for o in members if kind(o) == "Pod")
        statefulsets = tuple(o for o in members if kind(o) == "StatefulSet")
        about = self._events(lws, *statefulsets, *pods)
        return LwsView(
            lws=lws,
            statefulsets=statefulsets,
            pods=pods,
            events=about,
            nodes=self._nodes,
            bound_pods=self._bound_pods,
            now=self.now,
            podgroups=self._podgroups_of(pods),
            peers=self._peers,
            storage=self._storage,
            nominated_pods=self._nominated_pods,
            dra=self._dra,
            capacity=self._capacity_after(about),
        )

    def _podgroups_of(self, pods: tuple[Object, ...]) -> tuple[Object, ...]:
        """The PodGroups the pods name (`diagnosis.gang`)."""
        wanted = named_by(pods)
        return tuple(
            g
            for _, ns, group in sorted(wanted)
            for g in self._podgroups.get((ns, group), ())
            if (api_of(g), ns, group) in wanted
        )

    async def trainjob_view(self, namespace: str, name: str) -> TrainJobView | None:
        trainjob = self._trainjobs.get((namespace, name))
        if trainjob is None:
            return None
        kind_, runtime = runtime_ref(trainjob)
        scope = namespace if kind_ == "TrainingRuntime" else ""
        runtimes = self._runtimes.get((kind_, scope, runtime), ())
        jobset = await self.jobset_view(namespace, name) if (namespace, name) in self._jobsets else None
        return TrainJobView(
            trainjob=trainjob,
            runtime=runtimes[0] if runtimes else None,
            events=self._events(trainjob),
            podgroups=self._podgroups.get((namespace, name), ()),
            workloads=tuple(w for w in self._workloads_in.get(namespace, ()) if owned_by(w, trainjob)),
            jobset=jobset,
            now=self.now,
        )

    async def named(self, namespace: str, name: str) -> tuple[Object, ...]:
        return self._named.get((namespace, name), ())

    async def pods_matching(self, namespace: str, selector: Mapping[str, str]) -> tuple[Object, ...]:
        return tuple(
            p
            for (ns, _), p in self._pods.items()
            if ns == namespace and all(labels(p).get(k) == v for k, v in selector.items())
        )

    async def ping(self) -> None:
        """A loaded snapshot is always readable."""

    def _capacity_after(self, about: Iterable[Object]) -> Capacity:
        """What says whether a node will come, with the autoscalers' events on their own objects
        that these events (`about`) lead to, as the live reader reads them."""
        told = tuple(
            e
            for read in events_to_read(about)
            for e in self._events_in.get(read.namespace, ())
            if read.holds(e)
        )
        return replace(self._capacity, events=told)

    def _events(self, *about: Object) -> tuple[Object, ...]:
        return tuple(
            e
            for obj in about
            for e in self._events_about.get((namespace(obj), name(obj)), ())
            if events.is_about(e, obj)
        )

    def _not_found(
        self, kind_: str, namespace: str, name: str, existing: Mapping[tuple[str, str], Object]
    ) -> NotFound:
        """NotFound with what the person needs instead: the names that exist close to the one asked
        for, and what the API refused to create in that namespace."""
        similar = similar_names(name, (n for ns, n in existing if ns == namespace))
        rejections = creation_rejections(self._events_in.get(namespace, ()), namespace)
        namespaces = (
            None if namespace in self._namespaces else similar_names(namespace, sorted(self._namespaces))
        )
        return NotFound(kind_, namespace, name, Missing(similar, rejections, namespaces))


def _group(objects: Iterable[Object], key: Callable[[Object], K]) -> dict[K, tuple[Object, ...]]:
    grouped: defaultdict[K, list[Object]] = defaultdict(list)
    for obj in objects:
        grouped[key(obj)].append(obj)
    return {k: tuple(v) for k, v in grouped.items()}


def _jobset_key(obj: Object) -> tuple[str, str]:
    return namespace(obj), labels(obj).get(JOBSET_NAME_LABEL, "")


def _lws_key(obj: Object) -> tuple[str, str]:
    return namespace(obj), labels(obj).get(LWS_NAME_LABEL, "")


def _by_name(objects: Iterable[Obj]) -> dict[tuple[str, str], Obj]:
    return {(namespace(o), name(o)): o for o in objects}


def _of_kinds(by_kind: Mapping[str, list[Object]], kinds: Iterable[str]) -> Iterator[Object]:
    return (o for k in kinds for o in by_kind[k])


def _runtime_key(obj: Object) -> tuple[str, str, str]:
    return kind(obj), namespace(obj), name(obj)


def _name_key(obj: Object) -> tuple[str, str]:
    return namespace(obj), name(obj)


def _regarding_key(event: Object) -> tuple[str, str]:
    ref = events.regarding(event)
    return text(ref.get("namespace")), text(ref.get("name"))


def _reading_time(objects: Iterable[Object]) -> datetime:
    """When the snapshot was taken, as near as the objects tell: the newest time they record."""
    return max((t for obj in objects for t in _times(obj)), default=_EPOCH)


def _times(obj: Object) -> Iterator[datetime]:
    """The times an object records of the cluster's past: when it was created, when its conditions
    last changed or were last heard of, when its pod started, when its event last occurred."""
    values: list[object] = [meta(obj).get("creationTimestamp"), status(obj).get("startTime")]
    for c in conditions(obj):
        values += (c.get("lastTransitionTime"), c.get("lastHeartbeatTime"), c.get("lastProbeTime"))
    for when in map(timestamp, values):
        if when is not None:
            yield when
    if kind(obj) == "Event" and (last := events.last_time(obj)) is not None:
        yield last
