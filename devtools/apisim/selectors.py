"""Label and field selectors, parsed and matched as the API server does (apimachinery `labels.Parse`
and `fields.ParseSelector`). A malformed selector raises `SelectorError` (the server answers 400)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from diagnosis.names import is_label_key, is_label_value


class SelectorError(ValueError):
    pass


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    operator: str
    """`=`, `!=`, `in`, `notin`, `exists`, `!`, `gt` or `lt` (`==` is read as `=`)."""
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key, "")
        match self.operator:
            case "=" | "in":
                return has and value in self.values
            case "!=" | "notin":
                return not has or value not in self.values
            case "exists":
                return has
            case "!":
                return not has
            case _:
                (bound,) = self.values
                return (
                    has
                    and value.isdigit()
                    and (int(value) > int(bound) if self.operator == "gt" else int(value) < int(bound))
                )


_LABEL_TOKEN = re.compile(r"\s*(==|!=|=|!|\(|\)|,|>|<|[^\s=!(),<>]+)")


def parse_labels(text: str) -> tuple[LabelRequirement, ...]:
    """`app=x,tier!=db,env in (a,b),!legacy,gpu` → requirements (all must match)."""
    tokens = [m.group(1) for m in _LABEL_TOKEN.finditer(text)]
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise SelectorError(f"unable to parse requirement: {text!r}")
    requirements: list[LabelRequirement] = []
    pos = 0

    def take() -> str:
        nonlocal pos
        token = tokens[pos] if pos < len(tokens) else ""
        pos += 1
        return token

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    while pos < len(tokens):
        negated = peek() == "!"
        if negated:
            take()
        key = _checked_key(take())
        operator = "!" if negated else (take() if peek() not in ("", ",") else "exists")
        if negated or operator == "exists":
            requirements.append(LabelRequirement(key, operator))
        elif operator in ("=", "==", "!="):
            value = "" if peek() in ("", ",") else take()
            requirements.append(
                LabelRequirement(key, "!=" if operator == "!=" else "=", frozenset({_checked_value(value)}))
            )
        elif operator in ("in", "notin"):
            if take() != "(":
                raise SelectorError(f"found {tokens[pos - 1]!r}, expected: '('")
            values: set[str] = set()
            while (token := take()) != ")":
                if token == "":
                    raise SelectorError("found '', expected: ')'")
                if token != ",":
                    values.add(_checked_value(token))
            if not values:
                raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty: {key}")
            requirements.append(LabelRequirement(key, operator, frozenset(values)))
        elif operator in (">", "<"):
            bound = take()
            if not bound.isdigit():
                raise SelectorError(f"for 'Gt', 'Lt' operators, the value must be an integer: {bound!r}")
            requirements.append(LabelRequirement(key, "gt" if operator == ">" else "lt", frozenset({bound})))
        else:
            raise SelectorError(f"found {operator!r}, expected: in, notin, =, ==, !=, gt, lt")
        if (separator := take()) not in ("", ","):
            raise SelectorError(f"found {separator!r}, expected: ','")
    return tuple(requirements)


def _checked_key(key: str) -> str:
    if not key or not is_label_key(key):
        raise SelectorError(f"invalid label key {key!r}: name part must consist of alphanumeric characters")
    return key


def _checked_value(value: str) -> str:
    if not is_label_value(value):
        raise SelectorError(
            f"invalid label value: {value!r}: a valid label must be an empty string or "
            "consist of alphanumeric characters, '-', '_' or '.'"
        )
    return value


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool

    def matches(self, read: Callable[[str], str]) -> bool:
        return (read(self.field) == self.value) == self.equal


def parse_fields(text: str, selectable: frozenset[str]) -> tuple[FieldRequirement, ...]:
    """`spec.nodeName=n1,status.phase!=Failed` → requirements; backslash escapes `,` `=` `\\`."""
    requirements = []
    for term in _split_unescaped(text, ","):
        if not term:
            continue
        requirement = _field_requirement(term)
        if requirement is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        if requirement.field not in selectable:
            raise SelectorError(f"field label not supported: {requirement.field}")
        requirements.append(requirement)
    return tuple(requirements)


def _field_requirement(term: str) -> FieldRequirement | None:
    for operator, equal in (("!=", False), ("==", True), ("=", True)):
        at = _find_unescaped(term, operator)
        if at >= 0:
            return FieldRequirement(term[:at], _unescape(term[at + len(operator) :]), equal)
    return None


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current += "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current + ("\\" if escaped else ""))
    return parts


def _find_unescaped(term: str, operator: str) -> int:
    i = 0
    while i < len(term):
        if term[i] == "\\":
            i += 2
            continue
        if term.startswith(operator, i):
            return i
        i += 1
    return -1


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)
