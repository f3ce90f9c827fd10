"""Why an accelerator pod is not running: the `/triage` classifier.

One ordered ladder, like kopf's `detect_changing_cause`: a pod that asks for no device, a pod already
placed and a gated pod are answered from the pod alone; every other pod goes through the funnel over
the candidate nodes (`FUNNEL`). Each funnel step keeps the nodes that pass it; the verdict is the
first step that leaves none, and the evidence shows how many nodes each step kept and why it dropped
the others. The scheduler's own message is quoted beside it, never used to decide.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from diagnosis import autoscaling
from diagnosis.commands import collect, describe, events_about
from diagnosis.dra_objects import Dra
from diagnosis.model import Command, Diagnosis, Fix, PodState, PodVerdict
from diagnosis.objects import Object, labels, mapping, name, namespace, sequence, spec, status, text
from diagnosis.patch import merge_patch
from diagnosis.relations import node_name, nominated_node
from diagnosis.triage import affinity, dra_advice, dra_remedies, remedies, spread, volumes
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import SHOWN_NODES, failing, root_cause
from diagnosis.triage.dra import ClaimProblem, Devices, asks_claims, claim_problem, resolve
from diagnosis.triage.evidence import (
    CONDITION_TAINTS,
    container_states,
    hardware_labels,
    held_lines,
    label_inventory,
    pending_notes,
    pod_problems,
    pod_state,
    request_line,
    request_snippet,
    scheduler_lines,
    taint_words,
    tolerations,
    visible_devices,
    waiting_since,
    zero_asks,
)
from diagnosis.triage.fixes import CHECKED, Change, changed, pool_of
from diagnosis.triage.funnel import (
    SHOWN,
    Advice,
    Ask,
    Drop,
    Findings,
    Funnel,
    Shared,
    Stage,
    Step,
    and_,
    candidates,
    competing,
    holdings,
    names,
    run,
    stage_line,
)
from diagnosis.triage.kueue import ADMISSION_GATE, QUEUE_LABEL, admission, not_admitted
from diagnosis.triage.node_fit import host_port, host_port_advice, node_resources, node_resources_advice
from diagnosis.triage.preemption import preempting as waiting_for_victims
from diagnosis.triage.resources import (
    effective_requests,
    offer,
    reported_resources,
)
from diagnosis.triage.scheduler_message import last_said
from diagnosis.triage.scheduling import (
    CORDON,
    constrained,
    cordoned,
    node_selector,
    selector_keys,
)
from diagnosis.views import TriageView

__all__ = [
    "FUNNEL",
    "NodeReads",
    "checked",
    "classify",
    "effective_requests",
    "funnel_of",
    "gate_names",
    "node_reads",
    "passing",
    "reaches_funnel",
    "serving_nothing",
    "usage_candidates",
]


# --- the ladder ---------------------------------------------------------------------------------


def classify(view: TriageView) -> Diagnosis:
    """The verdict on the view's pod, with the evidence and the next commands."""
    requests = effective_requests(view.pod)
    # A pod that asks for no device starts without one: nothing below could explain a missing GPU.
    if not requests and not asks_claims(view.pod):
        return no_request(view)
    # A bound pod is past the scheduler; whatever holds it now is the kubelet's or the app's.
    if node_name(view.pod):
        return ok(view, requests)
    # The scheduler does not look at a gated pod at all until the gates' owners remove them.
    if gate_names(view.pod):
        return gated(view, requests)
    # The scheduler already chose a node and evicts pods there: the wait is for them, not for a fit.
    if nominated_node(view.pod):
        return preempting(view, requests)
    # The scheduler does not try a pod whose claims are missing or unusable (PreEnqueue, PreFilter).
    shared = view.memo if isinstance(view.memo, Shared) else Shared()
    nodes = shared.candidates(view.nodes)
    problem = claim_problem(view.pod, view.dra, nodes, view.events) if asks_claims(view.pod) else None
    if problem is not None:
        return claim(view, requests, problem)
    # Only now do nodes matter: the funnel says which step leaves none.
    return _funneled(view, requests, shared)


def usage_candidates(pod: Object, nodes: Sequence[Object], dra: Dra | None = None) -> tuple[str, ...]:
    """The names of the nodes that pass every funnel step before the free-slot step: the nodes whose
    bound pods `classify` reads (it ignores pods bound elsewhere); for a pod waiting for the victims of
    its preemption, its nominated node. Empty when the pod does not need them (no request, already
    bound, gated). A pod that asks devices only by ResourceClaims finds them free or not in the DRA
    objects, not in the pods: given those (`dra`), the free-slot step is passed too."""
    return node_reads(pod, nodes, dra).usage


def serving_nothing(pod: Object, nodes: Sequence[Object]) -> tuple[str, ...]:
    """When the verdict is that no node left serves the pod's devices (no resource, or allocatable 0),
    the first nodes it names: a reader fetches their pods too, so the answer can quote the device
    plugin, operator and driver pods there (`diagnosis.triage.devices`)."""
    return node_reads(pod, nodes).serving


