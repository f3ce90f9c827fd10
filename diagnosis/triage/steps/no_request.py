"""The `no-request` rung: the pod asks for no extended resource and names no ResourceClaim, so it
starts, but no device is given to it (no Filter: kube-scheduler places it like any other pod). A pod
not placed yet that asks a prefixed native resource (`*kubernetes.io/*`) goes through the funnel
instead: a node that lacks it never takes the pod.
"""

from __future__ import annotations

from collections.abc import Iterable

from diagnosis.commands import collect
from diagnosis.model import Command, PodVerdict, Snippet
from diagnosis.objects import Object, mapping, name, namespace, sequence, spec, text
from diagnosis.quantity import count
from diagnosis.relations import node_name
from diagnosis.triage.commands import pod_jsonpath
from diagnosis.triage.dra.claims import asks_claims
from diagnosis.triage.evidence import pending_notes, phase, scheduler_lines
from diagnosis.triage.fit import native_asks
from diagnosis.triage.funnel import Advice, Answer, Seen, candidates
from diagnosis.triage.resources import is_extended, offer, reported_resources
from diagnosis.triage.scheduling import gate_names


def no_request(seen: Seen) -> Answer | None:
    view = seen.view
    pod = view.pod
    if seen.requests or asks_claims(pod) or (native_asks(pod) and not node_name(pod)):
        return None
    host = node_name(pod)
    where = f"; it is on {host} ({phase(pod)})" if host else ""
    summary = (
        "The pod asks for no accelerator (no nvidia.com/gpu, google.com/tpu… and no ResourceClaim): it "
        f"can start, but gets no device{where}"
    )
    evidence = [
        "extended resources in the pod's limits and requests: none (a request of 0 is no request); "
        "spec.resourceClaims: none",
        *zero_asks(pod),
        *visible_devices(pod),
    ]
    offered: tuple[str, ...] = ()
    node = next((n for n in candidates(view.nodes) if name(n) == host), None) if host else None
    if node is not None:
        offered = reported_resources(node)
        shown = ", ".join(f"{r} allocatable {offer(node, r).allocatable}" for r in offered)
        evidence.append(f"{host} offers {shown or 'no extended resource'}")
    if not host:
        if gates := gate_names(pod):
            evidence.append(f"spec.schedulingGates: {', '.join(gates)} (not scheduled until removed)")
        evidence += [*scheduler_lines(view, {}), *pending_notes(pod)]
    wanted = (*offered, *_likely_resources(pod, view.nodes), "nvidia.com/gpu")[0]
    commands = collect(pod_resources(namespace(pod), name(pod)))
    advice = Advice(summary, commands=commands, snippets=(request_snippet(wanted),))
    return Answer(PodVerdict.NO_REQUEST, advice, tuple(evidence))


def _likely_resources(pod: Object, nodes: Iterable[Object]) -> tuple[str, ...]:
    """The device resources the cluster offers, those the pod tolerates a taint for first: what the
    pod most likely meant to ask for."""
    offered = sorted({r for node in candidates(nodes) for r in reported_resources(node)})
    tolerated = {text(mapping(t).get("key")) for t in sequence(spec(pod).get("tolerations"))}
    return (*(r for r in offered if r in tolerated), *offered)


def pod_resources(namespace: str, pod: str) -> Command | None:
    return pod_jsonpath(
        namespace,
        pod,
        '{range .spec.containers[*]}{.name}{": "}{.resources}{"\\n"}{end}',
        "each container's resources as stored (limits and requests)",
    )


def zero_asks(pod: Object) -> list[str]:
    """Extended resources written with 0: they read like a request and are none."""
    found = []
    for field in ("initContainers", "containers"):
        for item in map(mapping, sequence(spec(pod).get(field))):
            resources = mapping(item.get("resources"))
            for kind in ("limits", "requests"):
                for resource, value in mapping(resources.get(kind)).items():
                    if isinstance(resource, str) and is_extended(resource) and count(value) == 0:
                        found.append(f"container {text(item.get('name'))} sets {kind} {resource}: {value}")
    return found


def visible_devices(pod: Object) -> list[str]:
    """NVIDIA_VISIBLE_DEVICES in a pod that asks for no GPU: with the nvidia runtime as the default
    it can see GPUs the scheduler counts as free for others."""
    found = []
    for item in map(mapping, sequence(spec(pod).get("containers"))):
        for env in map(mapping, sequence(item.get("env"))):
            if env.get("name") == "NVIDIA_VISIBLE_DEVICES":
                found.append(
                    f"container {text(item.get('name'))} sets "
                    f"NVIDIA_VISIBLE_DEVICES={text(env.get('value'))}: "
                    "it may see GPUs the scheduler gives to other pods"
                )
    return found


def request_snippet(resource: str) -> Snippet:
    return Snippet(
        title=f"To get a device, ask for it in the limits of each container that needs it ({resource} here)",
        language="yaml",
        text=f"resources:\n  limits:\n    {resource}: 1\n",
    )
