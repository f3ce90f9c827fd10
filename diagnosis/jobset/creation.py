"""Why a JobSet's pods or Jobs are not created: the checks between `suspended` and `restarting`.

They read the refused creates (`Family.refusals`, each matched against the shared admission table)
and the leaders of the child Jobs that are short of pods. The admission message says what the webhook
saw; the objects say why — a leader that is not scheduled, a Failed leader beside a live one, a node
without the topology label — so each check decides from the objects where they tell, and quotes the
message beside them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from diagnosis.commands import collect, describe, describe_node
from diagnosis.jobset import admission
from diagnosis.jobset import commands as kubectl
from diagnosis.jobset.admission import POD_WEBHOOK_ORDER, WEBHOOK_CALL_ORDER
from diagnosis.jobset.family import Child, Family, Refusal, completion_index, is_live, phase
from diagnosis.jobset.keys import EXCLUSIVE_TOPOLOGY_KEY
from diagnosis.jobset.restarts import disruption, exits
from diagnosis.jobset.upstream import DUPLICATE_LEADER
from diagnosis.model import Command, Diagnosis, Fix, JobSetVerdict, PodVerdict
from diagnosis.objects import Object, labels, mapping, meta, name, namespace, status, text
from diagnosis.patch import merge_patch
from diagnosis.relations import holds_node, node_name
from diagnosis.triage import classify as gpu
from diagnosis.triage.fixes import pool_domain
from diagnosis.triage.resources import effective_requests
from diagnosis.triage.scheduler_message import last_said, quoted
from diagnosis.views import TriageView, WorkloadView
from diagnosis.workloads import top_owner

FIRST_LINK = {
    PodVerdict.EXHAUSTED: "capacity short: every fitting node's devices are taken",
    PodVerdict.TAINT: "every fitting node has a taint the leader does not tolerate",
    PodVerdict.LABEL_MISMATCH: "no node matches the leader's nodeSelector/affinity",
    PodVerdict.NO_GPU_NODE: "no node offers the requested device",
    PodVerdict.ALLOCATABLE_ZERO: "the nodes' devices are unhealthy (allocatable 0)",
    PodVerdict.GATED: "scheduling gates hold the leader",
    PodVerdict.PREEMPTING: "the scheduler preempted pods for the leader and waits for them to terminate",
    PodVerdict.NODE_RESOURCES: "every node with free devices lacks the cpu, memory or pod slot it asks",
    PodVerdict.HOST_PORT: "every node with free devices already has a host port the leader asks taken",
    PodVerdict.SCHEDULABLE: "nothing in the objects blocks the leader (the scheduler may not have retried)",
}
"""The first link of the leader-pending chain, from the leader's triage."""


def basics(family: Family) -> tuple[Command | None, ...]:
    """The commands every JobSet answer ends with."""
    ns, js = family.namespace, family.name
    return kubectl.describe_jobset(ns, js), kubectl.child_jobs(ns, js), kubectl.child_pods(ns, js)


def triage(family: Family, pod: Object) -> Diagnosis:
    """The GPU classifier's answer on one of the JobSet's pods."""
    return triage_in(family.view, pod, family.events_about(pod))


def triage_in(view: WorkloadView, pod: Object, about: tuple[Object, ...]) -> Diagnosis:
    """The GPU classifier's answer on one pod of a workload's view (a JobSet's, a LeaderWorkerSet's),
    from the nodes and pods the view read around its pending pods; `about`: the pod's events."""
    return gpu.classify(
        TriageView(
            pod,
            view.nodes,
            view.bound_pods,
            about,
            view.now,
            peers=view.peers,
            storage=view.storage,
            nominated_pods=view.nominated_pods,
            dra=view.dra,
            capacity=view.capacity,
        )
    )


