"""The funnel runner: the steps of the funnel run over a pod's candidate nodes, once per question and
once per fix checked, reusing what earlier runs (and the reader's pre-pass) worked out; and the
Diagnosis made of a rung's answer. The ladder (`diagnosis.triage.classify`) hands in its steps.

The steps before the free-slot step (`exhausted`) read no pod: `node_reads` runs them to tell the
readers which nodes' bound pods to fetch, and the steps from the free slots on read only those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from diagnosis.commands import collect, describe, events_about
from diagnosis.dra_objects import Dra
from diagnosis.model import Diagnosis, Fix, PodVerdict
from diagnosis.objects import Object, name, namespace
from diagnosis.relations import node_name, nominated_node, waiting_since
from diagnosis.triage import commands as kubectl
from diagnosis.triage.devices import SHOWN_NODES
from diagnosis.triage.dra import evidence as dra_evidence
from diagnosis.triage.dra.changes import freeable
from diagnosis.triage.dra.claims import asks_claims, claim_problem, resolve
from diagnosis.triage.evidence import asks_lines, pending_notes, scheduler_lines
from diagnosis.triage.findings import Findings
from diagnosis.triage.fit import native_asks
from diagnosis.triage.fixes import CHECKED, Change, changed, pool_of
from diagnosis.triage.funnel import (
    Advice,
    Answer,
    Ask,
    Drop,
    Funnel,
    Seen,
    Shared,
    Stage,
    Step,
    and_,
    candidates,
    run,
    stage_line,
)
from diagnosis.triage.kueue import admitted_at
from diagnosis.triage.prepared import NOTHING, Prepared
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.scheduling import constrained, gate_names, node_selector, placement_key, selector_keys
from diagnosis.views import TriageView

FIX_NODES = 64
"""When a step before the free slots leaves no node, the bound pods of this many of the nodes it
dropped are read, so that its fixes are checked on them (the funnel run again on the changed objects
needs their pods from the free-slot step on). A fix that opens only nodes beyond them on a large
cluster is not offered from a live read; from a snapshot, every node is at hand."""


class NodeReads(NamedTuple):
    """What a reader needs to know before it reads any pod (`node_reads`)."""

    usage: tuple[str, ...]
    """`usage_candidates`."""
    serving: tuple[str, ...]
    """`serving_nothing`."""
    memo: Shared
    """What working them out found about the nodes: handed to the classifier beside the view
    (`Prepared.memo`), it lets the classifier start from there."""


def node_reads(
    steps: tuple[Step, ...],
    pod: Object,
    nodes: Sequence[Object],
    dra: Dra | None = None,
    findings: Findings | None = None,
) -> NodeReads:
    """`usage_candidates` and `serving_nothing` at once (a reader asks both): the steps before the
    free slots run over the nodes once, twice for a pod that asks both an extended resource and
    claims (the devices of its claims do not change which device plugins serve the other nodes).
    `findings`: what earlier questions found on these nodes (`Prepared.findings`)."""
    shared = Shared(kept=findings)
    if not reaches_funnel(pod):
        # A pod waiting for victims: its nominated node's pods are the evidence.
        asks = effective_requests(pod) or asks_claims(pod)
        nominated = nominated_node(pod) if asks and not node_name(pod) and not gate_names(pod) else ""
        return NodeReads(((nominated,) if nominated else ()), (), shared)
    nodes = shared.candidates(nodes)
    requests = effective_requests(pod)
    devices = shared.devices(pod, dra) if dra is not None and asks_claims(pod) else None
    ask = Ask(pod, requests, devices=devices, shared=shared)
    last = _before_pods(steps, ask, nodes, dra, findings)[0][-1]
    # Which device plugins serve the nodes, by the extended resources alone (none asked: no plugin).
    plain: Stage | None = last
    if devices is not None:
        plain = _before_pods(steps, Ask(pod, requests), nodes, None, findings)[0][-1] if requests else None
    serving: tuple[str, ...] = ()
    unserved = (PodVerdict.NO_GPU_NODE, PodVerdict.ALLOCATABLE_ZERO)
    if plain is not None and not plain.kept and plain.step.verdict in unserved:
        serving = tuple(name(n) for n in plain.entered[:SHOWN_NODES])
    if devices is not None and not last.kept and last.step.verdict is PodVerdict.EXHAUSTED:
        # No node has free devices: the fixes that free some are checked on those nodes' pods.
        return NodeReads(freeable(devices, last.entered), serving, shared)
    # The nodes an allocated claim pins the pod to: the fix that sends it there is checked on them.
    pinned = dra.pinning(pod) if dra is not None else ()
    if not last.kept:
        # A step before the free slots left no node: its fixes (tolerate the taint, uncordon, select a
        # label value that exists) open nodes it dropped, and are checked on their pods.
        dropped = tuple(name(node) for node in last.entered[:FIX_NODES])
        return NodeReads(tuple(dict.fromkeys((*dropped, *pinned))), serving, shared)
    kept = _names(last.kept, findings)
    return NodeReads(tuple(dict.fromkeys((*kept, *pinned))) if pinned else kept, serving, shared)


def _names(nodes: tuple[Object, ...], findings: Findings | None) -> tuple[str, ...]:
    """The names of these nodes (one each: the funnel's nodes are `candidates`); kept with the tuple
    by a reader that keeps the nodes, which hands over the same stage for the same placement: on
    65,000 nodes, the names of 19,000 take 5–10 ms, each name read from a node object of its own."""

    def work() -> tuple[str, ...]:
        return tuple(name(node) for node in nodes)

    return work() if findings is None else findings.of_nodes(nodes, "names in order", work)


def reaches_funnel(pod: Object) -> bool:
    """Whether the verdict on this pod depends on nodes: it asks for a device (an extended resource or
    a ResourceClaim) or a prefixed native resource (`fit.native_asks`), is not placed yet, is not gated
    and has no nominated node (the rungs of `classify` before the funnel)."""
    placed = node_name(pod) or nominated_node(pod)
    asks = bool(effective_requests(pod)) or asks_claims(pod) or bool(native_asks(pod))
    return asks and not placed and not gate_names(pod)


def funnel_of(steps: tuple[Step, ...], view: TriageView) -> Funnel:
    """The funnel run over the view's candidate nodes: what each step kept and dropped."""
    return run_funnel(steps, view, effective_requests(view.pod), candidates(view.nodes))


def run_funnel(
    steps: tuple[Step, ...],
    view: TriageView,
    requests: Mapping[str, int],
    nodes: tuple[Object, ...],
    shared: Shared | None = None,
    prepared: Prepared = NOTHING,
) -> Funnel:
    shared = shared or Shared()
    shared.keep(view)
    devices = shared.devices(view.pod, view.dra) if asks_claims(view.pod) else None
    first = Ask(view.pod, requests, devices=devices, shared=shared)
    filtered, reached_names = _before_pods(steps, first, nodes, view.dra, prepared.findings)
    reached = filtered[-1].kept
    # Only the pods counted on the nodes reached matter (all a reader must fetch), but for the
    # existing pods' anti-affinity, which refuses nodes across a domain: every one, when the view has all.
    pods = shared.counted(view, prepared.grouped)
    on_nodes = pods.within(reached_names)
    everywhere = view.peers.all_pods
    ask = replace(
        first,
        holders=shared.holders_of(view, pods, reached_names),
        pods=on_nodes,
        counted=pods,
        repelling=tuple(p for node, p in pods.repelling if everywhere or node in reached_names),
        view=view,
        reached=reached_names,
    )
    rest = steps[len(filtered) :] if filtered[-1].kept else ()
    if rest and rest[0] is steps[_free_slot(steps)] and devices is None:
        free = _free_slots(steps, ask, reached, prepared.findings)
        return Funnel(view, ask, (*filtered, free, *(run(rest[1:], ask, free.kept) if free.kept else ())))
    return Funnel(view, ask, filtered + run(rest, ask, reached))


def _free_slots(
    steps: tuple[Step, ...], ask: Ask, nodes: tuple[Object, ...], findings: Findings | None = None
) -> Stage:
    """The free-slot step on the nodes reached, for a pod that names no claim. Its check on a node reads
    only the node, the pods holding devices there and the asks: the classification's first run goes
    through every node (taking what earlier questions found, `findings`), and a fix's run (which ends
    a few pods) checks again only the nodes where it changed the holders, taking that run's finding
    on every other node."""
    step, shared = steps[_free_slot(steps)], ask.shared
    key = (id(nodes), tuple(ask.requests.items()))
    first = shared.free_slots.get(key)
    if first is None:
        stage = run((step,), ask, nodes)[0] if findings is None else findings.free_slots(step, ask, nodes)
        shared.free_slots[key] = (stage, ask.holders)
        return stage
    stage, holders = first
    changed = shared.changed_holders(holders, ask.holders)
    if not changed:
        return stage
    drops = list(stage.drops)
    for host in changed:
        if (i := stage.at.get(host)) is not None:
            why = step.check(ask, nodes[i])
            drops[i] = None if why is None else Drop(nodes[i], why)
    kept = tuple(node for node, drop in zip(nodes, drops, strict=True) if drop is None)
    return Stage(step, nodes, kept, tuple(drop for drop in drops if drop is not None))


def _claims_key(pod: Object, dra: Dra) -> str:
    """What the DRA part of the steps before the free slots reads: the device inventory (by its
    serial) and the pod's own claims: which (their drops name them), what they ask and where they are
    allocated. A claim read again unchanged (another object) is found alike on a node."""
    claims = [
        (str(c), c.spec, c.allocated, c.results, c.node_selector) if (c := r.claim) is not None else None
        for r in resolve(pod, dra)
    ]
    return f"devices {dra.devices.serial}, claims {claims!r}"


def _before_pods(
    steps: tuple[Step, ...],
    ask: Ask,
    nodes: tuple[Object, ...],
    dra: Dra | None,
    findings: Findings | None = None,
) -> tuple[tuple[Stage, ...], frozenset[str]]:
    """The funnel up to the free-slot step, from which on the steps need the pods counted on the nodes
    this leaves, and the names of those nodes; its last stage keeps the usage candidates. A pod that
    asks no extended resource, only claims, passes the free-slot step here too (`_claims_only`).

    The steps before the free slots read only the pod's placement and asks, the nodes and the DRA
    objects its claims lead to (`dra`, when `ask.devices` is set): they run once per classification
    (and reader) for those, whatever a fix that ends pods, or asks less cpu, changes. `findings`: what
    earlier questions found on these nodes, kept by the reader: a pod takes them as found for its
    placement (and, asking claims, for the same devices and what its claims ask)."""
    shared, placement = ask.shared, placement_key(ask.pod, ask.requests)
    if ask.devices is not None and dra is not None:
        placement = f"{placement}; {_claims_key(ask.pod, dra)}"
        shared.alive.append(dra)
    key: tuple[object, ...] = (placement, id(nodes))
    free = _free_slot(steps)
    filtered, reached = _cached_run(shared, key, steps[:free], ask, nodes, findings, placement)
    if _claims_only(ask) and filtered[-1].kept and dra is not None:
        # Its free-slot step reads every claim's allocation, which a fix that ends pods changes.
        free_slot = steps[free : free + 1]
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


def funneled(
    steps: tuple[Step, ...], schedulable: Callable[[Funnel], Advice], seen: Seen, prepared: Prepared
) -> Answer:
    """The funnel's answer: the step that leaves no node, `schedulable` when some node passes them
    all, or what no node at all means."""
    view, requests, shared = seen.view, seen.requests, seen.shared
    nodes = shared.candidates(view.nodes)
    funnel = run_funnel(steps, view, requests, nodes, shared, prepared)
    # No node at all: the funnel has nothing to drop, so say what the pod needed that nothing offered.
    if not nodes:
        verdict = PodVerdict.LABEL_MISMATCH if constrained(view.pod) else PodVerdict.NO_GPU_NODE
        advice = _no_nodes(funnel, verdict)
    elif funnel.last.kept:
        verdict, advice = PodVerdict.SCHEDULABLE, schedulable(funnel)
    else:
        verdict, advice = funnel.last.step.verdict, funnel.last.step.advise(funnel)
    devices = funnel.ask.devices
    shown = {**requests, **dra_evidence.asked(devices)}
    evidence = (
        *asks_lines(view.pod, requests, devices),
        _nodes_line(view, nodes),
        *(stage_line(i, stage, shown) for i, stage in enumerate(funnel.stages, 1)),
        *advice.evidence,
        # The note on `Insufficient <device>` bears only on the device steps' verdicts.
        *scheduler_lines(view, requests if verdict in _DEVICE_VERDICTS else {}, nodes),
        *pending_notes(view.pod),
    )
    return Answer(verdict, advice, evidence)


_DEVICE_VERDICTS = frozenset(
    {PodVerdict.NO_GPU_NODE, PodVerdict.ALLOCATABLE_ZERO, PodVerdict.EXHAUSTED, PodVerdict.SCHEDULABLE}
)
"""The verdicts that the scheduler's `Insufficient <device>` may be mistaken for, or contradicts."""


def _claims_only(ask: Ask) -> bool:
    """The pod asks no extended resource, only claims: its devices are free or not by the DRA objects
    alone, so its free-slot step is passed before any pod is read (`usage_candidates`)."""
    return not ask.requests and ask.devices is not None


def passing(steps: tuple[Step, ...], view: TriageView, shared: Shared | None = None) -> tuple[str, ...]:
    """The nodes on which the view's pod passes every check, by name: none when it does not reach the
    funnel (no request, placed, gated). A node whose bound pods were not read is not claimed."""
    return tuple(map(name, _passing(steps, view, shared or Shared(), NOTHING)))


def _passing(
    steps: tuple[Step, ...], view: TriageView, shared: Shared, prepared: Prepared
) -> tuple[Object, ...]:
    if not reaches_funnel(view.pod):
        return ()
    nodes = shared.candidates(view.nodes)
    if not nodes:
        return ()
    # A claim that holds the pod before any node is looked at holds it on every node.
    if asks_claims(view.pod) and claim_problem(view.pod, view.dra, nodes, view.events) is not None:
        return ()
    last = run_funnel(steps, view, effective_requests(view.pod), nodes, shared, prepared).last
    read = view.bound_nodes
    return tuple(n for n in last.kept if read is None or name(n) in read)


def checked(
    steps: tuple[Step, ...],
    view: TriageView,
    changes: Iterable[Change],
    shared: Shared | None = None,
    prepared: Prepared = NOTHING,
) -> tuple[Fix, ...]:
    """The changes that open a node once made, as fixes, least harm first (in the order proposed
    within a harm class); each one checked by
    running the whole funnel on a changed copy of the view (`diagnosis.triage.fixes`), reusing what
    the classification's own run worked out about the nodes and pods the change leaves as they were
    (`shared`), and what the reader prepared that still holds for them (`prepared`)."""
    fixes = []
    shared = shared or Shared()
    for change in sorted(changes, key=lambda c: c.harm)[:CHECKED]:
        if not change.checkable:
            fixes.append(Fix(change.summary, None, (), change.commands, change.objects, change.harm))
            continue
        positions = shared.counted(view, prepared.grouped).positions if change.ended else None
        after = changed(view, change, positions)
        if after.bound_pods is not view.bound_pods:
            shared.ending(view.bound_pods, after.bound_pods, change.ended)
        opened = _passing(steps, after, shared, prepared.after(change))
        if not opened:
            continue
        fixes.append(
            Fix(
                summary=change.summary.replace("{opens}", pool_of(opened)),
                pod_patch=change.pod_patch,
                opens=tuple(map(name, opened)),
                commands=change.commands,
                objects=change.objects,
                harm=change.harm,
            )
        )
    return tuple(fixes)


def conclude(
    steps: tuple[Step, ...],
    view: TriageView,
    answer: Answer,
    prepared: Prepared = NOTHING,
    shared: Shared | None = None,
) -> Diagnosis:
    """The Diagnosis of a rung's (or the funnel's) answer, its fixes checked on `answer.checked_on`
    when given, else on the view itself."""
    ns, pod, advice = namespace(view.pod), name(view.pod), answer.advice
    fixes = checked(steps, answer.checked_on or view, advice.fixes, shared, prepared)
    return Diagnosis(
        verdict=answer.verdict,
        summary=advice.summary,
        evidence=answer.evidence,
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
        pending_since=waiting_since(view.pod, admitted_at(view.pod, view.workloads)),
        checked_at=view.now,
        pod_state=answer.pod_state,
        started=answer.started,
    )


def _free_slot(steps: tuple[Step, ...]) -> int:
    """Where the free-slot step stands: the steps before it decide which nodes' bound pods a reader
    fetches."""
    return next(i for i, step in enumerate(steps) if step.verdict is PodVerdict.EXHAUSTED)


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


def _nodes_line(view: TriageView, nodes: tuple[Object, ...]) -> str:
    if view.prefiltered:
        return (
            f"nodes: {len(nodes)} listed by the API server for the nodeSelector {_selector_text(view.pod)} "
            "(nodes without these labels were not read)"
        )
    return f"nodes: {len(nodes)} in the cluster"


def _selector_text(pod: Object) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(node_selector(pod).items(), key=lambda kv: str(kv[0])))
