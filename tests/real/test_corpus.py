"""The corpus against a real kube-apiserver 1.34, read as the bot's own ServiceAccount with the RBAC
that `deploy/` installs.

Every snapshot is loaded with spec and status; every question the bot asks of it is asked live by the
real `kubernetes` client, directly and through the watch cache: each case gets the answer the corpus
expects and the one its snapshot file gives, and every read-only command of the answer runs against
the server with the real kubectl. The real RBAC authorizer refuses the bot nothing (its audit log
shows no 403), and without any one rule of the ClusterRole or of the Lease's Role some question
fails. A snapshot the server refuses (an object no cluster could hold) fails its case.
"""

from __future__ import annotations

import asyncio
import copy
import shlex
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.errors import ClusterError
from cluster.lease import LeaseOptions
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader
from devtools.botenv import kubectl
from devtools.corpus import Case, answer
from devtools.kubereal import ApiError, Server
from diagnosis.model import Command, Diagnosis, PodVerdict
from tests.deploy.rendered import render, the
from tests.real.support import (
    BOT,
    Access,
    Answers,
    Audit,
    ask_everything,
    by_snapshot,
    fixed,
    loaded,
    said,
)

pytestmark = [pytest.mark.real, pytest.mark.timeout(1800)]
"""The first test asks every question of the corpus (`readings`): minutes on two busy cores."""

NEEDS_A_NODE = frozenset({"logs", "top", "exec", "attach", "port-forward"})
"""Verbs the API server answers by calling a kubelet or metrics-server, which this server has not (and
must never try: a node's address in a snapshot is no host of this machine). The API simulator tier
runs them (`tests/kubectl/`)."""


KUBECTLS = 4
"""kubectl processes run at once: each spends most of its time starting and waiting on the server."""

SNAPSHOTS = by_snapshot()


@dataclass(frozen=True)
class Reading:
    """What asking one snapshot's questions as the bot gave: the answers (None when the server refused
    the snapshot or a read failed: `error`), the commands kubectl refused, and the bot's requests."""

    answers: Answers | None
    error: str | None
    refused: list[str]
    accesses: list[Access]


@pytest.fixture(scope="module")
def readings(server: Server, bot: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Reading]:
    """Every snapshot's questions, asked once for all the tests of this module."""
    audit, home = Audit(server), tmp_path_factory.mktemp("kubectl")
    found = {}
    for snapshot, asked in SNAPSHOTS.items():
        mark = audit.mark()
        answers, error, refused = _read(server, bot, snapshot, asked, home)
        found[snapshot] = Reading(answers, error, refused, audit.since(mark))
    return found


def _read(
    server: Server, bot: Path, snapshot: Path, asked: list[Case], home: Path | None
) -> tuple[Answers | None, str | None, list[str]]:
    """The snapshot's answers as the bot reads them, and (with a kubectl `home`) the commands of those
    answers that kubectl refused."""
    try:
        with loaded(server, snapshot):
            answers = asyncio.run(ask_everything(bot, asked))
            commands = sorted({c.text for a in answers.direct for c in a.next_commands if _reads(c)})
            refused = [] if home is None else _refused(commands, str(server.admin_kubeconfig), home)
    except (AssertionError, ClusterError) as error:
        return None, f"{type(error).__name__}: {error}", []
    return answers, None, refused


def _refused(commands: list[str], kubeconfig: str, home: Path) -> list[str]:
    """The commands kubectl refuses, each with what it said."""
    with ThreadPoolExecutor(KUBECTLS) as pool:
        runs = pool.map(lambda text: kubectl(shlex.split(text)[1:], kubeconfig, home), commands)
        return [f"{t}\n{r.stderr.strip()}" for t, r in zip(commands, runs, strict=True) if r.returncode]


def _reads(command: Command) -> bool:
    return not command.changes and not NEEDS_A_NODE & set(shlex.split(command.text))


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.stem)
async def test_live_answers_are_the_snapshots(snapshot: Path, readings: dict[Path, Reading]) -> None:
    reading = readings[snapshot]
    assert reading.error is None, reading.error
    assert reading.answers is not None
    assert reading.refused == [], "\n".join(reading.refused)
    offline = SnapshotReader.from_path(snapshot)
    asked = SNAPSHOTS[snapshot]
    for case, direct, cached in zip(asked, reading.answers.direct, reading.answers.cached, strict=True):
        wanted = (case.verdict, case.pod_verdict, case.cause)
        assert (direct.verdict, direct.pod_verdict, direct.cause) == wanted, case.id
        expected = await answer(offline, case)
        assert said(direct) == said(cached) == said(expected), case.id
        if _fixes_comparable(expected):
            assert fixed(direct) == fixed(cached) == fixed(expected), case.id


def _fixes_comparable(expected: Diagnosis) -> bool:
    """Where a live answer's fixes must be the snapshot's: all but a preempting pod's (or a workload's
    whose pod is), whose victims were deleted before the snapshot was taken, which a server sets to now
    at the earliest, so whether their grace period is over differs by the second."""
    return PodVerdict.PREEMPTING not in (expected.verdict, expected.pod_verdict)


def test_the_bot_is_refused_nothing(readings: dict[Path, Reading]) -> None:
    accesses = [a for reading in readings.values() for a in reading.accesses]
    assert accesses, "the audit log holds none of the bot's requests: nothing was checked"
    assert sorted({a for a in accesses if a.code == 403}) == []


