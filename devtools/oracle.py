"""Check the triage corpus against the real kube-scheduler: `python -m devtools.oracle [BINARY]`.

`sched-oracle` is a development binary (not shipped, not on users' machines, not needed by
`make test`) that runs kube-scheduler's own PreFilter and Filter plugins on a snapshot file for one
pending pod and prints, with `-all`, every Filter plugin that fails on each node. That is enough to
rebuild kubewhy's funnel, whose order differs from the scheduler's: each node is dropped at the first
kubewhy step among the plugins that fail on it, and the verdict is the step that drops the last node
(`schedulable` when some node passes every plugin).

The binary is taken from the argument, else from `$SCHED_ORACLE`; without either the check says so
and exits 0. For every triage case whose verdict the scheduler decides (a funnel step or
`schedulable`) it prints the case, kubewhy's expected verdict and the scheduler's, and exits 1 when
any disagree. The scheduler's `Insufficient <device>` cannot tell no-gpu-node, allocatable-zero and
exhausted apart (facts: it reads the same for all three), so these agree with one another.

With `--fixes` it checks the fixes instead: for every triage case, each fix whose change is in the pod
(`pod_patch`) or ends pods is made on a copy of the snapshot (for a pod waiting on its preemption
victims, its nominatedNodeName dropped too: the scheduler's next attempt runs every filter), and the
nodes the scheduler then finds feasible must be the fix's `opens`. Fixes that patch nodes, those whose
effect cannot be shown, and those of a pod whose ResourceClaim the binary does not read (a shape its
build does not serve) are counted as not checked.

With `--random N` it checks N random clusters (`devtools.random_clusters`, from `--seed` on) node by
node instead. The binary's answer for a node names the first plugin that refuses it, run with the pods
nominated to it, and `all_failing` the others, each run alone without them: so a plugin the scheduler
ran before the first refusal passed, and on a node that pods are nominated to, a kubewhy step earlier
than the scheduler's is not judged. A PreFilter refusal stops the scheduler before any node; kubewhy's
fixed order may then name an earlier step, never a later one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster.snapshot import SnapshotReader, load_objects
from devtools import random_clusters
from devtools.corpus import Case, cases
from diagnosis.model import Fix, PodVerdict
from diagnosis.objects import kind, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.relations import nominated_node
from diagnosis.triage.classify import FUNNEL, classify, funnel_of
from diagnosis.triage.resources import effective_requests

ENV = "SCHED_ORACLE"

DEVICE = "device"
"""no-gpu-node, allocatable-zero and exhausted: the scheduler's `Insufficient <device>` for all three."""

_WORDS = {"no-gpu-node": DEVICE, "allocatable-zero": DEVICE, "exhausted": DEVICE}

STEPS: tuple[str, ...] = tuple(dict.fromkeys(_WORDS.get(s.verdict.value, s.verdict.value) for s in FUNNEL))
"""kubewhy's funnel (`diagnosis.triage.classify.FUNNEL`), with the three device steps as one."""

FIT = "NodeResourcesFit"
"""Split by resource (`_fit_step`): a device step's, or node-resources'."""

_PLUGINS = {p: _WORDS.get(s.verdict.value, s.verdict.value) for s in FUNNEL for p in s.plugins if p != FIT}
"""kube-scheduler's Filter plugins (`apis/config/v1/default_plugins.go`) → the kubewhy step that
checks the same rule (`Step.plugins`)."""

_ORDER = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
)
"""The order the scheduler runs them in, stopping at the first that refuses a node."""

_PREFILTER_RESULT = "node not in PreFilterResult.NodeNames"
"""A node left out by a PreFilter's node list: in the default profile, NodeAffinity's required
`matchFields: metadata.name` (kubewhy's label-mismatch checks the same field)."""

NO_NODES = "no nodes"
"""A cluster without nodes: kubewhy says label-mismatch for a pod that selects labels, else no-gpu-node
(both agree with the scheduler's `no nodes available to schedule pods`)."""

DECIDED = frozenset({*STEPS, *_WORDS, "schedulable"})
"""The verdicts the scheduler's filters decide; the others (no-request, ok, gated, preempting, claim)
are read from the pod before any node is looked at."""


@dataclass(frozen=True)
class Outcome:
    case: Case
    expected: str
    kubewhy: str
    oracle: str
    detail: str

    @property
    def agrees(self) -> bool:
        return _agree(self.expected, self.oracle)


def _agree(kubewhy: str, oracle: str) -> bool:
    if oracle == NO_NODES:
        return kubewhy in ("label-mismatch", "no-gpu-node")
    return _word(kubewhy) == oracle


def _word(verdict: str) -> str:
    return _WORDS.get(verdict, verdict)


