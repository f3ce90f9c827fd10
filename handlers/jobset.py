"""/jobset why: why is this JobSet stuck or restarting, or what does this pasted error mean?"""

from __future__ import annotations

import asyncio

from cluster.reader import Reader
from diagnosis.jobset import admission
from diagnosis.jobset.explain import explain
from diagnosis.objects import Ref
from diagnosis.trainjob.explain import explain as explain_trainjob
from handlers.reply import Reply, Scope, noted


async def why(reader: Reader, namespace: str, name: str, scope: Scope) -> Reply:
    """Read the JobSet with its Jobs, pods, events and nodes, and explain it; a TrainJob of that name is
    explained first by its own states, then by its JobSet's (`diagnosis.trainjob`). Names are
    validated by the caller; NotFound and ClusterError propagate for the caller to word.

    `explain` runs in a worker thread, as `classify` does for /triage (it triages the blocking pod
    over every candidate node), so a large JobSet never stalls the event loop. `scope` names the
    cluster in the reply and aims its kubectl commands at it."""
    trainjob = await reader.trainjob_view(namespace, name)
    if trainjob is not None:
        said = await asyncio.to_thread(explain_trainjob, trainjob)
        notes = (*trainjob.notes, *(trainjob.jobset.notes if trainjob.jobset else ()))
        return Reply.of(Ref("trainjob", namespace, name), noted(said, notes), scope)
    view = await reader.jobset_view(namespace, name)
    explained = noted(await asyncio.to_thread(explain, view), view.notes)
    return Reply.of(Ref("jobset", namespace, name), explained, scope)


def explain_message(text: str) -> Reply:
    """Explain a pasted admission error offline: no object is read, so the reply has no target. Kept
    on the caller's thread: it reads one message (Slack caps a command's text at a few kilobytes)."""
    return Reply(None, admission.explain_message(text))