def blocked_by(found: Diagnosis | None) -> dict[str, Any]:
    """What a JobSet answer takes from the triage of the pod that blocks it: its fixes, who holds the
    devices it needs, since when it has waited, and whether a node will come for it."""
    if found is None:
        return {}
    return {
        "fixes": found.fixes,
        "holders": found.holders,
        "pending_since": found.pending_since,
        "autoscaling": found.autoscaling,
    }


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
    checks = collect(kubectl.endpoints(service_ns), *kubectl.webhook_pods(service_ns))
    fix = Fix(
        f"get a pod of the {'Kueue' if kueue else 'JobSet'} controller in {service_ns} Ready, so that "
        f"service {service or '?'} has an endpoint: the refused creates are then retried on their own",
        None,
        (),
        checks,
        (f"namespace/{service_ns}",),
    )
    return Diagnosis(
        verdict=JobSetVerdict.WEBHOOK_UNAVAILABLE,
        summary=f"{who} webhook service {service_ns}/{service or '?'} has no ready endpoint, so "
        f"{first.what} cannot be created.",
        evidence=tuple(evidence),
        next_commands=collect(*checks, _events_of_job(family, first.child), *basics(family)),
        fixes=(fix,),
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
        DUPLICATE_LEADER.note,
    ]
    deletes = collect(
        *(
            kubectl.delete_pod(
                ns, name(p), "Delete the Failed leader so the webhooks find exactly one leader again"
            )
            for p in failed
        )
    )
    opens = follower_opens(family, child, live)
    fix = Fix(
        f"delete the Failed leader {', '.join(name(p) for p in failed)}: the webhooks then find one leader "
        f"({name(live)}) and admit the followers, which {_opening(opens)}",
        None,
        opens,
        deletes,
        tuple(f"pod/{ns}/{name(p)}" for p in failed),
    )
    return Diagnosis(
        verdict=JobSetVerdict.LEADER_DUPLICATE,
        summary=f"Child Job {child.name} has a Failed leader {name(failed[0])} beside its replacement "
        f"{name(live)}: its followers are refused until the Failed one is deleted.",
        evidence=tuple(evidence),
        fixes=(fix,),
        next_commands=collect(
            *deletes,
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
        # A refusal the node's labels now contradict is stale (events outlive the fix): objects win.
        if lacks or (said is not None and node is None):
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
    ]
    return Diagnosis(
        verdict=JobSetVerdict.TOPOLOGY_LABEL_MISSING,
        summary=f"Child Job {child.name}'s leader runs on node {node_ref}, which lacks the exclusive-"
        f"topology label {key}: its followers are refused.",
        evidence=tuple(evidence),
        fixes=_labelling(family, key) if node is not None and leader is not None else (),
        next_commands=collect(
            kubectl.nodes_with_label(key),
            describe_node(node_ref, f"Node {node_ref}: its labels and state") if node is not None else None,
            kubectl.bound_pods(node_ref) if node is None else None,
            describe("pod", ns, name(leader), "The leader pod and where it runs") if leader else None,
            _events_of_job(family, child),
            *basics(family),
        ),
    )


def _labelling(family: Family, key: str) -> tuple[Fix, ...]:
    """Label every blocked leader's node that lacks the key with its topology domain: the fix checked
    by running the follower of the first such child Job through the funnel on the labelled nodes."""
    found: dict[str, tuple[Object, str]] = {}
    blocked: list[tuple[Child, Object]] = []
    for child in _blocked_exclusive(family):
        leader = child.leader
        node = family.node(node_name(leader)) if leader is not None else None
        if leader is not None and node is not None and child.topology_key == key and key not in labels(node):
            found.setdefault(name(node), (node, pool_domain(family.view.nodes, node, key)))
            blocked.append((child, leader))
    if not blocked:
        return ()
    labelled = {
        n: merge_patch(node, {"metadata": {"labels": {key: value}}}) for n, (node, value) in found.items()
    }
    child, leader = blocked[0]
    opens = follower_opens(family, child, leader, labelled)
    nodes = ", ".join(f"{n} ({key}={value})" for n, (_, value) in list(found.items())[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return (
        Fix(
            f"label node{'s' if len(found) > 1 else ''} {nodes}{more} (the domain of each node's pool, else "
            f"the node's own): the webhooks then copy it to the followers, which {_opening(opens)}",
            None,
            opens,
            collect(*(kubectl.label_node(n, key, value) for n, (_, value) in found.items())),
            tuple(f"node/{n}" for n in found),
        ),
    )


def follower_opens(
    family: Family, child: Child, leader: Object, changed: Mapping[str, Object] | None = None
) -> tuple[str, ...]:
    """Where a follower of `child` would pass every check once admitted: the leader's pod spec (a
    replicatedJob's pods share one template) with the nodeSelector the mutating webhook copies from the
    leader's node, run through the triage funnel (`changed`: nodes as a fix would change them)."""
    view = family.view
    changed = changed or {}
    host = changed.get(node_name(leader)) or family.node(node_name(leader))
    key = child.topology_key
    value = labels(host).get(key) if host is not None else None
    if value is None:
        return ()
    nodes = tuple(changed.get(name(n), n) for n in view.nodes)
    follower = merge_patch(
        leader,
        {
            "metadata": {"name": f"{name(leader)}-follower", "uid": None},
            "spec": {"nodeName": None, "nodeSelector": {key: value}},
            "status": {"phase": "Pending", "conditions": None, "nominatedNodeName": None},
        },
    )
    return gpu.passing(TriageView(follower, nodes, view.bound_pods, (), view.now))


def _opening(opens: tuple[str, ...]) -> str:
    if not opens:
        return "then find no node with room in that domain (see the leader's pod on it)"
    shown = ", ".join(opens[:3]) + (f" and {len(opens) - 3} more" if len(opens) > 3 else "")
    return f"can then run on {shown}"


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
    triage: Diagnosis | None = None
    """The leader's own triage: its fixes, holders and waiting time are the JobSet's."""


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
        **_with_domain(family, child, blocked_by(leader.triage)),
    )


def _with_domain(family: Family, child: Child, taken: dict[str, Any]) -> dict[str, Any]:
    """The leader's own fixes, after the one that frees a whole topology domain for the child Job (a
    leader alone does not start a slice: its followers need room in the same domain)."""
    leader = child.leader
    whole = _free_domain(family, child, leader) if leader is not None and child.topology_key else None
    if whole is None:
        return taken
    return {**taken, "fixes": (whole, *taken.get("fixes", ()))}


def _free_domain(family: Family, child: Child, leader: Object) -> Fix | None:
    """End the pods of other workloads that hold the devices of the smallest topology domain where the
    whole child Job would then fit: the leader, with that domain selected, passes every check on at least
    as many nodes as the child Job has pods. A domain holding this JobSet's own pods is left alone."""
    asks = effective_requests(leader)
    if not asks or child.wanted < 1:
        return None
    best: _Freed | None = None
    holding: dict[str, list[Object]] = {}  # node → the bound pods there that hold what the leader asks
    for pod in family.view.bound_pods:
        if holds_node(pod) and not effective_requests(pod).keys().isdisjoint(asks):
            holding.setdefault(node_name(pod), []).append(pod)
    for value, members in sorted(_domains(family.view.nodes, child.topology_key).items()):
        if len(members) < child.wanted:
            continue
        freed = _freed(family, child, leader, value, [p for n in members for p in holding.get(n, ())])
        if freed is not None and (best is None or len(freed.held) < len(best.held)):
            best = freed
    return None if best is None else _freeing(child, best)


@dataclass(frozen=True)
class _Freed:
    """A topology domain whose devices other workloads' pods hold: those pods, and the nodes on which
    the leader, sent to the domain, passes every check once they end."""

    value: str
    held: list[Object]
    opens: tuple[str, ...]


def _domains(nodes: Iterable[Object], key: str) -> dict[str, list[str]]:
    """The names of the nodes of each value of the topology label `key`."""
    domains: dict[str, list[str]] = {}
    for node in nodes:
        value = mapping(meta(node).get("labels")).get(key)  # read, not copied: every node of the view
        if isinstance(value, str) and value:
            domains.setdefault(value, []).append(name(node))
    return domains


def _freed(family: Family, child: Child, leader: Object, value: str, holding: list[Object]) -> _Freed | None:
    """The domain `key=value` freed of the pods that hold the devices the leader asks on its nodes
    (`holding`); None when none holds any, one is this JobSet's own, or too few nodes would then open."""
    view, key, own = family.view, child.topology_key, top_owner(leader)
    # By name, not as read: a live reader lists them node by node.
    held = sorted(holding, key=lambda p: (namespace(p), name(p)))
    if not held or any(top_owner(p) == own and namespace(p) == family.namespace for p in held):
        return None
    gone = {(namespace(p), name(p)) for p in held}
    placed = merge_patch(leader, {"spec": {"nodeSelector": {key: value}}})
    rest = tuple(p for p in view.bound_pods if (namespace(p), name(p)) not in gone)
    opens = gpu.passing(TriageView(placed, view.nodes, rest, (), view.now))
    return _Freed(value, held, opens) if len(opens) >= child.wanted else None


def _freeing(child: Child, freed: _Freed) -> Fix:
    """The fix that ends the pods holding the domain: a Deployment or StatefulSet scaled to zero, any
    other pod deleted."""
    held, opens = freed.held, freed.opens
    owners = Counter((top_owner(pod).kind, namespace(pod), top_owner(pod).name) for pod in held)
    whose = ", ".join(
        f"{k} {ns}/{n} ({count} pod{'s' if count > 1 else ''})" for (k, ns, n), count in owners.items()
    )
    scaled = ("Deployment", "StatefulSet")
    commands = collect(
        *(kubectl.scale_to_zero(k, ns, n) for (k, ns, n) in owners if k in scaled),
        *(
            kubectl.delete_pod(namespace(p), name(p), f"End {name(p)} to free its devices")
            for p in held
            if top_owner(p).kind not in scaled
        ),
    )
    fit = f"{', '.join(opens[:4])}{' …' if len(opens) > 4 else ''}"
    return Fix(
        f"free the topology domain {child.topology_key}={freed.value} for the whole child Job {child.name}: "
        f"end {whose}; its {child.wanted} pods then fit on {fit}",
        None,
        opens,
        commands,
        tuple(f"pod/{namespace(p)}/{name(p)}" for p in held),
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
        # The scheduler's message is quoted above; who holds the devices is said once, by workload.
        *(line for line in found.evidence if (not said or line != quoted(said)) and not _held(found, line)),
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
        found,
    )


def _held(found: Diagnosis, line: str) -> bool:
    """A per-node `…: R held by …` line of the triage, when its holders are grouped by workload."""
    return bool(found.holders) and " held by " in line


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
    rule = first.found.rule.name if first.found is not None else ""
    checks = collect(
        kubectl.describe_quota(ns, groups["quota"]) if "quota" in groups else None,
        kubectl.runtimeclasses() if "runtimeclass" in groups else None,
        kubectl.limitranges(ns) if rule == "limitrange" else None,
        _events_of_job(family, first.child),
        kubectl.events_of(ns, family.name, "JobSet") if first.child is None else None,
    )
    fix = Fix(_refusal_fix(rule, groups, first), None, (), checks, (f"jobset/{ns}/{family.name}",))
    return Diagnosis(
        verdict=JobSetVerdict.CREATE_REJECTED,
        summary=f"Creating {first.what} is refused: {headline}.",
        evidence=tuple(evidence),
        next_commands=collect(*checks, *basics(family)),
        fixes=(fix,),
    )


QUOTED = 120
"""Characters of an admission message quoted in a fix's one line (the evidence quotes it whole)."""


def _refusal_fix(rule: str, groups: Mapping[str, str], refused: Refusal) -> str:
    """What removes the refusal, in one line: per admission rule, else the refusal's own words."""
    if rule == "quota-exceeded":
        said = (
            f"free ResourceQuota {groups['quota']} (end other workloads of the namespace) or raise its "
            f"limit: requested {groups['requested']}, used {groups['used']}, limited {groups['limited']}"
        )
    elif rule == "quota-must-specify":
        said = f"set {groups['resources']} on every container of the JobSet's template"
    elif rule == "runtimeclass-not-found":
        said = (
            f"name a RuntimeClass that exists in the JobSet's template, or create {groups['runtimeclass']} "
            "(the GPU Operator's container toolkit makes the NVIDIA ones)"
        )
    elif rule == "limitrange":
        said = f"bring the template's {groups['resource']} within the LimitRange per {groups['scope']}"
    else:
        said = f'change the JobSet so that what refused it agrees: "{_cut(refused.denial, QUOTED)}"'
    return _cut(said, SUMMARY)


SUMMARY = 199
"""A fix's one line at most (the first screen shows it whole)."""


def _cut(said: str, limit: int) -> str:
    return said if len(said) <= limit else said[: limit - 1] + "…"


def _events_of_job(family: Family, child: Child | None) -> Command | None:
    return kubectl.events_of(family.namespace, child.name, "child Job") if child is not None else None
