"""One line and the documented exit status for every way the CLI and `kubewhy serve` can be given a
broken world: a taken port, a kubeconfig that is not YAML or nests without end, a snapshot that
nests thousands of levels deep or never ends, a credential plugin that never answers, a server URL
that is not the Kubernetes API. Never a traceback, never a hang."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cluster.errors import SnapshotError
from cluster.snapshot import load_objects
from devtools.apisim import serve
from devtools.botenv import KUBEWHY, bot_env, free_port
from devtools.slack import DevSlack
from tests.live.support import GPU_CLUSTER
from tests.reliability.conftest import DIRECT, SHELL, plugin_kubeconfig
from tests.slack.support import TOKEN, kubeconfig_for, new_channel, running_bot, shown, verdict_payload

EXIT_NOT_FOUND, EXIT_USAGE, EXIT_UNREADABLE = 1, 2, 3
DEEP = 5000


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command's outcome, checked to be one line on stderr (`kubewhy serve` may log before it
    fails: the line is then its last) and no traceback."""
    done = subprocess.run(
        [str(KUBEWHY), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env if env is not None else {**os.environ, "KUBECONFIG": "/nonexistent/kubeconfig"},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    problems = [line for line in done.stderr.splitlines() if line.startswith("kubewhy")]
    assert len(problems) == 1, done.stderr
    assert done.stderr.endswith(problems[0] + "\n")
    if args[0] != "serve":
        assert done.stderr.count("\n") == 1, done.stderr
    return done


def serve_env(slack: DevSlack, config: Path) -> dict[str, str]:
    return bot_env(slack, free_port(), config)


@pytest.fixture
def slack() -> Iterator[DevSlack]:
    with DevSlack(bot_token=TOKEN) as running:
        yield running


def test_serve_with_its_port_taken(slack: DevSlack, tmp_path: Path) -> None:
    config = tmp_path / "kubewhy.yaml"
    config.write_text(yaml.safe_dump({"clusters": {"demo": {"snapshot": str(GPU_CLUSTER)}}}))
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        done = run(["serve"], bot_env(slack, port, config))
    assert done.returncode == EXIT_USAGE
    assert f"kubewhy serve: KUBEWHY_PORT {port}: cannot listen on it: " in done.stderr


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("apiVersion: v1\nclusters: [\n  - {name: x\n", "cannot use kubeconfig"),
        ("a: " + "[" * DEEP, "cannot use kubeconfig"),
    ],
    ids=["invalid-yaml", "nested"],
)
def test_a_kubeconfig_that_is_no_kubeconfig(slack: DevSlack, tmp_path: Path, text: str, said: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(text)
    done = run(["triage", "ml", "pod", "--kubeconfig", str(kubeconfig)])
    assert done.returncode == EXIT_UNREADABLE
    assert said in done.stderr
    config = tmp_path / "kubewhy.yaml"
    config.write_text(yaml.safe_dump({"clusters": {"c": {"kubeconfig": str(kubeconfig)}}}))
    done = run(["serve"], serve_env(slack, config))
    assert done.returncode == EXIT_UNREADABLE
    assert f"kubewhy serve: {said}" in done.stderr


def test_a_config_nested_thousands_deep(slack: DevSlack, tmp_path: Path) -> None:
    config = tmp_path / "kubewhy.yaml"
    config.write_text("channels: " + "[" * DEEP)
    done = run(["serve"], serve_env(slack, config))
    assert done.returncode == EXIT_USAGE
    assert "nested too deeply" in done.stderr or "maximum nesting depth" in done.stderr
    config.write_text("clusters:\n" + "".join(" " * depth + "k:\n" for depth in range(1, DEEP)))
    assert run(["serve"], serve_env(slack, config)).returncode == EXIT_USAGE


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", "[" * DEEP + "]" * DEEP),
        ("deep-flow.yaml", "items: " + "[" * DEEP),
        ("deep-block.yaml", "".join(" " * depth + "k:\n" for depth in range(DEEP))),
    ],
)
def test_a_snapshot_nested_thousands_deep(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    done = run(["triage", "ml", "pod", "--snapshot", str(path)])
    assert done.returncode == EXIT_UNREADABLE
    assert f"cannot read snapshot {path}: " in done.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_at_its_first_bytes(device: str) -> None:
    done = run(["triage", "ml", "pod", "--snapshot", device])
    assert done.returncode == EXIT_UNREADABLE
    assert f"cannot read snapshot {device}: not " in done.stderr


def test_a_stream_that_never_ends_is_read_up_to_the_bound(tmp_path: Path) -> None:
    fifo = tmp_path / "endless.json"
    os.mkfifo(fifo)
    stop = threading.Event()

    def write_forever() -> None:
        try:
            with fifo.open("w") as stream:
                stream.write('{"kind": "List", "items": [')
                while not stop.is_set():
                    stream.write('{"kind": "Pod"}, ' * 1000)
        except BrokenPipeError:  # the reader stopped reading, as it should
            return

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    try:
        with pytest.raises(SnapshotError, match=r"larger than 4 MiB: not read further"):
            load_objects(fifo, max_bytes=4 * 2**20)
    finally:
        stop.set()
    writer.join(10)
    assert not writer.is_alive()


def test_a_credential_plugin_that_never_answers(tmp_path: Path) -> None:
    flag = tmp_path / "hang"
    flag.touch()
    with serve(GPU_CLUSTER) as sim:
        kubeconfig = plugin_kubeconfig(tmp_path, sim.url, flag)
        done = run(["triage", "ml-train", "llama-ft-0-x7k2p", "--kubeconfig", str(kubeconfig)])
    assert done.returncode == EXIT_UNREADABLE
    assert f"the kubeconfig's credential plugin {SHELL} gave no credential within 5 s" in done.stderr


def test_a_server_url_that_is_not_the_kubernetes_api(slack: DevSlack, tmp_path: Path) -> None:
    """A wrong path prefix: every path answers 404, /version too. It is a cluster that cannot be read
    (exit 3, `error`, /readyz 503 naming it), not a pod that does not exist."""
    with serve(GPU_CLUSTER) as sim:
        kubeconfig = tmp_path / "prefixed.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(kubeconfig_for(f"{sim.url}/not-the-api")))
        done = run(["triage", "ml-train", "llama-ft-0-x7k2p", "--kubeconfig", str(kubeconfig)])
        assert done.returncode == EXIT_UNREADABLE
        assert "HTTP 404 on /version: this URL does not serve the Kubernetes API" in done.stderr
        done = run(["jobset", "why", "ml-train", "resnet-dist", "--kubeconfig", str(kubeconfig)])
        assert done.returncode == EXIT_UNREADABLE

        config = {"clusters": {"prefixed": {"kubeconfig": str(kubeconfig), "timeout": 1, "cache": DIRECT}}}
        with running_bot(slack, tmp_path, config) as bot:
            ready = bot.get("/readyz")
            assert ready.status == 503
            assert "HTTP 404 on /version" in ready.json()["clusters"]["prefixed"]
            channel = new_channel()
            bot.command("ml-train llama-ft-0-x7k2p", channel)
            verdict = bot.verdict(channel)
            assert verdict_payload(verdict)["verdict"] == "error"
            assert "cannot read cluster prefixed" in shown(verdict)


def test_a_config_that_never_ends(slack: DevSlack) -> None:
    done = run(["serve"], serve_env(slack, Path("/dev/zero")))
    assert done.returncode == EXIT_USAGE
    assert "KUBEWHY_CONFIG /dev/zero: larger than 1 MiB" in done.stderr
