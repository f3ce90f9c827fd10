"""Least privilege, proven: the ClusterRole that `kubectl apply -k` installs allows every request the
live reader makes over the whole test corpus, and grants nothing it does not make; the Role in the
bot's namespace allows every request of the sentinel's leader election, and nothing else.

The requests are recorded, not listed by hand: the real `kubernetes` client (through `LiveReader`) asks
the API simulator every question of the corpus, plus the NotFound paths and `ping()`, once reading
directly and once with the cache of nodes, bound pods and (for the sentinel) unscheduled pods, and the
simulator records each request as the API server's authorizer sees it (verb, apiGroup, resource,
subresource, name). The sentinel's JobSet restart counts are read too, and a leader elector creates,
renews and releases its Lease.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.cache import CacheOptions
from cluster.lease import GROUP as LEASE_GROUP
from cluster.lease import LeaseOptions
from cluster.live import LiveReader
from devtools.apisim import Request, Simulator, serve
from devtools.corpus import Case, answer, every_case
from tests.deploy.rendered import OVERLAYS, Object, render, the
from tests.live.support import ABSENT, ask_absent, start_cache

pytestmark = pytest.mark.timeout(600)
"""The first test records every question of the corpus, directly and through the cache (`recording`):
minutes on two busy cores."""

BOT_NAMESPACE = "kubewhy"
"""The namespace deploy/ installs the bot in, where its Lease lives."""

# Granted to every authenticated user by the default ClusterRole system:discovery (bound to the group
# system:authenticated; kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): these
# need no rule of ours.
DISCOVERY_URLS = (
    "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/",
    "/openapi", "/openapi/*",
)


@dataclass(frozen=True, order=True)
class Access:
    """What the RBAC authorizer checks for one resource request."""

    verb: str
    group: str
    resource: str
    """The plural, with the subresource after a slash: `pods`, `pods/log`."""
    name: str = ""


def rule_allows(rule: Mapping[str, Any], wanted: Access) -> bool:
    """The RBAC authorizer's rule match (rbac/v1 PolicyRule semantics, wildcards included)."""
    subresource = wanted.resource.partition("/")[2]
    resources = {"*", wanted.resource} | ({f"*/{subresource}"} if subresource else set())
    return (
        bool({"*", wanted.group} & set(rule.get("apiGroups", [])))
        and bool({"*", wanted.verb} & set(rule.get("verbs", [])))
        and bool(resources & set(rule.get("resources", [])))
        and (not rule.get("resourceNames") or wanted.name in rule["resourceNames"])
    )


def missing(role: Object, accesses: Iterable[Access]) -> list[Access]:
    """The accesses no rule of `role` allows."""
    return sorted({a for a in accesses if not any(rule_allows(rule, a) for rule in role.get("rules", []))})


def excess(role: Object, accesses: Iterable[Access]) -> list[tuple[str, str, str]]:
    """The (verb, group, resource) grants of `role` that no access uses; a wildcard or a
    nonResourceURLs rule always counts, since it grants what nobody listed."""
    used = {(a.verb, a.group, a.resource) for a in accesses}
    granted = {
        grant
        for rule in role.get("rules", [])
        for grant in itertools.product(
            rule.get("verbs", []), rule.get("apiGroups", []), rule.get("resources", [])
        )
    }
    extra = {grant for grant in granted if grant not in used or any("*" in part for part in grant)}
    extra |= {("get", "", url) for rule in role.get("rules", []) for url in rule.get("nonResourceURLs", [])}
    return sorted(extra)


def discovery_allows(path: str) -> bool:
    return any(path == url or (url.endswith("*") and path.startswith(url[:-1])) for url in DISCOVERY_URLS)


@dataclass(frozen=True)
class Recording:
    accesses: frozenset[Access]
    """The reads of the reader, the cache and the sentinel (the ClusterRole's)."""
    lease: frozenset[Access]
    """The leader election's requests (the Role's, in the bot's namespace)."""
    lease_namespaces: frozenset[str]
    non_resource: frozenset[str]
    """Paths of requests that name no resource (discovery, /version)."""
    event_reads: frozenset[tuple[str, str]]
    """(namespace, field selector) of each LIST of events."""


async def ask_everything(sim: Simulator, asked: list[Case], cache: CacheOptions | None) -> None:
    """Every question of the corpus about one snapshot, its NotFound neighbours, and a ping; with the
    cache, once it has listed and its watches are served. What is recorded is which requests are
    made, not how soon: a call may take as long as a loaded machine needs."""
    reader = LiveReader.from_kubeconfig(sim.kubeconfig, None, 60.0, cache=cache)
    try:
        if reader.cache is not None:
            await start_cache(reader, sim)
        await reader.ping()
        await reader.jobset_restarts(None)
        await reader.jobset_restarts(sorted({case.namespace for case in asked}))
        for case in asked:
            await answer(reader, case)
            await reader.named(case.namespace, case.name)
        await ask_absent(reader, {case.namespace for case in asked} | {ABSENT})
    finally:
        await reader.aclose()


async def elect(kubeconfig: str, namespace: str) -> None:
    """A leader elector's life: create the Lease, then release it (a read and an update, as a renewal)."""
    reader = LiveReader.from_kubeconfig(kubeconfig, None)
    elector = reader.elector(
        LeaseOptions(namespace, duration=1.0, renew_deadline=0.7, retry=0.05), "kubewhy-0"
    )
    try:
        task = asyncio.create_task(elector.run())
        async with asyncio.timeout(10):
            await elector.leading.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await elector.release()
    finally:
        await elector.aclose()
        await reader.aclose()


