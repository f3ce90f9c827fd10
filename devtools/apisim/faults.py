"""Fault injection: what the simulated API server does wrong, changeable while it runs.

sim.faults.latency = 0.5                       # every answer 0.5 s late
sim.faults.hold() ... sim.faults.release()     # every answer waits until released
sim.faults.forbid("pods", verb="list")         # RBAC refuses listing pods
sim.faults.fail(500, times=2)                  # the next two requests answer 500
sim.faults.throttle(times=1, retry_after=1)    # the next request answers 429, Retry-After: 1
sim.faults.drop(times=1)                       # the next request's connection is closed unanswered
sim.faults.fail(503, None, "pods", verb="watch")  # every watch of pods answers 503

Faults apply to watches when they are opened; `sim.drop_watches()` cuts the ones already open.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devtools.apisim.server import Request

DROP = 0
"""The status of a fault that closes the connection without an answer."""


@dataclass
class Fault:
    status: int
    resource: str | None = None
    """Plural resource name (`pods`, `pods/log`, `workloads`); None = every request."""
    verb: str | None = None
    """`get`, `list` or `watch`; None = every verb."""
    remaining: int | None = None
    """How many more requests it spoils; None = all of them."""
    retry_after: str | None = None
    message: str | None = None
    """The Status message of the answer (a default one when None)."""

    def applies_to(self, request: Request) -> bool:
        return (self.resource is None or self.resource == request.rbac_resource) and (
            self.verb is None or self.verb == request.verb
        )


class Faults:
    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        """Seconds every answer waits before it is sent."""
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._released.set()

    def hold(self) -> None:
        """Every answer waits until `release()`: a cluster slow for exactly as long as a test needs."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def wait_for_release(self) -> None:
        self._released.wait()

    def forbid(self, resource: str, verb: str | None = None) -> None:
        """RBAC refuses `verb` (every verb when None) on `resource` from now on (403 Forbidden)."""
        self._add(Fault(403, resource, verb))

    def fail(
        self,
        status: int = 500,
        times: int | None = 1,
        resource: str | None = None,
        retry_after: int | None = None,
        message: str | None = None,
        verb: str | None = None,
    ) -> None:
        """The next `times` requests (for `resource` and `verb`, or any) answer `status`; None = forever."""
        self._add(
            Fault(status, resource, verb, times, None if retry_after is None else str(retry_after), message)
        )

    def throttle(self, times: int | None = 1, retry_after: int = 1, resource: str | None = None) -> None:
        """429 Too Many Requests with `Retry-After`, as API Priority and Fairness answers."""
        self.fail(429, times, resource, retry_after)

    def drop(self, times: int | None = 1, resource: str | None = None) -> None:
        """Close the next connections without answering (a crashed or restarting API server)."""
        self._add(Fault(DROP, resource, None, times))

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self.latency = 0.0
        self.release()

    def take(self, request: Request) -> Fault | None:
        """The fault that spoils this request, if any, counting it as used."""
        with self._lock:
            for fault in self._faults:
                if fault.applies_to(request) and fault.remaining != 0:
                    if fault.remaining is not None:
                        fault.remaining -= 1
                    return fault
        return None

    def _add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)