def _fit_step(reason: str, devices: Mapping[str, int]) -> str:
    """NodeResourcesFit's reason: `Insufficient <a device the pod asks>` is a device step; any other
    resource, and `Too many pods`, is node-resources."""
    prefix = "Insufficient "
    if reason.startswith(prefix) and reason[len(prefix):] in devices:
        return DEVICE
    return "node-resources"


def _steps(failing: Sequence[Mapping[str, Any]], devices: Mapping[str, int]) -> set[str]:
    found: set[str] = set()
    for failure in failing:
        plugin = str(failure.get("plugin", ""))
        if plugin == FIT:
            found.update(_fit_step(str(r), devices) for r in failure.get("reasons") or ())
        else:
            found.add(_PLUGINS.get(plugin, f"unknown plugin {plugin}"))
    return found


def _prefiltered(answer: Mapping[str, Any]) -> str:
    """The step of a PreFilter that refused the pod before any node was filtered, or ""."""
    prefilter = answer.get("prefilter") or {}
    if prefilter.get("code") in (None, "Success", "Skip"):
        return ""
    return _PLUGINS.get(str(prefilter.get("plugin")), "node-resources")


def node_steps(answer: Mapping[str, Any], devices: Mapping[str, int]) -> dict[str, str]:
    """Per node the scheduler filtered: the first kubewhy step among the plugins that refuse it, or
    `schedulable` when none does."""
    found = {}
    for node, result in sorted((answer.get("nodes") or {}).items()):
        if result.get("ok"):
            found[node] = "schedulable"
            continue
        # `all_failing` runs each plugin on its own, without the nominated pods; the first failing
        # plugin's reasons include them (a node full only with them has no `all_failing`). The
        # plugins the scheduler ran before that one passed.
        first = str(result.get("plugin", ""))
        ran = _ORDER[: _ORDER.index(first)] if first in _ORDER else ()
        failing = [f for f in result.get("all_failing") or () if f.get("plugin") not in ran]
        if first:
            failing.append({"plugin": first, "reasons": result.get("reasons")})
        steps = _steps(failing, devices)
        if _PREFILTER_RESULT in (result.get("reasons") or ()):
            steps.add("label-mismatch")
        known = [s for s in STEPS if s in steps]
        found[node] = known[0] if known else ", ".join(sorted(steps)) or "schedulable"
    return found


def verdict(answer: Mapping[str, Any], devices: Mapping[str, int]) -> tuple[str, str]:
    """The funnel verdict the scheduler's answer implies, and a line on how it was reached."""
    if step := _prefiltered(answer):
        prefilter = answer["prefilter"]
        return step, f"PreFilter {prefilter.get('plugin')}: {'; '.join(prefilter.get('reasons') or ())}"
    if answer.get("feasible"):
        return "schedulable", f"feasible: {', '.join(answer['feasible'][:5])}"
    nodes: Mapping[str, Any] = answer.get("nodes") or {}
    if not nodes:
        return NO_NODES, "the snapshot has no node"
    dropped: dict[str, list[str]] = {}
    for node, first in node_steps(answer, devices).items():
        dropped.setdefault(first, []).append(f"{node} {nodes[node].get('reasons')}")
    last = max(dropped, key=lambda s: STEPS.index(s) if s in STEPS else len(STEPS))
    shown = "; ".join(f"{step}: {len(on)} ({on[0]})" for step, on in dropped.items())
    return last, shown


def _scheduler(
    binary: Path, snapshot: Path, namespace: str, pod: str, every: bool = True
) -> subprocess.CompletedProcess[str]:
    """The binary run on the snapshot for the pod; `every`: with `-all` (every failing plugin)."""
    flags = ["-all"] if every else []
    return subprocess.run(
        [str(binary), *flags, str(snapshot), namespace, pod], capture_output=True, text=True, check=False
    )


def check(binary: Path, case: Case) -> Outcome:
    """The case's expected verdict, kubewhy's, and the scheduler's."""
    view, _ = asyncio.run(SnapshotReader.from_path(case.snapshot).triage_view(case.namespace, case.name))
    run = _scheduler(binary, case.snapshot, case.namespace, case.name)
    kubewhy = str(classify(view).verdict)
    if run.returncode != 0:
        return Outcome(case, case.verdict, kubewhy, "error", (run.stderr or run.stdout).strip()[:300])
    oracle, detail = verdict(json.loads(run.stdout), effective_requests(view.pod))
    return Outcome(case, case.verdict, kubewhy, oracle, detail)


@dataclass(frozen=True)
class FixOutcome:
    case: Case
    fix: Fix
    feasible: tuple[str, ...] | None
    """The nodes the scheduler finds feasible once the fix is made; None when it was not checked."""

    @property
    def agrees(self) -> bool:
        return self.feasible is None or self.feasible == tuple(sorted(self.fix.opens))


