"""`/jobset why`'s reads when the name is a TrainJob's: the TrainJob, its runtime, its events and Kueue
Workloads, the PodGroup its runtime's gang policy makes, and its JobSet as `/jobset why` reads it."""

from __future__ import annotations

import asyncio

from cluster.errors import NotFound
from cluster.live.jobsets import JobSetReads
from cluster.live.readers import Readers
from cluster.live.source import about, now, optional
from cluster.transport import Target
from diagnosis.gang import VERSIONS
from diagnosis.relations import owned_by
from diagnosis.trainjob.explain import gang_group, runtime_ref
from diagnosis.views import JobSetView, TrainJobView

TRAINER, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"


class TrainJobReads:
    def __init__(self, readers: Readers, jobsets: JobSetReads) -> None:
        self._read = readers
        self._jobsets = jobsets

    async def view(self, namespace: str, name: str) -> TrainJobView | None:
        source = self._read.source
        try:
            got = await source.api.get(
                Target("get", "trainjobs", namespace, TRAINER, name, "trainjob", TRAINER_VERSION)
            )
        except NotFound:  # no such TrainJob, or no Trainer
            return None
        trainjob = got.body
        notes: list[str] = []
        kind, runtime_name = runtime_ref(trainjob)
        scope = namespace if kind == "TrainingRuntime" else None
        resource = "trainingruntimes" if scope else "clustertrainingruntimes"
        runtime, in_namespace, workloads, jobset = await asyncio.gather(
            source.get_or_none(
                Target("get", resource, scope, TRAINER, runtime_name, kind.lower(), TRAINER_VERSION)
            ),
            optional("events", self._read.around.namespace_events(namespace), notes),
            optional("Kueue workloads", self._read.queues.workloads(namespace), notes),
            self._jobset(namespace, name),
        )
        group = gang_group(runtime)
        podgroup = (
            await source.get_or_none(
                Target("get", "podgroups", namespace, group, name, "podgroup", VERSIONS[group])
            )
            if group
            else None
        )
        return TrainJobView(
            trainjob=trainjob,
            runtime=runtime,
            events=about(in_namespace, trainjob),
            podgroups=(podgroup,) if podgroup is not None else (),
            workloads=tuple(w for w in workloads if owned_by(w, trainjob)),
            jobset=jobset,
            now=now(got),
            notes=tuple(notes),
        )

    async def _jobset(self, namespace: str, name: str) -> JobSetView | None:
        try:
            return await self._jobsets.view(namespace, name)
        except NotFound as missing:
            if (missing.kind, missing.name) == ("jobset", name):
                return None
            raise