class NodeReads(NamedTuple):
    """What a reader needs to know before it reads any pod (`node_reads`)."""

    usage: tuple[str, ...]
    """`usage_candidates`."""
    serving: tuple[str, ...]
    """`serving_nothing`."""
    memo: Shared
    """What working them out found about the nodes: a view that holds it (`TriageView.memo`) lets the
    classifier start from there."""


def node_reads(
    pod: Object, nodes: Sequence[Object], dra: Dra | None = None, findings: Findings | None = None
) -> NodeReads:
    """`usage_candidates` and `serving_nothing` at once (a reader asks both): the steps before the
    free slots run over the nodes once, twice for a pod that asks both an extended resource and
    claims (the devices of its claims do not change which device plugins serve the other nodes).
    `findings`: what earlier questions found on these nodes (`TriageView.findings`)."""
    shared = Shared()
    if not reaches_funnel(pod):
        # A pod waiting for victims: its nominated node's pods are the evidence.
        asks = effective_requests(pod) or asks_claims(pod)
        nominated = nominated_node(pod) if asks and not node_name(pod) and not gate_names(pod) else ""
        return NodeReads(((nominated,) if nominated else ()), (), shared)
    nodes = shared.candidates(nodes)
    requests = effective_requests(pod)
    devices = shared.devices(pod, dra) if dra is not None and asks_claims(pod) else None
    last = _before_pods(Ask(pod, requests, devices=devices, shared=shared), nodes, dra, findings)[0][-1]
    # Which device plugins serve the nodes, by the extended resources alone (none asked: no plugin).
    plain: Stage | None = last
    if devices is not None:
        plain = _before_pods(Ask(pod, requests), nodes, None, findings)[0][-1] if requests else None
    serving: tuple[str, ...] = ()
    unserved = (PodVerdict.NO_GPU_NODE, PodVerdict.ALLOCATABLE_ZERO)
    if plain is not None and not plain.kept and plain.step.verdict in unserved:
        serving = tuple(name(n) for n in plain.entered[:SHOWN_NODES])
    if devices is not None and not last.kept and last.step.verdict is PodVerdict.EXHAUSTED:
        # No node has free devices: the fixes that free some are checked on those nodes' pods.
        return NodeReads(dra_remedies.freeable(devices, last.entered), serving, shared)
    return NodeReads(tuple(name(node) for node in last.kept), serving, shared)


def reaches_funnel(pod: Object) -> bool:
    """Whether the verdict on this pod depends on nodes: it asks for a device (an extended resource or
    a ResourceClaim), is not placed yet, is not gated and has no nominated node (the rungs of
    `classify` before the funnel)."""
    placed = node_name(pod) or nominated_node(pod)
    return (bool(effective_requests(pod)) or asks_claims(pod)) and not placed and not gate_names(pod)


def funnel_of(view: TriageView) -> Funnel:
    """The funnel run over the view's candidate nodes: what each step kept and dropped."""
    return _funnel(view, effective_requests(view.pod), candidates(view.nodes))


def _funnel(
    view: TriageView, requests: Mapping[str, int], nodes: tuple[Object, ...], shared: Shared | None = None
) -> Funnel:
    shared = shared or Shared()
    shared.keep(view)
    devices = shared.devices(view.pod, view.dra) if asks_claims(view.pod) else None
    first = Ask(view.pod, requests, devices=devices, shared=shared)
    filtered, reached_names = _before_pods(first, nodes, view.dra, view.findings)
    reached = filtered[-1].kept
    # Only the pods counted on the nodes reached matter (all a reader must fetch).
    pods = shared.counted(view)
    on_nodes = pods.within(reached_names)
    ask = replace(
        first,
        holders=shared.holders_of(view, pods, reached_names),
        pods=on_nodes,
        groups=pods.groups,
        repelling=tuple(p for node, p in pods.repelling if node in reached_names),
        view=view,
        reached=reached_names,
    )
    rest = FUNNEL[len(filtered) :] if filtered[-1].kept else ()
    if rest and rest[0] is FUNNEL[_FREE_SLOT] and devices is None:
        free = _free_slots(ask, reached, view.findings)
        return Funnel(view, ask, (*filtered, free, *(run(rest[1:], ask, free.kept) if free.kept else ())))
    return Funnel(view, ask, filtered + run(rest, ask, reached))


