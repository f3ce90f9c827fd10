"""`kubewhy snapshot [jobset|lws|why] NAMESPACE NAME -o FILE`: save what the answer about a pod (a
JobSet or TrainJob, a LeaderWorkerSet, or whatever `why` finds by the name) reads from the live
cluster, as a snapshot file that `--snapshot FILE` answers from (`cluster.capture`). The answer is
asked as its own command asks it, so the file holds exactly what that command reads. Exit status as
for the questions: 0 saved, 1 no such object, 2 usage (or a `why` name several kinds bear), 3 the
cluster could not be read or the file not written."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bot.cli import (
    EXIT_OK,
    EXIT_UNREADABLE,
    EXIT_USAGE,
    Question,
    ask_any,
    ask_jobset,
    ask_lws,
    ask_triage,
    failed,
    write_line,
)
from cluster.errors import ClusterError, NotFound
from handlers.names import namespace_and_name, namespace_kind_and_name
from handlers.reply import Scope

FORMS: dict[str, tuple[str, Question]] = {
    "pod": ("pod", ask_triage),
    "jobset": ("JobSet", ask_jobset),
    "lws": ("LeaderWorkerSet", ask_lws),
    "why": ("pod or workload", ask_any),
}
"""Each form's first word (none for a pod), what it names, and the question whose reads it saves."""


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    try:
        question, target = _target(parser, args.target)
    except SystemExit:  # argparse has printed the usage and the error
        return EXIT_USAGE
    try:
        snapshot = asyncio.run(_capture(args, question, target))
    except (NotFound, ClusterError) as error:
        return failed(error)
    try:
        Path(args.output).write_text(json.dumps(snapshot, indent=4, ensure_ascii=False) + "\n")
    except OSError as error:
        write_line(sys.stderr, f"kubewhy: cannot write {args.output}: {error.strerror or error}")
        return EXIT_UNREADABLE
    write_line(sys.stdout, f"{len(snapshot['items'])} objects saved to {args.output}")
    return EXIT_OK


def _target(parser: argparse.ArgumentParser, words: list[str]) -> tuple[Question, tuple[str | None, ...]]:
    """The question and its target (as the question's command parses it) from `NAMESPACE POD`,
    `jobset|lws NAMESPACE NAME` or `why NAMESPACE [KIND/]NAME` (each also as `NAMESPACE/NAME`)."""
    form, words = (words[0], words[1:]) if words[:1] and words[0] in FORMS else ("pod", words)
    what, question = FORMS[form]
    try:
        target = (
            namespace_kind_and_name(words, None) if form == "why" else namespace_and_name(what, words, None)
        )
    except ValueError as error:
        parser.error(str(error))
    return question, target


async def _capture(
    args: argparse.Namespace, question: Question, target: tuple[str | None, ...]
) -> dict[str, Any]:
    from cluster import capture
    from cluster.live import LiveReader

    reader = LiveReader.from_kubeconfig(args.kubeconfig, args.context)
    asked = argparse.Namespace(target=target)
    try:
        return await capture.of(reader, lambda: question(reader, asked, Scope("capture")))
    finally:
        await reader.aclose()
