"""The admission errors a JobSet, its Jobs and its pods meet, and the verdict each one implies.

One ordered table, `RULES`, serves both explainers: the live one reads the `FailedCreate` and
`JobCreationFailed` events of a JobSet through `match`, and `explain_message` reads a message an
engineer pasted, offline. The first rule whose pattern is found wins, so the more specific texts (a
webhook that could not be called, the JobSet pod webhooks' own denials) stand before the generic ones
(any webhook denial, any `forbidden`). Error strings are quoted from their sources: JobSet's pod and
JobSet webhooks (kubernetes-sigs/jobset `pkg/webhooks/pod_webhook.go`, split into
`pod_mutating_webhook.go` and `pod_admission_webhook.go` in older releases, and `jobset_webhook.go`), the
API server's webhook dispatcher, and its ResourceQuota, RuntimeClass and LimitRanger admission plugins
(kubernetes/kubernetes `plugin/pkg/admission/{resourcequota,runtimeclass,limitranger}`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from diagnosis.commands import collect
from diagnosis.jobset import commands as kubectl
from diagnosis.jobset.upstream import (
    DUPLICATE_LEADER,
    JOB_CREATION_EVENT,
    LEADER_NODE_GONE,
    POD_WEBHOOK_SELECTOR,
    SELECTOR_BEFORE_LEADER,
)
from diagnosis.model import Command, Diagnosis, JobSetVerdict

MUTATING_POD_WEBHOOK = (
    "JobSet's mutating pod webhook `mpod.kb.io` (Helm installs name it `mutate--v1-pod.x-k8s.io`)"
)
VALIDATING_POD_WEBHOOK = (
    "JobSet's validating pod webhook `vpod.kb.io` (Helm installs name it `validate--v1-pod.x-k8s.io`)"
)

POD_WEBHOOK_ORDER = (
    "Webhook order: a pod of an exclusive-placement JobSet (annotation "
    "`alpha.jobset.sigs.k8s.io/exclusive-topology`) passes the mutating webhook `mpod.kb.io` first, then "
    "the validating webhook `vpod.kb.io`.",
    "`mpod.kb.io` on a follower (completion index ≠ 0): it looks up the leader, index 0 of the follower's "
    "own child Job; when the leader is not found (0 or 2+ pods) or not yet scheduled it adds NO "
    "nodeSelector and lets the pod through; when the leader's node lacks the topology label it denies "
    "(`node does not have topology label: K`).",
    "`vpod.kb.io` on that follower checks, in order: 1) a nodeSelector is set (`follower pod node selector "
    "not set`), 2) it has the topology key (`missing selector: K`), 3) exactly one leader pod (`expected 1 "
    "leader pod (…), but got N`), 4) the leader is scheduled (`leader pod not yet scheduled`). The "
    "selector checks come before the leader checks, so an unscheduled or missing leader is reported as "
    "a missing selector.",
    SELECTOR_BEFORE_LEADER.note,
)
WEBHOOK_CALL_ORDER = (
    "Order: the API server calls each admission webhook before it stores the object; every JobSet "
    "webhook has `failurePolicy: Fail`, so while the webhook's service has no ready endpoint every create "
    "it covers is refused — pod creates of JobSet pods and JobSet creates. " + POD_WEBHOOK_SELECTOR.note,
    "Kueue registers webhooks with the same names (`mjobset.kb.io`, `vjobset.kb.io`, `mpod.kb.io`, "
    "`vpod.kb.io`): the service in the URL tells whose webhook is down.",
)
JOBSET_WEBHOOK_ORDER = (
    "Order: JobSet's webhooks on the JobSet itself (`mjobset.kb.io` then `vjobset.kb.io`; Helm: "
    "`mutate-jobset-x-k8s-io-v1alpha2-jobset.x-k8s.io`, `validate-jobset-x-k8s-io-v1alpha2-jobset.x-k8s.io`) "
    "run when it is created or updated, before any Job or pod exists: the JobSet is refused and nothing "
    "is created.",
)
MUTATING_PHASE_ORDER = (
    "Order: this admission plugin runs in the mutating phase, before the mutating webhooks: JobSet's pod "
    "webhooks never saw the pod, so they are not the cause.",
)
QUOTA_ORDER = (
    "Order: ResourceQuota runs last, in the validating phase, after every webhook admitted the object "
    "(for a pod, JobSet's `mpod.kb.io` and `vpod.kb.io`): JobSet's webhooks are not the cause.",
)
LIMITRANGE_ORDER = (
    "Order: LimitRanger defaults requests and limits in the mutating phase and checks them in the "
    "validating phase, before the validating webhooks such as JobSet's `vpod.kb.io`: JobSet's webhooks are "
    "not the cause.",
)
ADMISSION_ORDER = (
    "Order: a built-in admission plugin refused the object (mutating, then validating phase); no JobSet "
    "webhook is named, so JobSet's webhooks are not the cause.",
)
VALIDATION_ORDER = (
    "Order: object validation runs between the mutating and the validating admission phases: the object "
    "itself is invalid, whatever the webhooks say.",
)
CONTROLLER_ORDER = (
    "Order: the JobSet controller creates the child Jobs; when the API server refuses one it records a "
    "Warning `JobCreationFailed` event on the JobSet and retries. " + JOB_CREATION_EVENT.note,
)
OTHER_WEBHOOK_ORDER = (
    "Order: admission webhooks run after the built-in mutating plugins; this one is not JobSet's "
    "(`mpod.kb.io`/`vpod.kb.io`, `mjobset.kb.io`/`vjobset.kb.io`) and refused the object on its own "
    "policy.",
)


@dataclass(frozen=True)
class Rule:
    """One family of admission errors: where it comes from and what it implies."""

    name: str
    headline: str
    """The cause in a few words; `{group}` fields here and in `meaning` are filled from the
    pattern's named groups."""
    pattern: re.Pattern[str]
    verdict: JobSetVerdict
    source: str
    """Who refused: the webhook or admission plugin, under both of its installed names."""
    meaning: str
    """What the message implies and what to do."""
    order: tuple[str, ...]
    """Where that refusal stands in the admission order, and why it reads as it does."""


