"""The corpus of snapshot files with expected verdicts, shared by the unit, live, kubectl and Slack tests
and the scheduler oracle check (`devtools.oracle`).

Each `tests/corpus/<kind>/index.yaml` (`KINDS`: `/triage`, `/jobset why`, `kubewhy lws why`, `/jobset
why` on a TrainJob) lists cases: a snapshot file (path relative to the repo root), the object asked
about, and what kubewhy must answer (`answer` asks it of a reader).

    - snapshot: tests/corpus/triage/taint-one-node.json
      namespace: ml
      name: trainer-0
      verdict: taint
      pod_verdict: null   # jobset and lws only, optional
      cause: null         # jobset and lws `restarting` only, optional
      started: failing    # triage `ok` only, optional: `started.state` (and `reason:` its reason)
      autoscaling: coming # triage only, optional: the expected `autoscaling.state`
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from cluster.reader import Reader
from diagnosis.jobset.explain import explain as explain_jobset
from diagnosis.lws.explain import explain as explain_lws
from diagnosis.model import Diagnosis
from diagnosis.trainjob.explain import explain as explain_trainjob
from diagnosis.triage.classify import classify

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
KINDS = ("triage", "jobset", "lws", "trainjob")
"""The corpus's folders, one per question."""


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
    """The cases of `tests/corpus/<kind>/index.yaml` (`kind` is one of `KINDS`)."""
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


def every_case() -> list[Case]:
    return [case for kind in KINDS for case in cases(kind)]


async def answer(reader: Reader, case: Case) -> Diagnosis:
    """The diagnosis of the question the case asks, read through `reader`."""
    if case.kind == "triage":
        return classify(*await reader.triage_view(case.namespace, case.name))
    if case.kind == "lws":
        return explain_lws(await reader.lws_view(case.namespace, case.name))
    if case.kind == "trainjob":
        view = await reader.trainjob_view(case.namespace, case.name)
        assert view is not None, f"no TrainJob {case.namespace}/{case.name}"
        return explain_trainjob(view)
    return explain_jobset(await reader.jobset_view(case.namespace, case.name))
