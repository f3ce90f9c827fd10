"""Hostile variants of real objects, shared by the property tests of the classifier and the explainer."""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import HealthCheck, settings

SETTINGS = settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

WRONG_TYPES: tuple[object, ...] = (None, 7, "x", [], {}, True, -1.5)


def tear(value: Any, rng: random.Random, odds: float) -> Any:
    """A deep copy of `value` with some keys and list items dropped and some values swapped for one of
    another type, recursively: an object as a buggy controller or a hand-edited snapshot might hold it."""
    if isinstance(value, dict):
        torn = {}
        for key, inner in value.items():
            roll = rng.random()
            if roll < odds:
                continue
            torn[key] = copy.deepcopy(rng.choice(WRONG_TYPES)) if roll < 2 * odds else tear(inner, rng, odds)
        return torn
    if isinstance(value, list):
        return [tear(inner, rng, odds) for inner in value if rng.random() >= odds]
    return value