@dataclass(frozen=True)
class Match:
    """A message matched by a rule, with what the message names (key, quota, service…)."""

    rule: Rule
    groups: Mapping[str, str]
    text: str

    @property
    def webhook(self) -> str:
        """The webhook the message names, if any (`vpod.kb.io`, `validate--v1-pod.x-k8s.io`…)."""
        found = _WEBHOOK_NAME.search(self.text)
        return found.group(1) if found else ""

    @property
    def service(self) -> tuple[str, str]:
        """(namespace, name) of the webhook service the message names, or ("", "")."""
        found = _SERVICE_URL.search(self.text)
        if found:
            return found.group("namespace"), found.group("service")
        return "", self.groups.get("service", "")

    @property
    def headline(self) -> str:
        return self.rule.headline.format_map(_Blank(self.groups))

    @property
    def meaning(self) -> str:
        return self.rule.meaning.format_map(_Blank(self.groups))


class _Blank(dict[str, str]):
    """Fills a meaning's fields; a field the message did not carry reads as `?`."""

    def __missing__(self, key: str) -> str:
        return "?"


_WEBHOOK_NAME = re.compile(r'(?:admission webhook|failed calling webhook) "([^"]{1,253})"')
_SERVICE_URL = re.compile(r"https://(?P<service>[a-z0-9-]{1,63})\.(?P<namespace>[a-z0-9-]{1,63})\.svc")
_KEY = r"(?P<key>[A-Za-z0-9./_-]{1,317})"
_JOBSET_SPEC_ERRORS = (
    r"JobSet name is too long",
    r"\.spec\.network\.subdomain is too long",
    r"DependsOn can't be set for the first ReplicatedJob",
    r"invalid job failure reason",
    r"InPlaceRestart restart strategy cannot be set",
    r"RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed",
    r"coordinator replicatedJob \S+ does not exist",
)


def _rule(
    name: str,
    headline: str,
    pattern: str,
    verdict: JobSetVerdict,
    source: str,
    meaning: str,
    order: tuple[str, ...],
) -> Rule:
    return Rule(name, headline, re.compile(pattern), verdict, source, meaning, order)


