"""kubewhy why NS [KIND/]NAME (and `/why`): a pod or workload by name, whatever its kind, answered by
the explainer of its kind.

The name is looked for among pods, JobSets, TrainJobs, LeaderWorkerSets, Jobs, Deployments and
StatefulSets of the namespace. An object whose controller is another of those found is left out: a
TrainJob's JobSet, a LeaderWorkerSet's leader StatefulSet bear its name, and the question is about the
owner. Two owners of one name are ambiguous: the person names the kind. A Job, Deployment or
StatefulSet is answered by triaging the pod that blocks it.
"""

from __future__ import annotations

from dataclasses import replace

from cluster.errors import Ambiguous, NotFound
from cluster.reader import Reader
from diagnosis.jobset.family import is_live
from diagnosis.lws.group import is_ready
from diagnosis.model import PodVerdict
from diagnosis.objects import Object, Ref, kind, mapping, meta, name, sequence, spec, text
from diagnosis.relations import node_name
from handlers import jobset, lws, triage
from handlers.reply import Reply, Scope


async def why(reader: Reader, namespace: str, name_: str, kind_: str | None, scope: Scope) -> Reply:
    """The answer about the object `name_` of the namespace (of kind `kind_`, a value of
    `cluster.reader.KIND_WORDS`, when given). Raises NotFound when nothing bears the name, Ambiguous
    when several owners do."""
    found = _owners([o for o in await reader.named(namespace, name_) if kind_ in (None, kind(o))])
    if not found:
        raise NotFound(kind_.lower() if kind_ else "pod or workload", namespace, name_)
    if len(found) > 1:
        raise Ambiguous(namespace, name_, tuple(f"{kind(o).lower()}/{name_}" for o in found))
    obj = found[0]
    match kind(obj):
        case "Pod":
            return await triage.triage(reader, namespace, name_, scope)
        case "JobSet" | "TrainJob":  # `/jobset why` explains a TrainJob, then its JobSet
            return await jobset.why(reader, namespace, name_, scope)
        case "LeaderWorkerSet":
            return await lws.why(reader, namespace, name_, scope)
    return await _through_pod(reader, obj, scope)


def _owners(objects: list[Object]) -> list[Object]:
    """The objects whose controller is not another of them."""
    named = {(kind(o), name(o)) for o in objects}

    def controlled(obj: Object) -> bool:
        refs = (mapping(r) for r in sequence(meta(obj).get("ownerReferences")))
        return any(
            r.get("controller") is True and (text(r.get("kind")), text(r.get("name"))) in named for r in refs
        )

    return [o for o in objects if not controlled(o)]


async def _through_pod(reader: Reader, workload: Object, scope: Scope) -> Reply:
    """A Job, Deployment or StatefulSet: the triage of the pod that blocks it (one not placed, else one
    not ready, else its first), said about the workload."""
    namespace, workload_kind = text(meta(workload).get("namespace")), kind(workload)
    selector = mapping(mapping(spec(workload).get("selector")).get("matchLabels"))
    pods = await reader.pods_matching(namespace, selector) if selector else ()
    live = sorted((p for p in pods if is_live(p)), key=lambda p: (bool(node_name(p)), is_ready(p), name(p)))
    if not live:
        raise NotFound(f"pod of {workload_kind.lower()}", namespace, name(workload))
    blocking = live[0]
    answer = await triage.triage(reader, namespace, name(blocking), scope)
    found = answer.diagnosis
    said = replace(
        found,
        summary=f"{workload_kind} {name(workload)}, pod {name(blocking)}: {found.summary}",
        pod_verdict=found.verdict if isinstance(found.verdict, PodVerdict) else None,
    )
    return Reply(Ref(workload_kind.lower(), namespace, name(workload)), said, answer.cluster)
