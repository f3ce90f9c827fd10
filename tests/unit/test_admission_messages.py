"""The pasted-message explainer: every error string of JobSet's pod webhooks (and the quota,
RuntimeClass, LimitRange and validation refusals of the API server's admission plugins) maps to its
verdict, and the explanation names the webhook or plugin that refused and where it stands in the
admission order. Anything else is `unknown`, with commands that find out more."""

from __future__ import annotations

import shlex

import pytest

from devtools.corpus import Case
from diagnosis.jobset import admission
from diagnosis.jobset.admission import explain_message
from diagnosis.jobset.explain import explain
from diagnosis.jobset.family import Family, Refusal
from diagnosis.model import JobSetVerdict
from tests.unit.test_jobset_corpus import CASES, _items, view_of

V = JobSetVerdict
NO_ENDPOINTS = (
    'Internal error occurred: failed calling webhook "{hook}": failed to call webhook: Post '
    '"https://{svc}.{ns}.svc:443/{path}?timeout=10s": no endpoints available for service "{svc}"'
)

MESSAGES = [
    # (message, verdict, the webhook or plugin the explanation must name)
    (
        'admission webhook "vpod.kb.io" denied the request: follower pod node selector not set',
        V.LEADER_PENDING,
        "vpod.kb.io",
    ),
    (
        'admission webhook "validate--v1-pod.x-k8s.io" denied the request: follower pod node '
        "selector not set",
        V.LEADER_PENDING,
        "validate--v1-pod.x-k8s.io",
    ),
    (
        'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node '
        "selector for topology domain "
        "not found. missing selector: cloud.google.com/gke-nodepool",
        V.LEADER_PENDING,
        "vpod.kb.io",
    ),
    (
        'admission webhook "validate--v1-pod.x-k8s.io" denied the request: follower pod node '
        "selector for topology domain "
        "not found. missing selector: cloud.google.com/gce-topology-block",
        V.LEADER_PENDING,
        "validate--v1-pod.x-k8s.io",
    ),
    (
        'admission webhook "vpod.kb.io" denied the request: leader pod not yet scheduled, not '
        "creating follower pod. this is "
        "an expected, transient error",
        V.LEADER_PENDING,
        "vpod.kb.io",
    ),
    (
        "expected 1 leader pod (llm-pretrain-slice-1-0), but got 0. this is an expected, transient error",
        V.LEADER_PENDING,
        "vpod.kb.io",
    ),
    (
        '"msg"="finding leader pod for follower" "error"="expected 1 leader pod '
        "(llm-pretrain-slice-1-0), but got 2. this "
        'is an expected, transient error"',
        V.LEADER_DUPLICATE,
        "vpod.kb.io",
    ),
    (
        'admission webhook "mpod.kb.io" denied the request: node does not have topology label: '
        "cloud.google.com/gce-topology-block",
        V.TOPOLOGY_LABEL_MISSING,
        "mpod.kb.io",
    ),
    (
        'admission webhook "mutate--v1-pod.x-k8s.io" denied the request: node does not have topology label: '
        "topology.kubernetes.io/zone",
        V.TOPOLOGY_LABEL_MISSING,
        "mutate--v1-pod.x-k8s.io",
    ),
    (
        'admission webhook "mpod.kb.io" denied the request: nodes '
        '"gke-ml-prod-a3-pool-3e8f1a7c-d7jk" not found',
        V.TOPOLOGY_LABEL_MISSING,
        "mpod.kb.io",
    ),
    (
        'admission webhook "vpod.kb.io" denied the request: follower pod owner UID (6c1a-11) != '
        "leader pod owner UID "
        "(9f2b-22)",
        V.LEADER_PENDING,
        "vpod.kb.io",
    ),
    (
        'admission webhook "vpod.kb.io" denied the request: follower pod has no owner reference',
        V.CREATE_REJECTED,
        "vpod.kb.io",
    ),
    (
        'admission webhook "vpod.kb.io" denied the request: leader pod "train-w-0-0-abcde" has '
        "no owner reference",
        V.CREATE_REJECTED,
        "vpod.kb.io",
    ),
    (
        'admission webhook "vpod.kb.io" denied the request: pod missing label: jobset.sigs.k8s.io/job-index',
        V.CREATE_REJECTED,
        "vpod.kb.io",
    ),
    (
        NO_ENDPOINTS.format(
            hook="mpod.kb.io", svc="jobset-webhook-service", ns="jobset-system", path="mutate--v1-pod"
        ),
        V.WEBHOOK_UNAVAILABLE,
        "jobset-webhook-service",
    ),
    (
        'failed calling webhook "mjobset.kb.io": failed to call webhook: Post '
        '"https://jobset-webhook-service.jobset-system.'
        'svc:443/mutate-jobset-x-k8s-io-v1alpha1-jobset?timeout=10s": no endpoints available for service '
        '"jobset-webhook-service"',
        V.WEBHOOK_UNAVAILABLE,
        "mjobset.kb.io",
    ),
    (
        NO_ENDPOINTS.format(
            hook="mjob.kb.io", svc="kueue-webhook-service", ns="kueue-system", path="mutate-batch-v1-job"
        ),
        V.WEBHOOK_UNAVAILABLE,
        "kueue-webhook-service",
    ),
    (
        'Internal error occurred: failed calling webhook "vpod.kb.io": failed to call webhook: '
        'Post "https://jobset-webhook-'
        'service.jobset-system.svc:443/validate--v1-pod?timeout=10s": dial tcp 10.96.14.2:443: '
        "connect: connection refused",
        V.WEBHOOK_UNAVAILABLE,
        "vpod.kb.io",
    ),
    (
        'admission webhook "vjobset.kb.io" denied the request: JobSet name is too long, job '
        "names generated for this JobSet "
        "will exceed 63 characters",
        V.CREATE_REJECTED,
        "vjobset.kb.io",
    ),
    (
        'admission webhook "validate-jobset-x-k8s-io-v1alpha2-jobset.x-k8s.io" denied the '
        "request: JobSet name is too long, "
        "pod names generated for this JobSet will exceed 63 characters",
        V.CREATE_REJECTED,
        "validate-jobset-x-k8s-io-v1alpha2-jobset.x-k8s.io",
    ),
    (
        ".spec.network.subdomain is too long, must be less than 63 characters",
        V.CREATE_REJECTED,
        "vjobset.kb.io",
    ),
    ("DependsOn can't be set for the first ReplicatedJob", V.CREATE_REJECTED, "vjobset.kb.io"),
    (
        "invalid job failure reason 'OOMKilled' in failure policy is not a recognized job failure reason",
        V.CREATE_REJECTED,
        "vjobset.kb.io",
    ),
    (
        "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled",
        V.CREATE_REJECTED,
        "vjobset.kb.io",
    ),
    (
        "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed "
        "when RestartJob feature gate "
        "is disabled",
        V.CREATE_REJECTED,
        "vjobset.kb.io",
    ),
    ("coordinator replicatedJob driver does not exist", V.CREATE_REJECTED, "vjobset.kb.io"),
    (
        'Error creating: pods "whisper-ft-workers-1-0-k7x2n" is forbidden: exceeded quota: '
        "gpu-quota, requested: "
        "requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=16, limited: requests.nvidia.com/gpu=16",
        V.CREATE_REJECTED,
        "ResourceQuota",
    ),
    (
        'Error creating: pods "hap-operator-kubernetes-ingress-crdjob-1-6nxxb" is forbidden: '
        "failed quota: ingress-stack: "
        "must specify limits.cpu for: crd; limits.memory for: crd",
        V.CREATE_REJECTED,
        "ResourceQuota",
    ),
    (
        'Error creating: pods "vllm-bench-server-0-0-" is forbidden: pod rejected: RuntimeClass '
        '"nvidia" not found',
        V.CREATE_REJECTED,
        "RuntimeClass",
    ),
    (
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        V.CREATE_REJECTED,
        "RuntimeClass",
    ),
    (
        'pods "train-0-0-x" is forbidden: maximum nvidia.com/gpu usage per Container is 1, but limit is 2',
        V.CREATE_REJECTED,
        "LimitRanger",
    ),
    (
        'job "train-workers-0" creation failed with error: Job.batch "train-workers-0" is '
        "invalid: spec.completions: "
        "Required value: when completion mode is Indexed",
        V.CREATE_REJECTED,
        "validation",
    ),
    (
        'job "etl-shards-shard-3" creation failed with error: the server was unable to return a '
        "response in the time "
        "allotted",
        V.CREATE_REJECTED,
        "JobSet controller",
    ),
    (
        'admission webhook "validation.gatekeeper.sh" denied the request: [gpu-limits] '
        "container trainer asks 8 GPUs",
        V.CREATE_REJECTED,
        "validation.gatekeeper.sh",
    ),
    (
        'pods "x-0-0-abcde" is forbidden: unable to validate against any pod security policy',
        V.CREATE_REJECTED,
        "admission plugin",
    ),
]


