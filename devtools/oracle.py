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
from devtools.corpus import Case, cases
from diagnosis.model import Fix, PodVerdict
from diagnosis.objects import kind, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify
from diagnosis.triage.resources import effective_requests

ENV = "SCHED_ORACLE"

DEVICE = "device"
"""no-gpu-node, allocatable-zero and exhausted: the scheduler's `Insufficient <device>` for all three."""

STEPS: tuple[str, ...] = (
    "label-mismatch",
    "taint",
    DEVICE,
    "node-resources",
    "host-port",
    "volume",
    "topology-spread",
    "pod-affinity",
)
"""kubewhy's funnel (DESIGN.md), with the three device steps as one."""

_WORDS = {"no-gpu-node": DEVICE, "allocatable-zero": DEVICE, "exhausted": DEVICE}

_PLUGINS = {
    "NodeName": "label-mismatch",
    "NodeAffinity": "label-mismatch",
    "NodeUnschedulable": "taint",
    "TaintToleration": "taint",
    "NodePorts": "host-port",
    "VolumeRestrictions": "volume",
    "NodeVolumeLimits": "volume",
    "VolumeBinding": "volume",
    "VolumeZone": "volume",
    "PodTopologySpread": "topology-spread",
    "InterPodAffinity": "pod-affinity",
    "DynamicResources": DEVICE,
}
"""kube-scheduler's Filter plugins (`apis/config/v1/default_plugins.go`) → the kubewhy step that
checks the same rule; NodeResourcesFit is split by resource (`_fit_step`)."""

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
        if self.oracle == NO_NODES:
            return self.expected in ("label-mismatch", "no-gpu-node")
        return _word(self.expected) == self.oracle


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
        if plugin == "NodeResourcesFit":
            found.update(_fit_step(str(r), devices) for r in failure.get("reasons") or ())
        else:
            found.add(_PLUGINS.get(plugin, f"unknown plugin {plugin}"))
    return found


def verdict(answer: Mapping[str, Any], devices: Mapping[str, int]) -> tuple[str, str]:
    """The funnel verdict the scheduler's answer implies, and a line on how it was reached."""
    prefilter = answer.get("prefilter") or {}
    if prefilter.get("code") not in (None, "Success", "Skip"):
        step = _PLUGINS.get(str(prefilter.get("plugin")), "node-resources")
        return step, f"PreFilter {prefilter.get('plugin')}: {'; '.join(prefilter.get('reasons') or ())}"
    if answer.get("feasible"):
        return "schedulable", f"feasible: {', '.join(answer['feasible'][:5])}"
    nodes: Mapping[str, Any] = answer.get("nodes") or {}
    if not nodes:
        return NO_NODES, "the snapshot has no node"
    dropped: dict[str, list[str]] = {}
    for node, result in sorted(nodes.items()):
        # `all_failing` runs each plugin on its own, without the nominated pods; the first failing
        # plugin's reasons include them (a node full only with them has no `all_failing`).
        failing = [*(result.get("all_failing") or ())]
        if result.get("plugin"):
            failing.append({"plugin": result["plugin"], "reasons": result.get("reasons")})
        steps = _steps(failing, devices)
        if _PREFILTER_RESULT in (result.get("reasons") or ()):
            steps.add("label-mismatch")
        known = [s for s in STEPS if s in steps]
        first = known[0] if known else ", ".join(sorted(steps)) or "no failing plugin"
        dropped.setdefault(first, []).append(f"{node} {result.get('reasons')}")
    last = max(dropped, key=lambda s: STEPS.index(s) if s in STEPS else len(STEPS))
    shown = "; ".join(f"{step}: {len(on)} ({on[0]})" for step, on in dropped.items())
    return last, shown


def check(binary: Path, case: Case) -> Outcome:
    """The case's expected verdict, kubewhy's, and the scheduler's."""
    view = asyncio.run(SnapshotReader.from_path(case.snapshot).triage_view(case.namespace, case.name))
    run = subprocess.run(
        [str(binary), "-all", str(case.snapshot), case.namespace, case.name],
        capture_output=True,
        text=True,
        check=False,
    )
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
    view = asyncio.run(SnapshotReader.from_path(case.snapshot).triage_view(case.namespace, case.name))
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
            run = subprocess.run(
                [str(binary), str(snapshot), case.namespace, case.name],
                capture_output=True,
                text=True,
                check=False,
            )
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
    args = parser.parse_args(argv)
    chosen = args.binary or os.environ.get(ENV, "")
    binary = Path(chosen) if chosen else None
    if binary is None or not binary.is_file():
        where = f"{binary} does not exist" if binary else f"no binary given and ${ENV} is not set"
        print(f"sched-oracle check skipped: {where}")
        return 0
    if args.fixes:
        return _fixes_main(binary, args.only)
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
