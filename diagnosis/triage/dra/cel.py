"""DRA device selectors, evaluated as the scheduler evaluates them, with the `cel-python` library.

The environment is the one `k8s.io/dynamic-resource-allocation/cel/compile.go` builds: one variable,
`device`, with `driver`, `attributes["<domain>"].<name>` and `capacity["<domain>"].<name>`. A domain the
device lacks reads as an empty map; an attribute it lacks is a runtime error (the scheduler stops with
`CEL runtime error`). Version attributes are semantic versions and capacities are quantities, with the
Kubernetes CEL library's functions on them (`semver`, `quantity`, `compareTo`, `isGreaterThan`, …).

What the library cannot do (`cel.bind`, an extension function not provided here) is reported as
`Outcome.UNKNOWN` with the library's message: never guessed.

A cluster has thousands of devices and a few selectors, and most devices of one kind agree on what a
selector reads (`type`, `productName`) even though each has its own `uuid`: each selector is analysed
once for the attributes it reads, and its result is remembered for each distinct set of those values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from diagnosis.dra_objects import AttributeValue, Device, Semver
from diagnosis.quantity import exact


class Outcome(StrEnum):
    MATCH = "match"
    NO_MATCH = "no match"
    ERROR = "CEL runtime error"
    """The scheduler fails too (a missing attribute, a result that is not a bool)."""
    UNKNOWN = "cannot be evaluated"
    """kubewhy cannot evaluate it (the library lacks a function Kubernetes has)."""


@dataclass(frozen=True)
class Evaluation:
    outcome: Outcome
    detail: str = ""


# --- the Kubernetes CEL library's Quantity and Semver -----------------------------------------------


@dataclass(frozen=True, order=True)
class Quantity:
    """`k8s.io/apiserver/pkg/cel/library/quantity.go`."""

    amount: Decimal


_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?"
)
"""blang/semver's strict grammar (semver.org 2.0.0)."""


@dataclass(frozen=True)
class Version:
    """`k8s.io/apiserver/pkg/cel/library/semverlib.go`: compared by precedence (build ignored)."""

    core: tuple[int, int, int]
    pre: tuple[str, ...]

    def _key(self) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int, str], ...]]:
        # A version without a pre-release ranks above any pre-release of the same core.
        parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return self.core, 0 if self.pre else 1, parts

    def compare(self, other: Version) -> int:
        mine, theirs = self._key(), other._key()
        if mine[:2] != theirs[:2]:
            return -1 if mine[:2] < theirs[:2] else 1
        return 0 if mine[2] == theirs[2] else (-1 if mine[2] < theirs[2] else 1)


def parse_semver(value: str, normalize: bool = False) -> Version | None:
    if normalize:
        # `semver(s, true)`: a leading v dropped, missing minor and patch read as 0, leading zeros dropped.
        value = value.removeprefix("v")
        split = re.search(r"[-+]", value)
        core, rest = (value[: split.start()], value[split.start() :]) if split else (value, "")
        parts = core.split(".")
        parts += ["0"] * (3 - len(parts))
        value = ".".join(p.lstrip("0") or "0" for p in parts) + rest
    match = _SEMVER.fullmatch(value)
    if match is None:
        return None
    pre = tuple(match[4].split(".")) if match[4] else ()
    return Version((int(match[1]), int(match[2]), int(match[3])), pre)


def _error(message: str) -> CELEvalError:
    return CELEvalError(message)


def _quantity(value: Any) -> Any:
    amount = exact(str(value))
    return _error(f"invalid quantity: {value}") if amount is None else Quantity(amount)


def _semver(value: Any, normalize: Any = False) -> Any:
    parsed = parse_semver(str(value), bool(normalize))
    return _error(f"invalid semver: {value}") if parsed is None else parsed


def _compare(left: Any, right: Any) -> Any:
    if isinstance(left, Quantity) and isinstance(right, Quantity):
        return celtypes.IntType((left.amount > right.amount) - (left.amount < right.amount))
    if isinstance(left, Version) and isinstance(right, Version):
        return celtypes.IntType(left.compare(right))
    return _error(f"no such overload: compareTo({type(left).__name__}, {type(right).__name__})")


def _greater(left: Any, right: Any) -> Any:
    compared = _compare(left, right)
    return compared if isinstance(compared, CELEvalError) else celtypes.BoolType(compared > 0)


def _less(left: Any, right: Any) -> Any:
    compared = _compare(left, right)
    return compared if isinstance(compared, CELEvalError) else celtypes.BoolType(compared < 0)


def _of_quantity(method: str, convert: Callable[[Decimal], Any]) -> Callable[[Any], Any]:
    def call(value: Any) -> Any:
        if not isinstance(value, Quantity):
            return _error(f"no such overload: {method}({type(value).__name__})")
        return convert(value.amount)

    return call


def _of_version(index: int) -> Callable[[Any], Any]:
    def call(value: Any) -> Any:
        if not isinstance(value, Version):
            return _error(f"no such overload on {type(value).__name__}")
        return celtypes.IntType(value.core[index])

    return call