def check_fixes(binary: Path, case: Case) -> list[FixOutcome]:
    """Each fix of the case's answer made on a copy of the snapshot, and what the scheduler says then."""
    view, _ = asyncio.run(SnapshotReader.from_path(case.snapshot).triage_view(case.namespace, case.name))
    answer = classify(view)
    found = []
    for fix in answer.fixes:
        if not fix.opens or not all(o.startswith("pod/") for o in fix.objects):
            found.append(FixOutcome(case, fix, None))
            continue
        gone: set[tuple[str, ...]] = {tuple(o.split("/")[1:]) for o in fix.objects}
        changed = []
        for obj in load_objects(case.snapshot):
            key = (namespace(obj), name(obj))
            if kind(obj) == "Pod" and key in gone:
                continue
            if kind(obj) == "ResourceClaim" and _freed(obj, gone):
                # The resourceclaim controller deletes a claim made for an ended pod, and
                # deallocates another that no pod reserves any more.
                if _made_for_pod(obj):
                    continue
                obj = merge_patch(obj, {"status": {"allocation": None, "reservedFor": None}})
            if kind(obj) == "Pod" and key == (case.namespace, case.name):
                obj = merge_patch(obj, fix.pod_patch) if fix.pod_patch is not None else obj
                if answer.verdict == PodVerdict.PREEMPTING:
                    obj = merge_patch(obj, {"status": {"nominatedNodeName": None}})
            changed.append(obj)
        with tempfile.TemporaryDirectory() as folder:
            snapshot = Path(folder) / "changed.json"
            snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": changed}))
            run = _scheduler(binary, snapshot, case.namespace, case.name, every=False)
        said = json.loads(run.stdout) if run.returncode == 0 else {"feasible": ["(error)"]}
        if _unread(said, changed):
            found.append(FixOutcome(case, fix, None))
            continue
        found.append(FixOutcome(case, fix, tuple(sorted(said.get("feasible") or []))))
    return found


_NOT_FOUND = re.compile(r'could not find ResourceClaim "([^"/]+)/([^"]+)"')


