"""Which nodes a pod may land on: taints and tolerations, cordon, nodeSelector and required node
affinity, with the scheduler's exact rules: `Toleration.ToleratesTaint` (k8s.io/api `core/v1/toleration.go`)
as kube-scheduler's TaintToleration and NodeUnschedulable plugins apply it, and the required node
affinity of `component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`.

Each check returns why a node is refused, in words a person can act on, or None when the node passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
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
        _taint(text(t.get("key")), text(t.get("value")), text(t.get("effect")))
        for t in map(mapping, sequence(spec(node).get("taints")))
    )


_taint = lru_cache(maxsize=1024)(Taint)
"""Shared `Taint`s: a cluster repeats the same few taints over thousands of nodes."""


def taints_read(node: Object) -> tuple[int, bool]:
    """All `Placement.untolerated` reads of a node, as a key: its taints by identity (the nodes of a
    pool share one list: `cluster.compact`) and whether it is cordoned."""
    node_spec = spec(node)
    return id(node_spec.get("taints")), node_spec.get("unschedulable") is True


def cordoned(node: Object) -> bool:
    return spec(node).get("unschedulable") is True


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """`Toleration.ToleratesTaint` (`k8s.io/api` core/v1 `toleration.go`, 1.35): an empty effect
    matches every effect, an empty key every key; `Exists` matches any value, `Equal` (also when the
    operator is empty) only the same value; `Lt`/`Gt` match when the taint's value is an integer less
    / greater than the toleration's (both in canonical decimal form, `compareNumericValues`); any
    other operator never matches. The API server accepts `Lt`/`Gt` only where their feature gate
    (`TaintTolerationComparisonOperators`) is on, and the scheduler compares them there."""
    effect, key = text(toleration.get("effect")), text(toleration.get("key"))
    if (effect and effect != taint.effect) or (key and key != taint.key):
        return False
    operator = text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return text(toleration.get("value")) == taint.value
    if operator in ("Lt", "Gt"):
        bound, have = _decimal(text(toleration.get("value"))), _decimal(taint.value)
        if bound is None or have is None:
            return False
        return have < bound if operator == "Lt" else have > bound
    return operator == "Exists"


_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")


def _decimal(value: str) -> int | None:
    """`content.IsDecimalInteger` then `strconv.ParseInt(value, 10, 64)`: `0`, or an optional minus
    and digits without a leading zero (no `+`, no `-0`, no spaces), within int64."""
    if not _DECIMAL.fullmatch(value):
        return None
    return _int64(value)


def untolerated(pod: Object, node: Object) -> tuple[Taint, ...]:
    """The node's taints that keep the pod off it (see `Placement.untolerated`)."""
    return Placement.of(pod).untolerated(node)


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
    """Why the node fails the pod's nodeSelector and required affinity (see `Placement.mismatch`)."""
    return Placement.of(pod).mismatch(node)


