"""The pod as each overlay runs it: the real `kubewhy serve`, given the overlay's environment and
ConfigMap, starts in the overlay's mode, its liveness and readiness probes pass, and so does the image's
HEALTHCHECK. Slack is the local Slack (devtools/slack.py); the cluster is the API simulator."""

from __future__ import annotations

import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml

from bot.app import COMMANDS
from bot.localslack import FORM, command_body
from devtools.apisim import serve
from devtools.corpus import ROOT
from devtools.slack import DevSlack
from tests.deploy import dockerfile
from tests.deploy.rendered import OVERLAYS, container, pod_env, render, the
from tests.slack.support import Bot, running_bot

GPU_LAB = ROOT / "bot" / "demo" / "gpu-lab.json"
STARTUP_SECONDS = 15.0
"""How long the bot may take to become ready (the kubelet keeps probing; a test must end)."""


def until_ok(bot: Bot, path: str) -> int:
    """The status of GET `path` once it is 200, or the last one when the bot never gets there."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while (status := bot.get(path).status) != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    return status


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_pod_becomes_ready_and_healthy_in_its_mode(overlay: str, tmp_path: Path) -> None:
    objects = render(overlay)
    bot_container = container(objects)
    env = pod_env(objects)
    # Where a test must differ from the pod: a free port, and a cluster reached through a kubeconfig
    # rather than in-cluster (a test runs in no pod).
    del env["KUBEWHY_PORT"], env["KUBEWHY_CONFIG"]
    config = yaml.safe_load(the(objects, "ConfigMap")["data"]["config.yaml"])
    slack = DevSlack(bot_token=env["SLACK_BOT_TOKEN"], app_token=env.get("SLACK_APP_TOKEN"))
    with slack, serve(GPU_LAB) as sim:
        config["clusters"] = {"default": {"kubeconfig": sim.kubeconfig}}
        with running_bot(slack, tmp_path, config, **env) as bot:
            for probe in ("livenessProbe", "readinessProbe"):
                assert until_ok(bot, bot_container[probe]["httpGet"]["path"]) == 200, bot.log.read_text()
            port = str(urllib.parse.urlsplit(bot.url).port)
            checked = subprocess.run(
                dockerfile.healthcheck(), env={"KUBEWHY_PORT": port}, capture_output=True, timeout=30,
                check=False,
            )
            assert checked.returncode == 0, checked.stderr
            if overlay == "http":  # Slack's signed requests reach it, verified with the pod's secret
                for command in COMMANDS:
                    body = command_body(command, "help", channel="C0DEPLOY", user="U0DEPLOY",
                                        response_url=slack.response_url())
                    assert bot.send(body, FORM, secret=env["SLACK_SIGNING_SECRET"]).status == 200
    socket_mode = any(call.method == "apps.connections.open" for call in slack.calls)
    assert socket_mode == (overlay == "socket-mode")
