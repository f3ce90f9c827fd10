"""What `/triage` says about a pod's ResourceClaims, shared by the steps where DRA devices are what a
node lacks: the pod's asks as the funnel's titles name them, what its claims request, and per node
the matching devices (counted, up to `SHOWN` named) and what the nodes' slices publish."""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis.dra_objects import Claim, Subrequest
from diagnosis.model import Command
from diagnosis.objects import Object, mapping, name, sequence
from diagnosis.triage import commands as kubectl
from diagnosis.triage.dra.allocator import Ask, Choice
from diagnosis.triage.dra.devices import Devices
from diagnosis.triage.funnel import SHOWN, names


def asked(devices: Devices | None) -> dict[str, int]:
    """The pod's DRA asks as the funnel's titles name them (`gpu.nvidia.com devices` → count)."""
    if devices is None:
        return {}
    shown: dict[str, int] = {}
    for ask in devices.asks:
        first = ask.alternatives[0] if ask.alternatives else None
        label = f"{first.device_class or 'unnamed class'} devices" if first else f"devices ({ask.request})"
        shown[label] = shown.get(label, 0) + (first.count if first and not first.all_devices else 1)
    for claim, _ in devices.pinned:
        shown[f"claim {claim.name}'s allocated devices"] = len(claim.results)
    return shown


def request_lines(devices: Devices) -> tuple[str, ...]:
    """What the pod asks through its claims, one line per claim request (or allocated claim)."""
    lines = []
    for item in devices.resolved:
        claim = item.claim
        if claim is None:
            continue
        if claim.allocated:
            held = ", ".join(r.device_id for r in claim.results[:SHOWN]) or "no device"
            users = ", ".join(n for n, _ in claim.reserved_for) or "no pod yet"
            lines.append(
                f"claim {claim} (pod claim {item.entry.name}): allocated {held}, on {_allocated_on(claim)}; "
                f"reserved for {users}"
            )
            continue
        for request in claim.spec.requests:
            lines.append(
                f"claim {claim} request {request.name}: "
                + " or else ".join(_subrequest_text(devices, s) for s in request.alternatives)
            )
        for constraint in claim.spec.constraints:
            bound = ", ".join(constraint.requests) or "all requests"
            lines.append(f"claim {claim}: devices of {bound} must share {constraint.attribute}")
    lines += [f"selector `{expr}`: {problem}" for expr, problem in devices.problems.items()]
    return tuple(lines)


def _allocated_on(claim: Claim) -> str:
    """Where an allocated claim's devices are: the nodes its allocation's nodeSelector names (the
    allocator writes `metadata.name In [node]` for a node-local device), or what it selects."""
    if claim.node_selector is None:
        return "any node"
    named = [
        str(value)
        for term in map(mapping, sequence(claim.node_selector.get("nodeSelectorTerms")))
        for requirement in map(mapping, sequence(term.get("matchFields")))
        if requirement.get("key") == "metadata.name" and requirement.get("operator") == "In"
        for value in sequence(requirement.get("values"))
    ]
    return f"node {', '.join(named)}" if named else "the nodes of its allocation.nodeSelector"


def _subrequest_text(devices: Devices, sub: Subrequest) -> str:
    how = "all devices" if sub.all_devices else f"{sub.count} device{'s' if sub.count != 1 else ''}"
    device_class = devices.dra.class_index.get(sub.device_class)
    class_part = (
        f"class {sub.device_class} (does not exist)"
        if device_class is None
        else f"class {sub.device_class}"
        + (f" [{' && '.join(device_class.selectors)}]" if device_class.selectors else "")
    )
    own = f", selectors [{' && '.join(sub.selectors)}]" if sub.selectors else ""
    admin = ", admin access" if sub.admin_access else ""
    return f"{how} of {class_part}{own}{admin}"


def _choices_line(node: Object, ask: Ask, choices: Sequence[Choice]) -> str:
    best = max(choices, key=lambda c: (len(c.free), len(c.matching)))
    listed = names(d.name for d in best.matching) or "none"
    return (
        f"{name(node)}: {len(best.matching)} device{'s match' if len(best.matching) != 1 else ' matches'} "
        f"request {ask.request} of {ask.claim.name} ({listed}); {len(best.untainted)} untainted, "
        f"{len(best.free)} free"
    )


def per_node(devices: Devices, nodes: Sequence[Object]) -> list[str]:
    lines = []
    for node in nodes[:SHOWN]:
        for ask, choices in zip(devices.asks, devices.choices(node), strict=True):
            if choices:
                lines.append(_choices_line(node, ask, choices))
    return lines


def published(devices: Devices, nodes: Sequence[Object]) -> list[str]:
    """What the nodes' slices publish, by driver: what the requests could have matched."""
    lines = []
    for node in nodes[:SHOWN]:
        counts: dict[str, list[str]] = {}
        for pool, item in devices.pools(node):
            for device in item.devices:
                counts.setdefault(pool.driver + ("" if pool.complete else " (pool incomplete)"), []).append(
                    device.name
                )
        said = "; ".join(
            f"{driver}: {len(found)} ({names(found)})" for driver, found in sorted(counts.items())
        )
        lines.append(f"{name(node)} publishes {said or 'no DRA device (no ResourceSlice reaches it)'}")
    return lines


def claim_commands(devices: Devices) -> list[Command | None]:
    commands = [
        kubectl.resource_claim(item.claim.namespace, item.claim.name)
        for item in devices.resolved
        if item.claim is not None
    ]
    commands += [
        kubectl.device_class(sub.device_class)
        for ask in devices.asks
        for sub in ask.alternatives
        if sub.device_class in devices.dra.class_index
    ]
    return commands


def node_commands(nodes: Sequence[Object]) -> list[Command | None]:
    return [kubectl.resource_slices(name(node)) for node in nodes[:2]]


