"""When the object asked about is not there: a 404 believed only from a Kubernetes API, and the
closest names and refused creations that tell the person what to ask instead."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from cluster.errors import ClusterError, Missing, NotFound
from cluster.live.source import Source, optional, unwrap
from cluster.transport import Target
from diagnosis.missing import creation_rejections, similar_names
from diagnosis.objects import Object

V = TypeVar("V")


async def believed(source: Source, read: Awaitable[V], kind: str, namespace: str, name: str) -> V:
    """`read`, where only the object asked about may be missing: a 404 on any other read (a list
    of pods, of nodes) says the server is not the Kubernetes API it was (a wrong path prefix, a
    proxy), or serves an API kubewhy does not know — the cluster cannot be read."""
    try:
        return await read
    except NotFound as err:
        if (err.kind, err.namespace, err.name) == (kind, namespace, name):
            raise
        await source.ping()  # Unavailable when the URL does not serve the Kubernetes API at all
        raise ClusterError(
            f"the Kubernetes API at {source.api.server} answered 404 for {err.kind}"
            f"{f' in namespace {err.namespace}' if err.namespace else ''}",
            "check that the server URL of the kubeconfig reaches the API server directly",
        ) from err


async def not_found(
    source: Source,
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
        source.ping(), optional("names", names, ignored), return_exceptions=True
    )
    unwrap(served)
    if warnings is None:
        read: list[dict[str, Any]] = await optional(
            "events",
            source.api.items(Target("list", "events", namespace), fieldSelector="type=Warning"),
            ignored,
        )
        warnings = read
    names_there = unwrap(existing)
    return NotFound(
        kind,
        namespace,
        name,
        Missing(
            similar_names(name, names_there),
            creation_rejections(warnings, namespace),
            None if names_there else await _namespaces_instead(source, namespace),
        ),
    )


async def _namespaces_instead(source: Source, namespace: str) -> tuple[str, ...] | None:
    """When nothing of the kind is in the namespace: None if the namespace exists (or cannot be
    read), else the existing namespaces closest to its name."""
    try:
        await source.api.get(Target("get", "namespaces", name=namespace, kind="namespace"))
    except NotFound:
        ignored: list[str] = []
        return similar_names(
            namespace, await optional("namespaces", source.api.names(Target("list", "namespaces")), ignored)
        )
    except ClusterError:
        return None
    return None
