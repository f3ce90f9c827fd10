"""The JobSet answers' fixes, checked by running the explainer on the changed objects; the restart
count against its limit; a pasted scheduler message; release facts kept in one dated table."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from devtools.corpus import ROOT, Case, cases
from diagnosis.jobset.admission import explain_message
from diagnosis.jobset.explain import explain
from diagnosis.model import Harm, JobSetVerdict, PodVerdict
from diagnosis.objects import Object, kind, name, namespace
from diagnosis.patch import merge_patch
from diagnosis.views import JobSetView
from tests.unit.test_jobset_corpus import _items, view_of

LADDER = list(JobSetVerdict)
CASES = {c.verdict: c for c in reversed(cases("jobset"))}


def _view(case: Case) -> JobSetView:
    return view_of(_items(case.snapshot), case.namespace, case.name)


def _without_pods(view: JobSetView, gone: set[tuple[str, str]]) -> JobSetView:
    def kept(pods: tuple[Object, ...]) -> tuple[Object, ...]:
        return tuple(p for p in pods if (namespace(p), name(p)) not in gone)

    return replace(view, pods=kept(view.pods), bound_pods=kept(view.bound_pods))


def _objects(case: Case) -> set[str]:
    items = _items(case.snapshot)
    return {f"node/{name(o)}" for o in items if kind(o) == "Node"} | {
        f"pod/{namespace(o)}/{name(o)}" for o in items if kind(o) == "Pod"
    }


@pytest.mark.parametrize(
    "case", [c for c in cases("jobset") if c.verdict == "leader-duplicate"], ids=lambda c: c.id
)
def test_deleting_the_failed_leader_moves_the_jobset_past_leader_duplicate(case: Case) -> None:
    view = _view(case)
    (fix,) = explain(view).fixes
    assert fix.pod_patch is None
    assert set(fix.objects) <= _objects(case)
    assert [c.text.split()[1] for c in fix.commands] == ["delete"] * len(fix.objects)
    gone = {tuple(o.split("/")[1:]) for o in fix.objects}
    after = explain(_without_pods(view, {(ns, pod) for ns, pod in gone}))
    assert LADDER.index(JobSetVerdict(after.verdict)) > LADDER.index(JobSetVerdict.LEADER_DUPLICATE)


@pytest.mark.parametrize(
    "case", [c for c in cases("jobset") if c.verdict == "topology-label-missing"], ids=lambda c: c.id
)
def test_labelling_the_leaders_node_moves_the_jobset_past_topology_label_missing(case: Case) -> None:
    view = _view(case)
    fixes = explain(view).fixes
    assert fixes
    for fix in fixes:
        assert set(fix.objects) <= _objects(case)
        labels: dict[str, dict[str, str]] = {}
        for command in fix.commands:  # kubectl label node NODE KEY=VALUE
            _, verb, _, node, pair = command.text.split()
            key, _, value = pair.partition("=")
            assert (verb, command.changes) == ("label", True)
            labels[node] = {key: value}
        assert {f"node/{n}" for n in labels} == set(fix.objects)
        labelled = tuple(
            merge_patch(n, {"metadata": {"labels": labels[name(n)]}}) if name(n) in labels else n
            for n in view.nodes
        )
        after = explain(replace(view, nodes=labelled))
        assert LADDER.index(JobSetVerdict(after.verdict)) > LADDER.index(JobSetVerdict.TOPOLOGY_LABEL_MISSING)
        # Where the followers then fit is the funnel's answer: nodes, or a summary that says none has room.
        assert fix.opens or "no node with room" in fix.summary


def test_the_pending_leader_brings_its_triage_fixes_holders_and_waiting_time() -> None:
    case = next(c for c in cases("jobset") if c.name == "maxtext-v5e")
    found = explain(_view(case))
    assert found.verdict is JobSetVerdict.LEADER_PENDING
    assert found.pending_since is not None
    own = [h for h in found.holders if h.own]
    assert [(h.kind, h.name, len(h.pods)) for h in own] == [("JobSet", "maxtext-v5e", 4)]
    others = [h for h in found.holders if not h.own]
    assert [(h.kind, h.namespace, h.name) for h in others] == [("StatefulSet", "serving", "gemma-serve")]
    assert found.fixes
    assert all("maxtext-v5e" not in " ".join(f.objects) for f in found.fixes)  # never its own pods


def test_restarting_says_how_many_of_its_restarts_it_used() -> None:
    found = explain(_view(CASES["restarting"]))
    assert found.verdict is JobSetVerdict.RESTARTING
    assert re.search(r"\(restarts \d+ of maxRestarts \d+", found.summary)


def _case(seed: str) -> Case:
    return next(c for c in cases("jobset") if c.snapshot.stem == seed)


@pytest.mark.parametrize(
    ("seed", "said", "logs"),
    [
        (
            "failed-no-policy",
            'fix what container pytorch of pod resnet-train-workers-1-0-7jcbw says: exit 1 "RuntimeError: '
            'CUDA error: an illegal memory access was encountered"',
            "kubectl logs resnet-train-workers-1-0-7jcbw -n vision -c pytorch",
        ),
        (
            "failed-max-restarts",
            "raise the memory limit of container trainer in the JobSet's template: it was OOMKilled "
            "(exit 137) in pod llama-pretrain-workers-0-0-8wrpj",
            "kubectl logs llama-pretrain-workers-0-0-8wrpj -n llm -c trainer",
        ),
        (
            "restarting-app-failure",
            "fix what container trainer of pod bert-large-mlm-driver-0-0-8pdhq says: exit 1 \"…OSError: "
            "Can't load tokenizer for 'bert-large-uncased-mlm'. Make sure the name is right.\"",
            "kubectl logs bert-large-mlm-driver-0-0-8pdhq -n nlp -c trainer --previous",
        ),
        (
            "starting-crashloop",
            "fix what container trainer of pod whisper-asr-workers-0-0-4d476 says: exit 1 \"torch."
            'AcceleratorError: CUDA error: no kernel image is available for execution on the dev…"',
            "kubectl logs whisper-asr-workers-0-0-4d476 -n speech -c trainer --previous",
        ),
    ],
)
def test_a_failing_container_is_fixed_from_what_it_said_its_log_first(
    seed: str, said: str, logs: str
) -> None:
    found = explain(_view(_case(seed)))
    (fix,) = found.fixes
    assert (fix.summary, fix.commands[0].text, fix.commands[0].changes) == (said, logs, False)
    assert len(fix.summary) < 200
    assert found.next_commands[0].text == logs


def test_a_node_failure_is_fixed_by_taking_the_node_out_of_service_not_from_a_log() -> None:
    found = explain(_view(_case("restarting-node-failure")))
    (fix,) = found.fixes
    node = "gke-ml-prod-a3-pool-3e8f1a7c-k22b"
    assert fix.summary.startswith(f"take node {node} out of service")
    assert [c.text for c in fix.commands] == [
        f"kubectl cordon {node}",
        f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data",
    ]
    assert (fix.objects, fix.harm) == ((f"node/{node}",), Harm.OTHERS)
    assert found.next_commands[:2] == fix.commands
    assert not any(c.text.startswith("kubectl logs") for c in found.next_commands)


def test_a_jobset_whose_image_cannot_be_pulled_gets_its_pods_triage_fix() -> None:
    found = explain(_view(_case("starting-image-pull")))
    assert found.summary.endswith("does not start: container trainer ImagePullBackOff.")
    (fix,) = found.fixes
    assert fix.summary.startswith("check the image name and its pull secret: container trainer cannot pull ")


@pytest.mark.parametrize(
    ("seed", "said", "first"),
    [
        (
            "webhook-unavailable-jobset",
            "get a pod of the JobSet controller in jobset-system Ready, so that service "
            "jobset-webhook-service has an endpoint: the refused creates are then retried on their own",
            "kubectl get endpoints -n jobset-system -o wide",
        ),
        (
            "create-rejected-quota",
            "free ResourceQuota gpu-quota (end other workloads of the namespace) or raise its limit: "
            "requested requests.nvidia.com/gpu=8, used requests.nvidia.com/gpu=16, limited "
            "requests.nvidia.com/gpu=16",
            "kubectl describe resourcequota gpu-quota -n team-a",
        ),
        (
            "create-rejected-runtimeclass",
            "name a RuntimeClass that exists in the JobSet's template, or create nvidia-cdi (the GPU "
            "Operator's container toolkit makes the NVIDIA ones)",
            "kubectl get runtimeclasses",
        ),
    ],
)
def test_a_refused_create_is_fixed_where_the_refusal_points(seed: str, said: str, first: str) -> None:
    (fix,) = explain(_view(_case(seed))).fixes
    assert (fix.summary, fix.commands[0].text) == (said, first)
    assert not any(c.changes for c in fix.commands)


def test_a_pasted_scheduler_message_points_to_triage() -> None:
    found = explain_message(
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert found.verdict is JobSetVerdict.UNKNOWN
    assert "/triage NAMESPACE POD" in found.summary
    assert not any("webhook" in line.lower() for line in found.evidence)


def test_the_webhook_order_is_told_only_where_it_applies() -> None:
    unknown = explain_message("something else entirely went wrong")
    assert not any(line.startswith("Webhook order") for line in unknown.evidence)
    masked = explain_message(
        'admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
    )
    assert any(line.startswith("Webhook order") for line in masked.evidence)


RELEASE_FACT = re.compile(r"v0\.\d+\.\d+|PR #\d+|release-0\.\d+")


def test_release_facts_live_in_the_dated_table_only() -> None:
    sources = [p for p in (ROOT / "diagnosis").rglob("*.py") if p.name != "upstream.py"]
    found = {
        str(p.relative_to(ROOT)): RELEASE_FACT.findall(p.read_text())
        for p in sources
        if RELEASE_FACT.search(p.read_text())
    }
    assert found == {}



def test_a_multi_host_slice_is_given_a_whole_free_domain_first() -> None:
    """One free host lets the leader start, not the slice: the first fix frees a whole node pool, and
    the funnel, run on the pods left, fits every pod of the child Job there."""
    case = next(c for c in cases("jobset") if c.name == "maxtext-v5e")
    view = _view(case)
    first = explain(view).fixes[0]
    assert first.summary.startswith(
        "free the topology domain cloud.google.com/gke-nodepool=tpu-v5e-pool-2 for the whole child Job "
        "maxtext-v5e-slice-1: end StatefulSet serving/gemma-serve (4 pods)"
    )
    assert set(first.objects) <= _objects(case)
    assert len(first.opens) == 4
    assert [c.text for c in first.commands] == [
        "kubectl scale statefulset gemma-serve -n serving --replicas=0"
    ]
    gone = {tuple(o.split("/")[1:]) for o in first.objects}
    after = explain(_without_pods(view, {(ns, pod) for ns, pod in gone}))
    # The leader is still Pending in the objects, but nothing blocks it any more.
    assert (after.verdict, after.pod_verdict) == (JobSetVerdict.LEADER_PENDING, PodVerdict.SCHEDULABLE)
