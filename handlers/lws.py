"""kubewhy lws why: why is this LeaderWorkerSet not serving?"""

from __future__ import annotations

import asyncio

from cluster.reader import Reader
from diagnosis.lws.explain import explain
from diagnosis.objects import Ref
from handlers.reply import Reply, Scope, noted


async def why(reader: Reader, namespace: str, name: str, scope: Scope) -> Reply:
    """Read the LeaderWorkerSet with its StatefulSets, pods, events and nodes, and explain it in a
    worker thread (it triages the blocking pod over every candidate node), as `/jobset why` does."""
    view = await reader.lws_view(namespace, name)
    explained = noted(await asyncio.to_thread(explain, view), view.notes)
    return Reply.of(Ref("leaderworkerset", namespace, name), explained, scope)
