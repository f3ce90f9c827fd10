"""The one builder of the kubectl commands kubewhy suggests, and the commands both questions share.

Every command is one `kubectl` invocation, every argument shell-quoted (`shlex.join`), and every name
checked against the Kubernetes name rules first: a builder given a name that could not exist in a
cluster returns None rather than a surprising command, and `collect` drops it. Read commands use only
what a plain API server serves (get, describe, logs, events), so they run unchanged against a cluster
or the API simulator; commands that change the cluster carry `changes=True`.

The commands only one question suggests, with its wording, are in `diagnosis.triage.commands` and
`diagnosis.jobset.commands`, built with `kubectl` from here.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from diagnosis.model import Command
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value


def kubectl(purpose: str, *args: str, changes: bool = False) -> Command:
    """`kubectl ARGS…`, quoted where the shell needs it, and what it is for."""
    return Command(shlex.join(("kubectl", *args)), purpose, changes)


def collect(*commands: Command | None) -> tuple[Command, ...]:
    """The commands given, without the ones a builder refused and without repeats, in order."""
    seen: dict[str, Command] = {}
    for command in commands:
        if command is not None and command.text not in seen:
            seen[command.text] = command
    return tuple(seen.values())


def valid_names(namespace: str, *names: str) -> bool:
    """A namespace, and object names in it, that could exist."""
    return is_dns1123_label(namespace) and all(is_dns1123_subdomain(n) for n in names)


def label_selector(**pairs: str) -> str | None:
    """`k=v,…` from label keys and values, or None when one could not be a label (or is empty: an
    object named "" does not exist)."""
    if not all(is_label_key(k) and v and is_label_value(v) for k, v in pairs.items()):
        return None
    return ",".join(f"{k}={v}" for k, v in pairs.items())


def describe(kind: str, namespace: str, name: str, purpose: str) -> Command | None:
    """`kubectl describe KIND NAME -n NS`."""
    if not valid_names(namespace, name):
        return None
    return kubectl(purpose, "describe", kind, name, "-n", namespace)


def events_about(namespace: str, name: str, purpose: str) -> Command | None:
    """The events recorded about one object, by its name."""
    if not valid_names(namespace, name):
        return None
    field = f"involvedObject.name={name}"
    return kubectl(purpose, "get", "events", "-n", namespace, "--field-selector", field)


def describe_node(node: str, purpose: str) -> Command | None:
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(purpose, "describe", "node", node)


def pods_on_node(node: str, purpose: str) -> Command | None:
    """Every pod bound to the node, in every namespace."""
    if not is_dns1123_subdomain(node):
        return None
    return kubectl(purpose, "get", "pods", "-A", "--field-selector", f"spec.nodeName={node}", "-o", "wide")


def merge_patch(
    resource: str, namespace: str, name: str, change: Mapping[str, Any], purpose: str
) -> Command | None:
    """`kubectl patch RESOURCE NAME -n NS --type merge -p JSON`: a JSON merge patch (RFC 7386)."""
    if not valid_names(namespace, name):
        return None
    body = json.dumps(change, separators=(",", ":"))
    return kubectl(
        purpose, "patch", resource, name, "-n", namespace, "--type", "merge", "-p", body, changes=True
    )
