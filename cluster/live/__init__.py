"""Reading a live cluster with the official `kubernetes` client: only what a question needs,
concurrently where the reads are independent, every call through one `cluster.transport.Transport`.

`LiveReader` is the `cluster.reader.Reader` the rest of the code uses. It assembles one small reader
per kind of object (`readers.py`), all sharing the transport and the cache (`source.py`): the nodes
and the pods bound to them (`nodes.py`), the pods inter-pod rules select (`peers.py`), storage
(`storage.py`), DRA (`dra.py`), Kueue (`queues.py`), and what a workload's pending pods need around
them (`around.py`). `/triage` (`triage.py`), `/jobset why` (`jobsets.py`), `kubewhy lws why`
(`lws.py`), a TrainJob's `/jobset why` (`trainjobs.py`) and `kubewhy why` (`names.py`) read
through them, `missing.py` says what to ask instead when the object asked about is not there, and
`connect.py` reaches the cluster.

Events are read from the core API only: `events.k8s.io/v1` serves the same objects (one storage, two
views), so reading both would only double the bytes.

With a `ClusterCache` (on by default in `kubewhy serve`) that is synced, nodes and bound pods come from
the cache instead, chosen by the same rules; the pod, the JobSet and their events are still read live.
While the cache syncs, falls behind or has stopped, they are read directly, and the view's notes say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cluster.kube import ApiClient
from cluster.lease import Elector, LeaseOptions, Observer
from cluster.live.connect import in_cluster_client, kubeconfig_client
from cluster.live.jobsets import JobSetReads
from cluster.live.lws import LwsReads
from cluster.live.missing import believed
from cluster.live.names import NameReads
from cluster.live.readers import Readers
from cluster.live.source import Source
from cluster.live.trainjobs import TrainJobReads
from cluster.live.triage import TriageReads
from cluster.reader import TriageRead
from cluster.transport import ReadStats, Retry, Transport
from diagnosis.objects import Object
from diagnosis.views import JobSetView, LwsView, TrainJobView

if TYPE_CHECKING:  # the cache is imported when one is made (`kubewhy serve`), not by every CLI run
    from cluster.cache import CacheOptions, ClusterCache


class LiveReader:
    """A `cluster.reader.Reader` over one cluster, through one ApiClient (no global configuration),
    each call with a timeout, in worker threads, with bounded retries. `stats` counts the calls and
    bytes. `cache`, when given, is read while it is synced (its owner starts it). `all_pods`: a
    direct read lists every bound pod, so that every existing pod's anti-affinity is checked."""

    def __init__(
        self,
        api_client: ApiClient,
        timeout: float = 5.0,
        retry: Retry | None = None,
        cache: ClusterCache | None = None,
        all_pods: bool = False,
    ) -> None:
        readers = Readers.over(Source(Transport(api_client, timeout, retry), cache, all_pods))
        self._source = readers.source
        self._triage = TriageReads(readers)
        self._jobsets = JobSetReads(readers)
        self._lws = LwsReads(readers)
        self._trainjobs = TrainJobReads(readers, self._jobsets)
        self._names = NameReads(readers.source)
        self.context = ""
        """The kubeconfig context read (the one named, else the current one); "" in a cluster."""

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None,
        context: str | None,
        timeout: float = 5.0,
        cache: CacheOptions | None = None,
        all_pods: bool = False,
    ) -> LiveReader:
        """Connect as kubectl does: `path`, else `$KUBECONFIG` (a list of files, merged), else
        `~/.kube/config`, else the in-cluster ServiceAccount. With `cache`, the reader gets a
        `ClusterCache` of the same cluster (not started)."""
        found = kubeconfig_client(path, context, timeout)
        if found is None:
            return cls.in_cluster(timeout, cache, all_pods)
        api_client, read_context = found
        reader = cls._connected(api_client, timeout, cache, all_pods)
        reader.context = read_context
        return reader

    @classmethod
    def in_cluster(
        cls, timeout: float = 5.0, cache: CacheOptions | None = None, all_pods: bool = False
    ) -> LiveReader:
        """Connect with the pod's ServiceAccount token, as a Deployment does."""
        return cls._connected(in_cluster_client(), timeout, cache, all_pods)

    @classmethod
    def _connected(
        cls, api_client: ApiClient, timeout: float, cache: CacheOptions | None, all_pods: bool = False
    ) -> LiveReader:
        """The reader, and its cache with a client of its own: its watches hold two connections open
        for minutes, which must not take the reader's pooled ones.

        The proxy the environment gives for the server (none, mostly) is pinned in the configuration:
        the loaders' refresh hooks assign the host again before every call (`_set_config` in
        kube_config.py and incluster_config.py), and each assignment made the client read the whole
        environment again for a proxy (configuration.py, the `host` setter): 0.06–0.1 ms a call, 11%
        of the CPU time of the 702 per-node LISTs of `make bench` (a) with 35 variables set, more in a
        pod (Kubernetes sets some for every Service of its namespace). The ApiClient's connection
        pool was made with that proxy, once, anyway."""
        configuration = api_client.configuration
        configuration.proxy = configuration.proxy
        if cache is None:
            return cls(api_client, timeout, all_pods=all_pods)
        from cluster.cache import ClusterCache

        cached = ClusterCache(ApiClient(api_client.configuration), cache, timeout)
        return cls(api_client, timeout, cache=cached, all_pods=all_pods)

    @property
    def cache(self) -> ClusterCache | None:
        return self._source.cache

    @property
    def stats(self) -> ReadStats:
        return self._source.api.stats

    async def aclose(self) -> None:
        if self.cache is not None:
            await self.cache.aclose()
        await self._source.api.close()

    def elector(self, options: LeaseOptions, identity: str, observer: Observer | None = None) -> Elector:
        """A leader elector on a Lease in this cluster (`cluster.lease`), over a connection of its own:
        a renewal must not wait behind a burst of reads."""
        own = self._source.api
        timeout = min(own.timeout, options.renew_deadline)  # a renewal is late past the deadline
        api = Transport(ApiClient(own.api_client.configuration), timeout)
        return Elector(api, options, identity, observer)

    def record(self) -> list[dict[str, Any]]:
        """From now on, every answer the API server gives this reader's reads is added to the list
        returned, as decoded (`cluster.capture`)."""
        received: list[dict[str, Any]] = []
        self._source.api.received = received
        return received

    async def ping(self) -> None:
        await self._source.ping()

    async def triage_view(self, namespace: str, pod: str) -> TriageRead:
        return await believed(self._source, self._triage.view(namespace, pod), "pod", namespace, pod)

    async def jobset_view(self, namespace: str, name: str) -> JobSetView:
        return await believed(self._source, self._jobsets.view(namespace, name), "jobset", namespace, name)

    async def lws_view(self, namespace: str, name: str) -> LwsView:
        return await believed(
            self._source, self._lws.view(namespace, name), "leaderworkerset", namespace, name
        )

    async def trainjob_view(self, namespace: str, name: str) -> TrainJobView | None:
        return await believed(
            self._source, self._trainjobs.view(namespace, name), "trainjob", namespace, name
        )

    async def named(self, namespace: str, name: str) -> tuple[Object, ...]:
        return await self._names.named(namespace, name)

    async def pods_matching(self, namespace: str, selector: Mapping[str, str]) -> tuple[Object, ...]:
        return await self._names.pods_matching(namespace, selector)

    async def jobset_restarts(self, namespaces: Sequence[str] | None) -> dict[tuple[str, str], int]:
        """`status.restarts` of every JobSet in these namespaces (None: all), by (namespace, name), for
        the sentinel; empty where JobSet is not installed."""
        return await self._jobsets.restarts(namespaces)
