"""How `make test` shares the suite between its two pytest-xdist workers: a module's tests stay on one
worker (its module-scoped fixtures, such as a real API server, start once), and so do all the tests of
a directory whose fixtures outlive a module (the Slack tier's world of clusters, the reliability rig),
which would otherwise start once on each worker. The longest of these scopes are handed out first."""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

SHARED = ("slack", "reliability")
"""Directories of `tests/` whose session- or package-scoped fixtures every module there uses."""


LONGEST = (
    "tests/real/test_corpus.py",
    "tests/slack",
    "tests/kubectl/test_commands.py",
    "tests/live/test_capture.py",
    "tests/deploy/test_rbac.py",
    "tests/real/test_cache.py",
    "tests/bench/test_benchmarks.py",
)
"""The scopes that take a worker longest (seconds per test from `pytest --junitxml`), longest first.
They are collected, and so handed out, before the others, in this order: a worker free at the end
takes a short one, where one handed out last could leave a worker alone with it for minutes while
the other has nothing left."""


def _scope(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 and parts[1] in SHARED else path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {scope: at for at, scope in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(_scope(item.nodeid), len(LONGEST)))  # stable: modules stay whole


class _ByFixtureScope(LoadScopeScheduling):  # type: ignore[misc]  # pytest-xdist ships no types
    """pytest-xdist's scheduling by scope, whose scope is a test's module, or its directory in SHARED."""

    def _split_scope(self, nodeid: str) -> str:
        return _scope(nodeid)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling:
    config.option.loadscopereorder = False  # the collection's order (`LONGEST` first), not by count
    return _ByFixtureScope(config, log)