def placement_key(pod: Object, *also: object) -> str:
    """What `Placement.of` reads of the pod (its nodeSelector, node affinity and tolerations), and
    `also`, in a few hundred bytes of JSON: pods with one key are placed alike (a workload's pods
    share one)."""
    pod_spec = spec(pod)
    read = (pod_spec.get("nodeSelector"), mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    return json.dumps([*read, pod_spec.get("tolerations"), *also], sort_keys=True, default=repr)


@dataclass(frozen=True)
class Placement:
    """What a pod asks of a node's labels and taints, read from the pod once: a funnel checks every
    node of the cluster against it, so each check is then a few lookups in the node."""

    selector: tuple[tuple[object, object], ...]
    """`spec.nodeSelector` as written, sorted by key (the first failing key is the one named)."""
    terms: tuple[_Term, ...] | None
    """The required affinity's terms, parsed; None when there is no required affinity."""
    tolerations: tuple[Mapping[str, Any], ...]
    _blocks: dict[Taint, bool] = field(default_factory=dict, compare=False, repr=False)
    """Taint → whether no toleration tolerates it: a cluster repeats a few taints on many nodes."""
    _untolerated: dict[tuple[int, bool], tuple[Taint, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """By what it reads of a node (`taints_read`). The nodes asked about outlive this Placement (it is
    the pod's, for one classification), so no id is reused meanwhile."""

    @classmethod
    def of(cls, pod: Object) -> Placement:
        terms = required_terms(pod)
        return cls(
            selector=tuple(sorted(node_selector(pod).items(), key=lambda kv: str(kv[0]))),
            terms=None if terms is None else tuple(map(_Term.of, terms)),
            tolerations=tuple(map(mapping, sequence(spec(pod).get("tolerations")))),
        )

    def blocks(self, taint: Taint) -> bool:
        blocked = self._blocks.get(taint)
        if blocked is None:
            blocked = self._blocks[taint] = not any(tolerates(t, taint) for t in self.tolerations)
        return blocked

    def untolerated(self, node: Object) -> tuple[Taint, ...]:
        """The node's taints that keep the pod off it: the cordon first (the scheduler checks it
        before taints), then every `NoSchedule`/`NoExecute` taint no toleration of the pod tolerates.
        The scheduler names only the first; all are listed so one fix covers them."""
        key = taints_read(node)
        known = self._untolerated.get(key)
        if known is None:
            found = [CORDON] if key[1] and self.blocks(CORDON) else []
            for taint in taints(node):
                if taint.effect in BLOCKING_EFFECTS and taint not in found and self.blocks(taint):
                    found.append(taint)
            known = self._untolerated[key] = tuple(found)
        return known

    @property
    def constrained(self) -> bool:
        """The pod has a nodeSelector or a required node affinity (`mismatch` reads the node)."""
        return bool(self.selector) or self.terms is not None

    def mismatch(self, node: Object) -> str | None:
        """Why the node fails `GetRequiredNodeAffinity(pod).Match(node)`: the nodeSelector (every key
        present with an equal value) and then the required affinity (terms ORed, requirements ANDed)."""
        # An unconstrained pod fits every node: no need to read the node's labels.
        if not self.constrained:
            return None
        node_labels = labels(node)
        for key, wanted in self.selector:
            have = node_labels.get(key) if isinstance(key, str) else None
            if not isinstance(wanted, str) or have != wanted:
                return f"no label {key}" if have is None else f"has {key}={have}, not {_shown(wanted)}"
        if self.terms is None:
            return None
        failures = [term.mismatch(node_labels, node) for term in self.terms]
        if any(failure is None for failure in failures):
            return None
        said = [f for f in failures if f]
        if not said:
            return "required affinity has no non-empty term: it matches no node"
        if len(said) == 1:
            return f"affinity {said[0]}"
        return f"affinity: none of its {len(said)} terms matches ({'; '.join(said)})"


@dataclass(frozen=True)
class _Requirement:
    """One node selector requirement, parsed as the API parses it: `valid` False when it would not
    parse (a bad key, operator, value count or value), and then it never matches."""

    key: str
    operator: str
    values: tuple[str, ...]
    shown: str
    valid: bool

    @classmethod
    def of_expression(cls, requirement: Mapping[str, Any]) -> _Requirement:
        key, operator, values = _parts(requirement)
        valid = values is not None and _parses(key, operator, values)
        return cls(key, operator, values or (), _requirement(key, operator, values), valid)

    @classmethod
    def of_field(cls, requirement: Mapping[str, Any]) -> _Requirement:
        """`matchFields`: only `metadata.name` exists on a node; only `In`/`NotIn` with one value parse."""
        key, operator, values = _parts(requirement)
        valid = values is not None and operator in ("In", "NotIn") and len(values) == 1
        return cls(key, operator, values or (), "field " + _requirement(key, operator, values), valid)

    def label_failure(self, node_labels: Mapping[str, str]) -> str | None:
        """`labels.Requirement.Matches` for the node's labels: None when it matches."""
        if not self.valid:
            return f"{self.shown} is not a valid requirement (it matches no node)"
        key, have = self.key, node_labels.get(self.key)
        if self.operator in ("Gt", "Lt") and have is not None and _int64(have) is None:
            return f"{self.shown}: has {key}={have}, not an integer"
        if _matches(self.operator, self.values, have):
            return None
        return f"{self.shown}: no label {key}" if have is None else f"{self.shown}: has {key}={have}"

    def field_failure(self, node_name: str) -> str | None:
        if not self.valid:
            return f"{self.shown} is not a valid requirement (it matches no node)"
        have = node_name if self.key == "metadata.name" else ""
        matched = (have == self.values[0]) == (self.operator == "In")
        return None if matched else f"{self.shown}: node is {node_name}"


@dataclass(frozen=True)
class _Term:
    """One `nodeSelectorTerm`: its requirements ANDed."""

    expressions: tuple[_Requirement, ...]
    fields: tuple[_Requirement, ...]

    @classmethod
    def of(cls, term: Mapping[str, Any]) -> _Term:
        return cls(
            tuple(_Requirement.of_expression(mapping(r)) for r in sequence(term.get("matchExpressions"))),
            tuple(_Requirement.of_field(mapping(r)) for r in sequence(term.get("matchFields"))),
        )

    def mismatch(self, node_labels: Mapping[str, str], node: Object) -> str | None:
        """None when the term matches; "" for an empty term (skipped, it matches nothing); otherwise
        the first requirement that fails. A requirement the API would not parse fails its whole term."""
        if not self.expressions and not self.fields:
            return ""
        for requirement in self.expressions:
            failure = requirement.label_failure(node_labels)
            if failure:
                return failure
        for requirement in self.fields:
            failure = requirement.field_failure(name(node))
            if failure:
                return failure
        return None


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


def gate_names(pod: Object) -> tuple[str, ...]:
    gates = sequence(spec(pod).get("schedulingGates"))
    return tuple(text(mapping(g).get("name")) or "(unnamed)" for g in gates)
