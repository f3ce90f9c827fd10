"""The structured allocator's search (`k8s.io/dynamic-resource-allocation/structured`): devices for
every request of the pod's claims at once, requests in order, alternatives in order, devices
distinct, each claim's matchAttribute constraints kept; all or nothing, the first solution wins."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

from diagnosis.dra_objects import (
    Claim,
    Device,
    Subrequest,
)

SEARCH_LIMIT = 100_000
"""Steps of the allocation search per node before kubewhy gives up (the scheduler's own search is
bounded by its 10 s Filter timeout)."""


@dataclass(frozen=True)
class Ask:
    """One request alternative of one claim, in the allocator's order."""

    claim: Claim
    request: str
    alternatives: tuple[Subrequest, ...]


class Choice(NamedTuple):
    """What a node offers one subrequest (a tuple: one per node and subrequest, thousands a run)."""

    sub: Subrequest
    matching: tuple[Device, ...]
    """Devices the node can reach that match the class and request selectors (pools complete)."""
    untainted: tuple[Device, ...]
    free: tuple[Device, ...]
    """Untainted and held by no other claim."""
    updating: str = ""
    """A pool the node reaches whose slices are not all published yet: an `All` request fails on it
    (the allocator cannot know what "all" is); other requests still use its devices."""


def needed(choice: Choice) -> int:
    return max(len(choice.matching), 1) if choice.sub.all_devices else choice.sub.count


def allocate(
    asks: Sequence[Ask], options: Sequence[Sequence[Choice]]
) -> dict[str, tuple[Device, ...]] | None:
    """Devices for every ask (request name → devices), or None: requests in order, alternatives in
    order, devices distinct, each claim's matchAttribute constraints kept; the first solution wins."""
    if not all(any(_alone(c) for c in choices) for choices in options):
        return None  # some request has no alternative the free devices could serve even alone
    steps = [0]
    return _search(asks, options, 0, {}, set(), steps)


def _alone(choice: Choice) -> bool:
    """Whether the free devices could serve the alternative if no other request took any."""
    if choice.sub.all_devices:
        return bool(choice.matching) and not choice.updating and len(choice.free) == len(choice.matching)
    return len(choice.free) >= choice.sub.count


def _search(
    asks: Sequence[Ask],
    options: Sequence[Sequence[Choice]],
    index: int,
    chosen: dict[str, tuple[Device, ...]],
    used: set[str],
    steps: list[int],
) -> dict[str, tuple[Device, ...]] | None:
    if index == len(asks):
        return dict(chosen)
    ask = asks[index]
    for choice in options[index]:
        if choice.sub.all_devices:
            # `All`: every matching device, at least one, each of them free.
            if not choice.matching or choice.updating or len(choice.free) != len(choice.matching):
                continue
            picks: Iterable[tuple[Device, ...]] = (choice.matching,)
        else:
            pool = [d for d in choice.free if d.id not in used]
            picks = _combinations(pool, choice.sub.count)
        for devices in picks:
            steps[0] += 1
            if steps[0] > SEARCH_LIMIT:
                return None
            if any(d.id in used for d in devices):
                continue
            key = f"{ask.claim.namespace}/{ask.claim.name}/{choice.sub.name}"
            chosen[key] = devices
            if _constraints_hold(ask.claim, chosen):
                used.update(d.id for d in devices)
                found = _search(asks, options, index + 1, chosen, used, steps)
                if found is not None:
                    return found
                used.difference_update(d.id for d in devices)
            del chosen[key]
    return None


def _combinations(pool: Sequence[Device], count: int) -> Iterator[tuple[Device, ...]]:
    if count <= len(pool):
        yield from combinations(pool, count)


def _constraints_hold(claim: Claim, chosen: Mapping[str, tuple[Device, ...]]) -> bool:
    """Every matchAttribute constraint of the claim: all devices of its requests have the attribute,
    with one value."""
    prefix = f"{claim.namespace}/{claim.name}/"
    mine = {k.removeprefix(prefix): v for k, v in chosen.items() if k.startswith(prefix)}
    for constraint in claim.spec.constraints:
        values = set()
        for request, devices in mine.items():
            parent = request.split("/", 1)[0]
            if (
                constraint.requests
                and parent not in constraint.requests
                and request not in constraint.requests
            ):
                continue
            for device in devices:
                value = device.attribute(constraint.attribute)
                if value is None:
                    return False
                values.add((type(value).__name__, value))
        if len(values) > 1:
            return False
    return True
