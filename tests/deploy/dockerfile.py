"""The Dockerfile's instructions, so the tests can hold the manifests to what the image really does
(its user, its port, its health check) without a Docker engine."""

from __future__ import annotations

import json
import sys

from devtools.corpus import ROOT

DOCKERFILE = ROOT / "Dockerfile"

Stage = dict[str, list[str]]
"""The arguments of each instruction of one stage, by instruction, continuation lines joined."""


def stages() -> dict[str, Stage]:
    """Every stage by name (`FROM … AS name`); the unnamed last stage is the image that ships, ""."""
    found: dict[str, Stage] = {}
    current: Stage | None = None
    logical = ""
    for line in DOCKERFILE.read_text().splitlines():
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        logical += line.rstrip().removesuffix("\\")
        if line.rstrip().endswith("\\"):
            continue
        instruction, _, arguments = logical.strip().partition(" ")
        logical = ""
        if instruction.upper() == "FROM":
            _, _, name = arguments.partition(" AS ")
            current = found.setdefault(name.strip(), {})
        if current is not None:
            current.setdefault(instruction.upper(), []).append(arguments.strip())
    return found


def runtime_stage() -> Stage:
    return stages()[""]


def user() -> tuple[int, int]:
    """The numeric `USER uid:gid` the image runs as."""
    (spec,) = runtime_stage()["USER"]
    uid, _, gid = spec.partition(":")
    return int(uid), int(gid)


def exposed_port() -> int:
    (port,) = runtime_stage()["EXPOSE"]
    return int(port)


def healthcheck() -> list[str]:
    """The HEALTHCHECK command (exec form), with `python` bound to this interpreter."""
    (spec,) = runtime_stage()["HEALTHCHECK"]
    command: list[str] = json.loads(spec.partition(" CMD ")[2])
    assert command[0] == "python"
    return [sys.executable, *command[1:]]
