"""Reading a live cluster with the official `kubernetes` client: only what a question needs,
concurrently where the reads are independent.

`/triage` reads the pod and its events, then its candidate nodes (server-side filtered by the pod's
nodeSelector when it has one), then the pods bound to the few nodes that reach the free-slot check —
never every pod of a large cluster when the candidates are few. `/jobset why` reads the JobSet, its
Jobs, pods and events, its Kueue Workloads, the nodes its pods are on, and what triaging its pending
pods needs.

Events are read from the core API only: `events.k8s.io/v1` serves the same objects (one storage, two
views), so reading both would only double the bytes.

With a `ClusterCache` (on by default in `kubewhy serve`) that is synced, nodes and bound pods come from
the cache instead, chosen by the same rules; the pod, the JobSet and their events are still read live.
While the cache syncs, falls behind or has stopped, they are read directly, and the view's notes say so.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from cluster.credentials import take_exec
from cluster.errors import ClusterError, Missing, NotFound, unread_line
from cluster.kube import (
    ApiClient,
    ConfigException,
    Configuration,
    KubeConfigMerger,
    load_incluster_config,
    load_kube_config_from_dict,
)
from cluster.lease import Elector, LeaseOptions, Observer
from cluster.reader import TriageRead
from cluster.transport import VERSION, WORKERS, ReadStats, Response, Retry, Target, Transport
from diagnosis import events
from diagnosis.dra_objects import (
    GROUP,
    Claim,
    Dra,
    Inventory,
    claim,
    device_class,
    pod_claims,
    resource_slice,
)
from diagnosis.missing import creation_rejections, similar_names
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status, text
from diagnosis.relations import JOBSET_NAME_LABEL, NOT_TERMINAL, node_name, nominated_node, owned_by
from diagnosis.triage.classify import node_reads, usage_candidates
from diagnosis.triage.kueue import ADMISSION_GATE, QUEUE_LABEL
from diagnosis.triage.prepared import Prepared
from diagnosis.triage.resources import NodePods, group_pods, in_order
from diagnosis.triage.runner import reaches_funnel
from diagnosis.triage.scheduling import Placement, gate_names, node_selector
from diagnosis.triage.steps import pod_affinity as affinity
from diagnosis.triage.steps import topology_spread as spread
from diagnosis.triage.steps.volume import claims as volumes
from diagnosis.views import JobSetView, Peers, Storage, TriageView

if TYPE_CHECKING:  # the cache is imported when one is made (`kubewhy serve`), not by every CLI run
    from cluster.cache import CacheOptions, ClusterCache

PER_NODE_ALWAYS = 64
"""Up to this many candidate nodes, their bound pods are read with one LIST per node (`WORKERS` at
a time: a few rounds of small answers), whatever the cluster's size."""

PER_NODE_MAX = 2000
"""Beyond PER_NODE_ALWAYS, per-node LISTs still win while the candidates are a minority of the
nodes: each is an index lookup in the API server's watch cache (`spec.nodeName`, the kubelet's own
query) carrying only that node's pods, where one cluster-wide LIST of bound pods carries every pod
of the cluster (on 5,000 nodes and 100,000 pods, ~300 MB and tens of seconds of parsing, against
~15 % of that for a 700-node pool). When the candidates are most of the nodes, or more than this
many calls would be needed, the cluster-wide LIST, read in pages, is fewer calls for about the same
bytes. Nodes asked for by name follow the same rule (GET each, or LIST all)."""

T = TypeVar("T")
V = TypeVar("V", TriageRead, JobSetView)

_JOBSET = "jobset.x-k8s.io", "v1alpha2"
_WORKLOAD = "kueue.x-k8s.io", "v1beta1"


def _label_selector(selector: Mapping[str, object]) -> str | None:
    """The nodeSelector as a label selector, or None when it is empty or holds a key or value the
    API would refuse (the funnel then explains the mismatch from all the nodes)."""
    pairs = [(k, v) for k, v in selector.items() if isinstance(v, str)]
    if (
        not pairs
        or len(pairs) != len(selector)
        or not all(is_label_key(k) and is_label_value(v) for k, v in pairs)
    ):
        return None
    return ",".join(f"{k}={v}" for k, v in sorted(pairs))


def _per_node(candidates: int, cluster_nodes: int | None) -> bool:
    """Whether to read `candidates` nodes' worth of objects one node at a time (see PER_NODE_MAX). A
    node count not known means the candidates were selected by label: a pool, part of the cluster."""
    if candidates <= PER_NODE_ALWAYS:
        return True
    return candidates <= PER_NODE_MAX and (cluster_nodes is None or 2 * candidates <= cluster_nodes)


def _pending(pod: Object) -> bool:
    return status(pod).get("phase") == "Pending" and not node_name(pod)


