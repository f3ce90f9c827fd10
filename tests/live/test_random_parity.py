"""Random small GPU clusters (`devtools.random_clusters`) read live, directly (listing every pod,
`--all-pods`) and through the cache, answer as their snapshot does (the verdict: a live reader may list
only the nodes the nodeSelector picks, and its answer says so), and the cache answers as the direct
reads do, whole."""

from __future__ import annotations

import pytest

from cluster.snapshot import SnapshotReader
from devtools.apisim import serve
from devtools.random_clusters import NAMESPACE, POD, scenario
from diagnosis.triage.classify import classify
from tests.live.support import cached_reader, live_reader

SEEDS = range(100)


@pytest.mark.parametrize("seed", SEEDS)
async def test_a_random_cluster_is_answered_live_as_from_its_snapshot(seed: int) -> None:
    objects = scenario(seed)["items"]
    expected = classify(*await SnapshotReader(objects).triage_view(NAMESPACE, POD))
    with serve(objects) as sim:
        async with live_reader(sim, all_pods=True) as direct, cached_reader(sim) as cached:
            live = classify(*await direct.triage_view(NAMESPACE, POD))
            through_cache = classify(*await cached.triage_view(NAMESPACE, POD))
    assert live.verdict == expected.verdict
    assert through_cache == live
