"""The Dockerfile without a Docker engine: hadolint accepts it, its health check really tells a healthy
server from a sick or absent one, its build context holds every package kubewhy installs, and its
dependency step installs the runtime dependencies only."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from devtools.corpus import ROOT
from tests.deploy import dockerfile

HADOLINT = Path(sys.executable).parent / "hadolint"


def test_hadolint_accepts_the_dockerfile() -> None:
    result = subprocess.run(
        [HADOLINT, str(dockerfile.DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_is_a_pinned_slim_python_running_kubewhy_serve() -> None:
    stage = dockerfile.runtime_stage()
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile.DOCKERFILE.read_text(), re.MULTILINE)
    assert base is not None
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base[1])
    assert stage["FROM"] == ["${PYTHON_IMAGE}"]
    assert stage["ENTRYPOINT"] == ['["kubewhy"]']
    assert stage["CMD"] == ['["serve"]']
    assert dockerfile.user()[0] >= 10000  # clear of the distribution's system users


async def run_healthcheck(port: int) -> int:
    process = await asyncio.create_subprocess_exec(
        *dockerfile.healthcheck(), env={**os.environ, "KUBEWHY_PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    return await process.wait()


@pytest.fixture
async def server() -> AsyncIterator[tuple[int, dict[str, int]]]:
    """A local HTTP server whose /healthz answers with the status in the returned dict."""
    state = {"status": 200}

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(status=state["status"], text="ok" if state["status"] == 200 else "sick")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield port, state
    finally:
        await runner.cleanup()


async def test_healthcheck_passes_on_200_and_fails_on_an_error_or_no_server(
    server: tuple[int, dict[str, int]],
) -> None:
    port, state = server
    assert await run_healthcheck(port) == 0
    state["status"] = 503
    assert await run_healthcheck(port) != 0
    state["status"] = 404
    assert await run_healthcheck(port) != 0


async def test_healthcheck_fails_when_nothing_listens(unused_tcp_port: int) -> None:
    assert await run_healthcheck(unused_tcp_port) != 0


def test_build_context_admits_exactly_what_pip_installs() -> None:
    """.dockerignore is an allowlist: a package added to pyproject.toml but not admitted here would be
    missing from the image (the demo snapshots are package data of `bot`)."""
    lines = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    admitted = {line.removeprefix("!").rstrip("/") for line in lines if line.startswith("!")}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {name.rstrip("*") for name in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert admitted == packages | {"pyproject.toml", project["project"]["readme"]}


def test_dependency_step_lists_the_runtime_dependencies_only(tmp_path: Path) -> None:
    """Runs the Dockerfile's own shell line that turns pyproject.toml into requirements.txt (the test
    extra must stay out of the image)."""
    (run,) = (line for line in dockerfile.stages()["build"]["RUN"] if "requirements.txt" in line)
    write = run.partition("&&")[0]
    path = os.pathsep.join((os.path.dirname(sys.executable), os.environ["PATH"]))  # `python` is ours
    result = subprocess.run(
        ["/bin/sh", "-c", f"cp {ROOT / 'pyproject.toml'} . && {write}"],
        cwd=tmp_path, env={**os.environ, "PATH": path},
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (tmp_path / "requirements.txt").read_text().splitlines() == project["dependencies"]
