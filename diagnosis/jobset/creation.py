"""Why a JobSet's pods or Jobs are not created: the checks between `suspended` and `restarting`.

They read the refused creates (`Family.refusals`, each matched against the shared admission table)
and the leaders of the child Jobs that are short of pods. The admission message says what the webhook
saw; the objects say why — a leader that is not scheduled, a Failed leader beside a live one, a node
without the topology label — so each check decides from the objects where they tell, and quotes the
message beside them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis.commands import collect, describe, describe_node
from diagnosis.jobset import admission
from diagnosis.jobset import commands as kubectl
from diagnosis.jobset.admission import POD_WEBHOOK_ORDER, WEBHOOK_CALL_ORDER
from diagnosis.jobset.family import Child, Family, Refusal, completion_index, is_live, phase
from diagnosis.jobset.keys import EXCLUSIVE_TOPOLOGY_KEY
from diagnosis.jobset.restarts import disruption, exits
from diagnosis.model import Command, Diagnosis, JobSetVerdict, PodVerdict
from diagnosis.objects import Object, labels, meta, name, status, text
from diagnosis.relations import node_name
from diagnosis.triage import classify as gpu
from diagnosis.triage.scheduler_message import last_said, quoted
from diagnosis.views import TriageView

FIRST_LINK = {
    PodVerdict.EXHAUSTED: "capacity short: every fitting node's devices are taken",
    PodVerdict.TAINT: "every fitting node has a taint the leader does not tolerate",
    PodVerdict.LABEL_MISMATCH: "no node matches the leader's nodeSelector/affinity",
    PodVerdict.NO_GPU_NODE: "no node offers the requested device",
    PodVerdict.ALLOCATABLE_ZERO: "the nodes' devices are unhealthy (allocatable 0)",
    PodVerdict.GATED: "scheduling gates hold the leader",
    PodVerdict.SCHEDULABLE: "nothing in the objects blocks the leader (the scheduler may not have retried)",
}
"""The first link of the leader-pending chain, from the leader's triage."""


def basics(family: Family) -> tuple[Command | None, ...]:
    """The commands every JobSet answer ends with."""
    ns, js = family.namespace, family.name
    return kubectl.describe_jobset(ns, js), kubectl.child_jobs(ns, js), kubectl.child_pods(ns, js)


def triage(family: Family, pod: Object) -> Diagnosis:
    """The GPU classifier's answer on one of the JobSet's pods."""
    view = family.view
    return gpu.classify(
        TriageView(
            pod,
            view.nodes,
            view.bound_pods,
            family.events_about(pod),
            view.now,
            peers=view.peers,
            storage=view.storage,
        )
    )


def pod_verdict(diagnosis: Diagnosis) -> PodVerdict | None:
    return diagnosis.verdict if isinstance(diagnosis.verdict, PodVerdict) else None


def _refusals(family: Family, verdict: JobSetVerdict) -> list[Refusal]:
    return [r for r in family.refusals if r.verdict is verdict]


def _blocked_exclusive(family: Family) -> Iterable[Child]:
    """Children short of pods whose pods JobSet's pod webhooks check (exclusive placement)."""
    return (c for c in family.children if c.missing and c.topology_key)


def _others(children: list[Child]) -> list[str]:
    if len(children) < 2:
        return []
    rest = ", ".join(c.name for c in children[1:4]) + (" …" if len(children) > 4 else "")
    return [f"{len(children) - 1} other child Jobs are held the same way: {rest}."]