def _free_slots(ask: Ask, nodes: tuple[Object, ...], findings: Findings | None = None) -> Stage:
    """The free-slot step on the nodes reached, for a pod that names no claim. Its check on a node reads
    only the node, the pods holding devices there and the asks: the classification's first run goes
    through every node (taking what earlier questions found, `findings`), and a fix's run (which ends
    a few pods) checks again only the nodes where it changed the holders, taking that run's finding
    on every other node."""
    step, shared = FUNNEL[_FREE_SLOT], ask.shared
    key = (id(nodes), tuple(ask.requests.items()))
    first = shared.free_slots.get(key)
    if first is None:
        stage = run((step,), ask, nodes)[0] if findings is None else findings.free_slots(step, ask, nodes)
        dropped = {id(drop.node): drop for drop in stage.dropped}
        drops = [dropped.get(id(node)) for node in nodes]
        index = {name(node): i for i, node in enumerate(nodes)}
        shared.free_slots[key] = (stage, ask.holders, index, drops)
        return stage
    stage, holders, index, drops = first
    changed = shared.changed_holders(holders, ask.holders)
    if not changed:
        return stage
    drops = list(drops)
    for host in changed:
        if (i := index.get(host)) is not None:
            why = step.check(ask, nodes[i])
            drops[i] = None if why is None else Drop(nodes[i], why)
    kept = tuple(node for node, drop in zip(nodes, drops, strict=True) if drop is None)
    return Stage(step, nodes, kept, tuple(drop for drop in drops if drop is not None))


