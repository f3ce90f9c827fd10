"""What `kubectl apply -k deploy/overlays/<overlay>` would send: the overlay rendered by the real kubectl
(kustomize is built in), as a tuple of objects. Callers must not mutate them (copy first)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from devtools.corpus import ROOT

DEPLOY = ROOT / "deploy"
OVERLAYS = ("http", "socket-mode")
KUBECTL = Path(sys.executable).parent / "kubectl"

Object = dict[str, Any]


@functools.cache
def render(overlay: str) -> tuple[Object, ...]:
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(DEPLOY / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"kubectl kustomize deploy/overlays/{overlay} failed:\n{result.stderr}"
    return tuple(obj for obj in yaml.safe_load_all(result.stdout) if obj)


def the(objects: tuple[Object, ...], kind: str) -> Object:
    """The one object of `kind` among `objects` (failing the test if there is not exactly one)."""
    found = [obj for obj in objects if obj["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {[obj['metadata']['name'] for obj in found]}"
    return found[0]


def container(objects: tuple[Object, ...]) -> Object:
    """The Deployment's one container."""
    only: Object
    (only,) = the(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    return only


def env_names(objects: tuple[Object, ...]) -> set[str]:
    return {var["name"] for var in container(objects).get("env", [])}


FAKE_SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-1-2-kubewhy-deploy-test",
    "SLACK_SIGNING_SECRET": "kubewhy-deploy-test-signing-secret",
    "SLACK_APP_TOKEN": "xapp-1-kubewhy-deploy-test",
}
"""Values of the shape the bot checks for, standing in for the Secret's."""


def pod_env(objects: tuple[Object, ...]) -> dict[str, str]:
    """The container's environment as the pod would have it, with FAKE_SECRETS for the Secret's keys."""
    return {
        var["name"]: var["value"] if "value" in var else FAKE_SECRETS[var["valueFrom"]["secretKeyRef"]["key"]]
        for var in container(objects)["env"]
    }
