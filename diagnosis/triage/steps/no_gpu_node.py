"""The `no-gpu-node` step: kube-scheduler's NodeResourcesFit Filter (`noderesources/fit.go`) on a node
that does not report the extended resource, and the DynamicResources Filter where no device it
reaches matches a claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from diagnosis import commands
from diagnosis.commands import collect
from diagnosis.dra_objects import Subrequest
from diagnosis.model import Command, PodVerdict
from diagnosis.objects import Object, name
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import failing, failing_note, repairs, root_cause
from diagnosis.triage.dra.changes import choices_of, edit_request, request_words
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.dra.evidence import claim_commands, node_commands, published
from diagnosis.triage.fixes import CHECKED, UNCHECKED, Change, hardware_count
from diagnosis.triage.funnel import Advice, Ask, Funnel, Step, and_, names, offered
from diagnosis.triage.resources import offer, reported_resources


def no_gpu_node(ask: Ask, node: Object) -> str | None:
    missing = _unreported(ask, node)
    if ask.devices is not None and (dra := ask.devices.no_device(node)):
        missing.append(dra)
    return ", ".join(missing) or None


def _unreported(ask: Ask, node: Object) -> list[str]:
    missing = []
    for resource in ask.requests:
        have = ask.offer(node, resource)
        if not have.reported:
            missing.append(f"{resource} capacity 0" if have.capacity == 0 else f"no {resource} in capacity")
    return missing


def advise(funnel: Funnel) -> Advice:
    if not any(_unreported(funnel.ask, d.node) for d in funnel.last.dropped):
        return _claims_advice(funnel)
    requests, stage = funnel.ask.requests, funnel.last
    nodes = stage.entered
    if len(nodes) == 1:
        summary = f"{name(nodes[0])} does not report {and_(requests)} ({stage.dropped[0].why})"
    else:
        summary = f"None of the {len(nodes)} nodes left reports {and_(requests)}"
    summary += ": no device plugin serves it there" + failing_note(funnel.view, nodes)
    reported: dict[str, list[str]] = {}
    for node in nodes:
        for resource in reported_resources(node):
            reported.setdefault(resource, []).append(name(node))
    listed = "; ".join(f"{r} ({names(on)})" for r, on in sorted(reported.items()))
    evidence = [
        "extended resources the nodes left do report: "
        + (listed or "none (no device plugin has registered on them)"),
        *root_cause(funnel.view, nodes),
    ]
    if "nvidia.com/gpu" in requests and any(r.startswith("nvidia.com/mig-") for r in reported):
        evidence.append(
            "these nodes run the MIG mixed strategy: their GPUs are exposed as nvidia.com/mig-<profile> "
            "slices and nvidia.com/gpu reads 0; ask for a MIG profile instead"
        )
    commands = [kubectl.nodes_offer(requests)]
    for node in nodes[:2]:
        commands += (kubectl.node_details(name(node)), kubectl.device_plugin_pods(name(node)))
    return Advice(summary, tuple(evidence), collect(*commands), fixes=_fixes(funnel))


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the device plugin (or driver) on the nodes whose hardware says the device is there but
    which report none: once repaired they report the count their hardware labels (or the same instance
    type elsewhere) say. A node that exposes MIG slices is left out: its `nvidia.com/gpu` reads 0 by
    design."""
    requests, nodes = funnel.ask.requests, funnel.view.nodes
    patches: dict[str, dict[str, Any]] = {}
    unknown: list[Object] = []
    for drop in funnel.last.dropped:
        reported = reported_resources(drop.node)
        fields: dict[str, Any] = {}
        for resource in requests:
            if offer(drop.node, resource).reported:
                continue
            if resource == "nvidia.com/gpu" and any(r.startswith("nvidia.com/mig-") for r in reported):
                fields = {}
                break
            amount = hardware_count(drop.node, resource, nodes)
            if not amount:
                if failing(funnel.view, name(drop.node)):
                    unknown.append(drop.node)
                fields = {}
                break
            fields.setdefault("capacity", {})[resource] = str(amount)
            fields.setdefault("allocatable", {})[resource] = str(amount)
        if fields:
            patches[name(drop.node)] = {"status": fields}
    why = f"report no {and_(requests)}"
    found = list(repairs(funnel, patches, why))
    for node in unknown[:1]:
        change = repairs(funnel, {name(node): {}}, why)[0]
        found.append(
            replace(
                change,
                summary=change.summary.replace(
                    "opens {opens}",
                    UNCHECKED,
                ),
                node_patches={},
                checkable=False,
            )
        )
    return tuple(found)


