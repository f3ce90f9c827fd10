"""Which nodes a pod may land on: taints and tolerations, cordon, nodeSelector and required node
affinity, with the scheduler's exact rules (facts §2 and §4).

Each check returns why a node is refused, in words a person can act on, or None when the node passes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis.names import is_label_key, is_label_value
from diagnosis.objects import Object, labels, mapping, name, sequence, spec, text

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
"""The taint a cordon stands for; a pod that tolerates it (DaemonSet pods do) ignores the cordon."""

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
"""`PreferNoSchedule` only lowers a node's score; any other effect is unknown and ignored."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        """As `kubectl taint` writes it: `key=value:Effect`, or `key:Effect` with no value."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


CORDON = Taint(UNSCHEDULABLE, "", "NoSchedule")


def taints(node: Object) -> tuple[Taint, ...]:
    """The node's taints in `spec.taints` order."""
    return tuple(
        Taint(text(t.get("key")), text(t.get("value")), text(t.get("effect")))
        for t in map(mapping, sequence(spec(node).get("taints")))
    )


def cordoned(node: Object) -> bool:
    return spec(node).get("unschedulable") is True


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """`Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key every key;
    `Exists` matches any value, `Equal` (also when the operator is empty) only the same value; any
    other operator never matches (`Lt`/`Gt` of 1.35 are off by default)."""
    effect, key = text(toleration.get("effect")), text(toleration.get("key"))
    if (effect and effect != taint.effect) or (key and key != taint.key):
        return False
    operator = text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return text(toleration.get("value")) == taint.value
    return operator == "Exists"


def untolerated(pod: Object, node: Object) -> tuple[Taint, ...]:
    """The node's taints that keep the pod off it: the cordon first (the scheduler checks it before
    taints), then every `NoSchedule`/`NoExecute` taint no toleration of the pod tolerates. The
    scheduler names only the first; all are listed so one fix covers them."""
    tolerations = tuple(map(mapping, sequence(spec(pod).get("tolerations"))))

    def blocks(taint: Taint) -> bool:
        return not any(tolerates(t, taint) for t in tolerations)

    found = [CORDON] if cordoned(node) and blocks(CORDON) else []
    for taint in taints(node):
        if taint.effect in BLOCKING_EFFECTS and taint not in found and blocks(taint):
            found.append(taint)
    return tuple(found)


def node_selector(pod: Object) -> dict[str, object]:
    """`spec.nodeSelector` as written (values may be of any type in a malformed object)."""
    return dict(mapping(spec(pod).get("nodeSelector")))


def required_terms(pod: Object) -> tuple[Mapping[str, Any], ...] | None:
    """The required node affinity's `nodeSelectorTerms`, or None when there is no required affinity."""
    node_affinity = mapping(mapping(spec(pod).get("affinity")).get("nodeAffinity"))
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return None
    return tuple(map(mapping, sequence(required.get("nodeSelectorTerms"))))


def constrained(pod: Object) -> bool:
    """The pod has a nodeSelector or a required node affinity (else NodeAffinity is skipped)."""
    return bool(node_selector(pod)) or required_terms(pod) is not None


def selector_keys(pod: Object) -> tuple[str, ...]:
    """The label keys the pod's nodeSelector and required affinity look at, valid ones only, sorted."""
    keys = {k for k in node_selector(pod) if isinstance(k, str)}
    for term in required_terms(pod) or ():
        keys.update(text(mapping(r).get("key")) for r in sequence(term.get("matchExpressions")))
    return tuple(sorted(k for k in keys if is_label_key(k)))


def selector_mismatch(pod: Object, node: Object) -> str | None:
    """Why the node fails `GetRequiredNodeAffinity(pod).Match(node)`: the nodeSelector (every key
    present with an equal value) and then the required affinity (terms ORed, requirements ANDed)."""
    selector, terms = node_selector(pod), required_terms(pod)
    # An unconstrained pod fits every node: no need to read the node's labels.
    if not selector and terms is None:
        return None
    node_labels = labels(node)
    for key, wanted in sorted(selector.items(), key=lambda kv: str(kv[0])):
        have = node_labels.get(key) if isinstance(key, str) else None
        if not isinstance(wanted, str) or have != wanted:
            return f"no label {key}" if have is None else f"has {key}={have}, not {_shown(wanted)}"
    if terms is None:
        return None
    failures = [_term_mismatch(term, node_labels, name(node)) for term in terms]
    if any(failure is None for failure in failures):
        return None
    said = [f for f in failures if f]
    if not said:
        return "required affinity has no non-empty term: it matches no node"
    if len(said) == 1:
        return f"affinity {said[0]}"
    return f"affinity: none of its {len(said)} terms matches ({'; '.join(said)})"


