"""`metav1.LabelSelector` as the scheduler reads it (`metav1.LabelSelectorAsSelector`), and as the API
server's `labelSelector` query parameter writes it.

Pod affinity terms, topology spread constraints and namespace selectors all use this shape: a null
selector selects nothing, an empty one (`{}`) everything, and a malformed one (an unknown operator, a
bad key or value, `In` without values) does not parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from diagnosis.names import is_label_key, is_label_value
from diagnosis.objects import mapping, sequence, text

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        have = labels.get(self.key)
        if self.operator == "In":
            return have is not None and have in self.values
        if self.operator == "NotIn":
            return have is None or have not in self.values
        if self.operator == "Exists":
            return have is not None
        return have is None

    def __str__(self) -> str:
        """The API's selector syntax: `k in (a,b)`, `k notin (a)`, `k`, `!k`."""
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        word = "in" if self.operator == "In" else "notin"
        return f"{self.key} {word} ({','.join(sorted(self.values))})"


@dataclass(frozen=True)
class Selector:
    """A parsed label selector: every requirement must match. `nothing` for a null selector."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def everything(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(r.matches(labels) for r in self.requirements)

    def with_requirements(self, more: tuple[Requirement, ...]) -> Selector:
        """The selector with more requirements ANDed (`matchLabelKeys` merged in)."""
        if self.nothing:
            return self
        return Selector((*self.requirements, *more))

    def query(self) -> str:
        """The `labelSelector` parameter that asks the API server for the same objects ("" = all)."""
        return ",".join(map(str, self.requirements))

    def __str__(self) -> str:
        if self.nothing:
            return "(no selector: matches nothing)"
        return self.query() or "(everything)"


class SelectorError(ValueError):
    """The selector would not parse: the scheduler refuses the pod with this text."""


def parse(selector: object) -> Selector:
    """`LabelSelectorAsSelector`: None → nothing, `{}` → everything; raises SelectorError when a key,
    value or operator would not parse."""
    if selector is None:
        return Selector(nothing=True)
    found = mapping(selector)
    requirements: list[Requirement] = []
    for key, value in sorted(mapping(found.get("matchLabels")).items(), key=lambda kv: str(kv[0])):
        if not (
            isinstance(key, str) and is_label_key(key) and isinstance(value, str) and is_label_value(value)
        ):
            raise SelectorError(f"invalid matchLabels entry {key}: {value}")
        requirements.append(Requirement(key, "In", (value,)))
    for item in map(mapping, sequence(found.get("matchExpressions"))):
        key, operator = text(item.get("key")), text(item.get("operator"))
        raw = tuple(sequence(item.get("values")))
        values = tuple(v for v in raw if isinstance(v, str))
        if operator not in _OPERATORS:
            raise SelectorError(f"{operator!r} is not a valid label selector operator")
        if not is_label_key(key) or len(values) != len(raw) or not all(map(is_label_value, values)):
            raise SelectorError(f"invalid label selector requirement on key {key!r}")
        if (operator in ("In", "NotIn")) != bool(values):
            raise SelectorError(f"{key} {operator}: wrong number of values")
        requirements.append(Requirement(key, operator, tuple(sorted(set(values)))))
    return Selector(tuple(requirements))
