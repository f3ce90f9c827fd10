"""What a reader prepared for a classification, handed to `classify(view, prepared)` beside the view:
the view holds the objects, this what the reader worked out or keeps about them. It never changes an
answer: a view classified without it gets the same one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from diagnosis.triage.findings import Findings
from diagnosis.triage.fixes import Change
from diagnosis.triage.funnel import Shared
from diagnosis.triage.resources import NodePods


@dataclass(frozen=True)
class Prepared:
    memo: Shared | None = None
    """What the reader already worked out about these very objects while choosing what to read
    (`diagnosis.triage.classify.node_reads`): the classifier starts from it rather than redo it."""
    findings: Findings | None = None
    """What earlier questions found on these very nodes, as a reader that keeps the nodes between
    questions keeps it (`cluster.cache`)."""
    grouped: Mapping[str, NodePods] | None = None
    """The first of the view's `bound_pods`, node by node, as a reader that keeps the pods of each node
    hands them over (`cluster.cache`): `bound_pods` begins with the pods of these groups, one group
    after the other, and no pod is in two groups. What a group works out of its pods serves every
    question asked while they are unchanged."""

    def after(self, change: Change) -> Prepared:
        """What still holds for the view as the change leaves it (`fixes.changed`): the groups hold
        the ended pods; what was found on the nodes is not what their copies would show."""
        return replace(
            self,
            grouped=None if change.ended else self.grouped,
            findings=None if change.node_patches else self.findings,
        )


NOTHING = Prepared()
"""What a reader that prepares nothing hands over (a snapshot's, a test's)."""