# --- each rule is needed ----------------------------------------------------------------------------

CLUSTER_ROLE = the(render("http"), "ClusterRole")
LEASE_ROLE = the(render("http"), "Role")


def _allows(rule: Mapping[str, Any], access: Access) -> bool:
    return (
        access.verb in rule["verbs"]
        and access.group in rule["apiGroups"]
        and access.resource in rule["resources"]
    )


@contextmanager
def _without(server: Server, role: Mapping[str, Any], index: int) -> Iterator[Mapping[str, Any]]:
    """The role without its rule `index` for the block, the authorizer seen to deny what only that
    rule allowed (and to allow it again after)."""
    path = _role_path(role)
    rule = role["rules"][index]
    fewer = copy.deepcopy(dict(role))
    del fewer["rules"][index]
    _replace(server, path, fewer)
    _wait_allowed(server, role, rule, False)
    try:
        yield rule
    finally:
        _replace(server, path, role)
        _wait_allowed(server, role, rule, True)


def _role_path(role: Mapping[str, Any]) -> str:
    meta = role["metadata"]
    if role["kind"] == "ClusterRole":
        return f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{meta['name']}"
    return f"/apis/rbac.authorization.k8s.io/v1/namespaces/{meta['namespace']}/roles/{meta['name']}"


def _replace(server: Server, path: str, role: Mapping[str, Any]) -> None:
    served = server.admin.call("GET", path)
    server.admin.call("PUT", path, {**role, "metadata": served["metadata"]})


def _wait_allowed(server: Server, role: Mapping[str, Any], rule: Mapping[str, Any], allowed: bool) -> None:
    """The RBAC authorizer reads roles from an informer: wait until it decides the rule's first access
    as `allowed` (polled: nothing to wait on but its answer)."""
    attributes = {
        "verb": rule["verbs"][0],
        "group": rule["apiGroups"][0],
        "resource": rule["resources"][0],
        "namespace": role["metadata"].get("namespace", ""),
        "name": (rule.get("resourceNames") or [""])[0],
    }
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": BOT,
            "groups": ["system:serviceaccounts", "system:serviceaccounts:kubewhy", "system:authenticated"],
            "resourceAttributes": attributes,
        },
    }
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        said = server.admin.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        if bool(said["status"].get("allowed")) is allowed:
            return
        time.sleep(0.02)
    raise AssertionError(f"the authorizer never decided {attributes} as allowed={allowed}")


@pytest.mark.parametrize("index", range(len(CLUSTER_ROLE["rules"])), ids=lambda i: _rule_id(CLUSTER_ROLE, i))
def test_each_cluster_role_rule_is_needed(
    index: int, server: Server, bot: Path, readings: dict[Path, Reading]
) -> None:
    rule = CLUSTER_ROLE["rules"][index]
    users = [
        s for s, r in readings.items() if r.answers is not None and any(_allows(rule, a) for a in r.accesses)
    ]
    assert users, f"no question of the corpus made a request that only {rule} allows"
    snapshot = min(users, key=lambda path: path.stat().st_size)  # the quickest to load
    expected = readings[snapshot].answers
    audit = Audit(server)
    with _without(server, CLUSTER_ROLE, index):
        mark = audit.mark()
        answers, error, _ = _read(server, bot, snapshot, SNAPSHOTS[snapshot], None)
        refused = [a for a in audit.since(mark) if a.code == 403]
    assert refused, f"without {rule} the bot was refused nothing asking {snapshot.stem}"
    assert error is not None or answers != expected, f"without {rule} every answer of {snapshot.stem} stayed"


def _rule_id(role: Mapping[str, Any], index: int) -> str:
    rule = role["rules"][index]
    return f"{'+'.join(rule['resources'])}:{'+'.join(rule['verbs'])}"


@pytest.mark.parametrize("index", range(len(LEASE_ROLE["rules"])), ids=lambda i: _rule_id(LEASE_ROLE, i))
async def test_each_lease_rule_is_needed(index: int, server: Server, bot: Path) -> None:
    """With the Role whole, the bot's elector leads; without any one of its rules, it is refused. The
    Lease is deleted before each try, so that the elector must create it too."""
    audit = Audit(server)
    _forget_lease(server)
    await _lead_once(bot)
    with _without(server, LEASE_ROLE, index) as rule:
        _forget_lease(server)
        mark = audit.mark()
        task = asyncio.create_task(_lead_once(bot))
        while not any(a.code == 403 and _allows(rule, a) for a in audit.since(mark)):
            assert not task.done(), f"the elector led without {rule}"
            await asyncio.sleep(0.05)  # the elector's retries are its own: the refusal is polled for
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _forget_lease(server: Server) -> None:
    try:
        server.admin.call("DELETE", "/apis/coordination.k8s.io/v1/namespaces/kubewhy/leases/kubewhy")
    except ApiError as error:
        if error.code != 404:
            raise


async def _lead_once(kubeconfig: Path) -> None:
    """Lead once, then release the Lease: create or take it, renew it, give it back."""
    reader = LiveReader.from_kubeconfig(str(kubeconfig), None)
    elector = reader.elector(
        LeaseOptions("kubewhy", duration=2.0, renew_deadline=1.5, retry=0.1), "kubewhy-0"
    )
    try:
        task = asyncio.create_task(elector.run())
        await elector.leading.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await elector.release()
    finally:
        await elector.aclose()
        await reader.aclose()