def webhook_unavailable(family: Family) -> Diagnosis | None:
    refused = _refusals(family, JobSetVerdict.WEBHOOK_UNAVAILABLE)
    if not refused or refused[0].found is None:
        return None
    first, found = refused[0], refused[0].found
    service_ns, service = found.service
    service_ns = service_ns or kubectl.JOBSET_SYSTEM
    kueue = "kueue" in f"{service_ns}/{service}"
    owner = (
        "Kueue's webhook: deployment kueue-controller-manager in namespace kueue-system"
        if kueue
        else "JobSet's webhook: deployment jobset-controller-manager (release manifests, namespace "
        "jobset-system) or jobset-controller (Helm)"
    )
    evidence = [
        str(first),
        f"Refused by {found.rule.source}; webhook `{found.webhook or '?'}`, service "
        f"`{service_ns}/{service or '?'}` — {owner}.",
        found.meaning,
        *WEBHOOK_CALL_ORDER,
        *_others([r.child for r in refused if r.child]),
    ]
    who = "Kueue's" if kueue else "JobSet's"
    return Diagnosis(
        verdict=JobSetVerdict.WEBHOOK_UNAVAILABLE,
        summary=f"{who} webhook service {service_ns}/{service or '?'} has no ready endpoint, so "
        f"{first.what} cannot be created.",
        evidence=tuple(evidence),
        next_commands=collect(
            *kubectl.webhook_pods(service_ns),
            _events_of_job(family, first.child),
            *basics(family),
        ),
    )


def leader_duplicate(family: Family) -> Diagnosis | None:
    for child in _blocked_exclusive(family):
        failed = [p for p in child.leaders if phase(p) == "Failed" and not meta(p).get("deletionTimestamp")]
        live = [p for p in child.leaders if is_live(p)]
        if failed and live:
            return _duplicate(family, child, failed, live[0])
    return None


def _duplicate(family: Family, child: Child, failed: list[Object], live: Object) -> Diagnosis:
    ns = family.namespace
    refused = [r for r in family.refusals if r.child is child]
    why_failed = "; ".join(_ending(p) for p in failed)
    evidence = [
        f"Child Job {child.name} has {len(failed) + 1} leader pods (completion index 0): "
        f"{', '.join(name(p) for p in failed)} Failed ({why_failed}), and {name(live)} {phase(live)}"
        f"{' on ' + node_name(live) if node_name(live) else ''}.",
        f"It wants {child.wanted} pods and has {len(child.live)}: its followers are not created.",
        *([f"{refused[0]} — the masked form of the refusal."] if refused else []),
        "JobSet's pod webhooks find a follower's leader by name "
        f"`{family.name}-{child.replicated_job}-{child.index}-0` and require exactly one pod; they skip "
        f"pods being deleted but count Failed ones, so they find {len(failed) + 1} (`expected 1 leader pod "
        f"(…), but got {len(failed) + 1}. this is an expected, transient error` in the jobset-controller "
        "log), add no nodeSelector, and refuse every follower — forever, not transiently.",
        "The Job never reaches Failed, so the JobSet's failurePolicy and maxRestarts never fire.",
        "Version: every release through v0.12.0 (and release-0.12) deadlocks this way; main fixed it with "
        "PR #1276 (merged 2026-07-14, unreleased), which also ignores Failed/Succeeded leaders.",
        f"Fix: delete the Failed leader {name(failed[0])}; the webhook then finds one leader and admits "
        "the followers.",
    ]
    return Diagnosis(
        verdict=JobSetVerdict.LEADER_DUPLICATE,
        summary=f"Child Job {child.name} has a Failed leader {name(failed[0])} beside its replacement "
        f"{name(live)}: JobSet ≤ v0.12.0 refuses its followers forever.",
        evidence=tuple(evidence),
        next_commands=collect(
            *(
                kubectl.delete_pod(
                    ns, name(p), "Delete the Failed leader so the webhooks find exactly one leader again"
                )
                for p in failed
            ),
            kubectl.job_pods(ns, family.name, child.replicated_job, child.index),
            _events_of_job(family, child),
            kubectl.jobset_version(),
            *basics(family),
        ),
    )


def _ending(pod: Object) -> str:
    """How a pod ended, in a few words."""
    ended = exits(pod)
    if disruption(pod):
        return f"ended by {disruption(pod)}"
    if ended:
        return f"container {ended[0].container} exited {ended[0].code} {ended[0].reason}".strip()
    return text(status(pod).get("reason")) or "reason not recorded"


def topology_label_missing(family: Family) -> Diagnosis | None:
    refused = _refusals(family, JobSetVerdict.TOPOLOGY_LABEL_MISSING)
    for child in _blocked_exclusive(family):
        said = next((r for r in refused if r.child is child), None)
        leader = child.leader
        node = family.node(node_name(leader)) if leader is not None else None
        key = (said.found.groups.get("key") if said and said.found else None) or child.topology_key
        lacks = node is not None and key not in labels(node)
        if said is not None or lacks:
            return _topology(family, child, key, leader, node, said)
    return None


