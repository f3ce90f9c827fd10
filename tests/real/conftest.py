"""The real API server tier: one kube-apiserver and etcd per test module (`devtools.kubereal`), each case
loaded into it and taken out again. Skipped, with the reason, where `KUBEBUILDER_ASSETS` names no
binaries (`.ci/run` sets it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.kubereal import Server, missing, serve
from tests.real.support import install_bot


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    with serve() as running:
        yield running


@pytest.fixture(scope="module")
def bot(server: Server) -> Path:
    """A kubeconfig of the bot's ServiceAccount, `deploy/` installed in the module's server."""
    return install_bot(server)
