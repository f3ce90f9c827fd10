"""The `host-port` step: kube-scheduler's NodePorts Filter (`nodeports/node_ports.go`; the rule is
`diagnosis.triage.ports`): a host port the pod asks is taken on the node (nominated pods hold theirs too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis.commands import collect, describe
from diagnosis.model import Command, PodVerdict
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, text
from diagnosis.triage.commands import pod_columns_on_node
from diagnosis.triage.fit import owner, pod_words
from diagnosis.triage.fixes import Change, pod_change, where
from diagnosis.triage.freeing import freeing_change, may_end
from diagnosis.triage.funnel import SHOWN, Advice, Ask, Funnel, Step
from diagnosis.triage.ports import HostPort, Taken, host_ports, taken
from diagnosis.triage.resources import holder_of
from diagnosis.workloads import preempts_below

PORT_MESSAGE = "node(s) didn't have free ports for the requested pod ports"
"""NodePorts' reason (`nodeports/node_ports.go` `ErrReason`)."""


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
        by_holder.setdefault(pod_words(t.holder), []).append(str(t.held))
    return "; ".join(f"{', '.join(dict.fromkeys(ports))} held by {who}" for who, ports in by_holder.items())


def advise(funnel: Funnel) -> Advice:
    ask, nodes = funnel.ask, funnel.last.entered
    found = {name(n): _taken(ask, n) for n in nodes}
    ports = Counter(str(t.wanted) for taken_here in found.values() for t in taken_here)
    port = min(ports, key=lambda p: (-ports[p], p))
    first = next(iter(found))
    holder = found[first][0].holder
    summary = (
        f"Host port {port} that the pod asks is taken on "
        + (f"{first}" if len(nodes) == 1 else f"every one of the {len(nodes)} nodes left")
        + f" (e.g. by {owner(holder)} on {first})"
    )
    evidence = [f"the pod asks host ports {', '.join(map(str, ask.ports))}"]
    evidence += [f"{node}: {_held(taken_here)}" for node, taken_here in list(found.items())[:SHOWN]]
    holders = [t.holder for taken_here in found.values() for t in taken_here]
    if holders and all(owner(p).startswith("DaemonSet/") for p in holders):
        evidence.append(
            "the holders are DaemonSet pods: one runs on every node, so no node will free the port; "
            "pick another hostPort (or drop it and use a Service)"
        )
    commands = [host_ports_on_node(node) for node in list(found)[:2]]
    purpose = "the pod holding the port: its owner and ports"
    commands += [describe("pod", namespace(p), name(p), purpose) for p in holders[:2]]
    return Advice(summary, tuple(evidence), collect(*commands), fixes=_fixes(funnel))


def _fixes(funnel: Funnel) -> tuple[Change, ...]:
    """Another host port, one no pod on the nodes left holds; the host port dropped (the pod reached
    through a Service instead; not for a hostNetwork pod, whose container ports are its host ports);
    then the pod holding the port ended, unless a DaemonSet runs it (it comes back on every node)."""
    ask, nodes = funnel.ask, funnel.last.entered
    pod = ask.pod
    found = {name(n): taken(ask.ports, ask.pods.get(name(n), ())) for n in nodes}
    clashing = sorted({t.wanted for held in found.values() for t in held})
    if not clashing:
        return ()
    host_network = spec(pod).get("hostNetwork") is True
    changes = []
    moves = _free_ports(ask, nodes, clashing)
    if moves and len(moves) == len(clashing):
        shown = ", ".join(f"{new} instead of {old.number}" for old, new in moves.items())
        listen = (
            " (with hostNetwork the app listens on the host port itself: point it there)"
            if host_network
            else ""
        )
        changes.append(
            pod_change(
                f"use host port {shown} {where(pod)}{listen}: opens {{opens}}",
                _ports_patch(pod, {(p.protocol, p.number): n for p, n in moves.items()}, host_network),
            )
        )
    if not host_network:
        shown = ", ".join(str(p) for p in clashing)
        changes.append(
            pod_change(
                f"drop hostPort {shown} {where(pod)} and reach the pod through a Service: opens {{opens}}",
                _ports_patch(pod, {(p.protocol, p.number): 0 for p in clashing}, host_network),
            )
        )
    for node in nodes:
        if len(changes) >= 4:
            break
        if (freeing := _freeing(pod, node, found[name(node)])) is not None:
            changes.append(freeing)
    return tuple(changes)


def _free_ports(ask: Ask, nodes: Sequence[Object], clashing: Sequence[HostPort]) -> dict[HostPort, int]:
    """For each clashing port, the next number (within 100) that no pod on the nodes left holds, nor
    the pod itself."""
    in_use = {
        (p.protocol, p.number)
        for n in nodes
        for other in ask.pods.get(name(n), ())
        for p in host_ports(other)
    }
    in_use |= {(p.protocol, p.number) for p in ask.ports}
    moves = {}
    for port in clashing:
        free = next(
            (
                n
                for n in range(port.number + 1, min(port.number + 100, 65536))
                if (port.protocol, n) not in in_use
            ),
            0,
        )
        if free:
            moves[port] = free
            in_use.add((port.protocol, free))
    return moves


def _freeing(pod: Object, node: Object, held: Sequence[Taken]) -> Change | None:
    """End the pods holding the ports on the node, unless a fix may not end one of them."""
    rank = preempts_below(pod)
    holders = list({id(t.holder): holder_of(t.holder, {}, rank) for t in held}.values())
    if not held or not all(may_end(pod, h) for h in holders):
        return None
    ports = ", ".join(dict.fromkeys(str(t.held) for t in held))
    return freeing_change(f"free {ports} on {name(node)}", holders)


def _ports_patch(pod: Object, moves: Mapping[tuple[str, int], int], host_network: bool) -> Mapping[str, Any]:
    """The containers (and sidecars) with the host ports in `moves` changed to their new number (0:
    dropped); with hostNetwork the container port moves along. Lists are replaced whole."""
    patch: dict[str, Any] = {}
    for field_name in ("initContainers", "containers"):
        items = [dict(mapping(c)) for c in sequence(spec(pod).get(field_name))]
        touched = False
        for item in items:
            ports = []
            for raw in map(mapping, sequence(item.get("ports"))):
                port = dict(raw)
                protocol = text(port.get("protocol")) or "TCP"
                number = port.get("hostPort") or (port.get("containerPort") if host_network else None)
                new = moves.get((protocol, number)) if isinstance(number, int) else None
                if new is not None:
                    touched = True
                    if new == 0:
                        port.pop("hostPort", None)
                        port.pop("hostIP", None)
                    else:
                        port["hostPort"] = new
                        if host_network:
                            port["containerPort"] = new
                ports.append(port)
            if ports:
                item["ports"] = ports
        if touched:
            patch[field_name] = items
    return {"spec": patch}


def host_ports_on_node(node: str) -> Command | None:
    """The host ports each pod on the node holds."""
    return pod_columns_on_node(
        node,
        (
            "HOSTNETWORK:.spec.hostNetwork",
            "HOSTPORTS:.spec.containers[*].ports[*].hostPort",
            "PROTOCOLS:.spec.containers[*].ports[*].protocol",
            "HOSTIPS:.spec.containers[*].ports[*].hostIP",
        ),
        f"the host ports the pods on {node} hold (hostNetwork pods hold their container ports)",
    )


STEP = Step(PodVerdict.HOST_PORT, "has the pod's host ports free", host_port, advise, ("NodePorts",))