class LiveReader:
    """A `cluster.reader.Reader` over one cluster, through one ApiClient (no global configuration),
    each call with a timeout, in worker threads, with bounded retries. `stats` counts the calls and
    bytes. `cache`, when given, is read while it is synced (its owner starts it)."""

    def __init__(
        self,
        api_client: ApiClient,
        timeout: float = 5.0,
        retry: Retry | None = None,
        cache: ClusterCache | None = None,
    ) -> None:
        self._api = Transport(api_client, timeout, retry)
        self.cache = cache
        self.context = ""
        """The kubeconfig context read (the one named, else the current one); "" in a cluster."""

    @classmethod
    def from_kubeconfig(
        cls, path: str | None, context: str | None, timeout: float = 5.0, cache: CacheOptions | None = None
    ) -> LiveReader:
        """Connect as kubectl does: `path`, else `$KUBECONFIG` (a list of files, merged), else
        `~/.kube/config`, else the in-cluster ServiceAccount. With `cache`, the reader gets a
        `ClusterCache` of the same cluster (not started)."""
        chosen = path or os.environ.get("KUBECONFIG") or None
        default = Path("~/.kube/config").expanduser()
        if chosen is None and not default.exists():
            if context:
                raise ClusterError(
                    f"no kubeconfig to find context {context} in", "pass --kubeconfig PATH or set KUBECONFIG"
                )
            return cls.in_cluster(timeout, cache)
        config_file = chosen or str(default)
        if not any(Path(p).expanduser().is_file() for p in config_file.split(os.pathsep) if p):
            raise ClusterError(
                f"kubeconfig {config_file} does not exist",
                "pass --kubeconfig PATH to an existing file or fix KUBECONFIG",
            )
        configuration = _configuration()
        try:
            merged = KubeConfigMerger(config_file).config  # type: ignore[no-untyped-call]  # untyped in kubernetes
            if merged is None:
                raise ConfigException("the file holds no configuration")
            credential = take_exec(merged, context, timeout)
            load_kube_config_from_dict(  # type: ignore[no-untyped-call]  # untyped in kubernetes
                merged, context, client_configuration=configuration, persist_config=False
            )
        except (ConfigException, OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as err:
            raise ClusterError(
                f"cannot use kubeconfig {config_file}"
                f"{f' (context {context})' if context else ''}: {' '.join(str(err).split())[:300]}",
                "check the file and the context (kubectl config get-contexts lists them)",
            ) from err
        except RecursionError:
            raise ClusterError(
                f"cannot use kubeconfig {config_file}: it is nested too deeply to be a kubeconfig",
                "check the file (kubectl config view reads it)",
            ) from None
        if credential is not None:
            configuration.refresh_api_key_hook = credential.refresh  # type: ignore[assignment]
        reader = cls._connected(ApiClient(configuration), timeout, cache)
        reader.context = context or text(mapping(merged.value).get("current-context"))
        return reader

    @classmethod
    def in_cluster(cls, timeout: float = 5.0, cache: CacheOptions | None = None) -> LiveReader:
        """Connect with the pod's ServiceAccount token, as a Deployment does."""
        configuration = _configuration()
        try:
            load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]  # untyped in kubernetes
        except ConfigException as err:
            raise ClusterError(
                f"no kubeconfig found and not running in a cluster: {err}",
                "pass --kubeconfig PATH or set KUBECONFIG (or run kubewhy in a pod with a ServiceAccount)",
            ) from err
        return cls._connected(ApiClient(configuration), timeout, cache)

    @classmethod
    def _connected(cls, api_client: ApiClient, timeout: float, cache: CacheOptions | None) -> LiveReader:
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
            return cls(api_client, timeout)
        from cluster.cache import ClusterCache

        cached = ClusterCache(ApiClient(api_client.configuration), cache, timeout)
        return cls(api_client, timeout, cache=cached)

    @property
    def stats(self) -> ReadStats:
        return self._api.stats

    async def aclose(self) -> None:
        if self.cache is not None:
            await self.cache.aclose()
        await self._api.close()

    def elector(self, options: LeaseOptions, identity: str, observer: Observer | None = None) -> Elector:
        """A leader elector on a Lease in this cluster (`cluster.lease`), over a connection of its own:
        a renewal must not wait behind a burst of reads."""
        timeout = min(self._api.timeout, options.renew_deadline)  # a renewal is late past the deadline
        api = Transport(ApiClient(self._api.api_client.configuration), timeout)
        return Elector(api, options, identity, observer)

    async def ping(self) -> None:
        await self._api.get(Target("get", VERSION))

    # — /triage —

    async def triage_view(self, namespace: str, pod: str) -> TriageRead:
        return await self._believed(self._triage_view(namespace, pod), "pod", namespace, pod)

    async def _triage_view(self, namespace: str, pod: str) -> TriageRead:
        notes = list(self._notes())
        got, about = await asyncio.gather(
            self._pod(namespace, pod), _optional("events", self._pod_events(namespace, pod), notes)
        )
        found, now = got.body, self._now(got)
        if not reaches_funnel(found):
            # Decided from the pod alone; a placed (or nominated) pod's evidence still shows its node,
            # a preempting pod's the victims there, a Kueue-gated pod's its Workload.
            placed, bound, (workloads, queues, unread), claims = await asyncio.gather(
                _optional("its node", self._nodes_named([node_name(found) or nominated_node(found)]), notes),
                self._bound_pods(usage_candidates(found, ()), None),
                self._kueue(found),
                _optional("its ResourceClaims", self._own_claims(found), notes),
            )
            view = TriageView(
                found,
                tuple(placed),
                bound,
                _about(about, found),
                now,
                workloads=workloads,
                queues=queues,
                unread=unread,
                notes=tuple(notes),
                dra=Dra(claims=tuple(claims)),
            )
            return TriageRead(view)
        (nodes, prefiltered), nominated, dra = await asyncio.gather(
            self._candidate_nodes(found), self._nominated_pods(), self._dra([found])
        )
        # Off the event loop: on thousands of nodes it takes tens of milliseconds.
        nodes = tuple(nodes)
        cache = self._cached()
        findings = cache.findings if cache is not None else None
        usage, serving_none, memo = await asyncio.to_thread(node_reads, found, nodes, dra, findings)
        # The nodes that serve no device: their device plugin, operator and driver pods are the answer.
        serving = [n for n in serving_none if n not in usage]
        (bound, grouped), theirs, peers, storage = await asyncio.gather(
            self._bound_groups(usage, None if prefiltered else len(nodes)),
            self._pods_on(serving),
            self._peers(found, nodes, prefiltered),
            self._storage(found, usage),
        )
        bound += theirs
        peers = await self._own_namespace(found, peers, bound, grouped)
        view = TriageView(
            found,
            nodes,
            bound,
            _about(about, found),
            now,
            prefiltered,
            peers=peers,
            storage=storage,
            nominated_pods=nominated,
            pending_pods=self._pending_pods(),
            bound_nodes=frozenset((*usage, *serving)),
            dra=dra,
            notes=tuple(notes),
        )
        return TriageRead(view, Prepared(memo, findings, grouped))

    def _pending_pods(self) -> tuple[Object, ...]:
        """The other pods waiting for devices, which compete with the pod for the same nodes: from
        the cache, which keeps them (`CacheOptions.pending`). Never read directly: that would be a
        LIST of every unscheduled pod for each question."""
        cache = self._cached()
        return cache.pending_pods() if cache is not None and cache.pending_synced else ()

    async def _nominated_pods(self) -> tuple[Object, ...]:
        """The pods the scheduler nominated a node for and has not bound yet, any namespace: those of
        the pod's priority or more count against their node. Few at any time; one LIST."""
        unbound = f"spec.nodeName=,status.nominatedNodeName!=,{NOT_TERMINAL}"
        return tuple(await self._api.items(Target("list", "pods"), fieldSelector=unbound))

    async def _kueue(self, pod: Object) -> tuple[tuple[Object, ...], tuple[Object, ...], tuple[str, ...]]:
        """For a pod gated by Kueue's admission: the Workloads of its namespace (Kueue's says why it is
        not admitted) and the LocalQueue its label names (which says the ClusterQueue). Optional: a
        read that fails is a line of evidence, not a failed answer."""
        if node_name(pod) or ADMISSION_GATE not in gate_names(pod):
            return (), (), ()
        ns, queue = namespace(pod), labels(pod).get(QUEUE_LABEL, "")
        unread: list[str] = []
        workloads, queues = await asyncio.gather(
            _optional(f"Kueue Workloads of {ns}", self._workloads(ns), unread),
            _optional(f"Kueue LocalQueue {queue} of {ns}", self._local_queue(ns, queue), unread),
        )
        return tuple(workloads), tuple(queues), tuple(unread)

    async def _local_queue(self, namespace: str, queue: str) -> list[dict[str, Any]]:
        """The LocalQueue by name; none when it (or Kueue) is not there, or the name is not one."""
        if not is_dns1123_subdomain(queue):
            return []
        try:
            got = await self._api.get(
                Target("get", "localqueues", namespace, _WORKLOAD[0], queue, "localqueue", _WORKLOAD[1])
            )
        except NotFound:
            return []
        return [got.body]

    async def _pod(self, namespace: str, pod: str) -> Response:
        try:
            return await self._api.get(Target("get", "pods", namespace, name=pod, kind="pod"))
        except NotFound as err:
            names = self._api.names(Target("list", "pods", namespace))
            raise await self._missing("pod", namespace, pod, names) from err

    async def _pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        return await self._api.items(
            Target("list", "events", namespace),
            fieldSelector=f"involvedObject.namespace={namespace},involvedObject.name={pod}",
        )

    def _notes(self) -> tuple[str, ...]:
        """Said with the answer when this reader has a cache that cannot answer now, so that nodes
        and bound pods are read from the API server (slower on a large cluster, but current)."""
        if self.cache is None or self.cache.synced:
            return ()
        return (
            f"Nodes and bound pods read directly from the API server: kubewhy's cache of this cluster"
            f" is {self.cache.condition} ({self.cache.state}).",
        )

    def _cached(self) -> ClusterCache | None:
        """The cache, when it is synced. Asked before each read from it: a cache can stop or fall
        behind between two awaits, and the read then goes to the API server."""
        return self.cache if self.cache is not None and self.cache.synced else None

    async def _candidate_nodes(self, pod: Object) -> tuple[Sequence[Object], bool]:
        """The nodes the pod could go to: those matching its nodeSelector, selected by the API server
        or from the cache (`prefiltered`); all nodes when it has none — or when none matches, so that
        the evidence can show which labels the nodes do have."""
        selector = _label_selector(node_selector(pod))
        if selector is not None:
            matching = await self._nodes_labelled(pod, selector)
            if matching:
                return matching, True
        return await self._all_nodes(), False

    async def _nodes_labelled(self, pod: Object, selector: str) -> Sequence[Object]:
        """The nodes matching the pod's nodeSelector (`selector`, its label selector form). From the
        cache: those with its rarest label, kept by the classifier's own rule applied to the
        nodeSelector alone, as the API server applies the label selector."""
        cache = self._cached()
        if cache is None:
            return await self._api.items(Target("list", "nodes"), labelSelector=selector)
        wanted = {k: v for k, v in node_selector(pod).items() if isinstance(v, str)}
        rarest = min((cache.nodes_labelled(k, v) for k, v in wanted.items()), key=len)
        placement = Placement.of({"spec": {"nodeSelector": wanted}})
        return [n for n in rarest if placement.mismatch(n) is None]

    async def _all_nodes(self) -> Sequence[Object]:
        cache = self._cached()
        if cache is not None:
            return cache.nodes()
        return await self._api.items(Target("list", "nodes"))

    async def _pods_on(self, node_names: Iterable[str]) -> tuple[Object, ...]:
        """Every non-terminated pod bound to these few nodes, read live (the cache keeps only pods
        that hold devices, and the ones wanted here serve them)."""
        wanted = sorted({n for n in node_names if is_dns1123_subdomain(n)})
        if not wanted:
            return ()
        queries = [{"fieldSelector": f"spec.nodeName={node},{NOT_TERMINAL}"} for node in wanted]
        return tuple(chain.from_iterable(await self._api.lists(Target("list", "pods"), queries)))

    async def _bound_pods(self, node_names: Iterable[str], cluster_nodes: int | None) -> tuple[Object, ...]:
        """The non-terminated pods bound to these nodes, any namespace (`_bound_groups`)."""
        return (await self._bound_groups(node_names, cluster_nodes))[0]

    async def _bound_groups(
        self, node_names: Iterable[str], cluster_nodes: int | None
    ) -> tuple[tuple[Object, ...], dict[str, NodePods] | None]:
        """The non-terminated pods bound to these nodes, any namespace: from the cache, node by node
        with its groups of them (`Prepared.grouped`); else read node by node, or all bound pods of
        the cluster when that is cheaper (see PER_NODE_MAX), without groups. `cluster_nodes` is how
        many nodes the cluster has, when all were read."""
        cache = self._cached()
        if cache is not None:
            made, ungrouped = cache.groups(node_names)
            if ungrouped.pods:
                # Thousands of pods, the first question after a sync: off the event loop.
                built = await asyncio.to_thread(group_pods, ungrouped.pods)
                cache.keep(built, ungrouped)
                made.update(built)
            grouped = in_order(made)
            return tuple(chain.from_iterable(group.pods for group in grouped.values())), grouped
        wanted = sorted({n for n in node_names if is_dns1123_subdomain(n)})
        target = Target("list", "pods")
        if not wanted:
            return (), None
        if _per_node(len(wanted), cluster_nodes):
            return await self._pods_on(wanted), None
        every = await self._api.items(target, fieldSelector=f"spec.nodeName!=,{NOT_TERMINAL}")
        keep = set(wanted)
        return tuple(p for p in every if node_name(p) in keep), None

    # — what the pod's volumes and inter-pod rules read —

    async def _peers(self, pod: Object, nodes: Sequence[Object], prefiltered: bool) -> Peers:
        """The pods each of the pod's affinity, anti-affinity and spread queries selects (one LIST
        per namespace, or one for all namespaces, with the query's label selector), the Namespaces a
        namespaceSelector picks, and the nodes of those pods that are not among `nodes` (every node
        when a spread constraint counts nodes the nodeSelector excluded)."""
        queries = [q for q in (*affinity.queries(pod), *spread.queries(pod)) if not q.selector.nothing]
        if not queries:
            return Peers()
        selected = await asyncio.gather(
            *(
                self._namespaces(q.namespace_selector.query())
                for q in queries
                if q.namespace_selector is not None and not q.everywhere
            )
        )
        namespaces = {name(ns): ns for found in selected for ns in found}
        reads: dict[tuple[str | None, str], None] = {}
        for q in queries:
            label_selector = q.selector.query()
            if q.everywhere:
                reads[(None, label_selector)] = None
                continue
            in_selected = [
                n
                for n, ns in namespaces.items()
                if q.namespace_selector is not None and q.namespace_selector.matches(labels(ns))
            ]
            for ns in sorted({*q.namespaces, *in_selected}):
                if is_dns1123_label(ns):
                    reads[(ns, label_selector)] = None
        found = await asyncio.gather(*(self._pods_selected(ns, sel) for ns, sel in reads))
        pods = {(namespace(p), name(p)): p for group in found for p in group}
        known = {name(n) for n in nodes}
        if prefiltered and spread.needs_every_node(pod):
            more: Sequence[Object] = await self._all_nodes()
        else:
            more = await self._nodes_named({node_name(p) for p in pods.values()} - known)
        return Peers(tuple(pods.values()), tuple(more), tuple(namespaces.values()))

    async def _pods_selected(self, ns: str | None, label_selector: str) -> list[dict[str, Any]]:
        """Bound, non-terminal pods matching a label selector, in one namespace or all."""
        bound = f"spec.nodeName!=,{NOT_TERMINAL}"
        if ns is None:
            return await self._api.items(
                Target("list", "pods"), labelSelector=label_selector, fieldSelector=bound
            )
        return await self._api.items(
            Target("list", "pods", ns), labelSelector=label_selector, fieldSelector=bound
        )

    async def _namespaces(self, label_selector: str) -> list[dict[str, Any]]:
        return await self._api.items(Target("list", "namespaces"), labelSelector=label_selector)

    async def _own_namespace(
        self,
        pod: Object,
        peers: Peers,
        bound: Sequence[Object],
        grouped: Mapping[str, NodePods] | None = None,
    ) -> Peers:
        """Add the pod's Namespace when an existing pod's anti-affinity picks namespaces by label:
        matching it against the pod needs the labels of the pod's own namespace. Of the pods in
        groups (which `bound` begins with), only those with an anti-affinity are looked at."""
        ns = namespace(pod)
        groups = (grouped or {}).values()
        rest = bound[sum(len(group.pods) for group in groups) :]
        repelling = (p for group in groups for p in group.repelling)
        if any(name(n) == ns for n in peers.namespaces) or not any(
            affinity.has_namespace_selector(p) for p in chain(repelling, rest, peers.pods)
        ):
            return peers
        found = await self._get_or_none(Target("get", "namespaces", name=ns, kind="namespace"))
        return replace(peers, namespaces=(*peers.namespaces, *([found] if found else [])))

    async def _storage(self, pod: Object, usage: Iterable[str]) -> Storage:
        """The pod's PVCs (by name), their PVs and StorageClasses; every PV when an unbound claim
        may bind to an existing one; the CSINodes of the nodes reaching the free-slot step when the
        pod has a CSI volume, and then, when one of them limits its driver, every PVC and PV to
        count the volumes attached there."""
        ns = namespace(pod)
        claims = await self._named(
            [c for c in volumes.claim_names(pod) if is_dns1123_subdomain(c)],
            lambda c: self._get_or_none(
                Target("get", "persistentvolumeclaims", ns, name=c, kind="persistentvolumeclaim")
            ),
        )
        if not claims:
            return Storage()
        volume_names = {text(spec(c).get("volumeName")) for c in claims}
        class_names = {volumes.class_of(c) for c in claims}
        one_pod = [name(c) for c in claims if volumes.one_pod(c)]
        pvs, classes, in_namespace = await asyncio.gather(
            self._named(
                [v for v in volume_names if is_dns1123_subdomain(v)],
                lambda v: self._get_or_none(
                    Target("get", "persistentvolumes", name=v, kind="persistentvolume")
                ),
            ),
            self._named(
                [c for c in class_names if is_dns1123_subdomain(c)],
                lambda c: self._get_or_none(
                    Target("get", "storageclasses", group="storage.k8s.io", name=c, kind="storageclass")
                ),
            ),
            self._namespace_pods(ns) if one_pod else asyncio.sleep(0, ()),
        )
        users = {(ns, name(p)): p for c in one_pod for p in volumes.claim_users(pod, c, in_namespace)}
        storage = Storage(tuple(claims), tuple(pvs), tuple(classes), users=tuple(users.values()))
        every_volume = volumes.needs_every_volume(pod, storage)
        # The CSIDriver of a claim still to be provisioned says whether its capacity is published.
        every, csi_drivers = await asyncio.gather(
            self._every_volume() if every_volume else asyncio.sleep(0, list(storage.volumes)),
            self._named(
                [p for p in volumes.provisioners(pod, storage) if is_dns1123_subdomain(p)],
                lambda d: self._get_or_none(
                    Target("get", "csidrivers", group="storage.k8s.io", name=d, kind="csidriver")
                ),
            ),
        )
        storage = replace(storage, volumes=tuple(every), drivers=tuple(csi_drivers))
        if any(map(volumes.publishes_capacity, csi_drivers)):
            # The scheduler reads every CSIStorageCapacity of the cluster: one LIST of all namespaces.
            listed = Target("list", "csistoragecapacities", group="storage.k8s.io")
            storage = replace(storage, capacities=tuple(await self._api.items(listed)))
        drivers = volumes.csi_drivers(pod, storage)
        if not drivers:
            return storage
        csinodes = await self._named(
            [n for n in usage if is_dns1123_subdomain(n)],
            lambda n: self._get_or_none(
                Target("get", "csinodes", group="storage.k8s.io", name=n, kind="csinode")
            ),
        )
        storage = replace(storage, csinodes=tuple(csinodes))
        if not volumes.limited(drivers, csinodes):
            return storage
        all_claims, all_volumes = await asyncio.gather(
            self._api.items(Target("list", "persistentvolumeclaims")),
            # Every PV was read above when an unbound claim may bind to one: not again.
            asyncio.sleep(0, list(storage.volumes)) if every_volume else self._every_volume(),
        )
        return replace(storage, claims=tuple(all_claims), volumes=tuple(all_volumes))

    async def _namespace_pods(self, ns: str) -> Sequence[Object]:
        """The bound pods of a namespace, for the users of a ReadWriteOncePod claim (VolumeRestrictions
        counts them on every node): from the cache, else one LIST."""
        cache = self._cached()
        if cache is not None:
            return cache.pods_in(ns)
        bound = f"spec.nodeName!=,{NOT_TERMINAL}"
        return await self._api.items(Target("list", "pods", ns), fieldSelector=bound)

    async def _every_volume(self) -> list[dict[str, Any]]:
        return await self._api.items(Target("list", "persistentvolumes"))

    async def _named(
        self, names: Iterable[str], get: Callable[[str], Awaitable[dict[str, Any] | None]]
    ) -> list[dict[str, Any]]:
        """Objects read by name, concurrently; those that do not exist are left out."""
        found = await asyncio.gather(*(get(n) for n in sorted(set(names))))
        return [o for o in found if o is not None]

    async def _get_or_none(self, target: Target) -> dict[str, Any] | None:
        try:
            return (await self._api.get(target)).body
        except NotFound:
            return None

    # — the sentinel —

    async def jobset_restarts(self, namespaces: Sequence[str] | None) -> dict[tuple[str, str], int]:
        """`status.restarts` of every JobSet in these namespaces (None: all), by (namespace, name);
        empty where JobSet is not installed."""
        group, version = _JOBSET
        scopes: Sequence[str | None] = [None] if namespaces is None else namespaces
        try:
            found = await asyncio.gather(
                *(self._api.items(Target("list", "jobsets", ns, group, version=version)) for ns in scopes)
            )
        except NotFound:
            return {}
        return {
            (namespace(j), name(j)): int(status(j).get("restarts") or 0) for j in chain.from_iterable(found)
        }

    # — /jobset why —

    async def jobset_view(self, namespace: str, name: str) -> JobSetView:
        return await self._believed(self._jobset_view(namespace, name), "jobset", namespace, name)

    async def _jobset_view(self, namespace: str, name: str) -> JobSetView:
        notes = list(self._notes())
        by_label = f"{JOBSET_NAME_LABEL}={name}"
        got, in_namespace, jobs, pods, workloads = await asyncio.gather(
            self._api.get(Target("get", "jobsets", namespace, _JOBSET[0], name, "jobset", _JOBSET[1])),
            _optional("events", self._namespace_events(namespace), notes),
            self._api.items(Target("list", "jobs", namespace, "batch"), labelSelector=by_label),
            self._api.items(Target("list", "pods", namespace), labelSelector=by_label),
            _optional("Kueue workloads", self._workloads(namespace), notes),
            return_exceptions=True,
        )
        if isinstance(got, NotFound):
            names = self._api.names(Target("list", "jobsets", namespace, _JOBSET[0], version=_JOBSET[1]))
            raise await self._missing("jobset", namespace, name, names, _unwrap(in_namespace)) from got
        jobset, found_pods = _unwrap(got).body, _unwrap(pods)
        (nodes, bound, nominated), dra = await asyncio.gather(
            self._nodes_for(found_pods),
            self._dra([p for p in found_pods if _pending(p) and reaches_funnel(p)]),
        )
        peers, storage = await self._around(found_pods, nodes, bound)
        return JobSetView(
            jobset=jobset,
            jobs=tuple(_unwrap(jobs)),
            pods=tuple(found_pods),
            events=_about(_unwrap(in_namespace), jobset, *_unwrap(jobs), *found_pods),
            nodes=nodes,
            bound_pods=bound,
            workloads=tuple(w for w in _unwrap(workloads) if owned_by(w, jobset)),
            now=self._now(_unwrap(got)),
            peers=peers,
            storage=storage,
            nominated_pods=nominated,
            dra=dra,
            notes=tuple(notes),
        )

    async def _namespace_events(self, namespace: str) -> list[dict[str, Any]]:
        """All events of the namespace in one paged LIST, picked client-side: a JobSet's events are
        about itself, up to hundreds of Jobs and pods, where one call per object would be hundreds;
        a namespace holds only the last hour of events (the API's event TTL)."""
        return await self._api.items(Target("list", "events", namespace))

    async def _workloads(self, namespace: str) -> list[dict[str, Any]]:
        """Kueue Workloads in the namespace; none when Kueue is not installed (its API group 404s)."""
        try:
            return await self._api.items(
                Target("list", "workloads", namespace, _WORKLOAD[0], version=_WORKLOAD[1])
            )
        except NotFound:
            return []

    async def _dra(self, pods: Sequence[Object]) -> Dra:
        """The DRA objects the pods' claims need, when some pod names one: every ResourceClaim (the
        allocated ones hold devices), the DeviceClasses, the ResourceSlices, and the claim templates
        of the pods' namespaces. A cluster that serves no `resource.k8s.io/v1` has none."""
        if not any(pod_claims(p) for p in pods):
            return Dra()
        # Templates matter only while a claim is still to be made from one (`claim` says why not).
        namespaces = sorted(
            {namespace(p) for p in pods if any(c.template and c.generated is None for c in pod_claims(p))}
        )
        cache = self._cached()
        if cache is not None and cache.dra_synced:
            templates = await asyncio.gather(*map(self._templates, namespaces))
            # The cache's own Dra while the claims stay as they are: what is worked out about them
            # (who holds each device, the claims by name) is worked out once.
            kept = cache.dra()
            found = tuple(t for group in templates for t in group)
            return replace(kept.holding(), templates=found) if found else kept
        try:
            claims, classes, slices, *templates = await asyncio.gather(
                self._cluster_list("resourceclaims"),
                self._cluster_list("deviceclasses"),
                self._cluster_list("resourceslices"),
                *map(self._templates, namespaces),
            )
        except NotFound:
            return Dra(served=False)
        return Dra(
            claims=tuple(map(claim, claims)),
            templates=tuple(t for group in templates for t in group),
            devices=Inventory(tuple(map(device_class, classes)), tuple(map(resource_slice, slices))),
        )

    async def _own_claims(self, pod: Object) -> list[Claim]:
        """The ResourceClaims a pod decided from alone names (a placed pod's evidence shows them): from
        the cache when it watches them, else its namespace's listed."""
        wanted = {c.resolved for c in pod_claims(pod) if c.resolved}
        if not wanted:
            return []
        cache = self._cached()
        if cache is not None and cache.dra_synced:
            listed: Iterable[Claim] = cache.dra().claims
        else:
            found = await self._api.items(Target("list", "resourceclaims", namespace(pod), GROUP))
            listed = map(claim, found)
        return [c for c in listed if c.namespace == namespace(pod) and c.name in wanted]

    async def _templates(self, ns: str) -> list[tuple[str, str]]:
        """The (namespace, name) of the namespace's ResourceClaimTemplates."""
        found = await self._api.items(Target("list", "resourceclaimtemplates", ns, GROUP))
        return [(namespace(t), name(t)) for t in found]

    async def _cluster_list(self, plural: str) -> list[dict[str, Any]]:
        return await self._api.items(Target("list", plural, group=GROUP))

    async def _nodes_for(
        self, pods: Sequence[Object]
    ) -> tuple[tuple[Object, ...], tuple[Object, ...], tuple[Object, ...]]:
        """The nodes the JobSet's pods are bound to, plus the candidate nodes of its pending pods,
        and the bound and nominated pods that triaging those pending pods needs (as `triage_view`
        reads them)."""
        pending = list({_scheduling_key(p): p for p in pods if _pending(p) and reaches_funnel(p)}.values())
        candidates, nominated = await asyncio.gather(
            asyncio.gather(*(self._candidate_nodes(p) for p in pending)),
            self._nominated_pods() if pending else asyncio.sleep(0, ()),
        )
        known = {name(n): n for nodes, _ in candidates for n in nodes}
        # A pod waiting for its preemption's victims: its nominated node and the pods there.
        waiting = {n for p in pods if _pending(p) for n in usage_candidates(p, ()) if n}
        placed = ({node_name(p) for p in pods if node_name(p)} | waiting) - known.keys()
        known.update((name(n), n) for n in await self._nodes_named(placed))
        usage = waiting | {
            n
            for pod, (nodes, _) in zip(pending, candidates, strict=True)
            for n in usage_candidates(pod, nodes)
        }
        everywhere = [len(nodes) for nodes, prefiltered in candidates if not prefiltered]
        bound = await self._bound_pods(usage, max(everywhere, default=None))
        return tuple(known[n] for n in sorted(known)), bound, nominated

    async def _around(
        self, pods: Sequence[Object], nodes: Sequence[Object], bound: Sequence[Object]
    ) -> tuple[Peers, Storage]:
        """What triaging the JobSet's pending pods reads besides nodes and bound pods: the peers of
        each distinct placement, the storage of each distinct set of claims, merged."""
        pending = [p for p in pods if _pending(p) and reaches_funnel(p)]
        placements = list({_scheduling_key(p): p for p in pending}.values())
        claims = list({volumes.claim_names(p): p for p in pending if volumes.claim_names(p)}.values())
        usage = {n for p in placements for n in usage_candidates(p, nodes)}
        found_peers, found_storage = await asyncio.gather(
            asyncio.gather(*(self._peers(p, nodes, True) for p in placements)),
            asyncio.gather(*(self._storage(p, usage) for p in claims)),
        )
        merged = await asyncio.gather(
            *(self._own_namespace(p, peers, bound) for p, peers in zip(placements, found_peers, strict=True))
        )

        def distinct(objects: Iterable[Object]) -> tuple[Object, ...]:
            return tuple({(namespace(o), name(o)): o for o in objects}.values())

        peers = Peers(
            distinct(p for group in merged for p in group.pods),
            distinct(n for group in merged for n in group.nodes),
            distinct(n for group in merged for n in group.namespaces),
        )
        storage = Storage(
            *(
                distinct(o for group in found_storage for o in getattr(group, field))
                for field in ("claims", "volumes", "classes", "csinodes", "users", "drivers", "capacities")
            )
        )
        return peers, storage

    async def _nodes_named(self, names: Iterable[str]) -> list[Object]:
        """Nodes by name (empty names ignored); a node that is gone is simply absent (see
        PER_NODE_MAX)."""
        wanted = sorted({n for n in names if is_dns1123_subdomain(n)})
        cache = self._cached()
        if cache is not None:
            return [n for n in map(cache.node, wanted) if n is not None]
        if not _per_node(len(wanted), None):
            keep = set(wanted)
            return [n for n in await self._all_nodes() if name(n) in keep]
        found = await asyncio.gather(*(self._node(n) for n in wanted))
        return [n for n in found if n is not None]

    async def _node(self, node: str) -> dict[str, Any] | None:
        try:
            return (await self._api.get(Target("get", "nodes", name=node, kind="node"))).body
        except NotFound:
            return None

    # — shared —

    async def _believed(self, read: Awaitable[V], kind: str, namespace: str, name: str) -> V:
        """`read`, where only the object asked about may be missing: a 404 on any other read (a list
        of pods, of nodes) says the server is not the Kubernetes API it was (a wrong path prefix, a
        proxy), or serves an API kubewhy does not know — the cluster cannot be read."""
        try:
            return await read
        except NotFound as err:
            if (err.kind, err.namespace, err.name) == (kind, namespace, name):
                raise
            await self.ping()  # Unavailable when the URL does not serve the Kubernetes API at all
            raise ClusterError(
                f"the Kubernetes API at {self._api.server} answered 404 for {err.kind}"
                f"{f' in namespace {err.namespace}' if err.namespace else ''}",
                "check that the server URL of the kubeconfig reaches the API server directly",
            ) from err

    async def _missing(
        self,
        kind: str,
        namespace: str,
        name: str,
        names: Awaitable[list[str]],
        warnings: Sequence[Object] | None = None,
    ) -> NotFound:
        """NotFound with what the person needs instead: the closest names in the namespace, and the
        creations the API refused there (a refused pod never exists, only its controller's
        FailedCreate warning does). A 404 is believed only from a Kubernetes API: one that does not
        serve /version (a wrong path prefix) is not a cluster at all, and `ping` raises Unavailable."""
        ignored: list[str] = []  # a NotFound has no evidence: what was not read is simply left out
        served, existing = await asyncio.gather(
            self.ping(), _optional("names", names, ignored), return_exceptions=True
        )
        _unwrap(served)
        if warnings is None:
            read: list[dict[str, Any]] = await _optional(
                "events",
                self._api.items(Target("list", "events", namespace), fieldSelector="type=Warning"),
                ignored,
            )
            warnings = read
        return NotFound(
            kind,
            namespace,
            name,
            Missing(similar_names(name, _unwrap(existing)), creation_rejections(warnings, namespace)),
        )

    def _now(self, response: Response) -> datetime:
        """The time of the reading by the API server's clock (its objects' timestamps are written by
        the same clock), or ours when it sent no Date."""
        return response.date or datetime.now(UTC)