RULES: tuple[Rule, ...] = (
    # A webhook that cannot be called refuses everything it covers: its messages quote the denials
    # of no one, so they come first.
    _rule(
        "webhook-no-endpoints",
        "webhook service `{service}` has no ready endpoint",
        r'no endpoints available for service "(?P<service>[^"]{1,253})"',
        JobSetVerdict.WEBHOOK_UNAVAILABLE,
        "the API server, which could not call the webhook",
        "The webhook service `{service}` has no ready endpoint: its controller pods are not running "
        "(often Pending for lack of CPU nodes, troubleshooting §1), so every create it covers fails.",
        WEBHOOK_CALL_ORDER,
    ),
    _rule(
        "webhook-call-failed",
        "the API server could not call webhook `{webhook}`",
        r'failed calling webhook "(?P<webhook>[^"]{1,253})"',
        JobSetVerdict.WEBHOOK_UNAVAILABLE,
        "the API server, which could not call the webhook",
        "The API server could not reach webhook `{webhook}` (connection refused, timeout or TLS error), "
        "so every create it covers fails until its controller pods serve again.",
        WEBHOOK_CALL_ORDER,
    ),
    # The leader-count denial names its cause exactly: two or more leaders is a Failed leader beside
    # its replacement (`upstream.DUPLICATE_LEADER`), zero is a leader not created yet.
    _rule(
        "leader-duplicate",
        "{count} leader pods named `{leader}`: a Failed leader beside its replacement",
        r"expected 1 leader pod \((?P<leader>[^)]{0,253})\), but got (?P<count>[2-9]|\d{2,})\b",
        JobSetVerdict.LEADER_DUPLICATE,
        VALIDATING_POD_WEBHOOK + " (its leader lookup; also logged by `mpod.kb.io` as `finding leader "
        "pod for follower`)",
        "{count} pods carry the leader's name `{leader}`: a Failed leader beside its replacement. "
        "The webhook counts the Failed one, so every follower is refused and the Job never fails (the "
        'failure policy and maxRestarts never fire) — "transient" is wrong here. Delete the Failed leader '
        "pod. " + DUPLICATE_LEADER.note,
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "leader-missing",
        "the follower's leader `{leader}` does not exist yet",
        r"expected 1 leader pod \((?P<leader>[^)]{0,253})\), but got 0\b",
        JobSetVerdict.LEADER_PENDING,
        VALIDATING_POD_WEBHOOK + " (its leader lookup)",
        "No pod `{leader}` exists yet: the follower's leader (index 0 of its own child Job) has not been "
        "created or was deleted; followers are refused until it exists and is scheduled.",
        POD_WEBHOOK_ORDER,
    ),
    # The mutating webhook's own denial: the leader IS scheduled, on a node it cannot read.
    _rule(
        "topology-label-missing",
        "the leader's node has no topology label `{key}`",
        r"node does not have topology label: " + _KEY,
        JobSetVerdict.TOPOLOGY_LABEL_MISSING,
        MUTATING_POD_WEBHOOK,
        "The leader is scheduled, but its node has no label `{key}` (the value of the JobSet's "
        "`alpha.jobset.sigs.k8s.io/exclusive-topology` annotation), so the webhook cannot copy the "
        "leader's topology domain into the follower's nodeSelector and refuses the follower.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "leader-node-gone",
        "the leader's node `{node}` no longer exists",
        r'admission webhook "(?:mpod\.kb\.io|mutate--v1-pod\.x-k8s\.io)" denied the request: '
        r'nodes "(?P<node>[^"]{1,253})" not found',
        JobSetVerdict.TOPOLOGY_LABEL_MISSING,
        MUTATING_POD_WEBHOOK,
        "The leader is bound to node `{node}`, which no longer exists, so the webhook cannot read the "
        "leader's topology label. Delete the orphaned leader so the Job recreates it. "
        + LEADER_NODE_GONE.note,
        POD_WEBHOOK_ORDER,
    ),
    # The validating webhook's follower denials: all of them mean "look at the leader".
    _rule(
        "missing-selector",
        "the follower's leader is not scheduled; the missing `{key}` selector only masks it",
        r"follower pod node selector for topology domain not found\. missing selector: " + _KEY,
        JobSetVerdict.LEADER_PENDING,
        VALIDATING_POD_WEBHOOK,
        "The follower reached the validating webhook without `{key}` in its nodeSelector because the "
        "mutating webhook added none: the follower's leader (index 0 of the same child Job) is not "
        "scheduled, or not found. The message blames the selector; the cause is the leader.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "selector-not-set",
        "the follower's leader is not scheduled; the missing selector only masks it",
        r"follower pod node selector not set",
        JobSetVerdict.LEADER_PENDING,
        VALIDATING_POD_WEBHOOK,
        "The follower reached the validating webhook with no nodeSelector because the mutating webhook "
        "added none: the follower's leader (index 0 of the same child Job) is not scheduled, or not "
        "found. The message blames the selector; the cause is the leader.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "leader-not-scheduled",
        "the follower's leader is not scheduled yet",
        r"leader pod not yet scheduled, not creating follower pod",
        JobSetVerdict.LEADER_PENDING,
        VALIDATING_POD_WEBHOOK,
        "The follower's leader (index 0 of the same child Job) exists but is not scheduled; followers are "
        "refused until it is. This text shows only when the template already sets the topology key.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "leader-owner-mismatch",
        "a stale leader of another Job holds the leader's name",
        r"follower pod owner UID \((?P<follower_owner>[^)]{0,64})\) != "
        r"leader pod owner UID \((?P<leader_owner>[^)]{0,64})\)",
        JobSetVerdict.LEADER_PENDING,
        VALIDATING_POD_WEBHOOK + " (its leader lookup)",
        "The pod found under the leader's name belongs to another Job (owner `{leader_owner}`), a stale "
        "leader of an earlier restart attempt (issue #1021): the follower's own leader is not there yet.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "no-owner",
        "a pod of the placement group was not created by the Job controller",
        r'(?:follower pod|leader pod "?(?P<leader>[^"\s]{0,253})"?) has no owner reference',
        JobSetVerdict.CREATE_REJECTED,
        VALIDATING_POD_WEBHOOK + " (its leader lookup)",
        "A pod of the exclusive-placement group was not created by the Job controller (no "
        "ownerReference): pods created by hand cannot join a JobSet's topology group.",
        POD_WEBHOOK_ORDER,
    ),
    _rule(
        "missing-jobset-label",
        "the pod lacks the JobSet key `{key}`",
        r"pod missing (?:label|annotation): " + _KEY,
        JobSetVerdict.CREATE_REJECTED,
        "JobSet's pod webhooks (`mpod.kb.io`/`vpod.kb.io`)",
        "The pod lacks `{key}`, which the JobSet controller sets on every child pod: the pod or its "
        "template was not made by the JobSet controller, or something stripped the key.",
        POD_WEBHOOK_ORDER,
    ),
    # Built-in admission plugins name what refused: the quota, the RuntimeClass, the LimitRange.
    _rule(
        "quota-exceeded",
        "ResourceQuota `{quota}` is used up",
        r"exceeded quota: (?P<quota>[^,\s]{1,253}), requested: (?P<requested>[^\s]{1,500}), "
        r"used: (?P<used>[^\s]{1,500}), limited: (?P<limited>[^\s]{1,500})",
        JobSetVerdict.CREATE_REJECTED,
        "the ResourceQuota admission plugin",
        "ResourceQuota `{quota}` refused the object: requested {requested}, used {used}, limit {limited}. "
        "Free quota (finish or delete other workloads) or raise the limit.",
        QUOTA_ORDER,
    ),
    _rule(
        "quota-must-specify",
        "ResourceQuota `{quota}` requires {resources}",
        r"failed quota: (?P<quota>[^:\s]{1,253}): must specify (?P<resources>[^;\n]{1,500})",
        JobSetVerdict.CREATE_REJECTED,
        "the ResourceQuota admission plugin",
        "ResourceQuota `{quota}` tracks cpu or memory, so every container must set {resources}.",
        QUOTA_ORDER,
    ),
    _rule(
        "runtimeclass-not-found",
        "RuntimeClass `{runtimeclass}` does not exist",
        r'RuntimeClass "(?P<runtimeclass>[^"]{1,253})" not found',
        JobSetVerdict.CREATE_REJECTED,
        "the RuntimeClass admission plugin",
        "The pod template names RuntimeClass `{runtimeclass}`, which does not exist in the cluster (the "
        "GPU operator or device plugin that creates it is missing, or the name is wrong): no pod is "
        "created at all.",
        MUTATING_PHASE_ORDER,
    ),
    _rule(
        "runtimeclass-overhead",
        "the pod's overhead does not match its RuntimeClass",
        r"pod rejected: Pod(?:'s)? Overhead",
        JobSetVerdict.CREATE_REJECTED,
        "the RuntimeClass admission plugin",
        "The pod's `spec.overhead` does not match its RuntimeClass's `overhead.podFixed`: remove "
        "`overhead` from the template and let admission set it.",
        MUTATING_PHASE_ORDER,
    ),
    _rule(
        "limitrange",
        "a LimitRange bounds `{resource}` per {scope}",
        r"(?:maximum|minimum) (?P<resource>[^\s]{1,253}) usage per (?P<scope>Container|Pod|"
        r"PersistentVolumeClaim) is",
        JobSetVerdict.CREATE_REJECTED,
        "the LimitRanger admission plugin",
        "A LimitRange in the namespace bounds `{resource}` per {scope}, and the pod's requests or limits "
        "fall outside it.",
        LIMITRANGE_ORDER,
    ),
    # The JobSet itself refused by its own webhook: nothing below it was ever created.
    _rule(
        "jobset-spec",
        "JobSet's own webhook refused the JobSet's spec",
        r'admission webhook "(?:vjobset\.kb\.io|mjobset\.kb\.io|validate-jobset-x-k8s-io-v1alpha2-jobset'
        r'\.x-k8s\.io|mutate-jobset-x-k8s-io-v1alpha2-jobset\.x-k8s\.io)" denied the request|'
        + "|".join(_JOBSET_SPEC_ERRORS),
        JobSetVerdict.CREATE_REJECTED,
        "JobSet's webhooks on the JobSet (`vjobset.kb.io` / `validate-jobset-x-k8s-io-v1alpha2-jobset"
        ".x-k8s.io`)",
        "The JobSet's spec is invalid (name or subdomain too long, dependsOn on the first replicatedJob, "
        "a failure policy or restart strategy the installed version or its feature gates do not allow, "
        "an unknown coordinator, or an immutable field changed): fix the spec and apply it again.",
        JOBSET_WEBHOOK_ORDER,
    ),
    _rule(
        "validation",
        "the object the controller creates is invalid",
        r"is invalid: |(?:Required|Invalid|Unsupported|Duplicate) value: ",
        JobSetVerdict.CREATE_REJECTED,
        "the API server's validation (HTTP 422)",
        "The object the controller tried to create is invalid; the field path in the message says which "
        "part of the template to fix.",
        VALIDATION_ORDER,
    ),
    _rule(
        "job-creation-failed",
        "child Job `{job}` could not be created",
        r'job "(?P<job>[^"]{1,253})" creation failed with error',
        JobSetVerdict.CREATE_REJECTED,
        "the API server, refusing a child Job the JobSet controller created",
        "The JobSet controller could not create child Job `{job}`; the error after `with error:` says who "
        "refused it.",
        CONTROLLER_ORDER,
    ),
    _rule(
        "other-webhook",
        "webhook `{webhook}` denied the request",
        r'admission webhook "(?P<webhook>[^"]{1,253})" denied the request',
        JobSetVerdict.CREATE_REJECTED,
        "a third-party admission webhook",
        "Webhook `{webhook}` (a policy engine such as Gatekeeper or Kyverno, or another operator) refused "
        "the object; its message says which policy.",
        OTHER_WEBHOOK_ORDER,
    ),
    _rule(
        "forbidden",
        "an admission plugin refused the object",
        r"is forbidden: ",
        JobSetVerdict.CREATE_REJECTED,
        "an admission plugin of the API server",
        "The API server refused the object (HTTP 403 from admission); the text after `forbidden:` names "
        "the plugin's reason.",
        ADMISSION_ORDER,
    ),
)