def _topology(
    family: Family, child: Child, key: str, leader: Object | None, node: Object | None, said: Refusal | None
) -> Diagnosis:
    ns = family.namespace
    found = said.found if said is not None and said.found is not None else None
    if found is None:
        found = admission.Match(admission.rule("topology-label-missing"), {"key": key}, "")
    node_ref = found.groups.get("node") or (node_name(leader) if leader is not None else "?")
    having = [name(n) for n in family.view.nodes if key in labels(n)]
    if node is not None:
        state = f"has no label `{key}`; {len(having)} of the {len(family.view.nodes)} nodes read have it"
        state += f" ({', '.join(having[:4])}{' …' if len(having) > 4 else ''})" if having else ""
    else:
        state = "no longer exists, so its labels cannot be read"
    evidence = [
        f"Child Job {child.name} is placed exclusively by node label `{key}` (annotation "
        f"`{EXCLUSIVE_TOPOLOGY_KEY}`).",
        f"Its leader {name(leader) if leader is not None else '(none live)'} is scheduled on node "
        f"{node_ref}, "
        f"which {state}.",
        *([str(said)] if said is not None else []),
        f"Refused by {found.rule.source}. {found.meaning}",
        *POD_WEBHOOK_ORDER[1:2],
        f"Fix: label the nodes of that pool with `{key}`, or point the JobSet's exclusive-topology "
        "annotation at a label the nodes have; then delete the leader so it is placed again.",
    ]
    return Diagnosis(
        verdict=JobSetVerdict.TOPOLOGY_LABEL_MISSING,
        summary=f"The leader of child Job {child.name} runs on node {node_ref}, whose exclusive-topology "
        "label "
        f"{key} is missing: its followers are refused.",
        evidence=tuple(evidence),
        next_commands=collect(
            kubectl.nodes_with_label(key),
            describe_node(node_ref, f"Node {node_ref}: its labels and state")
            if node is not None
            else None,
            kubectl.bound_pods(node_ref) if node is None else None,
            describe("pod", ns, name(leader), "The leader pod and where it runs") if leader else None,
            _events_of_job(family, child),
            *basics(family),
        ),
    )


def leader_pending(family: Family) -> Diagnosis | None:
    waiting = [c for c in _blocked_exclusive(family) if _waits_for_leader(family, c)]
    return _pending(family, waiting[0], waiting) if waiting else None


def _waits_for_leader(family: Family, child: Child) -> bool:
    """The child's followers are refused or missing because its leader is not scheduled: a follower
    refusal that points at the leader, or — the events expired — a Pending leader with followers
    missing. A leader that does not exist because its own create is refused is `create-rejected`."""
    leader = child.leader
    if leader is not None and node_name(leader):
        return False
    mine = [r for r in family.refusals if r.child is child]
    if leader is None:
        return bool(mine) and all(r.verdict is JobSetVerdict.LEADER_PENDING for r in mine)
    return phase(leader) == "Pending"


@dataclass(frozen=True)
class _Leader:
    """What the leader of a waiting child Job tells."""

    summary: str
    evidence: tuple[str, ...]
    commands: tuple[Command | None, ...] = ()
    verdict: PodVerdict | None = None


def _pending(family: Family, child: Child, waiting: list[Child]) -> Diagnosis:
    ns = family.namespace
    refused = next((r for r in family.refusals if r.child is child), None)
    if refused is not None:
        shown = f"{refused} — its followers are refused."
    else:
        shown = (
            f"Child Job {child.name} has {len(child.live)} of {child.wanted} pods; no FailedCreate event is "
            "left (events expire after an hour), but an exclusive-placement Job short of pods with a "
            "Pending leader is this case."
        )
    masked = refused.denial if refused is not None else "follower pod node selector not set"
    leader = _unscheduled(family, child, child.leader, masked) if child.leader else _absent(family, child)
    helm = refused.found.webhook if refused is not None and refused.found is not None else ""
    evidence = (
        shown,
        *leader.evidence,
        *POD_WEBHOOK_ORDER[2:],
        *_others(waiting),
        *([f"`{helm}` is a Helm install's name for the same webhook."] if helm.endswith("x-k8s.io") else []),
    )
    return Diagnosis(
        verdict=JobSetVerdict.LEADER_PENDING,
        summary=leader.summary,
        evidence=evidence,
        next_commands=collect(
            *leader.commands,
            _events_of_job(family, child),
            kubectl.job_pods(ns, family.name, child.replicated_job, child.index),
            *basics(family),
        ),
        pod_verdict=leader.verdict,
    )


