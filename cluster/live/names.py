"""`kubewhy why NAMESPACE NAME`'s reads: which objects bear a name, and the pods a workload selects."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from cluster.live.source import Source
from cluster.transport import Target
from diagnosis.objects import Object

_NAMED = (
    ("pods", "", "v1", "pod"),
    ("jobsets", "jobset.x-k8s.io", "v1alpha2", "jobset"),
    ("trainjobs", "trainer.kubeflow.org", "v1alpha1", "trainjob"),
    ("leaderworkersets", "leaderworkerset.x-k8s.io", "v1", "leaderworkerset"),
    ("jobs", "batch", "v1", "job"),
    ("deployments", "apps", "v1", "deployment"),
    ("statefulsets", "apps", "v1", "statefulset"),
)
"""`cluster.reader.NAMED_KINDS` as the API serves them: (resource, group, version, noun)."""


class NameReads:
    def __init__(self, source: Source) -> None:
        self._source = source

    async def named(self, namespace: str, name: str) -> tuple[Object, ...]:
        """One GET per kind, at once; a 404 (no such object, or no such API: JobSet, Trainer or LWS
        not installed) is none."""
        found = await asyncio.gather(
            *(
                self._source.get_or_none(Target("get", resource, namespace, group, name, noun, version))
                for resource, group, version, noun in _NAMED
            )
        )
        return tuple(o for o in found if o is not None)

    async def pods_matching(self, namespace: str, selector: Mapping[str, str]) -> tuple[Object, ...]:
        labels = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return tuple(await self._source.api.items(Target("list", "pods", namespace), labelSelector=labels))
