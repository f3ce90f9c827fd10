"""What the real-server tests share: a snapshot loaded for the length of a block, with its timestamps
moved to the server's clock; the bot's ServiceAccount as `deploy/` installs it; every question of a
snapshot asked as the bot asks it; and the server's audit log, read as the RBAC authorizer decided."""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cluster.cache import CacheOptions
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader
from devtools.corpus import Case, answer, every_case
from devtools.kubereal import Server, load, objects_of, shifted, unload
from diagnosis.model import Diagnosis
from tests.deploy.rendered import render
from tests.live.support import ask_absent

BOT = "system:serviceaccount:kubewhy:kubewhy"
"""The user the bot's ServiceAccount token authenticates as (`deploy/base`)."""


def by_snapshot() -> dict[Path, list[Case]]:
    """The corpus's cases, by the snapshot they ask about."""
    grouped: dict[Path, list[Case]] = defaultdict(list)
    for case in every_case():
        grouped[case.snapshot].append(case)
    return dict(grouped)


@contextmanager
def loaded(server: Server, snapshot: Path) -> Iterator[None]:
    """The snapshot in the server for the block, as the cluster held it when it was taken: every
    timestamp moves by the time since then, so that ages read the same. The server must accept every
    object: one it refuses is a fixture no cluster could hold."""
    taken = SnapshotReader.from_path(snapshot).now
    done = load(server.admin, shifted(objects_of(snapshot), datetime.now(UTC) - taken))
    try:
        assert done.rejected == [], "\n".join(done.rejected)
        yield
    finally:
        unload(server.admin, done)


def install_bot(server: Server) -> Path:
    """`kubectl apply -k deploy/overlays/http` as is, then a kubeconfig with a token of the bot's
    ServiceAccount from the TokenRequest API (what the kubelet mounts in its pod)."""
    done = load(server.admin, [dict(o) for o in render("http")])
    assert done.rejected == [], "\n".join(done.rejected)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 7200},
    }
    token = server.admin.call("POST", "/api/v1/namespaces/kubewhy/serviceaccounts/kubewhy/token", request)
    return server.kubeconfig("kubewhy", token["status"]["token"], context="kubewhy-sa")


@dataclass(frozen=True)
class Answers:
    """Each case's answer read directly and through the watch cache (with the sentinel's unscheduled
    pods), in the order asked."""

    direct: list[Diagnosis]
    cached: list[Diagnosis]


async def ask_everything(kubeconfig: Path, asked: Sequence[Case]) -> Answers:
    """Every question the bot asks of a snapshot, directly and through the cache at once."""
    direct, cached = await asyncio.gather(
        _ask(kubeconfig, asked, None), _ask(kubeconfig, asked, CacheOptions(pending=True))
    )
    return Answers(direct, cached)


async def _ask(kubeconfig: Path, asked: Sequence[Case], cache: CacheOptions | None) -> list[Diagnosis]:
    """Each case, the NotFound paths, the sentinel's restart counts and the readiness ping, read by
    one reader."""
    reader = LiveReader.from_kubeconfig(str(kubeconfig), None, 60.0, cache=cache)
    try:
        if reader.cache is not None:
            reader.cache.start()
            assert await reader.cache.wait_synced(60), reader.cache.state
        await reader.ping()
        await reader.jobset_restarts(sorted({case.namespace for case in asked}))
        answers = [await answer(reader, case) for case in asked]
        for case in asked:
            await reader.named(case.namespace, case.name)
        await ask_absent(reader, {case.namespace for case in asked})
    finally:
        await reader.aclose()
    return answers


AGE = re.compile(r"\b\d+(s|m|h|d)\b")


def said(diagnosis: Diagnosis) -> tuple[object, ...]:
    """The verdicts and the summary, its ages left out: a snapshot is read at the time it was taken, the
    server at the time of the test, and a pod deleted a minute before the snapshot was taken is deleted
    now when it is loaded (the server sets `deletionTimestamp` itself)."""
    return (diagnosis.verdict, diagnosis.pod_verdict, diagnosis.cause, AGE.sub("<age>", diagnosis.summary))


def fixed(diagnosis: Diagnosis) -> list[tuple[str, tuple[str, ...]]]:
    """Each fix and the nodes it is proven to open (ages left out, as in `said`)."""
    return [(AGE.sub("<age>", f.summary), f.opens) for f in diagnosis.fixes]


@dataclass(frozen=True, order=True)
class Access:
    """What the RBAC authorizer decided for one request of the bot."""

    verb: str
    group: str
    resource: str
    code: int


class Audit:
    """The bot's requests in the server's audit log, from a point on (`since`)."""

    def __init__(self, server: Server) -> None:
        self._path = server.audit_log

    def mark(self) -> int:
        return self._path.stat().st_size if self._path.exists() else 0

    def since(self, mark: int) -> list[Access]:
        with self._path.open("rb") as log:
            log.seek(mark)
            lines = log.read().splitlines()
        found = []
        for line in lines:
            event = json.loads(line)
            ref = event.get("objectRef")
            if (
                event.get("user", {}).get("username") != BOT
                or not ref
                or event.get("stage") != "ResponseComplete"
            ):
                continue
            resource = "/".join(filter(None, (ref.get("resource"), ref.get("subresource"))))
            found.append(
                Access(
                    event["verb"],
                    ref.get("apiGroup", ""),
                    resource,
                    event.get("responseStatus", {}).get("code", 0),
                )
            )
        return found
