"""`kubewhy ask "/triage NS POD"`: the whole Slack pipeline in-process, printed as Slack would show it.

A signed slash command goes through the real bolt app (signature check, ack, authorization, posting)
whose Web API calls are answered by the local Slack server; what it posted (the channel message and
its thread, or what only the asker sees) is then printed as plain text. Without `--snapshot`, the
clusters are the embedded demo: each snapshot of `bot/demo/` is a cluster of its own, named after its
file, and the one that holds the object asked about answers (`--cluster` picks another).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from importlib.resources import as_file, files
from os import PathLike
from pathlib import Path

import aiohttp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot import blocks, messages
from bot.app import assemble, build_app, build_client
from bot.checks import ERROR, NOT_FOUND
from bot.clusters import Clusters
from bot.localslack import FORM, LocalSlack, Message, command_body, signed_headers
from bot.metrics import Metrics
from bot.settings import ClusterConfig, Config
from cluster.errors import ClusterError
from cluster.reader import KIND_WORDS
from cluster.snapshot import load_objects
from diagnosis.objects import name, namespace
from handlers.requests import Explain, Help, Target, UsageError, parse_jobset, parse_triage, parse_why

CHANNEL = "C0KUBEWHYASK"
USER = "U0ONCALL"
TOKEN = "xoxb-kubewhy-ask"
SECRET = "kubewhy-ask-signing-secret"
PARSERS = {"/triage": parse_triage, "/jobset": parse_jobset, "/why": parse_why}

EXIT_BY_VERDICT = {NOT_FOUND: 1, ERROR: 3}
"""As the CLI: 1 the pod/JobSet does not exist, 3 the cluster could not be read, else 0."""


def run(text: str, snapshot: str | PathLike[str] | None) -> int:
    command, _, rest = text.strip().partition(" ")
    parse = PARSERS.get(command)
    if parse is None:
        return _fail(f'give a slash command: {" or ".join(PARSERS)} (e.g. "/triage ml trainer-0")', 2)
    try:
        request = parse(rest)
    except UsageError as error:
        return _fail(f"{error.problem}\n{_usage(error.topic)}", 2)
    if isinstance(request, Help):
        sys.stdout.write(_usage(request.topic))
        return 0
    with ExitStack() as stack:
        try:
            if snapshot is not None:
                config = Config(clusters={"snapshot": ClusterConfig(snapshot=Path(snapshot))})
            else:
                config = _demo(stack.enter_context(as_file(files("bot") / "demo")), request)
            clusters = Clusters.from_config(config)
        except ClusterError as error:
            return _fail(str(error), 3)
        with LocalSlack(bot_token=TOKEN) as slack:
            status = asyncio.run(dispatch(slack, config, clusters, command, rest))
            sys.stdout.write(_shown(slack))
            return status


def _demo(folder: Path, request: Target | Explain) -> Config:
    """The demo clusters, one per example snapshot; the default is the one holding the target."""
    snapshots = {path.stem: path for path in sorted(folder.glob("*.json"))}
    default = "gpu-lab"
    if isinstance(request, Target):
        kind = KIND_WORDS.get(request.kind)  # None for `/why NS NAME`: any kind
        default = next(
            (
                cluster
                for cluster, path in snapshots.items()
                if any(
                    (namespace(o), name(o)) == (request.namespace, request.name)
                    and kind in (None, o.get("kind"))
                    for o in load_objects(path)
                )
            ),
            default,
        )
    return Config(
        default_cluster=default,
        clusters={cluster: ClusterConfig(snapshot=path) for cluster, path in snapshots.items()},
    )


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"kubewhy ask: {message}\n")
    return status


async def dispatch(slack: LocalSlack, config: Config, clusters: Clusters, command: str, text: str) -> int:
    """Send the signed command through the bolt app, wait until its answer is posted, and return
    the exit status of its verdict. It leaves the clusters closed; what was posted stays in `slack`
    (`devtools.readme_example` draws it)."""
    async with aiohttp.ClientSession() as session:
        deps = assemble(config, clusters, build_client(TOKEN, slack.api_url, session))
        app = build_app(deps, SECRET)
        body = command_body(command, text, channel=CHANNEL, user=USER, response_url=slack.response_url())
        headers: dict[str, str | Sequence[str]] = dict(signed_headers(SECRET, body, FORM))
        response = await app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
        if response.status != 200:
            raise RuntimeError(f"the app answered the command with HTTP {response.status}: {response.body}")
        await deps.inflight.drain()
    await clusters.aclose()
    return _status(deps.metrics, command)


def _render(message: Message, indent: str = "") -> str:
    text = blocks.plain_text(message.blocks) if message.blocks else message.text
    return "".join(f"{indent}{line}\n" for line in text.splitlines())


def _shown(slack: LocalSlack) -> str:
    """What the channel shows: each message, its thread indented beneath; then what only the asker sees."""
    parts = []
    for message in slack.channel_messages(CHANNEL):
        parts.append(_render(message))
        parts += [_render(reply, "  │ ") for reply in slack.thread(CHANNEL, message.ts)]
    for response in slack.responses:
        posted = Message(CHANNEL, "", response.get("text", ""), response.get("blocks") or [])
        parts.append(_render(posted, "(only you) "))
    return "\n".join(parts)


def _status(metrics: Metrics, command: str) -> int:
    """From the verdict the bot counted for the command (a not-found answer is the asker's alone: no
    channel message carries it)."""
    for verdict, status in EXIT_BY_VERDICT.items():
        if metrics.registry.get_sample_value(
            "kubewhy_commands_total", {"command": command, "verdict": verdict}
        ):
            return status
    return 0


def _usage(topic: str) -> str:
    return blocks.plain_text(blocks.note(messages.USAGE[topic]).blocks) + "\n"
