"""JSON over HTTPS to the real API server, as one user: what loading a snapshot and setting up RBAC need,
and nothing of the `kubernetes` client (the code under test)."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode, urlsplit


class ApiError(Exception):
    """The server refused a request: its status code and its own message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Resource(NamedTuple):
    """How the server serves a kind: its plural name, whether it is namespaced, whether it has a
    `/status` subresource."""

    plural: str
    namespaced: bool
    status: bool


class Api:
    """One keep-alive connection to the server with a bearer token. Not thread-safe: one per thread."""

    def __init__(self, url: str, ca: Path, token: str) -> None:
        parts = urlsplit(url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 443
        self._tls = ssl.create_default_context(cafile=str(ca))
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._connection: http.client.HTTPSConnection | None = None
        self._resources: dict[str, dict[str, Resource]] = {}

    def call(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        query: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """The decoded answer; ApiError for a 4xx or 5xx. A connection the server closed is opened
        again once."""
        target = f"{path}?{urlencode(query)}" if query else path
        data = json.dumps(body).encode() if body is not None else None
        headers = {**self._headers, **({"Content-Type": content_type} if data is not None else {})}
        status, raw = self._send(method, target, data, headers)
        if status >= 400:
            raise ApiError(status, _message(raw))
        return json.loads(raw) if raw else None

    def ready(self) -> bool:
        """/readyz answers ok (False while the server starts, refuses connections or is not ready)."""
        try:
            return self._send("GET", "/readyz", None, self._headers) == (200, b"ok")
        except (http.client.HTTPException, OSError):
            return False

    def _send(
        self, method: str, target: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        try:
            return self._exchange(method, target, data, headers)
        except (http.client.HTTPException, OSError):
            self.close()  # a kept-alive connection the server closed: once more on a new one
        return self._exchange(method, target, data, headers)

    def _exchange(
        self, method: str, target: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        if self._connection is None:
            self._connection = http.client.HTTPSConnection(
                self._host, self._port, context=self._tls, timeout=60
            )
        self._connection.request(method, target, body=data, headers=headers)
        response = self._connection.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def resource(self, api_version: str, kind: str) -> Resource | None:
        """How the server serves `kind` in `api_version`, from discovery (None when it does not)."""
        return self.resources(api_version).get(kind)

    def resources(self, api_version: str) -> dict[str, Resource]:
        """Every kind `api_version` serves."""
        if api_version not in self._resources:
            try:
                found = self.call("GET", base(api_version))["resources"]
            except ApiError as error:
                if error.code != 404:
                    raise
                found = []
            names = {r["name"] for r in found}
            self._resources[api_version] = {
                r["kind"]: Resource(r["name"], r["namespaced"], f"{r['name']}/status" in names)
                for r in found
                if "/" not in r["name"]
            }
        return self._resources[api_version]

    def forget_discovery(self) -> None:
        """Read discovery again next time (after CRDs are created)."""
        self._resources.clear()


def base(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def _message(raw: bytes) -> str:
    text = raw.decode(errors="replace")
    try:
        return str(json.loads(text).get("message") or text)[:500]
    except (ValueError, AttributeError):
        return text[:500]
