"""Host ports: kube-scheduler's NodePorts filter (`nodeports/node_ports.go`, `HostPortInfo` in
`framework/types.go`).

A pod wants every `hostPort` above 0 of its containers and restartable init containers; a
`hostNetwork` pod wants its container ports as host ports (the API server copies `containerPort` into
an empty `hostPort`). A port is (host IP, protocol, number), an empty IP meaning `0.0.0.0` and an
empty protocol `TCP`. Wanting `0.0.0.0` conflicts with the same protocol and number on any IP of the
node; wanting one IP conflicts with the same on that IP or on `0.0.0.0`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis.objects import Object, mapping, sequence, spec, text

ANY_IP = "0.0.0.0"


@dataclass(frozen=True, order=True)
class HostPort:
    number: int
    protocol: str
    ip: str

    def __str__(self) -> str:
        where = "" if self.ip == ANY_IP else f" on {self.ip}"
        return f"{self.protocol}/{self.number}{where}"

    def conflicts(self, used: HostPort) -> bool:
        """`HostPortInfo.CheckConflict` for one port in use."""
        if (self.number, self.protocol) != (used.number, used.protocol):
            return False
        return self.ip == ANY_IP or used.ip in (ANY_IP, self.ip)


def host_ports(pod: Object) -> tuple[HostPort, ...]:
    """The host ports the pod takes on its node (`util.GetHostPorts`, after API defaulting), sorted."""
    pod_spec = spec(pod)
    host_network = pod_spec.get("hostNetwork") is True
    found = set()
    inits = sequence(pod_spec.get("initContainers"))
    restartable = (c for c in inits if mapping(c).get("restartPolicy") == "Always")
    for container in (*sequence(pod_spec.get("containers")), *restartable):
        for port in map(mapping, sequence(mapping(container).get("ports"))):
            number = _number(port.get("hostPort"))
            if not number and host_network:
                number = _number(port.get("containerPort"))
            if number > 0:
                protocol = text(port.get("protocol")) or "TCP"
                found.add(HostPort(number, protocol, text(port.get("hostIP")) or ANY_IP))
    return tuple(sorted(found))


@dataclass(frozen=True)
class Taken:
    """A wanted port already in use on a node, and the pod that holds it."""

    wanted: HostPort
    held: HostPort
    holder: Object


def taken(wanted: Iterable[HostPort], pods: Iterable[Object]) -> list[Taken]:
    """The wanted ports some of `pods` (those counted on one node) already hold."""
    wanted = tuple(wanted)
    found = []
    for pod in pods:
        for used in host_ports(pod):
            found += [Taken(w, used, pod) for w in wanted if w.conflicts(used)]
    return found


def _number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
