"""The `kubewhy` command: Slack's questions asked from a terminal, a script or CI.

    kubewhy triage NAMESPACE POD        [--snapshot PATH] [--kubeconfig PATH] [--context NAME] [--format F]
                                        [--all-pods]
    kubewhy jobset why NAMESPACE NAME   [same options]
    (NAMESPACE/NAME and -n NAMESPACE NAME too, as in Slack: `handlers.names` reads both)
    kubewhy jobset why --message TEXT   [--format F]
    kubewhy lws why NAMESPACE NAME      [same options]
    kubewhy why NAMESPACE [KIND/]NAME   [same options]
    kubewhy snapshot [jobset|lws|why] NAMESPACE NAME -o FILE [--kubeconfig PATH] [--context NAME]
    kubewhy ask "/triage NS POD"        [--snapshot PATH]
    kubewhy serve

The exit status and the output formats are a contract that scripts rely on (README, *The CLI*): 0 a
verdict was given (on stdout, nothing else there); 1 the pod/JobSet does not exist (why, on stderr); 2 usage
error (also a name `why` finds on several kinds of object); 3 the cluster or snapshot could not be read
(one line on stderr: what failed, how to fix it); 130 interrupted. Never a traceback for any of these.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TextIO

from bot import render
from cluster.errors import Ambiguous, ClusterError, NotFound
from cluster.reader import Reader
from handlers.names import namespace_and_name, namespace_kind_and_name
from handlers.reply import Reply, Scope

EXIT_OK = 0
EXIT_NOT_FOUND = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
EXIT_INTERRUPTED = 130

Question = Callable[[Reader, argparse.Namespace, Scope], Coroutine[Any, Any, Reply]]

_FORMATS: dict[str, Callable[[Reply], str]] = {
    "text": render.as_text,
    "word": render.as_word,
    "json": lambda reply: json.dumps(render.as_json(reply), indent=2, ensure_ascii=False),
}

GC_THRESHOLDS = (50_000, 50, 50)
"""The cyclic collector's thresholds, for every command. Every read decodes JSON into many small
dicts and lists, nearly all freed by reference counting or kept for the answer; with Python's default
(700, 10, 10) the collector still runs its generations over the whole heap every few thousand
allocations. In `kubewhy serve`, in a burst of 50 `/triage` commands on a 500-node cluster (`make
bench`, c), that made event-loop stalls of 100–250 ms (none over 100 ms with these thresholds); in a
live CLI run, decoding the bound pods of 700 nodes took 2–3× the CPU time."""

MMAP_THRESHOLD = 128 * 1024
"""With glibc, every allocation of this many bytes or more is a mapping of its own, returned to the
system when freed (glibc's default threshold, kept fixed). Left to itself, glibc raises the threshold to
the size of each mapped block freed (up to 32 MiB): after the first pages of a LIST (megabytes each)
are freed, the next ones come from the heap, which cannot give back what lies under the objects the
watch cache keeps. On 65,000 nodes the cache's sync grew the process by 1,079 MiB that way, by 916 MiB
with the threshold fixed (`make bench`, a)."""
_M_MMAP_THRESHOLD = -3
"""`mallopt`'s parameter for it (glibc's malloc.h)."""


SWITCH_INTERVAL = 0.001
"""Seconds a thread keeps the GIL while another waits for it (Python's default: 0.005). In `kubewhy
serve` the event loop waits for the GIL after each of its wake-ups behind the worker threads that
diagnose (a sentinel's sweep runs several at once): over eight sweeps of 901 pending pods on 65,000
nodes, by hand, its longest stalls were 48–142 ms at 5 ms, 19–59 ms at 1 ms, for the same CPU time
(`bench/RESULTS.md`, round 18; the target is no stall over 100 ms)."""


def tune() -> None:
    """Set how every kubewhy process runs (`main`, and the benchmarks measuring it): the collector's
    thresholds (`GC_THRESHOLDS`), the GIL's switch interval (`SWITCH_INTERVAL`) and, where the C
    library is glibc, a fixed `MMAP_THRESHOLD`."""
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status (the console script `kubewhy`). The process exits
    next: what the command made is then frozen (`gc.freeze`), left to the operating system instead of
    being traversed again by the collections Python runs while it shuts down — 30–60 ms of every
    CLI run, a sixth of a live one on a small cluster (`make bench`, e)."""
    tune()
    status = _command(argv)
    gc.freeze()
    return status


def _command(argv: Sequence[str] | None) -> int:
    try:
        args = _parsed(argv)
        _check(args)
    except SystemExit as exit_:  # argparse has printed the usage and the error, or the help
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        if args.command == "serve":
            from bot.serve import run as serve

            return serve()
        if args.command == "snapshot":
            from bot.capture import run as snapshot

            return snapshot(args)
        if args.command == "ask":
            from bot.ask import run as ask

            return ask(args.text, args.snapshot)
        return _answer(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _parsed(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments. A question's words may stand on both sides of its options (`triage ml --format
    word POD`): argparse leaves the words after an option to no positional, so they join here."""
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if "words" in args and not any(word.startswith("-") for word in rest):
        args.words += rest
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return args


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kubewhy", description="Why is this GPU/TPU pod or JobSet on Kubernetes not running?"
    )
    parser.add_argument("--version", action=_Version, help="print kubewhy's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    reading = argparse.ArgumentParser(add_help=False)
    reading.add_argument("-n", "--namespace", metavar="NAMESPACE", help="then give the name alone")
    reading.add_argument(
        "--snapshot", metavar="PATH", help="read a saved snapshot (file or folder) instead of a cluster"
    )
    reading.add_argument(
        "--kubeconfig", metavar="PATH", help="default: $KUBECONFIG, then ~/.kube/config, then in-cluster"
    )
    reading.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    reading.add_argument("--format", choices=tuple(_FORMATS), default="text", help="default: text")

    pod = commands.add_parser(
        "triage",
        parents=[reading],
        help="why is this accelerator pod not running?",
        usage="%(prog)s NAMESPACE POD | NAMESPACE/POD | -n NAMESPACE POD [options]",
    )
    pod.add_argument("words", metavar="NAMESPACE POD", nargs="*", help="or NAMESPACE/POD, or POD with -n")
    pod.add_argument(
        "--all-pods",
        action="store_true",
        help="list every bound pod of the cluster (one LIST), so that the anti-affinity of pods on every "
        "node is checked, not only on the nodes that reach the free-slot check (a snapshot has them all)",
    )
    pod.set_defaults(parser=pod, question=ask_triage, kind="pod", message=None)

    jobsets = commands.add_parser("jobset", help="why is this JobSet stuck or restarting?")
    why = jobsets.add_subparsers(dest="jobset_command", required=True, metavar="why").add_parser(
        "why",
        parents=[reading],
        help="explain a JobSet, or a pasted admission error",
        usage=(
            "%(prog)s NAMESPACE NAME | NAMESPACE/NAME | -n NAMESPACE NAME [options]"
            "\n       %(prog)s --message TEXT [--format F]"
        ),
    )
    why.add_argument("words", metavar="NAMESPACE NAME", nargs="*", help="or NAMESPACE/NAME, or NAME with -n")
    why.add_argument("--message", metavar="TEXT", help="explain a pasted admission error, offline")
    why.set_defaults(parser=why, question=ask_jobset, kind="JobSet")

    sets = commands.add_parser("lws", help="why is this LeaderWorkerSet not serving?")
    lws = sets.add_subparsers(dest="lws_command", required=True, metavar="why").add_parser(
        "why",
        parents=[reading],
        help="explain a LeaderWorkerSet",
        usage="%(prog)s NAMESPACE NAME | NAMESPACE/NAME | -n NAMESPACE NAME [options]",
    )
    lws.add_argument("words", metavar="NAMESPACE NAME", nargs="*", help="or NAMESPACE/NAME, or NAME with -n")
    lws.set_defaults(parser=lws, question=ask_lws, kind="LeaderWorkerSet", message=None)

    anything = commands.add_parser(
        "why",
        parents=[reading],
        help="why is this pod or workload (JobSet, TrainJob, LWS, Job…) stuck?",
        usage="%(prog)s NAMESPACE [KIND/]NAME | NAMESPACE/[KIND/]NAME | -n NAMESPACE [KIND/]NAME [options]",
    )
    anything.add_argument(
        "words", metavar="NAMESPACE [KIND/]NAME", nargs="*", help="or NAMESPACE/NAME, or NAME with -n"
    )
    anything.set_defaults(parser=anything, question=ask_any, kind=None, message=None)

    snapshot = commands.add_parser(
        "snapshot",
        help="save what the answer about a pod (a JobSet, an LWS, any name) reads, as a snapshot file",
    )
    snapshot.add_argument("target", nargs="+", metavar="[jobset|lws|why] NAMESPACE NAME")
    snapshot.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="the snapshot to write (JSON)"
    )
    snapshot.add_argument("--kubeconfig", metavar="PATH", help="as for triage")
    snapshot.add_argument("--context", metavar="NAME", help="as for triage")
    snapshot.set_defaults(parser=snapshot)

    ask = commands.add_parser("ask", help="run a Slack command through the whole bot, in-process")
    ask.add_argument("text", metavar='"/triage NS POD"')
    ask.add_argument("--snapshot", metavar="PATH", help="default: the embedded demo cluster")

    commands.add_parser("serve", help="run the Slack bot")
    return parser


class _Version(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked (importlib.metadata
    would cost every run its import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from importlib.metadata import version

        write_line(sys.stdout, f"{parser.prog} {version('kubewhy')}")
        parser.exit()


def _check(args: argparse.Namespace) -> None:
    """Refuse bad names and contradictory options before anything is read (argparse exits with 2)."""
    if "question" not in args:
        return
    parser: argparse.ArgumentParser = args.parser
    if args.snapshot is not None and (args.kubeconfig is not None or args.context is not None):
        parser.error("--snapshot reads a saved snapshot: --kubeconfig and --context do not apply")
    if args.message is not None:
        if args.words or args.namespace is not None:
            parser.error("give either NAMESPACE NAME or --message TEXT, not both")
        if args.snapshot is not None or args.kubeconfig is not None or args.context is not None:
            parser.error("--message is explained offline: --snapshot, --kubeconfig, --context do not apply")
        if not args.message.strip():
            parser.error("--message needs the text of the error")
        return
    try:
        args.target = (
            namespace_kind_and_name(args.words, args.namespace)
            if args.question is ask_any
            else namespace_and_name(args.kind, args.words, args.namespace)
        )
    except ValueError as error:
        parser.error(str(error))


async def ask_triage(reader: Reader, args: argparse.Namespace, scope: Scope) -> Reply:
    # Each command imports only its own handler: a process start is part of every answer.
    from handlers.triage import triage

    namespace, name = args.target
    return await triage(reader, namespace, name, scope)


async def ask_jobset(reader: Reader, args: argparse.Namespace, scope: Scope) -> Reply:
    from handlers.jobset import why

    namespace, name = args.target
    return await why(reader, namespace, name, scope)


async def ask_lws(reader: Reader, args: argparse.Namespace, scope: Scope) -> Reply:
    from handlers.lws import why

    namespace, name = args.target
    return await why(reader, namespace, name, scope)


async def ask_any(reader: Reader, args: argparse.Namespace, scope: Scope) -> Reply:
    from handlers.why import why

    namespace, kind, name = args.target
    return await why(reader, namespace, name, kind, scope)


def _answer(args: argparse.Namespace) -> int:
    try:
        reply = _reply(args)
    except (NotFound, ClusterError) as error:
        return failed(error)
    write_line(sys.stdout, _FORMATS[args.format](reply))
    return EXIT_OK


def failed(error: NotFound | ClusterError) -> int:
    """Say on stderr, in one line, why there is no answer; the exit status."""
    if isinstance(error, Ambiguous):
        write_line(sys.stderr, f"kubewhy: {error}; ask for one as KIND/NAME")
        return EXIT_USAGE
    if isinstance(error, NotFound):
        write_line(sys.stderr, f"kubewhy: {render.not_found(error)}")
        return EXIT_NOT_FOUND
    write_line(sys.stderr, f"kubewhy: {' '.join(str(error).splitlines())}")
    return EXIT_UNREADABLE


def _reply(args: argparse.Namespace) -> Reply:
    question: Question = args.question
    if args.message is not None:
        from handlers.jobset import explain_message

        return explain_message(args.message)
    if args.snapshot is not None:
        # Loaded before the event loop starts, so that Ctrl-C stops a long load at once (asyncio
        # only cancels at the next await).
        from cluster.snapshot import SnapshotReader

        reader = SnapshotReader.from_path(args.snapshot)
        return asyncio.run(question(reader, args, Scope(args.snapshot)))
    return asyncio.run(_ask_live(question, args))


async def _ask_live(question: Question, args: argparse.Namespace) -> Reply:
    # Imported here so that snapshots and pasted messages never load the Kubernetes client.
    from cluster.live import LiveReader

    reader = LiveReader.from_kubeconfig(
        args.kubeconfig, args.context, all_pods=getattr(args, "all_pods", False)
    )
    # The commands name the context it was read through (named, else the current one: they still
    # reach this cluster after a `kubectl config use-context`), and the kubeconfig only when the
    # person named it: a path on their own machine, which they typed. In a pod, neither.
    context = reader.context or None
    scope = Scope(context or "in-cluster", context, args.kubeconfig)
    try:
        return await question(reader, args, scope)
    finally:
        await reader.aclose()


def write_line(stream: TextIO, text: str) -> None:
    stream.write(f"{text}\n")
