"""How `make test` shares the suite between its two pytest-xdist workers (`--dist loadgroup`): a
module's tests stay together (its module-scoped fixtures, such as a real API server, start once),
and so do the tests of a directory whose fixtures outlive a module (the Slack tier's world of
clusters, the reliability rig), which would otherwise start once per worker."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = ("slack", "reliability")
"""Directories of `tests/` whose session- or package-scoped fixtures every module there uses."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        path = item.path.relative_to(root)
        group = path.parts[0] if path.parts[0] in SHARED else path.as_posix()
        item.add_marker(pytest.mark.xdist_group(group))
