"""`kubewhy lws why`'s reads: the LeaderWorkerSet, its StatefulSets, pods and events, the nodes its
pods are on, and what triaging its pending pods needs."""

from __future__ import annotations

import asyncio

from cluster.errors import NotFound
from cluster.live.missing import not_found
from cluster.live.podgroups import podgroups
from cluster.live.readers import Readers
from cluster.live.source import about, now, optional, unwrap
from cluster.transport import Target
from diagnosis.lws.group import topology_key
from diagnosis.relations import LWS_NAME_LABEL
from diagnosis.views import LwsView

LWS_GROUP, LWS_VERSION = "leaderworkerset.x-k8s.io", "v1"


class LwsReads:
    """A LeaderWorkerSet and what explaining it reads, through the readers of each kind of object."""

    def __init__(self, readers: Readers) -> None:
        self._read = readers

    async def view(self, namespace: str, name: str) -> LwsView:
        api = self._read.source.api
        notes = list(self._read.source.notes())
        by_label = f"{LWS_NAME_LABEL}={name}"
        got, in_namespace, statefulsets, pods = await asyncio.gather(
            api.get(
                Target("get", "leaderworkersets", namespace, LWS_GROUP, name, "leaderworkerset", LWS_VERSION)
            ),
            optional("events", self._read.around.namespace_events(namespace), notes),
            api.items(Target("list", "statefulsets", namespace, "apps"), labelSelector=by_label),
            api.items(Target("list", "pods", namespace), labelSelector=by_label),
            return_exceptions=True,
        )
        if isinstance(got, NotFound):
            names = api.names(Target("list", "leaderworkersets", namespace, LWS_GROUP, version=LWS_VERSION))
            warnings = unwrap(in_namespace)
            raise await not_found(
                self._read.source, "leaderworkerset", namespace, name, names, warnings
            ) from got
        lws, found_pods, found_sets = unwrap(got).body, unwrap(pods), unwrap(statefulsets)
        events = about(unwrap(in_namespace), lws, *found_sets, *found_pods)
        around, groups, capacity = await asyncio.gather(
            self._read.around.pods(found_pods, [topology_key(lws)]),
            podgroups(self._read.source, found_pods, notes),
            self._read.capacity.for_pods(found_pods, events, notes),
        )
        return LwsView(
            lws=lws,
            statefulsets=tuple(found_sets),
            pods=tuple(found_pods),
            events=events,
            nodes=around.nodes,
            bound_pods=around.bound_pods,
            now=now(unwrap(got)),
            podgroups=groups,
            peers=around.peers,
            storage=around.storage,
            nominated_pods=around.nominated_pods,
            dra=around.dra,
            notes=tuple(notes),
            capacity=capacity,
        )