def _absent(family: Family, child: Child) -> _Leader:
    return _Leader(
        f"The followers of child Job {child.name} are refused because their leader does not exist yet.",
        (
            "Its leader, index 0 of the same child Job "
            f"({family.name}-{child.replicated_job}-{child.index}-0-…), does not exist: the Job controller "
            "has not created it yet, or it was deleted.",
        ),
    )


def _unscheduled(family: Family, child: Child, leader: Object, masked: str) -> _Leader:
    """The leader is Pending: quote what the scheduler said, triage it, and tell the chain of causes
    from its triage to the message the follower got."""
    said = last_said(leader, family.events_about(leader), family.view.now)
    found = triage(family, leader)
    verdict = pod_verdict(found)
    first_link = (
        FIRST_LINK.get(verdict, "the leader cannot be placed") if verdict else "the leader cannot be placed"
    )
    evidence = (
        f"Its leader is {name(leader)} — completion index {completion_index(leader)} of the same child Job "
        f"(job-index {child.index}), not index 0 of the first replicatedJob — {phase(leader)}, not "
        "scheduled; "
        f"{quoted(said) if said else 'the scheduler has said nothing yet'}.",
        f"Chain: {first_link} → leader {name(leader)} Pending → the mutating webhook `mpod.kb.io` finds it "
        "unscheduled and adds no nodeSelector to the follower → the validating webhook `vpod.kb.io` checks "
        f"the selector before the leader → the follower is refused with `{masked}`, which names the "
        "selector, not the leader.",
        f"Leader triage ({found.verdict}): {found.summary}",
        *(line for line in found.evidence if not said or line != quoted(said)),
    )
    leader_details = describe(
        "pod", family.namespace, name(leader), f"The leader {name(leader)}: why it is Pending"
    )
    return _Leader(
        f"The followers of child Job {child.name} are refused because their leader {name(leader)} is not "
        f"scheduled ({found.verdict}).",
        evidence,
        (leader_details, *found.next_commands[:4]),
        verdict,
    )


def create_rejected(family: Family) -> Diagnosis | None:
    refused = _refusals(family, JobSetVerdict.CREATE_REJECTED)
    if not refused:
        return None
    first = refused[0]
    ns = family.namespace
    groups = first.found.groups if first.found else {}
    evidence = [str(first)]
    if first.found is not None:
        evidence += [
            f"Refused by {first.found.rule.source}.",
            first.found.meaning,
            *first.found.rule.order[:1],
        ]
        headline = first.found.headline
    else:
        evidence.append("No rule kubewhy knows matches the message; it names what refused the create.")
        headline = "the API server refused the create"
    if first.child is not None and first.child.topology_key and first.child.leader is None:
        evidence.append(
            "The Job's leader (index 0) is refused too, so JobSet's webhooks also refuse its followers "
            "(`follower pod node selector not set`): fix this refusal first."
        )
    evidence += _others([r.child for r in refused if r.child])
    return Diagnosis(
        verdict=JobSetVerdict.CREATE_REJECTED,
        summary=f"Creating {first.what} is refused: {headline}.",
        evidence=tuple(evidence),
        next_commands=collect(
            kubectl.describe_quota(ns, groups["quota"]) if "quota" in groups else None,
            kubectl.runtimeclasses() if "runtimeclass" in groups else None,
            kubectl.limitranges(ns)
            if first.found is not None and first.found.rule.name == "limitrange"
            else None,
            _events_of_job(family, first.child),
            kubectl.events_of(ns, family.name, "JobSet") if first.child is None else None,
            *basics(family),
        ),
    )


def _events_of_job(family: Family, child: Child | None) -> Command | None:
    return kubectl.events_of(family.namespace, child.name, "child Job") if child is not None else None