def _placement_key(pod: Object, requests: Mapping[str, int]) -> str:
    """What the steps before the free slots read of the pod, in a few hundred bytes of JSON: its
    nodeSelector, node affinity and tolerations, and the devices it asks."""
    pod_spec = spec(pod)
    read = (pod_spec.get("nodeSelector"), mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    return json.dumps([*read, pod_spec.get("tolerations"), requests], sort_keys=True, default=repr)


def _claims_key(pod: Object, dra: Dra) -> tuple[int, ...]:
    """What the DRA part of the steps before the free slots reads, by identity: the device inventory
    and the pod's own claims (`Shared` keeps them alive)."""
    return (id(dra.devices), *(id(r.claim) for r in resolve(pod, dra)))


def _before_pods(
    ask: Ask, nodes: tuple[Object, ...], dra: Dra | None, findings: Findings | None = None
) -> tuple[tuple[Stage, ...], frozenset[str]]:
    """The funnel up to the free-slot step, from which on the steps need the pods counted on the nodes
    this leaves, and the names of those nodes; its last stage keeps the usage candidates. A pod that
    asks no extended resource, only claims, passes the free-slot step here too (`_claims_only`).

    The steps before the free slots read only the pod's placement and asks, the nodes and the DRA
    objects its claims lead to (`dra`, when `ask.devices` is set): they run once per classification
    (and reader) for those, whatever a fix that ends pods, or asks less cpu, changes. `findings`: what
    earlier questions found on these nodes, kept by the reader; a pod that asks no claims takes them
    as found for its placement."""
    shared, placement = ask.shared, _placement_key(ask.pod, ask.requests)
    key: tuple[object, ...] = (placement, id(nodes))
    if ask.devices is not None and dra is not None:
        key += _claims_key(ask.pod, dra)
        shared.alive.append(dra)
    kept = findings if ask.devices is None else None
    filtered, reached = _cached_run(shared, key, FUNNEL[:_FREE_SLOT], ask, nodes, kept, placement)
    if _claims_only(ask) and filtered[-1].kept and dra is not None:
        # Its free-slot step reads every claim's allocation, which a fix that ends pods changes.
        free_slot = FUNNEL[_FREE_SLOT : _FREE_SLOT + 1]
        found, reached = _cached_run(shared, (*key, id(dra.claims)), free_slot, ask, filtered[-1].kept)
        filtered += found
    return filtered, reached


def _cached_run(
    shared: Shared,
    key: tuple[object, ...],
    steps: tuple[Step, ...],
    ask: Ask,
    nodes: tuple[Object, ...],
    findings: Findings | None = None,
    placement: str = "",
) -> tuple[tuple[Stage, ...], frozenset[str]]:
    """`run(steps, ask, nodes)` and the names of the nodes its last stage keeps, once per key; with
    the `findings` kept for the pod's `placement` when given."""
    found = shared.filtered.get(key)
    if found is None:
        stages = run(steps, ask, nodes) if findings is None else findings.run(placement, steps, ask, nodes)
        found = shared.filtered[key] = (stages, frozenset(map(name, stages[-1].kept)))
    return found


def _funneled(view: TriageView, requests: Mapping[str, int], shared: Shared) -> Diagnosis:
    nodes = shared.candidates(view.nodes)
    funnel = _funnel(view, requests, nodes, shared)
    # No node at all: the funnel has nothing to drop, so say what the pod needed that nothing offered.
    if not nodes:
        verdict = PodVerdict.LABEL_MISMATCH if constrained(view.pod) else PodVerdict.NO_GPU_NODE
        advice = _no_nodes(funnel, verdict)
    elif funnel.last.kept:
        verdict, advice = PodVerdict.SCHEDULABLE, schedulable(funnel)
    else:
        verdict, advice = funnel.last.step.verdict, funnel.last.step.advise(funnel)
    devices = funnel.ask.devices
    shown = {**requests, **dra_advice.asked(devices)}
    evidence = (
        *_request_lines(view.pod, requests, devices),
        _nodes_line(view, nodes),
        *(stage_line(i, stage, shown) for i, stage in enumerate(funnel.stages, 1)),
        *advice.evidence,
        # The note on `Insufficient <device>` bears only on the device steps' verdicts.
        *scheduler_lines(view, requests if verdict in _DEVICE_VERDICTS else {}, nodes),
        *pending_notes(view.pod),
    )
    return _diagnosis(view, verdict, advice, evidence, shared)


_DEVICE_VERDICTS = frozenset(
    {PodVerdict.NO_GPU_NODE, PodVerdict.ALLOCATABLE_ZERO, PodVerdict.EXHAUSTED, PodVerdict.SCHEDULABLE}
)
"""The verdicts that the scheduler's `Insufficient <device>` may be mistaken for, or contradicts."""


def _claims_only(ask: Ask) -> bool:
    """The pod asks no extended resource, only claims: its devices are free or not by the DRA objects
    alone, so its free-slot step is passed before any pod is read (`usage_candidates`)."""
    return not ask.requests and ask.devices is not None


def passing(view: TriageView, shared: Shared | None = None) -> tuple[str, ...]:
    """The nodes on which the view's pod passes every check, by name: none when it does not reach the
    funnel (no request, placed, gated). A node whose bound pods were not read is not claimed."""
    return tuple(map(name, _passing(view, shared or Shared())))


def _passing(view: TriageView, shared: Shared) -> tuple[Object, ...]:
    if not reaches_funnel(view.pod):
        return ()
    nodes = shared.candidates(view.nodes)
    if not nodes:
        return ()
    # A claim that holds the pod before any node is looked at holds it on every node.
    if asks_claims(view.pod) and claim_problem(view.pod, view.dra, nodes, view.events) is not None:
        return ()
    last = _funnel(view, effective_requests(view.pod), nodes, shared).last
    read = view.bound_nodes
    return tuple(n for n in last.kept if read is None or name(n) in read)


def checked(view: TriageView, changes: Iterable[Change], shared: Shared | None = None) -> tuple[Fix, ...]:
    """The changes that open a node once made, as fixes, in the order proposed; each one checked by
    running the whole funnel on a changed copy of the view (`diagnosis.triage.fixes`), reusing what
    the classification's own run worked out about the nodes and pods the change leaves as they were
    (`shared`)."""
    fixes = []
    shared = shared or Shared()
    for change in tuple(changes)[:CHECKED]:
        if not change.checkable:
            fixes.append(Fix(change.summary, None, (), change.commands, change.objects))
            continue
        after = changed(view, change, shared.counted(view).positions if change.ended else None)
        if after.bound_pods is not view.bound_pods:
            shared.ending(view.bound_pods, after.bound_pods, change.ended)
        opened = _passing(after, shared)
        if not opened:
            continue
        fixes.append(
            Fix(
                summary=change.summary.replace("{opens}", pool_of(opened)),
                pod_patch=change.pod_patch,
                opens=tuple(map(name, opened)),
                commands=change.commands,
                objects=change.objects,
            )
        )
    return tuple(fixes)


def _diagnosis(
    view: TriageView,
    verdict: PodVerdict,
    advice: Advice,
    evidence: Iterable[str],
    shared: Shared | None = None,
    checked_on: TriageView | None = None,
) -> Diagnosis:
    """`checked_on`: the view the fixes are checked on, when it is not the view itself."""
    ns, pod = namespace(view.pod), name(view.pod)
    fixes = checked(checked_on or view, advice.fixes, shared)
    made = Diagnosis(
        verdict=verdict,
        summary=advice.summary,
        evidence=tuple(evidence),
        next_commands=collect(
            describe("pod", ns, pod, "the pod, its conditions and events"),
            *advice.commands,
            *(c for fix in fixes[:1] for c in fix.commands),
            events_about(ns, pod, "everything recorded about the pod, oldest first"),
        ),
        snippets=advice.snippets,
        fixes=fixes,
        holders=advice.holders,
        competing=advice.competing,
        pending_since=waiting_since(view.pod),
        checked_at=view.now,
    )
    # Whether a node will come for a pod that waits for one (not for no-request, ok).
    return autoscaling.with_autoscaling(view, made)


# --- no-request, ok, gated ----------------------------------------------------------------------


def no_request(view: TriageView) -> Diagnosis:
    pod = view.pod
    host = node_name(pod)
    where = f"; it is on {host} ({_phase(pod)})" if host else ""
    summary = (
        "The pod asks for no extended resource (nvidia.com/gpu, amd.com/gpu, google.com/tpu…) and names no "
        f"ResourceClaim: it can start, but no accelerator is given to it{where}"
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
    commands = collect(kubectl.pod_resources(namespace(pod), name(pod)))
    advice = Advice(summary, commands=commands, snippets=(request_snippet(wanted),))
    return _diagnosis(view, PodVerdict.NO_REQUEST, advice, evidence)


def ok(view: TriageView, requests: Mapping[str, int]) -> Diagnosis:
    pod = view.pod
    host, phase, state = node_name(pod), _phase(pod), pod_state(pod)
    problems = pod_problems(pod)
    states = container_states(pod)
    if problems:
        outcome = problems[0]
    elif state is PodState.RUNNING:
        outcome = "it runs and is Ready"
    elif state is PodState.STARTING:
        outcome = f"it is not Ready yet ({_starting(states)})"
    else:
        outcome = "it has ended"
    summary = f"The pod is placed on {host} and {phase}: {outcome}"
    evidence = (
        *_request_lines(pod, requests, _devices(view)),
        f"spec.nodeName: {host}; phase: {phase}",
        *states,
        *problems,
    )
    commands = collect(
        kubectl.pod_logs(namespace(pod), name(pod)) if _has_run(pod) else None,
        kubectl.node_details(host) if problems else None,
    )
    return replace(
        _diagnosis(view, PodVerdict.OK, Advice(summary, commands=commands), evidence), pod_state=state
    )


def _starting(states: list[str]) -> str:
    """What the containers of a pod that is not Ready are doing, in a few words."""
    waiting = [s for s in states if "waiting" in s or "not ready" in s]
    return "; ".join(waiting[:2]) or "no container status reported yet"


def gated(view: TriageView, requests: Mapping[str, int]) -> Diagnosis:
    pod = view.pod
    gates = gate_names(pod)
    kueue_says = not_admitted(pod, view.workloads) if ADMISSION_GATE in gates else ""
    summary = (
        f"The pod is held by scheduling gate{'s' if len(gates) > 1 else ''} {', '.join(gates)}: "
        + (f"Kueue has not admitted its workload: {kueue_says}" if kueue_says else _gate_meaning(gates[0]))
    )
    evidence = [
        *_request_lines(pod, requests, _devices(view)),
        f"spec.schedulingGates: {', '.join(gates)} (the scheduler skips the pod until the list is empty)",
        *(f"{g}: {_gate_meaning(g)}" for g in gates),
        *scheduler_lines(view, {}),
    ]
    ns, pod_name = namespace(pod), name(pod)
    queue = labels(pod).get(QUEUE_LABEL, "")
    if queue:
        evidence.append(f"Kueue queue: {queue} (label {QUEUE_LABEL})")
    kueue: tuple[Command | None, ...] = ()
    if ADMISSION_GATE in gates:
        said, kueue = admission(pod, view.workloads, view.queues, view.unread)
        evidence += said
    elif queue or any("kueue" in g.lower() for g in gates):
        kueue = (kubectl.kueue_workloads(ns),)
    commands = collect(kubectl.pod_gates(ns, pod_name), *kueue)
    return _diagnosis(view, PodVerdict.GATED, Advice(summary, commands=commands), evidence)


def preempting(view: TriageView, requests: Mapping[str, int]) -> Diagnosis:
    advice = waiting_for_victims(view.pod, candidates(view.nodes), view.bound_pods, view.now)
    evidence = (
        *_request_lines(view.pod, requests, _devices(view)),
        *advice.evidence,
        *scheduler_lines(view, {}),
        *pending_notes(view.pod),
    )
    # The pod does not reach the funnel while it waits; at its next attempt the scheduler runs every
    # filter again, the nominated node first (`schedule_one.go`: nominatedNodeName is a hint, not a
    # binding). So the fixes are checked on the pod as that attempt sees it, without the nomination.
    attempt = replace(view, pod=merge_patch(view.pod, {"status": {"nominatedNodeName": None}}))
    return _diagnosis(view, PodVerdict.PREEMPTING, advice, evidence, checked_on=attempt)


def claim(view: TriageView, requests: Mapping[str, int], problem: ClaimProblem) -> Diagnosis:
    advice = replace(
        dra_advice.claim_advice(view.pod, problem),
        fixes=dra_remedies.for_claim(view, problem, candidates(view.nodes)),
    )
    evidence = (
        *_request_lines(view.pod, requests, _devices(view)),
        *advice.evidence,
        *scheduler_lines(view, {}),
        *pending_notes(view.pod),
    )
    return _diagnosis(view, PodVerdict.CLAIM, advice, evidence)


def _devices(view: TriageView) -> Devices | None:
    return Devices(view.pod, view.dra) if asks_claims(view.pod) else None


def _request_lines(pod: Object, requests: Mapping[str, int], devices: Devices | None) -> tuple[str, ...]:
    """What the pod asks: its extended resources, and what its claims request."""
    lines = (request_line(pod, requests),) if requests else ()
    return lines + (dra_advice.request_lines(devices) if devices is not None else ())


def _gate_meaning(gate: str) -> str:
    if gate == ADMISSION_GATE:
        return "Kueue has not admitted the pod's workload yet (quota in its ClusterQueue, or queue order)"
    if gate == "kueue.x-k8s.io/topology":
        return "Kueue admitted the workload and has not yet assigned this pod its topology domain"
    if "kueue" in gate.lower():
        return "set by Kueue; its Workload's conditions say what it waits for"
    return "the controller that created the pod removes it when it is ready; the scheduler waits until then"


# --- the funnel's steps: a check per node, and what to say when a step leaves none ---------------


def label_mismatch(ask: Ask, node: Object) -> str | None:
    return ask.placement.mismatch(node)


def taint(ask: Ask, node: Object) -> str | None:
    found = ask.placement.untolerated(node)
    return ", ".join(map(taint_words, found)) if found else None


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


def exhausted(ask: Ask, node: Object) -> str | None:
    short = _short(ask, node)
    if ask.devices is not None and (dra := ask.devices.unallocatable(node)):
        short.append(dra)
    return ", ".join(short) or None


def _short(ask: Ask, node: Object) -> list[str]:
    """The pod's resources the node has too few free of, worked out once per node, its holders and
    the asks: a fix that ends pods or changes the pod leaves most nodes as they were."""
    if not ask.requests:
        return []  # a pod that asks devices only by claims
    node_name = name(node)
    key = (id(node), id(ask.holders.get(node_name, ())), tuple(ask.requests.items()))
    found = ask.shared.short.get(key)
    if found is None:
        found = ask.shared.short[key] = []
        for resource, wanted in ask.requests.items():
            allocatable, used = ask.offer(node, resource).allocatable, ask.used(node_name, resource)
            if allocatable - used < wanted:
                found.append(
                    f"{resource} allocatable {allocatable}, used {used}, "
                    f"free {max(allocatable - used, 0)} < {wanted} asked"
                )
    return list(found)


def _label_advice(funnel: Funnel) -> Advice:
    pod, nodes = funnel.view.pod, funnel.last.entered
    selector = {k: v for k, v in node_selector(pod).items() if isinstance(k, str) and isinstance(v, str)}
    absent = [
        f"{k}={v}" for k, v in sorted(selector.items()) if not any(labels(n).get(k) == v for n in nodes)
    ]
    if absent:
        summary = f"No node has the label {', '.join(absent)} that the pod's nodeSelector asks for"
    else:
        first = funnel.last.dropped[0]
        summary = (
            f"None of the {len(nodes)} nodes matches the pod's nodeSelector and required node affinity "
            f"together (e.g. {name(first.node)}: {first.why})"
        )
    keys = selector_keys(pod)
    evidence = tuple(label_inventory(key, nodes) for key in keys[:4])
    commands = collect(kubectl.nodes_with_labels(keys), kubectl.pod_placement(namespace(pod), name(pod)))
    return Advice(summary, evidence, commands, fixes=remedies.for_label(funnel))


def _taint_advice(funnel: Funnel) -> Advice:
    found = {name(d.node): funnel.ask.placement.untolerated(d.node) for d in funnel.last.dropped}
    first = next(iter(found))
    blocking, others = found[first], len(found) - 1
    what = "is cordoned" if blocking[0] == CORDON else f"has a taint the pod does not tolerate, {blocking[0]}"
    summary = (
        f"No node left accepts the pod: {first} {what}"
        + (f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else "")
        + (f"; {others} other node{'s refuse' if others > 1 else ' refuses'} it too" if others else "")
    )
    evidence = []
    for host, taints in found.items():
        conditions = ", ".join(str(t) for t in taints if t.key.startswith(CONDITION_TAINTS) and t != CORDON)
        if conditions:
            evidence.append(
                f"{host} carries {conditions}: the node lifecycle controller sets these for a node "
                "condition; fix the node, do not tolerate them"
            )
    commands: list[Command | None] = []
    for drop in _first_per_reason(funnel, 3):
        host, taints = name(drop.node), found[name(drop.node)]
        commands += (
            kubectl.node_taints(host),
            kubectl.uncordon(host) if cordoned(drop.node) or CORDON in taints else None,
            kubectl.node_details(host)
            if any(t.key.startswith(CONDITION_TAINTS) and t != CORDON for t in taints)
            else None,
        )
    distinct = tuple(dict.fromkeys(t for taints in found.values() for t in taints))
    return Advice(
        summary, tuple(evidence), collect(*commands), tolerations(distinct), remedies.for_taint(funnel)
    )


def _no_gpu_advice(funnel: Funnel) -> Advice:
    if not any(_unreported(funnel.ask, d.node) for d in funnel.last.dropped):
        return dra_advice.no_device_advice(funnel)
    requests, stage = funnel.ask.requests, funnel.last
    nodes = stage.entered
    if len(nodes) == 1:
        summary = f"{name(nodes[0])} does not report {and_(requests)} ({stage.dropped[0].why})"
    else:
        summary = f"None of the {len(nodes)} nodes left reports {and_(requests)}"
    summary += ": no device plugin serves it there" + _failing_note(funnel.view, nodes)
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
    return Advice(summary, tuple(evidence), collect(*commands), fixes=remedies.for_no_device(funnel))


def _allocatable_advice(funnel: Funnel) -> Advice:
    if not any(_zero(funnel.ask, d.node) for d in funnel.last.dropped):
        return dra_advice.tainted_advice(funnel)
    requests, stage = funnel.ask.requests, funnel.last
    nodes = stage.entered
    if len(nodes) == 1:
        summary = (
            f"{name(nodes[0])} reports {stage.dropped[0].why}: its devices are unhealthy or not served"
            + _failing_note(funnel.view, nodes)
        )
    else:
        summary = (
            f"All {len(nodes)} nodes left that report {and_(requests)} have allocatable 0: "
            "their devices are unhealthy or not served" + _failing_note(funnel.view, nodes)
        )
    evidence = (
        *(line for node in nodes[:SHOWN] if (line := hardware_labels(node))),
        *root_cause(funnel.view, nodes),
    )
    commands: list[Command | None] = []
    for node in nodes[:2]:
        commands += (kubectl.node_offer(name(node), requests), kubectl.device_plugin_pods(name(node)))
    commands += (kubectl.device_plugin_logs(requests), kubectl.node_details(name(nodes[0])))
    return Advice(summary, evidence, collect(*commands), fixes=remedies.for_allocatable_zero(funnel))


def _exhausted_advice(funnel: Funnel) -> Advice:
    if not any(_short(funnel.ask, d.node) for d in funnel.last.dropped):
        return dra_advice.exhausted_advice(funnel)
    ask, nodes = funnel.ask, funnel.last.entered
    ranked = _by_headroom(ask, nodes)
    best = ranked[0]
    resource, wanted = _tightest(ask, best)
    largest = max(ask.offer(n, resource).allocatable for n in nodes)
    free = max(ask.offer(best, resource).allocatable - ask.used(name(best), resource), 0)
    if largest < wanted:
        summary = (
            f"The pod asks {wanted} {resource} but no node left has more than {largest} allocatable: "
            "it cannot fit even on an empty node"
        )
    elif len(nodes) == 1:
        used = ask.used(name(best), resource)
        held = [f"{h.namespace}/{h.name}" for h in ask.holders.get(name(best), ()) if resource in h.requests]
        summary = (
            f"{name(best)} has {free} {resource} free of {offer(best, resource).allocatable}"
            + (f" ({used} held by {names(held)})" if used else "")
            + f"; the pod asks {wanted}"
        )
    else:
        summary = (
            f"None of the {len(nodes)} nodes left has {wanted} {resource} free "
            f"(most free: {name(best)} with {free})"
        )
    commands: list[Command | None] = []
    for node in ranked[:2]:
        commands += (kubectl.consumers(name(node), ask.requests), kubectl.node_details(name(node)))
    return Advice(
        summary,
        held_lines(ask, ranked),
        collect(*commands),
        fixes=remedies.for_exhausted(funnel),
        holders=holdings(ask, nodes),
        competing=competing(ask, funnel.view.pending_pods, nodes),
    )


FUNNEL: tuple[Step, ...] = (
    Step(
        PodVerdict.LABEL_MISMATCH,
        "matches the nodeSelector and required node affinity",
        label_mismatch,
        _label_advice,
    ),
    Step(PodVerdict.TAINT, "no untolerated taint, not cordoned", taint, _taint_advice),
    Step(PodVerdict.NO_GPU_NODE, "reports {resources}", no_gpu_node, _no_gpu_advice),
    Step(
        PodVerdict.ALLOCATABLE_ZERO, "{resources} allocatable above 0", allocatable_zero, _allocatable_advice
    ),
    Step(PodVerdict.EXHAUSTED, "has {asks} free", exhausted, _exhausted_advice),
    Step(PodVerdict.NODE_RESOURCES, "has room for the pod's other requests and one more pod",
         node_resources, node_resources_advice),
    Step(PodVerdict.HOST_PORT, "has the pod's host ports free", host_port, host_port_advice),
    Step(PodVerdict.VOLUME, "can use the pod's volumes", volumes.volume, volumes.advise),
    Step(PodVerdict.TOPOLOGY_SPREAD, "keeps the topology spread", spread.topology_spread, spread.advise),
    Step(
        PodVerdict.POD_AFFINITY,
        "satisfies pod affinity and anti-affinity",
        affinity.pod_affinity,
        affinity.advise,
    ),
)
"""The funnel, in order. Labels come before taints (the scheduler checks taints first) because the
nodeSelector says which nodes the pod is meant for: a taint on a node it never wanted is no answer.
The devices come before the other resources: they are what the pod is about. From the free-slot
step on, the steps read the pods counted on the nodes (`usage_candidates`), and the view's peers and
storage."""

_FREE_SLOT = next(i for i, step in enumerate(FUNNEL) if step.verdict is PodVerdict.EXHAUSTED)
"""The steps before it decide which nodes' bound pods a reader fetches."""


def schedulable(funnel: Funnel) -> Advice:
    ask, kept = funnel.ask, funnel.last.kept
    best = _by_headroom(ask, kept)[0]
    if ask.requests:
        resource, _ = _tightest(ask, best)
        free = ask.offer(best, resource).allocatable - ask.used(name(best), resource)
        room = f"{name(best)} has {free} {resource} free"
    else:
        room = f"{name(best)} has devices for every claim"
    said = last_said(funnel.view.pod, funnel.view.events, funnel.view.now)
    summary = (
        f"Nothing in the objects blocks the pod: {len(kept)} node{'s pass' if len(kept) > 1 else ' passes'} "
        f"every check ({room}); "
        + ("see what the scheduler said" if said else "the scheduler has not reported on it yet")
    )
    evidence = (
        f"nodes that pass every check: {names(kept)}",
        *dra_advice.schedulable_lines(ask.devices, kept),
        _UNCHECKED,
    )
    return Advice(summary, evidence, collect(kubectl.node_details(name(best)), kubectl.repelling_pods()))


_UNCHECKED = (
    "not checked by kubewhy: inline in-tree disks (GCE PD, EBS, iSCSI, RBD: VolumeRestrictions); "
    "scheduler extenders or out-of-tree plugins; the required anti-affinity of pods on the nodes whose "
    "pods it did not read (those short of the free-slot check), where this pod's own terms do not select "
    "them. The scheduler's message names whichever holds the pod"
)


def _no_nodes(funnel: Funnel, verdict: PodVerdict) -> Advice:
    view = funnel.view
    if view.prefiltered:
        summary = f"No node has the labels of the pod's nodeSelector {_selector_text(view.pod)}"
    elif verdict is PodVerdict.LABEL_MISMATCH:
        summary = "There are no nodes: none can match the pod's nodeSelector and affinity"
    else:
        wanted = and_(funnel.ask.requests) if funnel.ask.requests else "a DRA device"
        summary = f"There are no nodes: none reports {wanted}"
    command = (
        kubectl.nodes_with_labels(selector_keys(view.pod))
        if verdict is PodVerdict.LABEL_MISMATCH
        else kubectl.nodes_offer(funnel.ask.requests)
    )
    return Advice(summary, commands=collect(command))


# --- small helpers ------------------------------------------------------------------------------


def _nodes_line(view: TriageView, nodes: tuple[Object, ...]) -> str:
    if view.prefiltered:
        return (
            f"nodes: {len(nodes)} listed by the API server for the nodeSelector {_selector_text(view.pod)} "
            "(nodes without these labels were not read)"
        )
    return f"nodes: {len(nodes)} in the cluster"


def _failing_note(view: TriageView, nodes: tuple[Object, ...]) -> str:
    """`; on lab-node-1 the NVIDIA device plugin is failing (…)`: the root cause, when one node shows it."""
    found = [(node, device) for node in nodes[:SHOWN] if (device := failing(view, name(node)))]
    if not found:
        return ""
    node, device = found[0]
    more = f" (and on {len(found) - 1} more node{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return f"; on {name(node)} the {device.role.title} is failing{more}"


def _first_per_reason(funnel: Funnel, limit: int) -> tuple[Drop, ...]:
    """The first node dropped for each distinct reason, at most `limit`: one set of commands a cause."""
    first: dict[str, Drop] = {}
    for drop in funnel.last.dropped:
        first.setdefault(drop.why, drop)
    return tuple(first.values())[:limit]


def _spare(ask: Ask, node: Object, resource: str) -> int:
    """Free minus asked: negative when the resource is short on the node."""
    return ask.offer(node, resource).allocatable - ask.used(name(node), resource) - ask.requests[resource]


def _headroom(ask: Ask, node: Object) -> int:
    """How close the node comes to fitting: its tightest resource's spare (0 with no extended resource)."""
    return min((_spare(ask, node, r) for r in ask.requests), default=0)


def _by_headroom(ask: Ask, nodes: Iterable[Object]) -> list[Object]:
    """Closest to fitting first (ties by name)."""
    return sorted(nodes, key=lambda n: (-_headroom(ask, n), name(n)))


def _tightest(ask: Ask, node: Object) -> tuple[str, int]:
    """The pod's resource that is shortest on this node: the one worth naming in a summary."""
    resource = min(ask.requests, key=lambda r: (_spare(ask, node, r), r))
    return resource, ask.requests[resource]


def _phase(pod: Object) -> str:
    return text(status(pod).get("phase")) or "without a phase"


def _has_run(pod: Object) -> bool:
    """Some container was started at least once, so there are logs to read."""
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in map(mapping, sequence(status(pod).get(field))):
            for state in (item.get("state"), item.get("lastState")):
                ran = mapping(mapping(state).get("running")) or mapping(mapping(state).get("terminated"))
                if ran:
                    return True
    return False


def gate_names(pod: Object) -> tuple[str, ...]:
    gates = sequence(spec(pod).get("schedulingGates"))
    return tuple(text(mapping(g).get("name")) or "(unnamed)" for g in gates)


def _likely_resources(pod: Object, nodes: Iterable[Object]) -> tuple[str, ...]:
    """The device resources the cluster offers, those the pod tolerates a taint for first: what the
    pod most likely meant to ask for."""
    offered = sorted({r for node in candidates(nodes) for r in reported_resources(node)})
    tolerated = {text(mapping(t).get("key")) for t in sequence(spec(pod).get("tolerations"))}
    return (*(r for r in offered if r in tolerated), *offered)


def _selector_text(pod: Object) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(node_selector(pod).items(), key=lambda kv: str(kv[0])))
