"""`python -m devtools.jobset_corpus`: rewrites the JobSet corpus (its snapshots and `index.yaml`), the
JobSet demo snapshots and the /triage cases of the placement filters."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from devtools import dra_lab
from devtools.corpus import CORPUS, ROOT
from devtools.jobset_corpus import (
    completion,
    creation,
    exclusive,
    restarts,
    running,
    suspension,
    triage_placement,
    triage_started,
    triage_volumes,
)
from devtools.jobset_corpus.scenario import Scenario
from devtools.jobset_corpus.world import Obj, World

SCENARIOS = (
    *completion.SCENARIOS,
    *suspension.SCENARIOS,
    *creation.SCENARIOS,
    *restarts.SCENARIOS,
    *running.SCENARIOS,
    *exclusive.SCENARIOS,
)
"""In the order of `index.yaml`."""
TRIAGE_CASES = (*triage_volumes.CASES, *triage_placement.CASES, *triage_started.CASES)
ON_DRA = ("pods-pending-exhausted", "tests/corpus/jobset/pods-pending-dra.json")
"""The scenario `devtools.dra_lab` rewrites with its GPUs served by the DRA driver, and that file."""


def write(world: World, path: str) -> None:
    (ROOT / path).write_text(json.dumps(world.snapshot(), indent=4) + "\n")


def written(s: Scenario, asked: str = "JobSet") -> Obj:
    """Writes the scenario's snapshot; the metadata of the object of kind `asked` it asks about (its
    `target`, else the first)."""
    world = World(s.seed)
    s.build(world)
    write(world, s.path)
    found = (o["metadata"] for o in world.items if o["kind"] == asked)
    return next(meta for meta in found if s.target in ("", meta["name"]))


def write_corpus(folder: str, asked: str, scenarios: Sequence[Scenario], header: str) -> None:
    """Writes every scenario's snapshot and `tests/corpus/<folder>/index.yaml`, `header` first."""
    entries = "\n".join(index_entry(s, written(s, asked)) for s in scenarios)
    (CORPUS / folder / "index.yaml").write_text(header + entries + "\n")


def index_entry(s: Scenario, jobset_meta: Obj) -> str:
    """The scenario's entry in `index.yaml` (format in devtools/corpus.py)."""
    lines = [
        f"- snapshot: {s.path}",
        f"  namespace: {jobset_meta['namespace']}",
        f"  name: {jobset_meta['name']}",
        f"  verdict: {s.verdict}",
    ]
    if s.pod_verdict:
        lines.append(f"  pod_verdict: {s.pod_verdict}")
    if s.cause:
        lines.append(f"  cause: {s.cause}")
    return "\n".join(lines)


def main() -> None:
    entries = [(s, written(s)) for s in SCENARIOS]
    seed, path = ON_DRA
    entries += [(replace(s, path=path), meta) for s, meta in entries if s.seed == seed]
    dra_lab.write_file(path)
    header = (
        "# JobSet corpus: snapshot files and what `/jobset why` must answer (format in devtools/corpus.py).\n"
        "# Written by `python -m devtools.jobset_corpus`; edit the generator, not the files.\n"
    )
    (CORPUS / "jobset" / "index.yaml").write_text(header + "\n".join(index_entry(*e) for e in entries) + "\n")
    for seed, build in TRIAGE_CASES:
        world = World(seed)
        build(world)
        write(world, f"tests/corpus/triage/{seed}.json")


if __name__ == "__main__":
    main()