def rule(name: str) -> Rule:
    """The rule of that name (for explaining a cause seen in the objects rather than in a message)."""
    return next(r for r in RULES if r.name == name)


_CREATE_PREFIX = "Error creating: "
_EXCERPT = 600


def match(text: str) -> Match | None:
    """The first rule whose pattern occurs in `text`, or None."""
    if not isinstance(text, str):
        return None
    for rule in RULES:
        found = rule.pattern.search(text)
        if found:
            groups = {key: value for key, value in found.groupdict().items() if value is not None}
            return Match(rule, groups, text)
    return None


def excerpt(text: str) -> str:
    """The message as evidence: without the Job controller's `Error creating: ` prefix, on one line,
    at most a few hundred characters, with no backticks that would break a code span."""
    flat = " ".join(text.split()).replace("`", "'")
    flat = flat.removeprefix(_CREATE_PREFIX)
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 1] + "…"


def explain_message(text: str) -> Diagnosis:
    """The verdict a pasted admission error implies, and the webhook order behind it, offline. A pasted
    scheduler message is no admission error: it points to `/triage` for the pod it is about."""
    if _SCHEDULER.search(text):
        return _scheduled(text)
    found = match(text)
    if found is None:
        return _unknown(text)
    rule = found.rule
    evidence = (
        f"Message: `{excerpt(text)}`",
        f"Rejected by {rule.source}"
        + (f"; the message names webhook `{found.webhook}`." if found.webhook else "."),
        found.meaning,
        *rule.order,
    )
    return Diagnosis(
        verdict=rule.verdict,
        summary=f"{rule.verdict}: {found.headline}.",
        evidence=evidence,
        next_commands=offline_commands(found),
    )


