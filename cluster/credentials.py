"""Kubeconfig `exec` credential plugins (`client.authentication.k8s.io`), run under a timeout.

The `kubernetes` client runs a kubeconfig's plugin with no timeout and logs its failures instead of
raising them (`kubernetes/config/exec_provider.py`, `kube_config.py` `_load_from_exec_plugin`): a
plugin waiting for a login prompt hangs the caller forever, and a failing one surfaces later as a
401. So kubewhy runs the plugin itself, as the protocol describes (Kubernetes docs, "client-go
credential plugins": `KUBERNETES_EXEC_INFO` in, an `ExecCredential` on stdout), with the same timeout
as an API call, never interactively, and hands the client the credential it returned. A token that
expires is fetched again, under the same timeout, by the first call after its expiry.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cluster.errors import ClusterError
from cluster.kube import ConfigNode, Configuration
from cluster.transport import truncate
from diagnosis.objects import mapping, sequence, text, timestamp

_HINT = (
    "run the plugin by hand (the kubeconfig's users[].user.exec) to see what it waits for or why it"
    " fails; kubewhy runs it non-interactively"
)
_OUTPUT_LIMIT = 1 << 20
"""An ExecCredential is a few kilobytes; more is not one."""


@dataclass(frozen=True)
class Plugin:
    """One kubeconfig user's `exec` section."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    api_version: str
    cwd: str | None
    cluster: Mapping[str, Any] | None
    """The cluster's kubeconfig entry, passed to the plugin when it asks (`provideClusterInfo`)."""

    @classmethod
    def of(cls, section: Mapping[str, Any], folder: str | None, cluster: Mapping[str, Any]) -> Plugin:
        command, api_version = text(section.get("command")), text(section.get("apiVersion"))
        if not command or not api_version:
            raise ClusterError("the kubeconfig's exec section needs command and apiVersion", _HINT)
        return cls(
            command=command,
            args=tuple(str(a) for a in sequence(section.get("args"))),
            env={
                text(e.get("name")): text(e.get("value")) for e in map(mapping, sequence(section.get("env")))
            },
            api_version=api_version,
            cwd=folder,
            cluster=cluster if section.get("provideClusterInfo") else None,
        )

    def run(self, timeout: float) -> dict[str, Any]:
        """The plugin's `status` (token or client certificate, maybe an expiry), or ClusterError naming
        the plugin: it did not answer within `timeout` (it is killed, with what it started), failed,
        or answered something else than an ExecCredential."""
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster is not None:
            spec["cluster"] = dict(self.cluster)
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            process = subprocess.Popen(
                [self.command, *self.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,  # its own process group, to stop whatever it started too
            )
        except OSError as error:
            raise ClusterError(
                f"cannot run the kubeconfig's credential plugin {self.command}: {error.strerror}", _HINT
            ) from None
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ClusterError(
                f"the kubeconfig's credential plugin {self.command} gave no credential within {timeout:g} s",
                _HINT,
            ) from None
        if process.returncode != 0:
            said = truncate(err.decode("utf-8", "replace")) or "nothing on stderr"
            raise ClusterError(
                f"the kubeconfig's credential plugin {self.command} failed"
                f" (exit {process.returncode}): {said}",
                _HINT,
            )
        return self._status(out)

    def _status(self, out: bytes) -> dict[str, Any]:
        try:
            credential = mapping(json.loads(out[:_OUTPUT_LIMIT]))
        except ValueError:
            credential = {}
        status = mapping(credential.get("status"))
        if credential.get("kind") != "ExecCredential" or not (
            status.get("token") or (status.get("clientCertificateData") and status.get("clientKeyData"))
        ):
            raise ClusterError(
                f"the kubeconfig's credential plugin {self.command} did not print an ExecCredential with a"
                " token or a client certificate and key",
                _HINT,
            )
        return dict(status)


class Credential:
    """The credential of a plugin, kept in a client configuration and fetched again once expired."""

    def __init__(self, plugin: Plugin, timeout: float) -> None:
        self._plugin = plugin
        self._timeout = timeout
        self._lock = threading.Lock()
        self.expiry: datetime | None = None

    def fetch(self, user: dict[str, Any]) -> None:
        """Run the plugin and write its credential into the kubeconfig `user`, as a static one."""
        status = self._plugin.run(self._timeout)
        self.expiry = timestamp(status.get("expirationTimestamp"))
        if status.get("token"):
            user["token"] = text(status["token"])
            return
        for field, key in (
            ("client-certificate-data", "clientCertificateData"),
            ("client-key-data", "clientKeyData"),
        ):
            user[field] = base64.b64encode(text(status[key]).encode()).decode()

    def refresh(self, configuration: Configuration) -> None:
        """The client's hook before each call: an expired token is fetched again (one thread runs the
        plugin; the others wait for its result)."""
        with self._lock:
            if self.expiry is None or datetime.now(UTC) < self.expiry:
                return
            user: dict[str, Any] = {}
            self.fetch(user)
            if token := user.get("token"):  # a client certificate is kept until the process restarts
                configuration.api_key["BearerToken"] = f"Bearer {token}"


def take_exec(config: ConfigNode, context: str | None, timeout: float) -> Credential | None:
    """Replace the exec section of `context`'s user (the current context's when None) in the merged
    kubeconfig `config` by the credential its plugin returns now; None when the user has no exec (or
    the context is not there: the client then says so)."""
    merged = mapping(config.value)
    chosen = context or text(merged.get("current-context"))
    found = mapping(_named(merged.get("contexts"), chosen)[0].get("context"))
    entry, path = _named(merged.get("users"), text(found.get("user")))
    user = entry.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("exec"), dict):
        return None
    cluster = mapping(_named(merged.get("clusters"), text(found.get("cluster")))[0].get("cluster"))
    folder = str(Path(path).parent) if path else None
    credential = Credential(Plugin.of(user.pop("exec"), folder, cluster), timeout)
    credential.fetch(user)
    return credential


def _named(entries: object, name: str) -> tuple[dict[str, Any], str | None]:
    """The entry called `name` of a merged kubeconfig's list, and the file it came from (the merger
    wraps each entry in a ConfigNode that knows it: relative paths are relative to that file)."""
    for entry in sequence(entries):
        value = entry.value if isinstance(entry, ConfigNode) else entry
        if isinstance(value, dict) and value.get("name") == name:
            return value, getattr(entry, "path", None)
    return {}, None
