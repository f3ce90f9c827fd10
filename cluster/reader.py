"""The one interface through which handlers read a cluster, live or from a snapshot."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from diagnosis.triage.prepared import NOTHING, Prepared
from diagnosis.views import JobSetView, TriageView


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

    async def ping(self) -> None:
        """Raise a ClusterError when the cluster cannot be read now (for /readyz)."""
        ...