def offline_commands(found: Match) -> tuple[Command, ...]:
    """What to run next when only the message is known: cluster-wide reads that find the objects it
    speaks of."""
    verdict = found.rule.verdict
    groups = found.groups
    if verdict is JobSetVerdict.WEBHOOK_UNAVAILABLE:
        namespace, _ = found.service
        return collect(*kubectl.webhook_pods(namespace or kubectl.JOBSET_SYSTEM))
    if verdict is JobSetVerdict.LEADER_DUPLICATE:
        return collect(kubectl.leaders_everywhere("Failed"), kubectl.failed_creates_everywhere())
    if verdict is JobSetVerdict.LEADER_PENDING:
        return collect(kubectl.leaders_everywhere("Pending"), kubectl.failed_creates_everywhere())
    if verdict is JobSetVerdict.TOPOLOGY_LABEL_MISSING:
        return collect(
            kubectl.nodes_with_label(groups.get("key", "")),
            kubectl.bound_pods(groups.get("node", "")),
            kubectl.failed_creates_everywhere(),
        )
    return collect(
        kubectl.quota_everywhere(groups.get("quota", "")),
        kubectl.runtimeclasses() if "runtimeclass" in groups else None,
        kubectl.jobset_version() if found.rule.name == "jobset-spec" else None,
        kubectl.failed_creates_everywhere(),
    )


