"""`kubewhy snapshot [jobset] NAMESPACE NAME -o FILE`: save what the answer about a pod (or a JobSet)
reads from the live cluster, as a snapshot file that `--snapshot FILE` answers from
(`cluster.capture`). Exit status as for the questions: 0 saved, 1 no such pod or JobSet, 2 usage,
3 the cluster could not be read or the file not written."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bot.cli import EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, failed, write_line
from cluster.errors import ClusterError, NotFound
from handlers.names import namespace_and_name


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    try:
        kind, namespace, name = _target(parser, args.target)
    except SystemExit:  # argparse has printed the usage and the error
        return EXIT_USAGE
    try:
        snapshot = asyncio.run(_capture(args, kind, namespace, name))
    except (NotFound, ClusterError) as error:
        return failed(error)
    try:
        Path(args.output).write_text(json.dumps(snapshot, indent=4, ensure_ascii=False) + "\n")
    except OSError as error:
        write_line(sys.stderr, f"kubewhy: cannot write {args.output}: {error.strerror or error}")
        return EXIT_UNREADABLE
    write_line(sys.stdout, f"{len(snapshot['items'])} objects saved to {args.output}")
    return EXIT_OK


def _target(parser: argparse.ArgumentParser, words: list[str]) -> tuple[str, str, str]:
    """("pod" or "jobset", namespace, name) from `NAMESPACE POD` or `jobset NAMESPACE NAME` (or the
    `NAMESPACE/NAME` form, as the questions take it)."""
    kind, words = ("jobset", words[1:]) if words[:1] == ["jobset"] else ("pod", words)
    try:
        namespace, name = namespace_and_name("JobSet" if kind == "jobset" else "pod", words, None)
    except ValueError as error:
        parser.error(str(error))
    return kind, namespace, name


async def _capture(args: argparse.Namespace, kind: str, namespace: str, name: str) -> dict[str, Any]:
    from cluster import capture
    from cluster.live import LiveReader

    reader = LiveReader.from_kubeconfig(args.kubeconfig, args.context)
    try:
        take = capture.pod if kind == "pod" else capture.jobset
        return await take(reader, namespace, name)
    finally:
        await reader.aclose()
