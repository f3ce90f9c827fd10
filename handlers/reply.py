"""The neutral answer a handler gives: what was asked about and the diagnosis. `bot` renders it."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.model import Diagnosis
from diagnosis.objects import Ref


@dataclass(frozen=True)
class Reply:
    target: Ref | None
    """The pod or JobSet asked about; None for an explained pasted message."""
    diagnosis: Diagnosis
