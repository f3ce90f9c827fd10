"""`kubewhy snapshot`: what one answer reads from a live cluster, saved as a snapshot file.

The live reader reads only what a question needs (`cluster.live`); a capture asks the question once
with its reader recording every answer the API server gives (`LiveReader.record`), and keeps the
objects of those answers: the pod or the workload (JobSet, TrainJob, LeaderWorkerSet…), its events,
the nodes and bound pods it was weighed against, its peers, volumes, DRA objects, PodGroups, Kueue
objects and DaemonSets, each as the API served it. They are
written as a `v1` `List`, what `kubectl get -o json` prints (managed fields left out, as kubectl
does), so that the file answers the question as the cluster did (`cluster.snapshot`). The objects
come from the answers rather than from the view: a view holds some of them parsed (DRA) or in part.

No Secret and no ConfigMap is written, whatever a read returned, but the cluster-autoscaler's status
(`kube-system/cluster-autoscaler-status`): it holds no secret, and says whether a node is coming.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

from cluster.live import LiveReader
from diagnosis.objects import kind, meta, name, namespace, text

AUTOSCALER_STATUS = ("kube-system", "cluster-autoscaler-status")
"""The one ConfigMap a snapshot may hold (cluster-autoscaler writes its node groups' state there)."""

_NOT_OBJECTS = frozenset({"Status", "PartialObjectMetadata"})
"""Answers that are no object of the cluster: an error's Status, a names-only read's items."""

Key = tuple[str, str, str, str]


async def of(reader: LiveReader, question: Callable[[], Awaitable[object]]) -> dict[str, Any]:
    """The snapshot of what `question` (one answer, asked through `reader`) reads: the pod, the
    JobSet, TrainJob or LeaderWorkerSet, or whatever `why` finds by the name."""
    received = reader.record()
    await question()
    return as_list(received)


def as_list(received: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The objects of the answers, each once (the last read winning), as a `v1` List in a stable
    order: by kind, namespace and name."""
    found: dict[Key, dict[str, Any]] = {}
    for obj in filter(_kept, _objects(received)):
        key = (kind(obj), text(obj.get("apiVersion")), namespace(obj), name(obj))
        found[key] = _as_kubectl_prints(obj)
    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [found[key] for key in sorted(found)],
        "metadata": {"resourceVersion": ""},
    }


def _objects(received: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The objects of each answer: a List's items (the transport gave each its apiVersion and kind),
    or the object itself."""
    for body in received:
        items = body.get("items")
        if text(body.get("kind")).endswith("List") and isinstance(items, list):
            yield from (item for item in items if isinstance(item, dict))
        else:
            yield body


def _kept(obj: Mapping[str, Any]) -> bool:
    found = kind(obj)
    if not found or found in _NOT_OBJECTS or found == "Secret":
        return False
    return found != "ConfigMap" or (namespace(obj), name(obj)) == AUTOSCALER_STATUS


def _as_kubectl_prints(obj: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in meta(obj).items() if k != "managedFields"}
    return {**obj, "metadata": metadata}
