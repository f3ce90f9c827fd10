"""/triage NS POD: why is this accelerator pod not running?"""

from __future__ import annotations

import asyncio

from cluster.reader import Reader
from diagnosis.objects import Ref
from diagnosis.triage.classify import classify
from handlers.reply import Reply, Scope, noted


async def triage(reader: Reader, namespace: str, pod: str, scope: Scope) -> Reply:
    """Read what the pod's verdict needs and classify it. Names are validated by the caller; NotFound
    and ClusterError propagate for the caller to word.

    `classify` runs in a worker thread: on thousands of nodes it takes from tens of milliseconds to
    over a second, which on the event loop would hold up every other request (acks included).
    `scope` names the cluster in the reply and aims its kubectl commands at it."""
    view, prepared = await reader.triage_view(namespace, pod)
    classified = noted(await asyncio.to_thread(classify, view, prepared), view.notes)
    return Reply.of(Ref("pod", namespace, pod), classified, scope)
