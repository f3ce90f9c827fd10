"""What kubewhy says that depends on a LeaderWorkerSet release: one dated table, read from
kubernetes-sigs/lws (tags through v0.10.0, and the pull request that changes the one behaviour below).

Sentences and docstrings elsewhere name these entries instead of writing a version or a pull request
themselves, so that when a release ships the change, this table is the one place to change.
"""

from __future__ import annotations

from datetime import date

CHECKED = date(2026, 12, 3)
"""When the table was last checked against the LeaderWorkerSet repository."""

SOURCE = "kubernetes-sigs/lws v0.10.0"
"""The release whose controllers, webhooks and API types the explainer's rules were read from."""

EMPTY_SELECTOR_RELEASES = "LWS ≤ v0.10.0"
"""The releases that create a group's workers with nodeSelector `<topology key>: ""` when the leader's
node is gone (no node matches it)."""

EMPTY_SELECTOR_CHANGE = "PR #946"
"""What makes the controller stop instead (`getting node "<node>"` in its log)."""
