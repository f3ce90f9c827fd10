"""README.md's example answer and its picture of the Slack message, made from the current code.

`python -m devtools.readme_example` rewrites both: the fenced block that starts with the CLI command
(its output, as `kubewhy` prints it) and `docs/slack-triage.svg` (the message and thread the bot posts
for the same pod, drawn by `devtools.slack_svg`). `tests/deploy/test_readme.py` fails while either
differs from what the code gives.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from typing import Any

from bot import ask
from bot.clusters import Clusters
from bot.localslack import LocalSlack
from bot.settings import ClusterConfig, Config
from devtools import slack_svg
from devtools.botenv import KUBEWHY
from devtools.corpus import ROOT

README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "slack-triage.svg"
SNAPSHOT = "bot/demo/gpu-lab.json"
NAMESPACE, POD = "gpu-triage", "case-taint"
COMMAND = f"kubewhy triage {NAMESPACE} {POD} --snapshot {SNAPSHOT}"
REGENERATE = "python -m devtools.readme_example"

CHECKED = re.compile(r"checked \d\d:\d\d:\d\d UTC")


def steady(picture: str) -> str:
    """The picture without the one thing that changes from run to run: the time of the check."""
    return CHECKED.sub("checked HH:MM:SS UTC", picture)


def cli_text() -> str:
    """The command and what it prints, as the README's fenced block holds them."""
    printed = subprocess.run(
        [str(KUBEWHY), *COMMAND.split()[1:]], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return f"$ {COMMAND}\n{printed}"


def example_in(readme: str) -> str:
    """The README's fenced block that starts with the command (without its fences)."""
    match = _block().search(readme)
    if match is None:
        raise ValueError(f"README.md has no fenced block starting with `$ {COMMAND}`")
    return match.group(1)


def _block() -> re.Pattern[str]:
    return re.compile(rf"^```text\n(\$ {re.escape(COMMAND)}\n.*?)^```$", re.DOTALL | re.MULTILINE)


def slack_picture() -> str:
    """The `/triage` answer for the same pod, posted by the real bolt app to the local Slack, drawn."""
    config = Config(clusters={"gpu-lab": ClusterConfig(snapshot=ROOT / SNAPSHOT)})
    with LocalSlack(bot_token=ask.TOKEN) as slack:
        asyncio.run(
            ask.dispatch(slack, config, Clusters.from_config(config), "/triage", f"{NAMESPACE} {POD}")
        )
        (message,) = slack.channel_messages(ask.CHANNEL)
        thread: list[list[dict[str, Any]]] = [m.blocks for m in slack.thread(ask.CHANNEL, message.ts)]
    return slack_svg.picture(message.blocks, thread)


def main() -> int:
    readme = README.read_text()
    example_in(readme)  # the block must be there to be replaced
    README.write_text(_block().sub(lambda _: f"```text\n{cli_text()}```", readme, count=1))
    PICTURE.parent.mkdir(exist_ok=True)
    PICTURE.write_text(slack_picture())
    sys.stdout.write(f"wrote the example in {README.name} and {PICTURE.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
