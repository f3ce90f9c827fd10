"""What kubewhy says that depends on a JobSet release: one dated table, read from
kubernetes-sigs/jobset (tags through v0.12.0, `release-0.12`, and `main` at 08dfbdfd, 2026-08-18).

Sentences elsewhere name these entries instead of writing a version or a pull request themselves, so
that when a release ships a fix, this table is the one place to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

CHECKED = date(2026, 8, 18)
"""When the table was last checked against the JobSet repository (`main` at 08dfbdfd)."""


@dataclass(frozen=True)
class Upstream:
    """A behaviour of JobSet, the releases that have it, and what changes it upstream."""

    behaviour: str
    releases: str
    """The releases that behave so, e.g. `v0.12.0 and earlier`."""
    change: str
    """What changes it upstream, and its state on the date checked."""

    @property
    def note(self) -> str:
        """`Version: <releases> <behaviour>; <change> (as of 2026-08-18).`"""
        return f"Version: {self.releases} {self.behaviour}; {self.change} (as of {CHECKED.isoformat()})."


DUPLICATE_LEADER = Upstream(
    behaviour="count a Failed leader beside its replacement, refusing every follower forever",
    releases="JobSet v0.12.0 and earlier (and release-0.12)",
    change="main ignores Failed and Succeeded leaders since PR #1276 (merged 2026-07-14, not yet released)",
)
SELECTOR_BEFORE_LEADER = Upstream(
    behaviour="check the follower's nodeSelector before its leader, so an unscheduled leader reads as a "
    "missing selector",
    releases="JobSet v0.12.0 and earlier, and main,",
    change="PR #1188 (issue #1187, open) would check the leader first",
)
LEADER_NODE_GONE = Upstream(
    behaviour="refuse a follower whose leader's node is gone (v0.10.x and earlier admitted it with an "
    "empty selector that never schedules, issue #1088)",
    releases="JobSet v0.11.0 and later",
    change="PR #1089 made the webhook return the error",
)
RESTARTING_CONDITION = Upstream(
    behaviour="set the RestartingJobSet condition while a restart is under way (older releases show "
    "restarts only in status.restarts)",
    releases="JobSet v0.12.0 and later",
    change="not in v0.11.x",
)
POD_WEBHOOK_SELECTOR = Upstream(
    behaviour="send only JobSet pods (objectSelector `jobset.sigs.k8s.io/jobset-name`) to the pod webhooks",
    releases="JobSet v0.3.1 and later",
    change="v0.3.0 sent every pod (issue #361)",
)

JOB_CREATION_EVENT = Upstream(
    behaviour="record a Warning `JobCreationFailed` event on the JobSet when a child Job's create is refused",
    releases="JobSet v0.5.0 and later",
    change="earlier releases only log it",
)

TABLE: tuple[Upstream, ...] = (
    DUPLICATE_LEADER,
    SELECTOR_BEFORE_LEADER,
    LEADER_NODE_GONE,
    RESTARTING_CONDITION,
    POD_WEBHOOK_SELECTOR,
    JOB_CREATION_EVENT,
)