_SCHEDULER = re.compile(r"\b\d+/\d+ nodes are available")
"""The scheduler's `FailedScheduling` text (kube-scheduler `framework.FitError`)."""


def _scheduled(text: str) -> Diagnosis:
    return Diagnosis(
        verdict=JobSetVerdict.UNKNOWN,
        summary="unknown: this is the scheduler's message about a pod it cannot place, not an admission "
        "error; ask `/triage NAMESPACE POD` (or `kubewhy triage NAMESPACE POD`) about that pod.",
        evidence=(
            f"Message: `{excerpt(text)}`",
            "The scheduler writes `0/N nodes are available: …` on a pod it could not place (its PodScheduled "
            "condition and a FailedScheduling event). The pod exists: /triage reads it and its nodes and "
            "names the one cause, where this message lists only the first filter each node failed.",
        ),
        next_commands=collect(kubectl.pending_everywhere()),
    )


def _unknown(text: str) -> Diagnosis:
    return Diagnosis(
        verdict=JobSetVerdict.UNKNOWN,
        summary="unknown: this is not an admission error kubewhy knows; the commands below find more.",
        evidence=(
            f"Message: `{excerpt(text)}`" if text.strip() else "Message: (empty)",
            "It matches none of the JobSet webhook, webhook-call, quota, RuntimeClass, LimitRange or "
            "validation errors kubewhy knows.",
        ),
        next_commands=collect(
            kubectl.failed_creates_everywhere(),
            kubectl.jobsets_everywhere(),
            *kubectl.webhook_pods(kubectl.JOBSET_SYSTEM),
        ),
    )
