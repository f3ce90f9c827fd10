"""The random clusters that `python -m devtools.oracle --random` checks against kube-scheduler: each
seed gives one snapshot, every pod of it is classified without error, the funnel accounts for every
node once, and running pods are resized in place, which decides a node on some clusters. And how that
check reads the scheduler's answer, node by node."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from cluster.snapshot import SnapshotReader
from devtools.oracle import node_steps
from devtools.random_clusters import NAMESPACE, POD, scenario
from diagnosis.model import PodVerdict
from diagnosis.objects import condition, name, status
from diagnosis.triage.classify import classify, funnel_of
from diagnosis.triage.fit import pod_requests
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


def _spec_only(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod as if no resize were under way: no container status, no resize condition."""
    found = copy.deepcopy(pod)
    found["status"].pop("containerStatuses", None)
    found["status"]["conditions"] = [c for c in found["status"]["conditions"] if "Resize" not in c["type"]]
    return found


def _resized(seed: int) -> list[dict[str, Any]]:
    return [o for o in scenario(seed)["items"] if o["kind"] == "Pod" and "containerStatuses" in status(o)]


def test_running_pods_are_resized_in_place_both_ways() -> None:
    """Pods whose kubelet reports more cpu or memory than their spec asks (a shrink not applied yet,
    or an admitted growth) hold the more; after an infeasible resize they hold what the status says,
    less than the spec may ask."""
    resized = [p for seed in range(300) for p in _resized(seed)]
    held = [(pod_requests(_spec_only(p)), pod_requests(p)) for p in resized]
    assert any(condition(p, "PodResizeInProgress") for p in resized)
    assert any(condition(p, "PodResizePending") for p in resized)
    assert any(h.get("cpu", 0) > s.get("cpu", 0) for s, h in held)
    assert any(h.get("memory", 0) < s.get("memory", 0) for s, h in held)


def _nodes(objects: list[dict[str, Any]]) -> dict[str, str]:
    view, _ = asyncio.run(SnapshotReader(objects).triage_view(NAMESPACE, POD))
    stages = funnel_of(view).stages
    found = {name(n): "ok" for n in stages[-1].kept}
    found.update((name(d.node), str(s.step.verdict)) for s in stages for d in s.dropped)
    return found


@pytest.mark.parametrize("seed", [119, 653])
def test_a_resize_decides_a_node_of_some_clusters(seed: int) -> None:
    """These seeds' answers, node by node, change when their resizes are taken away: the clusters
    that `devtools.oracle --random` checks exercise the scheduler's rule for pods being resized."""
    objects = scenario(seed)["items"]
    unresized = [_spec_only(o) if o in _resized(seed) else o for o in objects]
    assert _nodes(objects) != _nodes(unresized)


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