@pytest.mark.parametrize(("message", "verdict", "refuser"), MESSAGES, ids=[m[0][:60] for m in MESSAGES])
def test_message_gives_its_verdict_and_the_order_behind_it(
    message: str, verdict: JobSetVerdict, refuser: str
) -> None:
    got = explain_message(message)
    assert got.verdict == verdict
    explanation = "\n".join((got.summary, *got.evidence))
    assert refuser in explanation
    assert "Order" in explanation or "in order" in explanation
    assert got.next_commands
    for command in got.next_commands:
        assert shlex.split(command.text)[0] == "kubectl"
        assert not command.changes


def test_every_rule_of_the_table_is_reached() -> None:
    reached = {found.rule.name for m, _, _ in MESSAGES if (found := admission.match(m)) is not None}
    assert reached == {rule.name for rule in admission.RULES}


def test_pod_webhook_explanations_tell_the_check_order() -> None:
    got = explain_message(
        'admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
    )
    text = "\n".join(got.evidence)
    assert "selector checks come before the leader checks" in text
    assert "index 0 of the follower's own child Job" in text
    assert "PR #1188" in text


def test_kueue_webhook_is_told_apart_by_its_service() -> None:
    kueue = explain_message(MESSAGES[16][0])
    assert "kubectl get pods -n kueue-system -o wide" in [c.text for c in kueue.next_commands]
    jobset = explain_message(MESSAGES[14][0])
    assert "kubectl get pods -n jobset-system -o wide" in [c.text for c in jobset.next_commands]


