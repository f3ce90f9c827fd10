"""What runs the bot or its tools in a test or a benchmark: the installed commands, a free port, and the
environment of a `kubewhy serve` that talks to a local Slack and never to the developer's cluster."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bot.localslack import LocalSlack

SECRET = "kubewhy-test-signing-secret"


def tool(name: str) -> Path:
    """An installed command: the one beside this interpreter (the project's virtualenv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = beside if beside.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed beside {sys.executable} nor on PATH")
    return Path(found)


KUBEWHY = tool("kubewhy")
KUBECTL = tool("kubectl")


def kubectl(args: Sequence[str], kubeconfig: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the real kubectl against `kubeconfig` (an API simulator's), with a HOME of its own (kubectl
    caches discovery there) and nothing else from the developer's environment."""
    env = {"KUBECONFIG": kubeconfig, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [str(KUBECTL), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def free_port() -> int:
    """A port free now, for a server about to bind it; another server may take it first."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses every connection while this is held: bound and never
    listening, so no server of the test run can take it. A port merely found free (`free_port`) can
    be given to a simulator later, and a cluster meant to be down then answers."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def bot_env(slack: LocalSlack, port: int, config: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KUBEWHY_", "KUBECONFIG"))}
    env |= {
        "SLACK_BOT_TOKEN": slack.bot_token,
        "SLACK_SIGNING_SECRET": SECRET,
        "KUBEWHY_SLACK_API_URL": slack.api_url,
        "KUBEWHY_PORT": str(port),
        "KUBECONFIG": "/nonexistent/kubeconfig",  # a test never reads the developer's cluster
    }
    if config is not None:
        env["KUBEWHY_CONFIG"] = str(config)
    return env | extra
