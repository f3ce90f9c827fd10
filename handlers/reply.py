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


def noted(diagnosis: Diagnosis, notes: tuple[str, ...]) -> Diagnosis:
    """The diagnosis with the reading's notes (TriageView.notes) after its evidence."""
    return replace(diagnosis, evidence=(*diagnosis.evidence, *notes)) if notes else diagnosis
