"""Leader election on a Lease (`coordination.k8s.io/v1`) in the bot's own namespace, so that of several
replicas one at a time does what must be done once (the sentinel's posts).

The algorithm is client-go's `tools/leaderelection` with its `LeaseLock`: every `retry` seconds each
replica reads the Lease; the holder writes a new `renewTime`; another replica takes the Lease only when
its holder has not renewed it for `leaseDurationSeconds` (timed on the replica's own clock from when
it last saw the record change, never by comparing clocks), or when the holder released it (empty
`holderIdentity`). Every write carries the `resourceVersion` that was read, so of two replicas racing
for an expired Lease the API server lets one win (409 Conflict for the other). A holder that cannot
renew for `renew_deadline` seconds stops leading before the Lease can expire, so two replicas never
lead at once. On shutdown the holder releases the Lease, and another takes over at its next try.

The holder also writes what another replica needs to carry on its work if it dies (`carry`, the
annotation `CARRIED`) at each renewal; a replica that takes the Lease over from a holder that stopped
renewing hands that annotation to `inherit`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cluster.errors import ClusterError, Conflict, NotFound
from cluster.transport import Target, Transport
from diagnosis.objects import mapping, spec, text

log = logging.getLogger(__name__)

GROUP = "coordination.k8s.io"
CARRIED = "kubewhy.dev/carried"
"""The Lease's annotation that holds what the holder's work needs to go on in another replica."""


@dataclass(frozen=True)
class LeaseOptions:
    namespace: str
    name: str = "kubewhy"
    duration: float = 15.0
    """`leaseDurationSeconds`: how long others wait for a holder that stopped renewing (client-go's
    default for controllers)."""
    renew_deadline: float = 10.0
    """How long the holder keeps leading without a successful renewal; less than `duration`."""
    retry: float = 2.0
    """Seconds between tries to acquire or renew."""

    def __post_init__(self) -> None:
        if not 0 < self.retry < self.renew_deadline < self.duration:
            raise ValueError("a lease needs 0 < retry < renew_deadline < duration")


Observer = Callable[[str, int, bool], None]
"""Called with the holder, the Lease's transitions and whether this replica leads, on each change."""
Inherit = Callable[[str], None]
"""Called with the `CARRIED` annotation of a holder this replica took the Lease over from."""


