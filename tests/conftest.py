"""How `make test` shares the suite between its two pytest-xdist workers: a module's tests stay on one
worker (its module-scoped fixtures, such as a real API server, start once), and so do all the tests of
a directory whose fixtures outlive a module (the Slack tier's world of clusters, the reliability rig),
which would otherwise start once on each worker."""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

SHARED = ("slack", "reliability")
"""Directories of `tests/` whose session- or package-scoped fixtures every module there uses."""


class _ByFixtureScope(LoadScopeScheduling):  # type: ignore[misc]  # pytest-xdist ships no types
    """pytest-xdist's scheduling by scope, whose scope is a test's module, or its directory in SHARED."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        parts = path.split("/")
        return "/".join(parts[:2]) if len(parts) > 2 and parts[1] in SHARED else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling:
    return _ByFixtureScope(config, log)
