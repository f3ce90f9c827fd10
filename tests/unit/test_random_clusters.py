"""The random clusters that `python -m devtools.oracle --random` checks against kube-scheduler: each
seed gives one snapshot, every pod of it is classified without error, and the funnel accounts for
every node once. And how that check reads the scheduler's answer, node by node."""

from __future__ import annotations

import asyncio

import pytest

from cluster.snapshot import SnapshotReader
from devtools.oracle import node_steps
from devtools.random_clusters import NAMESPACE, POD, scenario
from diagnosis.model import PodVerdict
from diagnosis.objects import name
from diagnosis.triage.classify import classify, funnel_of
from diagnosis.triage.funnel import candidates
from diagnosis.triage.runner import reaches_funnel


def test_a_seed_gives_one_cluster() -> None:
    assert scenario(7) == scenario(7)
    assert scenario(7) != scenario(8)


@pytest.mark.parametrize("seed", range(0, 300, 30))
def test_every_node_is_kept_or_dropped_once(seed: int) -> None:
    for offset in range(30):
        objects = scenario(seed + offset)["items"]
        view, _ = asyncio.run(SnapshotReader(objects).triage_view(NAMESPACE, POD))
        assert isinstance(classify(view).verdict, PodVerdict)
        if not reaches_funnel(view.pod):
            continue
        stages = funnel_of(view).stages
        seen = [name(d.node) for s in stages for d in s.dropped] + [name(n) for n in stages[-1].kept]
        assert sorted(seen) == sorted(name(n) for n in candidates(view.nodes))


def test_the_scheduler_is_read_node_by_node_in_kubewhys_order() -> None:
    """Per node, the first kubewhy step among the plugins that refuse it. `all_failing` runs each plugin
    alone; the plugins the scheduler ran before the first that refused the node passed there."""
    answer = {
        "nodes": {
            "a": {"ok": True},
            "b": {
                "plugin": "InterPodAffinity",
                "reasons": ["node(s) didn't match pod affinity rules"],
                "all_failing": [
                    {"plugin": "VolumeBinding", "reasons": ["node(s) had volume node affinity conflict"]},
                    {"plugin": "InterPodAffinity", "reasons": ["node(s) didn't match pod affinity rules"]},
                ],
            },
            "c": {
                "plugin": "NodePorts",
                "reasons": ["node(s) didn't have free ports for the requested pod ports"],
                "all_failing": [{"plugin": "NodeResourcesFit", "reasons": ["Insufficient nvidia.com/gpu"]}],
            },
            "d": {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]},
        }
    }
    assert node_steps(answer, {"nvidia.com/gpu": 1}) == {
        "a": "schedulable",
        "b": "pod-affinity",
        "c": "device",
        "d": "node-resources",
    }
