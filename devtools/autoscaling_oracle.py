"""Check kubewhy's node-group template check against the real kube-scheduler:
`python -m devtools.autoscaling_oracle [BINARY]` (the binary as `devtools.oracle` takes it, else
`$SCHED_ORACLE`; without either it says so and exits 0).

For every triage case with an expected `autoscaling` state, each node group's template node
(`diagnosis.autoscaling.groups.templates`: a node of the group without its pods, or a Karpenter
NodePool's template) is written alone with the pod (its gates and nomination dropped) to a snapshot,
and the scheduler's Filter plugins must find the node feasible exactly when kubewhy says a new node
of the group fits. Groups kubewhy does not check (DRA pods) are counted apart. Exit 1 on any
disagreement.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from cluster.snapshot import SnapshotReader
from devtools.corpus import cases
from diagnosis.autoscaling import groups
from diagnosis.objects import Object, name, namespace


def feasible(binary: Path, folder: Path, pod: Object, node: Object) -> bool:
    """Whether the scheduler finds the node feasible for the pod, the two alone in a snapshot."""
    snapshot = folder / "template.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, pod]}))
    command = [str(binary), str(snapshot), namespace(pod), name(pod)]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError((run.stderr or run.stdout).strip()[:300])
    return bool(json.loads(run.stdout).get("feasible"))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    where = args[0] if args else os.environ.get("SCHED_ORACLE", "")
    if not where:
        print("no sched-oracle binary given (argument or $SCHED_ORACLE): nothing checked")
        return 0
    binary, agreed, disagreed, unchecked = Path(where), 0, 0, 0
    with tempfile.TemporaryDirectory() as temp:
        for case in (c for c in cases("triage") if c.autoscaling is not None):
            reader = SnapshotReader.from_path(case.snapshot)
            view, _ = asyncio.run(reader.triage_view(case.namespace, case.name))
            pooled = groups.pools(view.nodes)
            said = {g.name: g for g in groups.checked(view, pooled)}
            for group, node in sorted(groups.templates(view, pooled).items()):
                fits = said[group].fits
                if fits is None or said[group].why.startswith("NodePool "):
                    unchecked += 1  # not checked by kubewhy, or refused by a NodePool limit, not a filter
                    continue
                scheduler = feasible(binary, Path(temp), groups.unheld(view.pod), node)
                if scheduler == fits:
                    agreed += 1
                else:
                    disagreed += 1
                    why = said[group].why
                    print(f"DISAGREE {case.id} {group}: kubewhy fits={fits} ({why}), scheduler {scheduler}")
    print(f"template checks: {agreed} agree, {disagreed} disagree, {unchecked} not checked")
    return 1 if disagreed else 0


if __name__ == "__main__":
    sys.exit(main())
