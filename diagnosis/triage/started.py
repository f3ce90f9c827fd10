"""Whether a placed pod runs and, if not, why: read from the pod's own status and events, never from
its logs.

The kubelet's words, in the order they hold a pod: its admission refusing the pod (`rejectPod` in
`pkg/kubelet/kubelet.go`: phase Failed, `status.reason` `UnexpectedAdmissionError` for a device
plugin's `Allocate` error, `OutOf<resource>`), an init container that fails, a container waiting for a
reason that does not pass by itself (`ImagePullBackOff`, `CrashLoopBackOff`, `RunContainerError` with
the NVIDIA container runtime's `nvidia-container-cli: initialization error …`), a container ended with
an error, then the Warning events of a pod whose containers are still being created (`FailedMount`,
`FailedAttachVolume`, `FailedCreatePodSandBox`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from diagnosis.events import event_type, is_about, last_time, message, newest_first, reason
from diagnosis.model import Started, StartState
from diagnosis.objects import (
    Object,
    condition,
    condition_true,
    mapping,
    meta,
    sequence,
    status,
    text,
    timestamp,
)

_ON_THEIR_WAY = frozenset({"ContainerCreating", "PodInitializing"})
"""Waiting reasons of a container that is being started as it should."""

_EVENT_REASONS = frozenset(
    {"FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "UnexpectedAdmissionError"}
)
"""The kubelet's and the attach-detach controller's Warning events that hold a pod before its
containers exist (with `OutOf<resource>`, `_ADMISSION_PREFIX`)."""

_ADMISSION_PREFIX = "OutOf"

_SAID = 240
"""Characters of a message a one-line cause quotes (a termination message may hold 4096)."""

IMAGE_REASONS = frozenset({"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"})

_DRIVER_WORDS = ("nvidia-container-cli", "nvml error", "driver not loaded", "NVIDIA driver")
"""The NVIDIA container runtime hook's and NVML's words for a driver that does not load."""


@dataclass(frozen=True)
class _Container:
    name: str
    init: bool
    item: Mapping[str, Any]

    @property
    def restarts(self) -> int:
        count = self.item.get("restartCount")
        return count if isinstance(count, int) and not isinstance(count, bool) else 0

    def state(self, key: str) -> Mapping[str, Any]:
        return mapping(mapping(self.item.get("state")).get(key))

    @property
    def last_terminated(self) -> Mapping[str, Any]:
        return mapping(mapping(self.item.get("lastState")).get("terminated"))


def started(pod: Object, events: Iterable[Object]) -> Started:
    """Whether the placed `pod` runs, is starting, or is held, and by what."""
    pod_status = status(pod)
    found = _containers(pod)
    total = sum(c.restarts for c in found)
    phase = pod_status.get("phase")
    if phase == "Failed" and text(pod_status.get("reason")):
        # The kubelet refused the pod (admission): no container was ever started.
        why = text(pod_status.get("reason"))
        return Started(
            StartState.FAILING, None, why, text(pod_status.get("message")) or None,
            _event_time(pod, events, why), total,
        )
    for container in found:
        if (held := _held(container)) is not None:
            return held
    if phase == "Succeeded":
        return Started(StartState.RUNNING, None, "Completed", None, None, total)
    if phase == "Running" and condition_true(pod, "Ready"):
        ready = condition(pod, "Ready") or {}
        since = timestamp(ready.get("lastTransitionTime"))
        return Started(StartState.RUNNING, None, None, None, since, total)
    if (event := _holding_event(pod, events)) is not None:
        said = message(event) or None
        return Started(StartState.FAILING, None, reason(event), said, last_time(event), total)
    return _starting(pod, found, total)


def trouble(seen: Started) -> str:
    """Which fix a failing pod's cause calls for: `image`, `device-plugin`, `driver`, or `` when
    none is known."""
    said = f"{seen.reason or ''} {seen.message or ''}"
    if any(word in said for word in _DRIVER_WORDS):
        return "driver"
    if seen.reason in IMAGE_REASONS:
        return "image"
    extended = (seen.reason or "").startswith(_ADMISSION_PREFIX) and "/" in (seen.reason or "")
    if seen.reason == "UnexpectedAdmissionError" or extended or "Allocate failed" in said:
        return "device-plugin"
    return ""


def line(seen: Started, cut: bool = True) -> str:
    """The cause in one line: `container cuda: CrashLoopBackOff after 9 restarts: last ended: Error,
    exit code 1: CUDA error: out of memory; back-off 5m0s …`; `cut`: a long message shortened, from
    the NVIDIA runtime's own words where it has some."""
    who = f"container {seen.container}: " if seen.container else ""
    restarts = f" after {seen.restarts} restart{'s' if seen.restarts > 1 else ''}" if seen.restarts else ""
    said = " ".join((seen.message or "").split())
    if cut and len(said) > _SAID:
        at = min((i for i in map(said.find, _DRIVER_WORDS) if i > 0), default=0)
        said = ("…" if at else "") + said[at : at + _SAID] + "…"
    return f"{who}{seen.reason or 'not Ready yet'}{restarts}{f': {said}' if said else ''}"