def _unread(said: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> bool:
    """The binary did not find a ResourceClaim the snapshot holds (it reads the served versions it was
    built with, not every shape kubewhy reads): it cannot judge that fix."""
    reasons = said.get("prefilter", {}).get("reasons") or []
    claims = {(namespace(o), name(o)) for o in objects if kind(o) == "ResourceClaim"}
    return any((m := _NOT_FOUND.search(r)) and (m[1], m[2]) in claims for r in reasons)


def _freed(claim: Mapping[str, Any], gone: set[tuple[str, ...]]) -> bool:
    """A ResourceClaim reserved only for pods that are gone."""
    users = [(namespace(claim), str(r.get("name"))) for r in claim.get("status", {}).get("reservedFor", [])]
    return bool(users) and all(u in gone for u in users)


def _made_for_pod(claim: Mapping[str, Any]) -> bool:
    owners = claim.get("metadata", {}).get("ownerReferences", [])
    return any(o.get("controller") is True and o.get("kind") == "Pod" for o in owners)


@dataclass(frozen=True)
class RandomOutcome:
    """One random cluster (`devtools.random_clusters`): kubewhy's verdict and the scheduler's, and the
    nodes where kubewhy's step and the scheduler's differ (node → (kubewhy's, the scheduler's))."""

    seed: int
    kubewhy: str
    oracle: str
    same_verdict: bool
    """The verdicts agree, or the answers are compared node by node."""
    nodes: Mapping[str, tuple[str, str]]

    @property
    def agrees(self) -> bool:
        return self.same_verdict and not self.nodes


def check_random(binary: Path, seed: int, folder: Path) -> RandomOutcome | None:
    """The random cluster of this seed, classified and filtered; None when its pod never reaches the
    nodes (no request, gated, a claim problem...), which the scheduler's filters do not decide."""
    snapshot = folder / f"random-{seed}.json"
    objects = random_clusters.scenario(seed)
    snapshot.write_text(json.dumps(objects))
    reader = SnapshotReader.from_path(snapshot)
    view, _ = asyncio.run(reader.triage_view(random_clusters.NAMESPACE, random_clusters.POD))
    kubewhy = str(classify(view).verdict)
    if kubewhy not in DECIDED:
        return None
    run = _scheduler(binary, snapshot, random_clusters.NAMESPACE, random_clusters.POD)
    if run.returncode != 0:
        return RandomOutcome(seed, kubewhy, f"error: {run.stderr.strip()[:300]}", False, {})
    said = json.loads(run.stdout)
    devices = effective_requests(view.pod)
    oracle, _ = verdict(said, devices)
    if _prefiltered(said):
        # The scheduler stops before it filters any node: kubewhy's fixed order may name an earlier
        # step, never a later one.
        earlier = _word(kubewhy) == oracle or _before(_word(kubewhy), oracle)
        return RandomOutcome(seed, kubewhy, oracle, earlier, {})
    ours = {name(node): "schedulable" for node in view.nodes}
    for stage in funnel_of(view).stages:
        ours.update((name(drop.node), _word(str(stage.step.verdict))) for drop in stage.dropped)
    # A node that pods are nominated to: the scheduler's answer names the first plugin that refuses it
    # with them; the later plugins did not run with them, so an earlier kubewhy step is not judged.
    nominated = {nominated_node(p) for p in view.nominated_pods}
    differ = {
        node: (mine, theirs)
        for node, theirs in node_steps(said, devices).items()
        if (mine := ours.get(node, "schedulable")) != theirs
        and not (node in nominated and _before(mine, theirs))
    }
    # Node by node is the whole answer when the scheduler filtered nodes (the verdict is the step that
    # drops the last); a cluster without nodes has the verdict alone.
    same = bool(said.get("nodes")) or _agree(kubewhy, oracle)
    return RandomOutcome(seed, kubewhy, oracle, same, differ)


def _before(step: str, other: str) -> bool:
    return step in STEPS and other in STEPS and STEPS.index(step) < STEPS.index(other)


def _random_main(binary: Path, count: int, first: int) -> int:
    judged, disagree = 0, 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(first, first + count):
            outcome = check_random(binary, seed, Path(folder))
            if outcome is None:
                continue
            judged += 1
            if outcome.agrees:
                continue
            disagree += 1
            print(f"DIFF seed {seed}: kubewhy {outcome.kubewhy}, scheduler {outcome.oracle}")
            for node, (mine, theirs) in outcome.nodes.items():
                print(f"       {node}: kubewhy {mine}, scheduler {theirs}")
    print(
        f"{count} random clusters (seeds {first}–{first + count - 1}): {judged} the scheduler decides, "
        f"{disagree} disagreement{'s' * (disagree != 1)}; `python -m devtools.random_clusters SEED` "
        "prints a seed's snapshot"
    )
    return 1 if disagree else 0


def _fixes_main(binary: Path, only: str) -> int:
    outcomes = [o for c in cases("triage") if only in c.id for o in check_fixes(binary, c)]
    for outcome in outcomes:
        if outcome.feasible is None:
            continue
        mark = "ok  " if outcome.agrees else "DIFF"
        print(f"{mark} {outcome.case.id}: {outcome.fix.summary}")
        if not outcome.agrees:
            feasible = ", ".join(outcome.feasible or ())
            print(f"       opens {', '.join(outcome.fix.opens)}; scheduler {feasible}")
    checked = [o for o in outcomes if o.feasible is not None]
    disagree = sum(not o.agrees for o in checked)
    print(
        f"{len(checked)} fixes checked, {len(outcomes) - len(checked)} not checked (node patches, not "
        f"shown, or claims the binary does not read), {disagree} disagreement{'s' * (disagree != 1)}"
    )
    return 1 if disagree else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.oracle", description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", help=f"the sched-oracle binary (default: ${ENV})")
    parser.add_argument("-k", dest="only", default="", help="only cases whose id contains this text")
    parser.add_argument("--fixes", action="store_true", help="check each case's fixes instead of its verdict")
    parser.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="check N random clusters (devtools.random_clusters), node by node, instead of the corpus",
    )
    parser.add_argument("--seed", type=int, default=0, help="the first random cluster's seed")
    args = parser.parse_args(argv)
    chosen = args.binary or os.environ.get(ENV, "")
    binary = Path(chosen) if chosen else None
    if binary is None or not binary.is_file():
        where = f"{binary} does not exist" if binary else f"no binary given and ${ENV} is not set"
        print(f"sched-oracle check skipped: {where}")
        return 0
    if args.fixes:
        return _fixes_main(binary, args.only)
    if args.random:
        return _random_main(binary, args.random, args.seed)
    decided = [c for c in cases("triage") if c.verdict in DECIDED and args.only in c.id]
    outcomes = [check(binary, c) for c in decided]
    for outcome in outcomes:
        mark = "ok  " if outcome.agrees else "DIFF"
        drift = "" if outcome.kubewhy == outcome.expected else f" (kubewhy now says {outcome.kubewhy})"
        print(f"{mark} {outcome.case.id}: expected {outcome.expected}{drift}, scheduler {outcome.oracle}")
        if not outcome.agrees:
            print(f"       {outcome.detail}")
    disagree = sum(not o.agrees for o in outcomes)
    print(f"{len(outcomes)} cases the scheduler decides, {disagree} disagreement{'s' * (disagree != 1)}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
