"""Fixtures of the Slack tests: one `kubewhy serve` for the session, talking to a local Slack and to
API simulators serving the corpus (see tests/slack/support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import yaml

from devtools import corpus
from devtools.apisim import serve
from devtools.botenv import refused_port
from devtools.slack import DevSlack
from tests.slack.support import (
    GPU_LAB,
    TOKEN,
    WATCH_MINUTES,
    WATCH_SECONDS,
    Bot,
    World,
    kubeconfig_for,
    new_channel,
    running_bot,
)


@pytest.fixture
def channel() -> str:
    return new_channel()


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("world")
    snapshots = sorted({case.snapshot for case in corpus.every_case()})
    down = folder / "down.kubeconfig"
    with ExitStack() as stack:
        port = stack.enter_context(refused_port())
        down.write_text(yaml.safe_dump(kubeconfig_for(f"http://127.0.0.1:{port}")))
        slack = stack.enter_context(DevSlack(bot_token=TOKEN))
        sims = {path: stack.enter_context(serve(path)) for path in snapshots}
        faulty = stack.enter_context(serve(GPU_LAB))
        mutable = stack.enter_context(serve(GPU_LAB))
        cluster_of = {path: f"s{i}" for i, path in enumerate(snapshots)}
        # `lab` keeps the default cache. The corpus clusters are read directly: a cache of each would
        # hold two thousand watches in this process and the bot's, and the live tier already proves
        # that the cache answers as a direct read (tests/live/test_parity.py). The others are read
        # directly too, as their tests change what the API server answers and re-ask at once.
        direct = {"enabled": False}
        clusters = {
            cluster_of[p]: {"kubeconfig": sim.kubeconfig, "timeout": 3, "cache": direct}
            for p, sim in sims.items()
        }
        clusters |= {
            "lab": {"kubeconfig": stack.enter_context(serve(GPU_LAB)).kubeconfig, "timeout": 3},
            "faulty": {"kubeconfig": faulty.kubeconfig, "timeout": 1, "cache": direct},
            "held": {"kubeconfig": faulty.kubeconfig, "timeout": 60, "cache": direct},
            "mutable": {"kubeconfig": mutable.kubeconfig, "timeout": 3, "cache": direct},
            "down": {"kubeconfig": str(down), "timeout": 1, "cache": direct},
        }
        config = {
            "default_cluster": "lab",
            "clusters": clusters,
            "watch": {"interval_seconds": WATCH_SECONDS, "max_minutes": WATCH_MINUTES},
        }
        bot = stack.enter_context(running_bot(slack, folder, config))
        yield World(bot, slack, cluster_of, faulty, mutable)


@pytest.fixture
def bot(world: World) -> Bot:
    return world.bot
