"""The kubectl commands only the LeaderWorkerSet explainer suggests, built with `diagnosis.commands`
(which says how every command is quoted and its names checked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from diagnosis.commands import describe, kubectl, label_selector, merge_patch, valid_names
from diagnosis.lws.keys import GROUP_INDEX_LABEL
from diagnosis.model import Command
from diagnosis.relations import LWS_NAME_LABEL

LWS = "leaderworkersets.leaderworkerset.x-k8s.io"
LWS_SYSTEM = "lws-system"
"""Where the release manifests install the LWS controller (`lws-controller-manager`, its pods
labelled `control-plane: controller-manager`)."""


def describe_lws(namespace: str, name: str) -> Command | None:
    return describe(LWS, namespace, name, "The LeaderWorkerSet's conditions, replicas and recent events")


def pods(namespace: str, lws: str, group: int | None = None) -> Command | None:
    """The LWS's pods (one group's, when `group` is given), with their nodes."""
    pairs = {LWS_NAME_LABEL: lws, **({GROUP_INDEX_LABEL: str(group)} if group is not None else {})}
    selector = label_selector(**pairs)
    if selector is None or not valid_names(namespace):
        return None
    what = f"Group {group} of {lws}: its leader and workers" if group is not None else f"The pods of {lws}"
    return kubectl(f"{what} and their nodes", "get", "pods", "-n", namespace, "-l", selector, "-o", "wide")


def statefulsets(namespace: str, lws: str) -> Command | None:
    selector = label_selector(**{LWS_NAME_LABEL: lws})
    if selector is None or not valid_names(namespace):
        return None
    return kubectl(
        "The leader StatefulSet and one worker StatefulSet per group (a group without one has no workers)",
        "get",
        "statefulsets",
        "-n",
        namespace,
        "-l",
        selector,
    )


def controller_log() -> Command:
    return kubectl(
        "The LWS controller's log: why it did not create a worker StatefulSet (it records no event)",
        "logs",
        "-n",
        LWS_SYSTEM,
        "-l",
        "control-plane=controller-manager",
        "--tail",
        "200",
    )


def patch(namespace: str, lws: str, change: Mapping[str, Any], purpose: str) -> Command | None:
    """`kubectl patch` of the LWS with a JSON merge patch."""
    return merge_patch(LWS, namespace, lws, change, purpose)


def scale(namespace: str, lws: str, replicas: int) -> Command | None:
    if not valid_names(namespace, lws):
        return None
    return kubectl(
        f"Scale {lws} to {replicas} groups, what the placed pods' nodes can hold whole",
        "scale",
        LWS,
        lws,
        "-n",
        namespace,
        f"--replicas={replicas}",
        changes=True,
    )
