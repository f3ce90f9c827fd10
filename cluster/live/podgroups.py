"""The PodGroups a workload's pods name (`diagnosis.gang`): one LIST of its namespace's PodGroups per
API its pods use, kept to those named. An optional read: it only enriches the answer, and a cluster
without the PodGroup CRD has pods that name none."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cluster.live.source import Source, optional
from cluster.transport import Target
from diagnosis.gang import VERSIONS, api_of, named_by
from diagnosis.objects import Object, name, namespace


async def podgroups(source: Source, pods: Sequence[Object], notes: list[str]) -> tuple[Object, ...]:
    wanted = named_by(pods)
    scopes = sorted({(api, ns) for api, ns, _ in wanted})
    found = await asyncio.gather(
        *(
            optional(
                "PodGroups",
                source.api.items(Target("list", "podgroups", ns, api, version=VERSIONS[api])),
                notes,
            )
            for api, ns in scopes
        )
    )
    return tuple(g for listed in found for g in listed if (api_of(g), namespace(g), name(g)) in wanted)