def _arithmetic(sign: int) -> Callable[[Any, Any], Any]:
    def call(left: Any, right: Any) -> Any:
        if not isinstance(left, Quantity):
            return _error("no such overload: add/sub on a non-quantity")
        other = right.amount if isinstance(right, Quantity) else Decimal(int(right))
        return Quantity(left.amount + sign * other)

    return call


def _as_integer(amount: Decimal) -> Any:
    if amount != amount.to_integral_value() or abs(amount) >= 2**63:
        return _error("cannot convert value to integer")
    return celtypes.IntType(int(amount))


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": lambda v: celtypes.BoolType(exact(str(v)) is not None),
    "semver": _semver,
    "isSemver": lambda v, n=False: celtypes.BoolType(parse_semver(str(v), bool(n)) is not None),
    "compareTo": _compare,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "asInteger": _of_quantity("asInteger", _as_integer),
    "asApproximateFloat": _of_quantity("asApproximateFloat", lambda a: celtypes.DoubleType(float(a))),
    "sign": _of_quantity("sign", lambda a: celtypes.IntType((a > 0) - (a < 0))),
    "isInteger": _of_quantity(
        "isInteger", lambda a: celtypes.BoolType(a == a.to_integral_value() and abs(a) < 2**63)
    ),
    "add": _arithmetic(1),
    "sub": _arithmetic(-1),
    "major": _of_version(0),
    "minor": _of_version(1),
    "patch": _of_version(2),
    "lowerAscii": lambda s: celtypes.StringType(str(s).translate(_LOWER)),
    "upperAscii": lambda s: celtypes.StringType(str(s).translate(_UPPER)),
}
"""Kubernetes' Quantity and Semver libraries and ext strings' case functions, which cel-python lacks.
A method call `x.f(y)` reaches these as `f(x, y)`."""



class _Domains(celtypes.MapType):
    """`device.attributes` / `device.capacity`: an unknown domain is an empty map, as in Kubernetes."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str) and not super().__contains__(key):
            return celtypes.MapType()
        return super().__getitem__(key)


def _value(value: AttributeValue) -> Any:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, Semver):
        parsed = parse_semver(value.text)
        return parsed if parsed is not None else celtypes.StringType(value.text)
    return celtypes.StringType(value)


def _activation(device: Device) -> dict[str, Any]:
    attributes = _Domains(
        {
            celtypes.StringType(d): celtypes.MapType(
                {celtypes.StringType(k): _value(v) for k, v in ids.items()}
            )
            for d, ids in device.attributes.items()
        }
    )
    capacity = _Domains(
        {
            celtypes.StringType(d): celtypes.MapType(
                {celtypes.StringType(k): Quantity(v) for k, v in ids.items()}
            )
            for d, ids in device.capacity.items()
        }
    )
    return {
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(device.driver),
                celtypes.StringType("attributes"): attributes,
                celtypes.StringType("capacity"): capacity,
                celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(False),
            }
        )
    }


# --- what an expression reads -----------------------------------------------------------------------

Reference = tuple[str, ...]
"""`("driver",)`, `("attributes", domain)` (the whole domain) or `("attributes", domain, name)`."""


class _Opaque(Exception):
    """The expression reads `device` in a way the analysis does not follow: use the whole device."""


def _only(tree: lark.Tree[Any], rule: str) -> lark.Tree[Any] | None:
    """The single child subtree of `tree` if it is of `rule`."""
    if len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree) and tree.children[0].data == rule:
        return tree.children[0]
    return None


def _literal(expr: lark.Tree[Any]) -> str | None:
    """The string an `expr` subtree is, when it is nothing but a plain string literal."""
    node: lark.Tree[Any] | None = expr
    for rule in (
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
        "literal",
    ):
        node = _only(node, rule) if node is not None else None
    if node is None or not isinstance(node.children[0], lark.Token):
        return None
    token = str(node.children[0])
    if (
        len(token) >= 2
        and token[0] == token[-1]
        and token[0] in "'\""
        and "\\" not in token
        and token[:3]
        not in (
            "'''",
            '"""',
        )
    ):
        return token[1:-1]
    return None


def _is_device(member: object) -> bool:
    """`member` is `member(primary(ident(device)))`."""
    if not (isinstance(member, lark.Tree) and member.data == "member"):
        return False
    primary = _only(member, "primary")
    ident = _only(primary, "ident") if primary is not None else None
    return ident is not None and str(ident.children[0]) == "device"


def _domain_of(node: lark.Tree[Any]) -> tuple[str, str] | None:
    """(map, domain) when `node` is `device.attributes["d"]` or `device.capacity["d"]`."""
    if node.data != "member_index":
        return None
    inner, index = node.children
    dot = _only(inner, "member_dot") if isinstance(inner, lark.Tree) else None
    if dot is None or not _is_device(dot.children[0]):
        return None
    field_name, domain = str(dot.children[1]), _literal(index) if isinstance(index, lark.Tree) else None
    if field_name not in ("attributes", "capacity") or domain is None:
        raise _Opaque
    return field_name, domain


