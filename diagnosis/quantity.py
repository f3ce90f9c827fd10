"""Kubernetes resource quantities (`"1"`, `"1000m"`, `"2Ki"`, `"1e3"`) read as whole device counts.

The scheduler counts extended resources with `Quantity.Value()`: the quantity rounded up to an
integer. The API only accepts whole numbers for them, but snapshots are written by people and tools
too, so anything that is not a quantity reads as None rather than raising.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal
from functools import lru_cache

_QUANTITY = re.compile(
    r"(?P<number>\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:[eE](?P<exponent>[-+]?[0-9]+)|(?P<suffix>[A-Za-z]{0,2}))"
)
"""`<signedNumber><suffix>` of `k8s.io/apimachinery/pkg/api/resource`, without the minus sign: a
device count is never negative."""

_MULTIPLIERS: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}

_MAX = 2**63 - 1
"""`Value()` is an int64; larger quantities read as its largest value."""

_MAX_EXPONENT = 30
"""Exponents beyond this already exceed int64; capping them keeps hostile `1e999999999` cheap."""


def count(value: object) -> int | None:
    """The quantity as a whole count, rounded up like `Quantity.Value()`; None when it is not a
    quantity (a JSON number is accepted: YAML snapshots write `nvidia.com/gpu: 1`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return min(value, _MAX) if value >= 0 else None
    if isinstance(value, float):
        value = repr(value) if value >= 0 else ""
    return _parse(value) if isinstance(value, str) else None


def milli(value: object) -> int | None:
    """The quantity in thousandths, rounded up like `Quantity.MilliValue()` (cpu is counted in
    millicores); None when it is not a quantity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return min(value * 1000, _MAX) if value >= 0 else None
    if isinstance(value, float):
        value = repr(value) if value >= 0 else ""
    return _parse(value, 1000) if isinstance(value, str) else None
def exact(value: object) -> Decimal | None:
    """The quantity's exact amount (`"40Gi"` → 42949672960, `"500m"` → 0.5), for comparisons that
    must not round (DRA capacities in CEL, `quantity()`); None when it is not a quantity."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if not isinstance(value, str):
        return Decimal(repr(value)) if value >= 0 else None
    match = _QUANTITY.fullmatch(value)
    return None if match is None else _amount(match["number"], match["exponent"], match["suffix"])


@lru_cache(maxsize=4096)
def _parse(value: str, scale: int = 1) -> int | None:
    """Cached: a cluster repeats the same few quantities (`"1"`, `"8"`) across thousands of pods."""
    match = _QUANTITY.fullmatch(value)
    if match is None:
        return None
    amount = _amount(match["number"], match["exponent"], match["suffix"])
    if amount is None:
        return None
    amount *= scale
    if amount > _MAX:
        return _MAX
    return int(amount.to_integral_value(rounding=ROUND_CEILING))


def _amount(number: str, exponent: str | None, suffix: str | None) -> Decimal | None:
    base = Decimal(number)
    if exponent is not None:
        power = int(exponent)
        if power > _MAX_EXPONENT:
            return Decimal(_MAX) + 1 if base else Decimal(0)
        return base.scaleb(max(power, -_MAX_EXPONENT))
    multiplier = _MULTIPLIERS.get(suffix or "")
    return None if multiplier is None else base * multiplier