def test_names_in_messages_reach_commands_only_when_valid() -> None:
    got = explain_message("exceeded quota: gpu-quota, requested: a=1, used: a=1, limited: a=1")
    assert "kubectl get resourcequotas -A --field-selector metadata.name=gpu-quota -o wide" in [
        c.text for c in got.next_commands
    ]
    hostile = explain_message("exceeded quota: $(reboot), requested: a=1, used: a=1, limited: a=1")
    assert hostile.verdict == V.CREATE_REJECTED
    assert all("reboot" not in c.text for c in hostile.next_commands)


@pytest.mark.parametrize(
    "message",
    [
        "",
        "   ",
        "Back-off restarting failed container trainer in pod x",
        "the cat sat on the mat",
        "\x00\x01`rm -rf /`",
    ],
)
def test_anything_else_is_unknown_with_commands_to_find_out(message: str) -> None:
    got = explain_message(message)
    assert got.verdict == V.UNKNOWN
    assert got.next_commands
    assert all(shlex.split(c.text)[0] == "kubectl" for c in got.next_commands)


def test_long_messages_are_cut_in_the_evidence() -> None:
    got = explain_message("follower pod node selector not set " + "x" * 5000)
    assert got.verdict == V.LEADER_PENDING
    assert max(len(line) for line in got.evidence) < 1000


def _refusals(case: Case) -> tuple[Refusal, ...]:
    return Family.of(view_of(_items(case.snapshot), case.namespace, case.name)).refusals


REFUSED = [
    c
    for c in CASES
    if c.verdict in ("webhook-unavailable", "create-rejected", "topology-label-missing") and _refusals(c)
]


def test_refusals_are_read_from_most_of_the_corpus() -> None:
    assert len(REFUSED) >= 6


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.id)
def test_live_and_pasted_messages_read_through_one_table(case: Case) -> None:
    """The refusal the live explainer saw, pasted, gives the same verdict offline."""
    view = view_of(_items(case.snapshot), case.namespace, case.name)
    assert explain_message(_refusals(case)[0].message).verdict == explain(view).verdict


def test_the_objects_decide_where_the_message_masks() -> None:
    """A duplicate leader's followers are refused with the same masked text as a pending leader's:
    pasted alone it reads `leader-pending`; with the objects it is `leader-duplicate`."""
    (case,) = [c for c in CASES if c.snapshot.stem == "jobset-leader-duplicate"]
    view = view_of(_items(case.snapshot), case.namespace, case.name)
    masked = Family.of(view).refusals[0].message
    assert explain_message(masked).verdict == V.LEADER_PENDING
    assert explain(view).verdict == V.LEADER_DUPLICATE