async def record(corpus: list[Case]) -> list[Request]:
    """The requests of every question, one simulator per snapshot, the snapshots asked concurrently."""
    by_snapshot: dict[Path, list[Case]] = {}
    for case in corpus:
        by_snapshot.setdefault(case.snapshot, []).append(case)
    # A few snapshots at a time: every one at once held over a thousand sockets and hundreds of
    # threads in this process, on two cores.
    turns = asyncio.Semaphore(8)

    async def in_turn(sim: Simulator, asked: list[Case], cache: CacheOptions | None) -> None:
        async with turns:
            await ask_everything(sim, asked, cache)

    with ExitStack() as stack:
        sims = {snapshot: stack.enter_context(serve([snapshot])) for snapshot in by_snapshot}
        for cache in (None, CacheOptions(pending=True)):
            await asyncio.gather(*(in_turn(sims[s], asked, cache) for s, asked in by_snapshot.items()))
        await elect(next(iter(sims.values())).kubeconfig, BOT_NAMESPACE)
        return [request for sim in sims.values() for request in sim.requests]


@pytest.fixture(scope="module")
def recording() -> Recording:
    corpus = every_case()
    assert corpus, "the corpus is empty: nothing would be recorded"
    requests = asyncio.run(record(corpus))
    resources = [r for r in requests if r.is_resource]
    leases = [r for r in resources if r.group == LEASE_GROUP]
    return Recording(
        accesses=frozenset(
            Access(r.verb, r.group, r.rbac_resource, r.name) for r in resources if r not in leases
        ),
        lease=frozenset(Access(r.verb, r.group, r.rbac_resource, r.name) for r in leases),
        lease_namespaces=frozenset(r.namespace for r in leases),
        non_resource=frozenset(r.path for r in requests if not r.is_resource),
        event_reads=frozenset(
            (r.namespace, r.query.get("fieldSelector", "")) for r in resources if r.resource == "events"
        ),
    )


def cluster_role(overlay: str) -> Object:
    return the(render(overlay), "ClusterRole")


def lease_role(overlay: str) -> Object:
    return the(render(overlay), "Role")


def test_the_reader_only_reads(recording: Recording) -> None:
    assert recording.accesses
    assert {a.verb for a in recording.accesses} <= {"get", "list", "watch"}


def test_only_the_cache_watches_and_only_nodes_pods_dra_and_autoscaler_objects(recording: Recording) -> None:
    watched = {(a.group, a.resource) for a in recording.accesses if a.verb == "watch"}
    dra = {("resource.k8s.io", r) for r in ("deviceclasses", "resourceclaims", "resourceslices")}
    karpenter = {("karpenter.sh", r) for r in ("nodepools", "nodeclaims")}
    assert watched == {("", "nodes"), ("", "pods"), ("", "configmaps"), *dra, *karpenter}


def test_the_only_configmap_read_is_the_autoscalers_status_by_its_name(recording: Recording) -> None:
    read = {(a.verb, a.name) for a in recording.accesses if a.resource == "configmaps"}
    assert read == {(verb, "cluster-autoscaler-status") for verb in ("get", "list", "watch")}


def test_the_autoscalers_events_on_their_own_objects_are_read(recording: Recording) -> None:
    """Karpenter's on NodeClaims in `default`, cluster-autoscaler's on its status in `kube-system`:
    the corpus has cases whose answer rests on them (the core events rule covers both)."""
    assert {
        ("default", "involvedObject.kind=NodeClaim"),
        ("kube-system", "involvedObject.kind=ConfigMap,involvedObject.name=cluster-autoscaler-status"),
    } <= recording.event_reads


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_cluster_role_allows_every_request(overlay: str, recording: Recording) -> None:
    assert missing(cluster_role(overlay), recording.accesses) == []


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_cluster_role_grants_nothing_never_requested(overlay: str, recording: Recording) -> None:
    assert excess(cluster_role(overlay), recording.accesses) == []


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_lease_role_allows_the_election_and_nothing_else(overlay: str, recording: Recording) -> None:
    assert {a.verb for a in recording.lease} == {"create", "get", "update"}
    assert {a.name for a in recording.lease if a.verb != "create"} == {"kubewhy"}
    role = lease_role(overlay)
    assert missing(role, recording.lease) == []
    assert excess(role, recording.lease) == []
    assert missing(cluster_role(overlay), recording.lease) == recording_sorted(recording.lease)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_lease_is_written_only_in_the_bots_namespace(overlay: str, recording: Recording) -> None:
    assert recording.lease_namespaces == {BOT_NAMESPACE}
    assert lease_role(overlay)["metadata"]["namespace"] == BOT_NAMESPACE
    assert the(render(overlay), "Namespace")["metadata"]["name"] == BOT_NAMESPACE


def recording_sorted(accesses: Iterable[Access]) -> list[Access]:
    return sorted(set(accesses))


def test_non_resource_requests_need_no_rule(recording: Recording) -> None:
    assert sorted(path for path in recording.non_resource if not discovery_allows(path)) == []


def test_the_checks_fail_on_a_missing_or_an_extra_grant(recording: Recording) -> None:
    """The controls: each check above does catch the mistake it exists for."""
    role = cluster_role("http")
    for index in range(len(role["rules"])):
        narrower = copy.deepcopy(role)
        del narrower["rules"][index]
        assert missing(narrower, recording.accesses), f"rule {index} is never needed"
    wider = copy.deepcopy(role)
    wider["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    assert excess(wider, recording.accesses) == [("get", "", "secrets")]
    wildcard = copy.deepcopy(role)
    wildcard["rules"][0]["verbs"].append("*")
    assert excess(wildcard, recording.accesses)