def _containers(pod: Object) -> list[_Container]:
    """The init containers in their order, then the app containers."""
    return [
        _Container(text(item.get("name")), field == "initContainerStatuses", item)
        for field in ("initContainerStatuses", "containerStatuses")
        for item in map(mapping, sequence(status(pod).get(field)))
    ]


def _held(container: _Container) -> Started | None:
    """A container waiting for a reason that does not pass by itself, or ended with an error."""
    waiting, last = container.state("waiting"), container.last_terminated
    why = text(waiting.get("reason"))
    if why and why not in _ON_THEIR_WAY:
        said = [f"last ended: {_ended(last)}"] if last else []
        said += [text(waiting.get("message"))] if text(waiting.get("message")) else []
        return Started(
            StartState.FAILING, container.name, why, "; ".join(said) or None,
            timestamp(last.get("finishedAt")), container.restarts,
        )
    ended = container.state("terminated")
    if ended and ended.get("exitCode") not in (0, None):
        return Started(
            StartState.FAILING, container.name, text(ended.get("reason")) or "Error", _ended(ended),
            timestamp(ended.get("finishedAt")), container.restarts,
        )
    return None


def _ended(terminated: Mapping[str, Any]) -> str:
    """`Error, exit code 1: CUDA error: no CUDA-capable device is detected`."""
    said = text(terminated.get("message")).strip()
    words = f"{text(terminated.get('reason')) or 'terminated'}, exit code {terminated.get('exitCode')}"
    return f"{words}: {said}" if said else words


def _holding_event(pod: Object, events: Iterable[Object]) -> Object | None:
    """The newest Warning event that holds the pod before its containers run."""
    held = [
        e for e in events
        if is_about(e, pod) and event_type(e) == "Warning"
        and (reason(e) in _EVENT_REASONS or reason(e).startswith(_ADMISSION_PREFIX))
    ]
    return newest_first(held)[0] if held else None


def _event_time(pod: Object, events: Iterable[Object], why: str) -> datetime | None:
    times = [last_time(e) for e in events if is_about(e, pod) and reason(e) == why]
    return max((t for t in times if t is not None), default=None)


def _starting(pod: Object, found: list[_Container], total: int) -> Started:
    """The first container not running or not Ready, since the pod was placed."""
    placed = condition(pod, "PodScheduled") or {}
    since = timestamp(placed.get("lastTransitionTime")) or timestamp(meta(pod).get("creationTimestamp"))
    for container in found:
        waiting = container.state("waiting")
        if waiting or (not container.init and container.item.get("ready") is not True):
            why = text(waiting.get("reason")) or None
            return Started(StartState.STARTING, container.name, why, None, since, container.restarts)
    return Started(StartState.STARTING, None, None, None, since, total)
