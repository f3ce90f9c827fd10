"""The `allocatable-zero` step: kube-scheduler's NodeResourcesFit Filter (`noderesources/fit.go`) on a
node that reports the resource with allocatable 0, and the DynamicResources Filter where every
matching device is tainted out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from diagnosis import commands
from diagnosis.commands import collect
from diagnosis.dra_objects import Device, Slice, Subrequest
from diagnosis.model import Command, PodVerdict
from diagnosis.names import is_dns1123_subdomain
from diagnosis.objects import Object, labels, name, namespace
from diagnosis.triage import commands as kubectl
from diagnosis.triage.commands import extended_only, jsonpath_name
from diagnosis.triage.devices import failing, failing_note, logs, repair, root_cause
from diagnosis.triage.dra import allocator
from diagnosis.triage.dra.changes import edit_request, request_words
from diagnosis.triage.dra.devices import Devices, blocking_taints
from diagnosis.triage.dra.evidence import claim_commands, node_commands, per_node
from diagnosis.triage.fixes import Change, toleration
from diagnosis.triage.funnel import SHOWN, Advice, Ask, Funnel, Step, and_, offered
from diagnosis.triage.resources import offer
from diagnosis.triage.scheduling import Taint
from diagnosis.views import TriageView


def allocatable_zero(ask: Ask, node: Object) -> str | None:
    zero = _zero(ask, node)
    if ask.devices is not None and (dra := ask.devices.tainted(node)):
        zero.append(dra)
    return ", ".join(zero) or None


def _zero(ask: Ask, node: Object) -> list[str]:
    zero = []
    for resource in ask.requests:
        have = ask.offer(node, resource)
        if have.allocatable == 0:
            zero.append(f"{resource} capacity {have.capacity}, allocatable 0")
    return zero


def advise(funnel: Funnel) -> Advice:
    if not any(_zero(funnel.ask, d.node) for d in funnel.last.dropped):
        return _claims_advice(funnel)
    requests, stage = funnel.ask.requests, funnel.last
    nodes = stage.entered
    if len(nodes) == 1:
        summary = (
            f"{name(nodes[0])} reports {stage.dropped[0].why}: its devices are unhealthy or not served"
            + failing_note(funnel.view, nodes)
        )
    else:
        summary = (
            f"All {len(nodes)} nodes left that report {and_(requests)} have allocatable 0: "
            "their devices are unhealthy or not served" + failing_note(funnel.view, nodes)
        )
    evidence = (
        *(line for node in nodes[:SHOWN] if (line := hardware_labels(node))),
        *root_cause(funnel.view, nodes),
    )
    commands: list[Command | None] = []
    for node in nodes[:2]:
        commands += (node_offer(name(node), requests), kubectl.device_plugin_pods(name(node)))
    commands += (kubectl.device_plugin_logs(requests), kubectl.node_details(name(nodes[0])))
    return Advice(summary, evidence, collect(*commands), fixes=_fixes(funnel))


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the device plugin (or the devices' health) on the nodes that report the devices with
    allocatable 0: once healthy, allocatable equals capacity again."""
    requests = funnel.ask.requests
    patches: dict[str, dict[str, Any]] = {}
    for drop in funnel.last.dropped:
        zero = {r: offer(drop.node, r) for r in requests if offer(drop.node, r).allocatable == 0}
        if zero and all(o.capacity for o in zero.values()):
            patches[name(drop.node)] = {
                "status": {"allocatable": {r: str(o.capacity) for r, o in zero.items()}}
            }
    if not patches:
        return ()
    return (repair(funnel, patches, f"report {and_(requests)} allocatable 0"),)


def _claims_advice(funnel: Funnel) -> Advice:
    devices, nodes = funnel.ask.devices, funnel.last.entered
    assert devices is not None
    summary = (
        f"{name(nodes[0])}: {funnel.last.dropped[0].why}"
        if len(nodes) == 1
        else f"On all {len(nodes)} nodes left, every device matching the pod's claims is tainted out "
        f"(e.g. {name(funnel.last.dropped[0].node)}: {funnel.last.dropped[0].why})"
    )
    summary += ": unhealthy, or the request lacks a toleration"
    evidence = (
        *per_node(devices, nodes),
        "device taints need the DRADeviceTaints feature gate (alpha, off by default in 1.34/1.35): where it "
        "is off the scheduler ignores them",
    )
    return Advice(
        summary,
        evidence,
        collect(*claim_commands(devices), *node_commands(nodes)),
        fixes=_claims_fixes(funnel),
    )


