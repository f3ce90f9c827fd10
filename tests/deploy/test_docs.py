"""The configuration reference names every setting the bot reads, and nothing it does not: the
environment variables of `bot.settings.Settings` and every key of the KUBEWHY_CONFIG model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import get_args, get_origin

from pydantic import BaseModel

from bot.settings import Config, Settings
from devtools.corpus import ROOT

SECTION = "## Configuration reference"


def reference() -> str:
    """The configuration reference section of README.md."""
    readme = (ROOT / "README.md").read_text()
    assert SECTION in readme, f"README.md has no '{SECTION}'"
    return readme.split(SECTION, 1)[1].split("\n## ", 1)[0]


def documented(heading: str) -> set[str]:
    """The keys in the first column of the table under `### heading`."""
    table = reference().split(f"### {heading}", 1)[1].split("\n### ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE))


def config_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key path of the config file; a mapping's keys are written NAME (clusters) or ID (channels)."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        yield prefix + name
        if get_origin(annotation) is dict:
            value = get_args(annotation)[1]
            if isinstance(value, type) and issubclass(value, BaseModel):
                placeholder = "NAME" if name == "clusters" else "ID"
                yield from config_keys(value, f"{prefix}{name}.{placeholder}.")
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from config_keys(annotation, f"{prefix}{name}.")


def test_every_environment_variable_is_documented() -> None:
    assert documented("Environment") == {name.upper() for name in Settings.model_fields}


def test_every_config_key_is_documented() -> None:
    keys = set(config_keys(Config))
    # A section key (`allow`, `watch`) needs no row of its own when its keys have one.
    sections = {key for key in keys if any(other.startswith(key + ".") for other in keys)}
    rows = documented("`KUBEWHY_CONFIG`")
    assert rows - keys == set()
    assert keys - sections - rows == set()