def _collect(node: lark.Tree[Any], found: set[Reference]) -> None:
    if node.data == "member_dot":
        inner, ident = node.children
        index = _only(inner, "member_index") if isinstance(inner, lark.Tree) else None
        domain = _domain_of(index) if index is not None else None
        if domain is not None:
            found.add((*domain, str(ident)))
            return
        if _is_device(inner):
            if str(ident) not in ("driver", "allowMultipleAllocations"):
                raise _Opaque
            found.add((str(ident),))
            return
    elif node.data == "member_index":
        domain = _domain_of(node)
        if domain is not None:
            found.add(domain)
            return
    elif node.data == "ident" and str(node.children[0]) == "device":
        raise _Opaque
    for child in node.children:
        if isinstance(child, lark.Tree):
            _collect(child, found)


def _references(tree: lark.Tree[Any]) -> frozenset[Reference] | None:
    """What of `device` the expression reads; None when that cannot be told (it is then evaluated for
    every device)."""
    found: set[Reference] = set()
    try:
        _collect(tree, found)
    except _Opaque:
        return None
    return frozenset(found)


# --- evaluation ---------------------------------------------------------------------------------------

_MISSING = object()


@dataclass(frozen=True)
class Selector:
    expression: str
    program: celpy.Runner | None
    references: frozenset[Reference] | None
    problem: Evaluation | None
    """Why it cannot be evaluated at all (it does not compile in the library)."""

    def key(self, device: Device) -> tuple[object, ...] | Device:
        """What of the device decides this selector's result: equal keys, equal results."""
        if self.references is None:
            return device
        parts: list[object] = []
        for ref in sorted(self.references):
            if ref[0] in ("driver", "allowMultipleAllocations"):
                parts.append(device.driver)
                continue
            source: Mapping[str, Mapping[str, object]] = (
                device.attributes if ref[0] == "attributes" else device.capacity
            )
            domain = source.get(ref[1])
            if len(ref) == 2:
                parts.append(None if domain is None else tuple(sorted(domain.items())))
            else:
                parts.append(_MISSING if domain is None else domain.get(ref[2], _MISSING))
        return tuple(parts)


@lru_cache(maxsize=1)
def _environment() -> celpy.Environment:
    """The CEL environment, made on first use: building its parser takes about a third of a second,
    which a command about a pod that names no ResourceClaim should not pay."""
    return celpy.Environment()


@lru_cache(maxsize=512)
def selector(expression: str) -> Selector:
    try:
        tree = _environment().compile(expression)
    except CELParseError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return Selector(expression, None, None, Evaluation(Outcome.UNKNOWN, f"does not parse: {first}"))
    program = _environment().program(tree, functions=dict(FUNCTIONS))
    return Selector(expression, program, _references(tree), None)


_RESULTS: dict[tuple[str, object], Evaluation] = {}
_RESULTS_MAX = 200_000


def evaluate(expression: str, device: Device) -> Evaluation:
    """Whether the device matches the selector, remembered per distinct values it reads."""
    compiled = selector(expression)
    if compiled.problem is not None:
        return compiled.problem
    key = (expression, compiled.key(device))
    found = _RESULTS.get(key)
    if found is None:
        found = _run(compiled, device)
        if len(_RESULTS) >= _RESULTS_MAX:
            _RESULTS.clear()
        _RESULTS[key] = found
    return found


_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")


def _run(compiled: Selector, device: Device) -> Evaluation:
    assert compiled.program is not None
    try:
        result = compiled.program.evaluate(_activation(device))
    except CELEvalError as err:
        return _failed(err)
    except (TypeError, ValueError, ArithmeticError) as err:
        return Evaluation(Outcome.ERROR, f"{type(err).__name__}: {err}")
    if isinstance(result, CELEvalError):
        return _failed(result)
    if not isinstance(result, celtypes.BoolType):
        return Evaluation(Outcome.ERROR, f"the result is a {type(result).__name__}, not a bool")
    return Evaluation(Outcome.MATCH if result else Outcome.NO_MATCH)


def _failed(err: CELEvalError) -> Evaluation:
    said = str(err.args[0]) if err.args else type(err).__name__
    undeclared = _UNDECLARED.search(said)
    if undeclared:
        return Evaluation(Outcome.UNKNOWN, f"the CEL library kubewhy uses has no {undeclared[1]}()")
    if err.args[1:2] == (KeyError,) or "no such" in said:
        detail = err.args[2:3]
        missing = f" {detail[0][0]!s}" if detail and isinstance(detail[0], tuple) and detail[0] else ""
        return Evaluation(Outcome.ERROR, f"{said.split(' (in activation')[0]}{missing}")
    return Evaluation(Outcome.ERROR, said.split(" (in activation")[0])
