"""`kubewhy snapshot`'s files against a real kube-apiserver 1.34: what each corpus question reads
(a pod's, a JobSet's, a LeaderWorkerSet's, a TrainJob's),
captured (from the API simulator, `tests/live/test_capture.py`), loaded into a fresh server, asked
live as the bot asks: the same answer as from the captured file. Beside the captured objects the
server is given the snapshot's PriorityClasses and RuntimeClasses, which its admission needs to
accept the pods and kubewhy never reads."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path

import pytest

from cluster import capture
from cluster.live import LiveReader
from cluster.snapshot import SnapshotReader
from devtools.apisim import serve
from devtools.corpus import Case, answer
from devtools.kubereal import Server, objects_of
from diagnosis.model import Diagnosis
from diagnosis.objects import kind
from tests.real.support import by_snapshot, loaded, said

pytestmark = [pytest.mark.real, pytest.mark.timeout(1800)]

ADMISSION_NEEDS = frozenset({"PriorityClass", "RuntimeClass"})


ONE_OF_EACH = (
    "gpu-lab",  # nodes, pods, events: the device funnel
    "gpu-dra",  # ResourceClaims, templates, DeviceClasses, ResourceSlices
    "gke-pvc-bound-other-zone",  # PVCs, PVs, StorageClasses
    "gke-spread-zones-l4",  # peers selected for spread and affinity
    "kueue-gated",  # Kueue Workloads and LocalQueues
    "leader-pending-exclusive-tpu",  # a JobSet, its Jobs and exclusive placement
    "restarting-node-failure",  # a terminating pod, a failed Job
    "restarting-worker-crash",  # a LeaderWorkerSet, its StatefulSets and group recreations
    "gang-min-resources",  # a TrainJob, its runtime, PodGroup and JobSet
)
"""The captures loaded into the real server: one snapshot of each kind of object a capture holds
(the API simulator tier checks every corpus case's capture, `tests/live/test_capture.py`); loading
all of them would double the tier's time."""
SNAPSHOTS = {s: asked for s, asked in by_snapshot().items() if s.stem in ONE_OF_EACH}


async def _captured(snapshot: Path, asked: list[Case]) -> dict[str, object]:
    """Every case's capture from the simulator serving the snapshot, as one List (each object once)."""
    items: dict[tuple[str, str, str, str], dict[str, object]] = {}
    with serve(snapshot) as sim:
        for case in asked:
            reader = LiveReader.from_kubeconfig(sim.kubeconfig, None)
            try:
                taken = await capture.of(reader, partial(answer, reader, case))
            finally:
                await reader.aclose()
            for obj in taken["items"]:
                meta = obj["metadata"]
                items[(obj["kind"], obj["apiVersion"], meta.get("namespace", ""), meta["name"])] = obj
    needed = [o for o in objects_of(snapshot) if kind(o) in ADMISSION_NEEDS]
    return {"apiVersion": "v1", "kind": "List", "items": [*items.values(), *needed]}


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.stem)
def test_a_captured_file_loaded_answers_as_the_file(
    snapshot: Path, server: Server, bot: Path, tmp_path: Path
) -> None:
    asked = SNAPSHOTS[snapshot]
    path = tmp_path / "captured.json"
    path.write_text(json.dumps(asyncio.run(_captured(snapshot, asked))))
    offline = SnapshotReader.from_path(path)
    with loaded(server, path):
        live = asyncio.run(_ask(bot, asked))
    for case, got in zip(asked, live, strict=True):
        assert said(got) == said(asyncio.run(answer(offline, case))), case.id


async def _ask(kubeconfig: Path, asked: list[Case]) -> list[Diagnosis]:
    reader = LiveReader.from_kubeconfig(str(kubeconfig), None, 60.0)
    try:
        return [await answer(reader, case) for case in asked]
    finally:
        await reader.aclose()