def _micro_time(moment: datetime) -> str:
    """A MicroTime as the API writes it: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Elector:
    """Acquires and renews one Lease until stopped. `leading` is set while this replica leads; ask
    `is_leader` right before acting, which also checks that the last renewal is recent."""

    def __init__(
        self, api: Transport, options: LeaseOptions, identity: str, observer: Observer | None = None
    ) -> None:
        self._api = api
        self.options = options
        self.identity = identity
        self._observer = observer
        self.carry: Callable[[], str] = str
        """What this replica's work needs to go on elsewhere, written at each renewal."""
        self.inherit: Inherit | None = None
        self.leading = asyncio.Event()
        self.holder = ""
        self.transitions = 0
        self._seen: tuple[str, str] = ("", "")
        """(holderIdentity, renewTime) of the record last read."""
        self._seen_at = 0.0
        """When (time.monotonic) the record last changed, as this replica saw it."""
        self._renewed_at = -math.inf

    @property
    def is_leader(self) -> bool:
        return self.leading.is_set() and time.monotonic() - self._renewed_at < self.options.renew_deadline

    async def run(self) -> None:
        """Try to acquire or renew every `retry` seconds until cancelled."""
        while True:
            try:
                held = await self._acquire_or_renew()
            except ClusterError as error:
                log.warning("lease %s/%s: %s", self.options.namespace, self.options.name, error)
                held = False
            if held:
                self._renewed_at = time.monotonic()
            recent = time.monotonic() - self._renewed_at < self.options.renew_deadline
            self._lead(held or (self.holder == self.identity and recent))
            await asyncio.sleep(self.options.retry)

    async def aclose(self) -> None:
        await self._api.close()

    async def release(self) -> None:
        """Give the Lease up (at shutdown), so that another replica takes it at its next try instead
        of waiting for it to expire."""
        if not self.leading.is_set():
            return
        self._lead(False)
        try:
            lease = (await self._api.send(self._target("get"), "GET")).body
            if text(spec(lease).get("holderIdentity")) != self.identity:
                return
            now = _micro_time(datetime.now(UTC))
            released = {
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": spec(lease).get("leaseTransitions") or 0,
            }
            await self._api.send(self._target("update"), "PUT", {**lease, "spec": released})
        except (ClusterError, NotFound) as error:
            log.warning(
                "lease %s/%s: could not release it: %s", self.options.namespace, self.options.name, error
            )

    def _target(self, verb: str, named: bool = True) -> Target:
        """The Lease (`named`), or the collection it is created in."""
        return Target(
            verb, "leases", self.options.namespace, GROUP, self.options.name if named else "", "lease"
        )

    async def _acquire_or_renew(self) -> bool:
        now = datetime.now(UTC)
        try:
            lease = (await self._api.send(self._target("get"), "GET")).body
        except NotFound:
            return await self._create(now)
        held = spec(lease)
        holder = text(held.get("holderIdentity"))
        transitions = int(held.get("leaseTransitions") or 0)
        record = (holder, text(held.get("renewTime")))
        if record != self._seen:
            self._seen, self._seen_at = record, time.monotonic()
        self._observe(holder, transitions)
        duration = float(held.get("leaseDurationSeconds") or self.options.duration)
        if holder and holder != self.identity and time.monotonic() < self._seen_at + duration:
            return False  # another replica holds it and has renewed it lately
        renewed = self._spec(now, held)
        if holder != self.identity:
            renewed |= {"acquireTime": _micro_time(now), "leaseTransitions": transitions + 1}
        try:
            await self._api.send(self._target("update"), "PUT", self._carrying(lease) | {"spec": renewed})
        except Conflict:
            return False  # another replica wrote it first
        if holder != self.identity:
            log.info("lease %s/%s acquired by %s", self.options.namespace, self.options.name, self.identity)
            self._took_over(holder, lease)
        self._observe(self.identity, int(renewed["leaseTransitions"]))
        return True

    async def _create(self, now: datetime) -> bool:
        lease = {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Lease",
            "metadata": {"name": self.options.name, "namespace": self.options.namespace},
            "spec": self._spec(now, {}) | {"acquireTime": _micro_time(now), "leaseTransitions": 0},
        }
        try:
            await self._api.send(self._target("create", named=False), "POST", lease)
        except Conflict:
            return False  # created by another replica meanwhile
        log.info("lease %s/%s created by %s", self.options.namespace, self.options.name, self.identity)
        self._observe(self.identity, 0)
        return True

    def _took_over(self, holder: str, lease: Mapping[str, Any]) -> None:
        """Hand what `holder`, which stopped renewing, carried to `inherit` (a released Lease has no
        holder: its replica ended its work itself)."""
        carried = mapping(mapping(lease.get("metadata")).get("annotations")).get(CARRIED)
        if holder and isinstance(carried, str) and self.inherit is not None:
            self.inherit(carried)

    def _carrying(self, lease: Mapping[str, Any]) -> dict[str, Any]:
        """The Lease with this replica's `carry` in its annotations."""
        metadata = mapping(lease.get("metadata"))
        annotations = {**mapping(metadata.get("annotations")), CARRIED: self.carry()}
        return {**lease, "metadata": {**metadata, "annotations": annotations}}

    def _spec(self, now: datetime, held: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **held,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": math.ceil(self.options.duration),
            "renewTime": _micro_time(now),
        }

    def _observe(self, holder: str, transitions: int) -> None:
        if (holder, transitions) != (self.holder, self.transitions):
            self.holder, self.transitions = holder, transitions
            self._notify()

    def _lead(self, leading: bool) -> None:
        if leading == self.leading.is_set():
            return
        if leading:
            self.leading.set()
        else:
            self.leading.clear()
            log.info(
                "lease %s/%s: %s no longer leads", self.options.namespace, self.options.name, self.identity
            )
        self._notify()

    def _notify(self) -> None:
        if self._observer is not None:
            self._observer(self.holder, self.transitions, self.leading.is_set())
