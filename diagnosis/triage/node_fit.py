"""The funnel steps after the free devices: `node-resources` (every other resource, NodeResourcesFit)
and `host-port` (NodePorts). Each is a per-node check and what to say when it leaves no node; the
rules are `diagnosis.triage.fit` and `diagnosis.triage.ports`, the order `classify.FUNNEL`."""

from __future__ import annotations

from collections import Counter

from diagnosis.commands import collect, describe
from diagnosis.model import Command
from diagnosis.objects import Object, name, namespace
from diagnosis.triage import commands as kubectl
from diagnosis.triage import remedies
from diagnosis.triage.fit import owner, pod_requests, show
from diagnosis.triage.funnel import SHOWN, Advice, Ask, Funnel
from diagnosis.triage.ports import Taken, taken

PORT_MESSAGE = "node(s) didn't have free ports for the requested pod ports"
"""NodePorts' reason (`nodeports/node_ports.go` `ErrReason`)."""


def node_resources(ask: Ask, node: Object) -> str | None:
    return "; ".join(map(str, ask.shortages(node))) or None


def _pod(pod: Object) -> str:
    """`ns/name (Kind/owner)`: a pod as the evidence names it."""
    made_by = owner(pod)
    return f"{namespace(pod)}/{name(pod)}" + (f" ({made_by})" if made_by else "")


def node_resources_advice(funnel: Funnel) -> Advice:
    ask, nodes = funnel.ask, funnel.last.entered
    found = {name(n): ask.shortages(n) for n in nodes}
    tally = Counter(s.resource for short in found.values() for s in short)
    resource = min(tally, key=lambda r: (-tally[r], r))
    wanted = ask.fit.get(resource, 1)
    short_here = {
        n: next(s for s in short if s.resource == resource)
        for n, short in found.items()
        if any(s.resource == resource for s in short)
    }
    largest = max(s.allocatable for s in short_here.values())
    best = max(short_here, key=lambda n: (short_here[n].allocatable - short_here[n].used, n))
    free = short_here[best].allocatable - short_here[best].used
    if resource == "pods":
        summary = (
            f"Every node left already runs as many pods as it allows (e.g. {best}: "
            f"{short_here[best].used} of {short_here[best].allocatable}): `Too many pods`"
        )
    elif all(s.never for s in short_here.values()) and len(short_here) == len(nodes):
        summary = (
            f"The pod asks {show(resource, wanted)} {resource} but no node left has more than "
            f"{show(resource, largest)} allocatable: it cannot fit even on an empty node"
        )
    elif len(nodes) == 1:
        summary = (
            f"{best} has {show(resource, max(free, 0))} {resource} free "
            f"(allocatable {show(resource, largest)}, used {show(resource, short_here[best].used)}); "
            f"the pod asks {show(resource, wanted)}: `Insufficient {resource}`"
        )
    else:
        summary = (
            f"None of the {len(nodes)} nodes left has {show(resource, wanted)} {resource} free for the pod "
            f"(most free: {best} with {show(resource, max(free, 0))}): `Insufficient {resource}`"
        )
    others = sorted(set(tally) - {resource})
    evidence = [
        "the pod's requests as the scheduler counts them (containers, init containers, overhead): "
        + ", ".join(f"{r} {show(r, v)}" for r, v in ask.fit.items())
    ]
    if others:
        evidence.append(f"also short on some nodes: {', '.join(others)}")
    ranked = sorted(short_here, key=lambda n: (-(short_here[n].allocatable - short_here[n].used), n))
    for node in ranked[:3]:
        if resource == "pods":
            continue
        takers = sorted(
            ((pod_requests(p).get(resource, 0), p) for p in ask.pods.get(node, ())),
            key=lambda held: (-held[0], namespace(held[1]), name(held[1])),
        )
        shown = [f"{_pod(p)} {show(resource, v)}" for v, p in takers if v][:5]
        if shown:
            more = len([1 for v, _ in takers if v]) - len(shown)
            evidence.append(
                f"{node}: {resource} requested by " + ", ".join(shown) + (f" and {more} more" if more else "")
            )
    commands: list[Command | None] = []
    for node in ranked[:2]:
        commands += (kubectl.node_details(node), kubectl.pod_requests_on_node(node))
    return Advice(summary, tuple(evidence), collect(*commands), fixes=remedies.for_node_resources(funnel))


def _taken(ask: Ask, node: Object) -> list[Taken]:
    return taken(ask.ports, ask.pods.get(name(node), ())) if ask.ports else []


def host_port(ask: Ask, node: Object) -> str | None:
    found = _taken(ask, node)
    if not found:
        return None
    return f"{_held(found)}: {PORT_MESSAGE}"


def _held(found: list[Taken]) -> str:
    """`TCP/8000, TCP/8001 held by ns/pod (ReplicaSet/x)`: the ports each holder takes."""
    by_holder: dict[str, list[str]] = {}
    for t in found:
        by_holder.setdefault(_pod(t.holder), []).append(str(t.held))
    return "; ".join(f"{', '.join(dict.fromkeys(ports))} held by {who}" for who, ports in by_holder.items())


def host_port_advice(funnel: Funnel) -> Advice:
    ask, nodes = funnel.ask, funnel.last.entered
    found = {name(n): _taken(ask, n) for n in nodes}
    ports = Counter(str(t.wanted) for taken_here in found.values() for t in taken_here)
    port = min(ports, key=lambda p: (-ports[p], p))
    first = next(iter(found))
    holder = found[first][0].holder
    summary = (
        f"Host port {port} that the pod asks is already taken on "
        + (f"{first}" if len(nodes) == 1 else f"every one of the {len(nodes)} nodes left")
        + f" (e.g. by {_pod(holder)} on {first})"
    )
    evidence = [f"the pod asks host ports {', '.join(map(str, ask.ports))}"]
    evidence += [f"{node}: {_held(taken_here)}" for node, taken_here in list(found.items())[:SHOWN]]
    holders = [t.holder for taken_here in found.values() for t in taken_here]
    if holders and all(owner(p).startswith("DaemonSet/") for p in holders):
        evidence.append(
            "the holders are DaemonSet pods: one runs on every node, so no node will free the port; "
            "pick another hostPort (or drop it and use a Service)"
        )
    commands = [kubectl.host_ports_on_node(node) for node in list(found)[:2]]
    purpose = "the pod holding the port: its owner and ports"
    commands += [describe("pod", namespace(p), name(p), purpose) for p in holders[:2]]
    return Advice(summary, tuple(evidence), collect(*commands), fixes=remedies.for_host_port(funnel))
