"""The corpus of snapshot files with expected verdicts, shared by the unit, live, kubectl and Slack tests
and the scheduler oracle check (`devtools.oracle`).

Each `tests/corpus/<kind>/index.yaml` lists cases: a snapshot file (path relative to the repo root), the
object asked about, and what kubewhy must answer.

    - snapshot: tests/corpus/triage/taint-one-node.json
      namespace: ml
      name: trainer-0
      verdict: taint
      pod_verdict: null   # jobset only, optional
      cause: null         # jobset `restarting` only, optional
      started: failing    # triage `ok` only, optional: `started.state` (and `reason:` its reason)
      autoscaling: coming # triage only, optional: the expected `autoscaling.state`
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


@dataclass(frozen=True)
class Case:
    kind: str
    snapshot: Path
    namespace: str
    name: str
    verdict: str
    pod_verdict: str | None = None
    cause: str | None = None
    started: str | None = None
    reason: str | None = None
    autoscaling: str | None = None

    @property
    def id(self) -> str:
        return f"{self.snapshot.stem}:{self.namespace}/{self.name}"


def cases(kind: str) -> list[Case]:
    """The cases of `tests/corpus/<kind>/index.yaml` (`kind` is `triage` or `jobset`)."""
    index = CORPUS / kind / "index.yaml"
    if not index.exists():
        return []
    entries = yaml.safe_load(index.read_text()) or []
    return [
        Case(
            kind=kind,
            snapshot=ROOT / entry["snapshot"],
            namespace=entry["namespace"],
            name=entry["name"],
            verdict=entry["verdict"],
            pod_verdict=entry.get("pod_verdict"),
            cause=entry.get("cause"),
            started=entry.get("started"),
            reason=entry.get("reason"),
            autoscaling=entry.get("autoscaling"),
        )
        for entry in entries
    ]