def _claims_fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Repair the driver, so that it publishes the devices untainted; else tolerate the devices'
    NoSchedule taints in the request (the device is then used as it is: only where the workload can)."""
    devices, nodes, view = funnel.ask.devices, funnel.last.entered, funnel.view
    if devices is None:
        return ()
    tainted: dict[str, set[str]] = {}
    taints: dict[int, tuple[allocator.Ask, Subrequest, dict[Taint, None]]] = {}
    for node in nodes:
        for ask, options in zip(devices.asks, devices.choices(node), strict=True):
            if any(c.untainted for c in options):
                continue
            for choice in options:
                for device in choice.matching:
                    found = blocking_taints(choice.sub, device)
                    tainted.setdefault(name(node), set()).add(device.id)
                    if found and all(t.effect == "NoSchedule" for t in found):
                        _, _, seen = taints.setdefault(id(choice.sub), (ask, choice.sub, {}))
                        seen.update(dict.fromkeys(found))
    changes = []
    repaired = _repaired(devices, nodes, tainted)
    if repaired:
        changes.append(_republished(view, repaired, tainted))
    by_claim: dict[int, list[tuple[allocator.Ask, Subrequest, dict[Taint, None]]]] = {}
    for ask, sub, seen in taints.values():
        by_claim.setdefault(id(ask.claim), []).append((ask, sub, seen))
    for group in by_claim.values():
        edits = []
        for _, sub, seen in group:
            added = [toleration(t) for t in seen]
            new = replace(sub, tolerations=(*sub.tolerations, *added))
            edits.append(
                (
                    sub,
                    new,
                    [{"op": "add", "path": "/tolerations", "value": [*map(dict, sub.tolerations), *added]}],
                )
            )
        shown = and_(dict.fromkeys(str(t) for _, _, seen in group for t in seen))
        asks = and_(request_words(a) for a, _, _ in group)
        change = edit_request(
            view, group[0][0].claim, edits, f"tolerate {shown} in {asks} (the devices are used as they are)"
        )
        if change is not None:
            changes.append(change)
    return tuple(changes)


def _repaired(devices: Devices, nodes: Sequence[Object], tainted: Mapping[str, set[str]]) -> dict[str, Slice]:
    """The slices reaching the nodes with the tainted devices published untainted."""
    found: dict[str, Slice] = {}
    for node in nodes:
        ids = tainted.get(name(node), set())
        for _, item in devices.pools(node):
            if item.name in found or not any(d.id in ids for d in item.devices):
                continue
            found[item.name] = replace(
                item, devices=tuple(_untainted(d) if d.id in ids else d for d in item.devices)
            )
    return found


def _untainted(device: Device) -> Device:
    return replace(device, taints=())


def _republished(view: TriageView, slices: Mapping[str, Slice], tainted: Mapping[str, set[str]]) -> Change:
    hosts = sorted(tainted)
    listed = ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
    drivers = and_(sorted({s.driver for s in slices.values()}))
    broken = [d for host in hosts if (d := failing(view, host))]
    commands = collect(
        *(logs(d) for d in broken[:1]),
        *(kubectl.resource_slices(host) for host in hosts[:2]),
    )
    return Change(
        f"repair the devices the {drivers} driver taints on {listed} (it publishes them again untainted once "
        "they are healthy): opens {opens}",
        slices=slices,
        commands=commands,
        objects=(
            *(f"resourceslice/{s}" for s in sorted(slices)),
            *(f"pod/{namespace(d.pod)}/{name(d.pod)}" for d in broken),
        ),
    )


def node_offer(node: str, resources: Iterable[str]) -> Command | None:
    """Capacity beside allocatable on one node, for each resource."""
    names = extended_only(resources)
    if not (is_dns1123_subdomain(node) and names):
        return None
    template = "".join(
        f'{{"{r} capacity="}}{{.status.capacity.{jsonpath_name(r)}}}'
        f'{{" allocatable="}}{{.status.allocatable.{jsonpath_name(r)}}}{{"\\n"}}'
        for r in names
    )
    return commands.kubectl(
        f"{node}: devices present (capacity) against devices healthy and served (allocatable)",
        "get",
        "node",
        node,
        "-o",
        f"jsonpath={template}",
    )


_HARDWARE_LABELS = (
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.present",
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-tpu-accelerator",
)
"""Labels that describe the hardware, not what is allocatable (GPU Feature Discovery, the GPU
Operator, GKE): set beside allocatable 0 they say the devices exist but are not served."""


def hardware_labels(node: Object) -> str:
    """The node's hardware labels, against its allocatable 0; empty when it has none."""
    said = {k: v for k, v in labels(node).items() if k in _HARDWARE_LABELS}
    if not said:
        return ""
    shown = ", ".join(f"{k}={v}" for k, v in sorted(said.items()))
    return f"{name(node)} labels say the hardware is there: {shown}"


STEP = Step(
    PodVerdict.ALLOCATABLE_ZERO,
    "{resources} allocatable above 0",
    allocatable_zero,
    advise,
    ("NodeResourcesFit", "DynamicResources"),
    offered,
)