def _claims_advice(funnel: Funnel) -> Advice:
    devices, nodes = funnel.ask.devices, funnel.last.entered
    assert devices is not None
    first = funnel.last.dropped[0].why
    if devices.missing_classes:
        summary = (
            f"DeviceClass {', '.join(devices.missing_classes)} does not exist: no device can be allocated"
        )
        commands: list[Command | None] = [device_classes()]
    elif all(devices.elsewhere(n) for n in nodes):
        summary = f"None of the {len(nodes)} nodes left is where the pod's allocated claim is ({first})"
        commands = []
    else:
        where = name(nodes[0]) if len(nodes) == 1 else f"any of the {len(nodes)} nodes left"
        summary = f"No device on {where} matches what the pod's claims ask ({first})"
        commands = []
    evidence = tuple(published(devices, nodes))
    commands += (*claim_commands(devices), *node_commands(nodes))
    return Advice(summary, evidence, collect(*commands), fixes=_claims_fixes(funnel))


ALTERNATIVES = 3
"""Other device classes or selector values proposed for one request: each costs a funnel run."""


_EQUALS = re.compile(
    r"""device\.attributes\[(?P<q>['"])(?P<domain>[^'"]+)(?P=q)\]\.(?P<attribute>[A-Za-z_][A-Za-z0-9_]*)"""
    r"""\s*==\s*(?P<v>['"])(?P<value>[^'"]*)(?P=v)"""
)
"""A selector that compares one string attribute with a literal, as a request writes it
(`device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'`): the one form whose value can
be swapped for a value that exists. The match is evaluated by the CEL library like any other."""


def _claims_fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Ask a DeviceClass that exists, or a selector value that exists: for each request no node's
    device matches, the classes (or the values of the attribute its selector compares) that some
    device the nodes reach has, most common first."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    changes: list[Change] = []
    for ask in devices.asks:
        if any(c.matching for node in nodes for c in choices_of(devices, ask, node)):
            continue
        sub = ask.alternatives[0] if ask.alternatives else None
        if sub is None:
            continue
        if sub.device_class not in devices.dra.class_index:
            for other in _classes(devices, sub, nodes):
                new = replace(sub, device_class=other)
                op = {"op": "replace", "path": "/deviceClassName", "value": other}
                what = f"ask class {other} in {request_words(ask)}"
                change = edit_request(view, ask.claim, [(sub, new, [op])], what)
                if change is not None:
                    changes.append(change)
            continue
        for index, expression in enumerate(sub.selectors):
            for value, new_expression in _values(devices, sub, index, expression, nodes):
                new = replace(
                    sub,
                    selectors=tuple(new_expression if i == index else s for i, s in enumerate(sub.selectors)),
                )
                op = {"op": "replace", "path": f"/selectors/{index}/cel/expression", "value": new_expression}
                what = f"select {value!r} in {request_words(ask)}"
                change = edit_request(view, ask.claim, [(sub, new, [op])], what)
                if change is not None:
                    changes.append(change)
    return tuple(changes[:CHECKED])


def _classes(devices: Devices, sub: Subrequest, nodes: Sequence[Object]) -> list[str]:
    """The existing classes some device on the nodes matches, with the request's own selectors; the
    names closest to the one asked first (a misspelt name is the likely cause)."""
    found = []
    for device_class in sorted(
        devices.dra.class_index, key=lambda c: (-SequenceMatcher(None, c, sub.device_class).ratio(), c)
    ):
        candidate = replace(sub, device_class=device_class)
        if any(devices.offer(candidate, node).matching for node in nodes):
            found.append(device_class)
            if len(found) >= ALTERNATIVES:
                break
    return found


def _values(
    devices: Devices, sub: Subrequest, index: int, expression: str, nodes: Sequence[Object]
) -> list[tuple[str, str]]:
    """For a selector `device.attributes['D'].A == 'V'`: the values of D/A among the devices on the
    nodes that match every other selector, by how many nodes have one (most first), each with the
    selector rewritten to it."""
    found = _EQUALS.fullmatch(expression.strip())
    if found is None:
        return []
    others = replace(sub, selectors=tuple(s for i, s in enumerate(sub.selectors) if i != index))
    qualified = f"{found['domain']}/{found['attribute']}"
    counts: dict[str, int] = {}
    for node in nodes:
        values = {
            v for d in devices.offer(others, node).matching if isinstance(v := d.attribute(qualified), str)
        }
        for value in values:
            counts[value] = counts.get(value, 0) + 1
    ranked = sorted(counts, key=lambda v: (-counts[v], v))[:ALTERNATIVES]
    quote = found["v"]
    start, end = found.span("value")
    stripped = expression.strip()
    return [(v, stripped[:start] + v + stripped[end:]) for v in ranked if quote not in v and "\\" not in v]


def device_classes() -> Command:
    return commands.kubectl("the device classes the cluster has", "get", "deviceclasses")


STEP = Step(
    PodVerdict.NO_GPU_NODE,
    "reports {resources}",
    no_gpu_node,
    advise,
    ("NodeResourcesFit", "DynamicResources"),
    offered,
)
