"""Every answer kubewhy gives on the project's own cases, written out, to show a refactor changes none.

    python -m devtools.answers OUT.jsonl [--random N]

One JSON line per answer, in a fixed order: each corpus case (triage and JobSet) as `--format json`
and `--format text` print it from its snapshot; for each triage case, each fix's pod patch applied to
the pod and the pod classified again (what `devtools.oracle --fixes` checks); and N random clusters
(`devtools.random_clusters`, seeds 0 to N-1; 300 by default). Two runs on the same code write the
same bytes; `cmp` the files of two commits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from bot.render import as_json, as_text
from cluster.snapshot import SnapshotReader
from devtools import random_clusters
from devtools.corpus import Case, cases
from diagnosis.jobset.explain import explain
from diagnosis.objects import Ref
from diagnosis.patch import merge_patch
from diagnosis.triage.classify import classify
from handlers.reply import Reply, Scope, noted


def _case_answers(case: Case) -> Iterator[dict[str, Any]]:
    reader = SnapshotReader.from_path(case.snapshot)
    scope = Scope(case.snapshot.name)
    where = {"case": case.id, "kind": case.kind}
    if case.kind == "jobset":
        jobset = asyncio.run(reader.jobset_view(case.namespace, case.name))
        reply = Reply.of(
            Ref("jobset", case.namespace, case.name), noted(explain(jobset), jobset.notes), scope
        )
        yield {**where, "json": as_json(reply), "text": as_text(reply)}
        return
    view, _ = asyncio.run(reader.triage_view(case.namespace, case.name))
    diagnosis = classify(view)
    reply = Reply.of(Ref("pod", case.namespace, case.name), noted(diagnosis, view.notes), scope)
    yield {**where, "json": as_json(reply), "text": as_text(reply)}
    for number, fix in enumerate(diagnosis.fixes):
        if fix.pod_patch is None:
            continue
        fixed = replace(view, pod=merge_patch(view.pod, fix.pod_patch))
        again = Reply.of(Ref("pod", case.namespace, case.name), classify(fixed), scope)
        yield {**where, "fix": number, "json": as_json(again)}


def _random_answers(count: int) -> Iterator[dict[str, Any]]:
    with TemporaryDirectory() as folder:
        for seed in range(count):
            snapshot = Path(folder) / f"random-{seed}.json"
            snapshot.write_text(json.dumps(random_clusters.scenario(seed)))
            reader = SnapshotReader.from_path(snapshot)
            view, _ = asyncio.run(reader.triage_view(random_clusters.NAMESPACE, random_clusters.POD))
            reply = Reply.of(
                Ref("pod", random_clusters.NAMESPACE, random_clusters.POD), classify(view), Scope("random")
            )
            yield {"random": seed, "json": as_json(reply)}


def answers(count: int) -> Iterator[dict[str, Any]]:
    """Every answer, in the file's order."""
    for case in (*cases("triage"), *cases("jobset")):
        yield from _case_answers(case)
    yield from _random_answers(count)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.answers", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the JSON-lines file to write")
    parser.add_argument("--random", type=int, default=300, metavar="N", help="random clusters (default 300)")
    args = parser.parse_args(argv)
    with args.out.open("w") as out:
        for answer in answers(args.random):
            out.write(json.dumps(answer, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