def _term_mismatch(term: Mapping[str, Any], node_labels: Mapping[str, str], node_name: str) -> str | None:
    """None when the term matches; "" for an empty term (skipped, it matches nothing); otherwise the
    first requirement that fails. A requirement the API would not parse fails its whole term."""
    expressions = tuple(map(mapping, sequence(term.get("matchExpressions"))))
    fields = tuple(map(mapping, sequence(term.get("matchFields"))))
    if not expressions and not fields:
        return ""
    for requirement in expressions:
        failure = _label_requirement(requirement, node_labels)
        if failure:
            return failure
    for requirement in fields:
        failure = _field_requirement(requirement, node_name)
        if failure:
            return failure
    return None


def _label_requirement(requirement: Mapping[str, Any], node_labels: Mapping[str, str]) -> str | None:
    """`labels.Requirement.Matches` for one node selector requirement, after the API's parsing
    (`labels.NewRequirement`): a bad key, operator, value count or value makes it never match."""
    key, operator, values = _parts(requirement)
    shown = _requirement(key, operator, values)
    if values is None or not _parses(key, operator, values):
        return f"{shown} is not a valid requirement (it matches no node)"
    have = node_labels.get(key)
    if operator in ("Gt", "Lt") and have is not None and _int64(have) is None:
        return f"{shown}: has {key}={have}, not an integer"
    if _matches(operator, values, have):
        return None
    return f"{shown}: no label {key}" if have is None else f"{shown}: has {key}={have}"


def _matches(operator: str, values: Sequence[str], have: str | None) -> bool:
    if operator == "In":
        return have is not None and have in values
    if operator == "NotIn":
        return have is None or have not in values
    if operator == "Exists":
        return have is not None
    if operator == "DoesNotExist":
        return have is None
    number, bound = _int64(have or ""), _int64(values[0])
    if number is None or bound is None:
        return False
    return number > bound if operator == "Gt" else number < bound


def _field_requirement(requirement: Mapping[str, Any], node_name: str) -> str | None:
    """`matchFields`: only `metadata.name` exists on a node; only `In`/`NotIn` with one value parse."""
    key, operator, values = _parts(requirement)
    shown = "field " + _requirement(key, operator, values)
    if values is None or operator not in ("In", "NotIn") or len(values) != 1:
        return f"{shown} is not a valid requirement (it matches no node)"
    have = node_name if key == "metadata.name" else ""
    matched = (have == values[0]) == (operator == "In")
    return None if matched else f"{shown}: node is {node_name}"


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _parts(requirement: Mapping[str, Any]) -> tuple[str, str, tuple[str, ...] | None]:
    """Key, operator and values; values None when one is not a string (the API would not decode it)."""
    raw = tuple(sequence(requirement.get("values")))
    values = raw if all(isinstance(v, str) for v in raw) else None
    return text(requirement.get("key")), text(requirement.get("operator")), values


def _parses(key: str, operator: str, values: Sequence[str]) -> bool:
    """`labels.NewRequirement`'s checks: a known operator, a qualified key, the operator's count of
    values, integers for Gt/Lt, and every value a valid label value (so `-1` and `+1` never parse)."""
    if operator not in _OPERATORS or not is_label_key(key) or not all(is_label_value(v) for v in values):
        return False
    if operator in ("In", "NotIn"):
        return bool(values)
    if operator in ("Exists", "DoesNotExist"):
        return not values
    return len(values) == 1 and _int64(values[0]) is not None


_INT = re.compile(r"[+-]?[0-9]+")


def _int64(value: str) -> int | None:
    """Go's `strconv.ParseInt(value, 10, 64)`: digits with an optional sign, nothing else."""
    if not _INT.fullmatch(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


def _requirement(key: str, operator: str, values: Sequence[str] | None) -> str:
    """As a person would write it: `gpu.memory Lt 40000`, `product In [A, B]`, `zone Exists`."""
    if values is None:
        return f"{key} {operator} (values that are not strings)"
    if operator in ("Gt", "Lt") and len(values) == 1:
        return f"{key} {operator} {values[0]}"
    return f"{key} {operator} [{', '.join(values)}]" if values else f"{key} {operator}"


def _shown(value: object) -> str:
    return value if isinstance(value, str) else repr(value)
