"""The neutral answer a handler gives: what was asked about and the diagnosis. `bot` renders it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from diagnosis.model import Diagnosis
from diagnosis.objects import Ref


@dataclass(frozen=True)
class Reply:
    target: Ref | None
    """The pod or JobSet asked about; None for an explained pasted message."""
    diagnosis: Diagnosis


def noting(diagnosis: Diagnosis, unread: tuple[str, ...]) -> Diagnosis:
    """The diagnosis with a line of evidence for each read that failed but was not needed for the
    verdict (the reader's `unread`): the person sees the answer, and what it was made without."""
    return replace(diagnosis, evidence=diagnosis.evidence + unread) if unread else diagnosis