def _configuration() -> Configuration:
    """A fresh client configuration (never the global default): urllib3's own retries off, since
    Transport retries with its own policy; one pooled connection per worker."""
    configuration = Configuration()
    configuration.retries = False
    configuration.connection_pool_maxsize = WORKERS
    return configuration


def _about(found: Iterable[Object], *objects: Object) -> tuple[Object, ...]:
    """The events about any of `objects` (same namespace, name, and kind/uid where both say)."""
    by_name: dict[tuple[str, str], list[Object]] = {}
    for obj in objects:
        by_name.setdefault((namespace(obj), name(obj)), []).append(obj)
    chosen = []
    for event in found:
        ref = events.regarding(event)
        candidates = by_name.get((text(ref.get("namespace")), text(ref.get("name"))), [])
        if any(events.is_about(event, obj) for obj in candidates):
            chosen.append(event)
    return tuple(chosen)


def _scheduling_key(pod: Object) -> str:
    """What places a pod, to read each distinct pending pod's candidates once: a JobSet's pods share
    their Job's template and differ in names, hostnames, env and token volumes, which place nothing."""
    pod_spec = spec(pod)
    asks = [
        (mapping(c).get("resources"), mapping(c).get("restartPolicy"))
        for field in ("initContainers", "containers")
        for c in sequence(pod_spec.get(field))
    ]
    placement = [
        pod_spec.get(k)
        for k in ("nodeSelector", "affinity", "tolerations", "schedulingGates", "topologySpreadConstraints")
    ]
    return json.dumps([placement, asks], sort_keys=True, default=str)


async def _optional(what: str, read: Awaitable[list[T]], notes: list[str]) -> list[T]:
    """A read that only enriches the answer: its failure becomes a line in `notes` (shown after the
    evidence) and no objects, instead of a failed answer. A read the verdict needs is never passed
    here: its failure must stop the answer."""
    try:
        return await read
    except (ClusterError, NotFound) as error:
        notes.append(unread_line(what, error))
        return []


def _unwrap(result: T | BaseException) -> T:
    """A result of `gather(…, return_exceptions=True)`, or its exception raised."""
    if isinstance(result, BaseException):
        raise result
    return result
