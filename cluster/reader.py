"""The one interface through which handlers read a cluster, live or from a snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol

from diagnosis.objects import Object
from diagnosis.triage.prepared import NOTHING, Prepared
from diagnosis.views import JobSetView, LwsView, TrainJobView, TriageView

NAMED_KINDS = ("Pod", "JobSet", "TrainJob", "LeaderWorkerSet", "Job", "Deployment", "StatefulSet")
"""The kinds `kubewhy why NAMESPACE NAME` looks for a name among, in the order it names them."""

KIND_WORDS: Mapping[str, str] = {
    "pod": "Pod",
    "po": "Pod",
    "jobset": "JobSet",
    "trainjob": "TrainJob",
    "leaderworkerset": "LeaderWorkerSet",
    "lws": "LeaderWorkerSet",
    "job": "Job",
    "deployment": "Deployment",
    "deploy": "Deployment",
    "statefulset": "StatefulSet",
    "sts": "StatefulSet",
}
"""The words a person may write before `/NAME`, and the kind each names."""


class TriageRead(NamedTuple):
    """What a reader hands over for `/triage`: the pod's view, and what it prepared for the view's
    classification (`classify(view, prepared)`); a reader that keeps nothing prepares nothing."""

    view: TriageView
    prepared: Prepared = NOTHING


class Reader(Protocol):
    """Reads what a question needs. Raises `NotFound` for a missing pod/JobSet (with `Missing`
    filled in), and a `ClusterError` (`Forbidden`, `Unavailable`, `SnapshotError`) when the cluster
    cannot be read. Names passed in are already validated (DNS-1123)."""

    async def triage_view(self, namespace: str, pod: str) -> TriageRead: ...

    async def jobset_view(self, namespace: str, name: str) -> JobSetView: ...

    async def lws_view(self, namespace: str, name: str) -> LwsView: ...

    async def trainjob_view(self, namespace: str, name: str) -> TrainJobView | None:
        """The TrainJob of that name with its runtime, PodGroups and JobSet; None when there is none
        (or Trainer is not installed)."""
        ...

    async def named(self, namespace: str, name: str) -> tuple[Object, ...]:
        """The objects of `NAMED_KINDS` of that name in the namespace (any, or none); a kind whose API
        the cluster does not serve has none."""
        ...

    async def pods_matching(self, namespace: str, selector: Mapping[str, str]) -> tuple[Object, ...]:
        """The namespace's pods that carry every label of `selector` (a workload's matchLabels)."""
        ...

    async def ping(self) -> None:
        """Raise a ClusterError when the cluster cannot be read now (for /readyz)."""
        ...
