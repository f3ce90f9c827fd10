"""One `kubewhy serve` for the reliability suite, over API simulators whose faults the tests switch on
and off (devtools/apisim/faults.py):

- `faulty`: the GPU cluster of tests/live (a pod that waits for GPUs, a JobSet whose leader does not
  fit), read with a 1 s timeout;
- `plugin`: the same cluster again, read with a 3 s timeout, whose kubeconfig gets its token from an
  exec credential plugin that the test can make hang (`Rig.hang_plugin`). Its tokens expire at once,
  so every call runs the plugin again.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from devtools.apisim import Simulator, serve
from devtools.slack import DevSlack
from tests.live.support import GPU_CLUSTER
from tests.slack.support import TOKEN, WATCH_MINUTES, WATCH_SECONDS, Bot, kubeconfig_for, running_bot

PLUGIN = """\
if [ -e "$1" ]; then
  exec sleep 3600  # a plugin waiting for a login that never comes
fi
# Expired at once: every call runs the plugin again.
expiry=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", '
printf '"status": {"token": "plugin-token", "expirationTimestamp": "%s"}}\\n' "$expiry"
"""
"""A POSIX shell script, not Python: it answers in milliseconds on a busy machine, well within the
cluster's timeout."""

SHELL = shutil.which("sh")


DIRECT = {"enabled": False}
"""The clusters are read directly, without the watch-backed cache: every fault reaches the read it
spoils, at the moment the test injects it."""


@dataclass
class Rig:
    bot: Bot
    slack: DevSlack
    faulty: Simulator
    plugin: Simulator
    hang_flag: Path

    def hang_plugin(self, hang: bool) -> None:
        if hang:
            self.hang_flag.touch()
        else:
            self.hang_flag.unlink(missing_ok=True)


def plugin_kubeconfig(folder: Path, server: str, flag: Path) -> Path:
    """A kubeconfig for `server` whose user runs PLUGIN (it hangs while `flag` exists)."""
    script = folder / "plugin.sh"
    script.write_text(PLUGIN)
    config = kubeconfig_for(server)
    config["users"] = [
        {
            "name": "u",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": SHELL,
                    "args": [str(script), str(flag)],
                    "interactiveMode": "Never",
                }
            },
        }
    ]
    path = folder / "plugin.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="package")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    folder = tmp_path_factory.mktemp("reliability")
    flag = folder / "hang"
    with ExitStack() as stack:
        slack = stack.enter_context(DevSlack(bot_token=TOKEN))
        faulty = stack.enter_context(serve(GPU_CLUSTER))
        plugin = stack.enter_context(serve(GPU_CLUSTER))
        config = {
            "default_cluster": "faulty",
            "clusters": {
                "faulty": {"kubeconfig": faulty.kubeconfig, "timeout": 1, "cache": DIRECT},
                "plugin": {
                    "kubeconfig": str(plugin_kubeconfig(folder, plugin.url, flag)),
                    "timeout": 3,
                    "cache": DIRECT,
                },
            },
            "watch": {"interval_seconds": WATCH_SECONDS, "max_minutes": WATCH_MINUTES},
        }
        bot = stack.enter_context(running_bot(slack, folder, config))
        yield Rig(bot, slack, faulty, plugin, flag)


@pytest.fixture
def clean(rig: Rig) -> Iterator[Rig]:
    """The rig with every fault cleared after the test."""
    try:
        yield rig
    finally:
        rig.faulty.faults.clear()
        rig.hang_plugin(False)
