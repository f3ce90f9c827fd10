"""The JobSet explainer over the corpus: every snapshot of `tests/corpus/jobset/index.yaml` (and the
JobSet demo snapshots of `bot/demo/`) gives its verdict, `pod_verdict` and `cause`, and the evidence
names the objects that prove it.

The JobSetView is built here from the `kind: List` the way ARCHITECTURE.md says a reader builds it (the
JobSet, its Jobs and pods by label, the events about them, all nodes, the non-terminal bound pods, the
Workloads it owns), so these tests do not depend on the snapshot reader.
"""

from __future__ import annotations

import json
import shlex
from datetime import datetime
from functools import cache
from pathlib import Path

import pytest

from devtools.corpus import ROOT, Case, cases
from devtools.jobset_corpus.world import NOW
from diagnosis import events
from diagnosis.dra_objects import Dra
from diagnosis.gang import api_of, named_by
from diagnosis.jobset.explain import explain
from diagnosis.model import Diagnosis, JobSetVerdict, PodVerdict
from diagnosis.objects import Object, kind, labels, name, namespace
from diagnosis.relations import JOBSET_NAME_LABEL, holds_node, owned_by
from diagnosis.views import JobSetView

CASES = cases("jobset")


@cache
def _items(path: Path) -> tuple[Object, ...]:
    return tuple(json.loads(path.read_text())["items"])


def view_of(items: tuple[Object, ...], ns: str, jobset_name: str, now: datetime = NOW) -> JobSetView:
    jobset = next(o for o in items if kind(o) == "JobSet" and namespace(o) == ns and name(o) == jobset_name)

    def mine(obj: Object) -> bool:
        return namespace(obj) == ns and labels(obj).get(JOBSET_NAME_LABEL) == jobset_name

    jobs = tuple(o for o in items if kind(o) == "Job" and mine(o))
    pods = tuple(o for o in items if kind(o) == "Pod" and mine(o))
    about = (jobset, *jobs, *pods)
    return JobSetView(
        jobset=jobset,
        jobs=jobs,
        pods=pods,
        events=tuple(e for e in items if kind(e) == "Event" and any(events.is_about(e, o) for o in about)),
        nodes=tuple(o for o in items if kind(o) == "Node"),
        bound_pods=tuple(o for o in items if kind(o) == "Pod" and holds_node(o)),
        workloads=tuple(o for o in items if kind(o) == "Workload" and owned_by(o, jobset)),
        now=now,
        podgroups=tuple(
            o for o in items if kind(o) == "PodGroup" and (api_of(o), namespace(o), name(o)) in named_by(pods)
        ),
        dra=Dra.of(items),
    )


def answer(case: Case) -> Diagnosis:
    return explain(view_of(_items(case.snapshot), case.namespace, case.name))


def test_every_verdict_has_two_cases_or_more() -> None:
    verdicts = [c.verdict for c in CASES]
    wanted = {
        "completed",
        "failed",
        "suspended",
        "webhook-unavailable",
        "leader-duplicate",
        "topology-label-missing",
        "leader-pending",
        "create-rejected",
        "restarting",
        "pods-pending",
        "starting",
        "running",
    }
    assert {v: verdicts.count(v) for v in wanted if verdicts.count(v) < 2} == {}
    causes = {c.cause for c in CASES if c.cause}
    assert causes == {"node-preemption", "node-failure", "pod-preemption", "app-failure", "unknown"}


def test_the_demo_snapshots_are_in_the_corpus() -> None:
    listed = {c.snapshot.name for c in CASES}
    for example in (
        "jobset-leader-pending-tpu.json",
        "jobset-preemption-restarts.json",
        "jobset-leader-duplicate.json",
    ):
        assert example in listed


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_verdict(case: Case) -> None:
    got = answer(case)
    assert (got.verdict, got.pod_verdict, got.cause) == (case.verdict, case.pod_verdict, case.cause)
    assert got.summary
    assert got.evidence
    assert got.next_commands


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_same_objects_same_answer(case: Case) -> None:
    first = answer(case)
    again = explain(view_of(tuple(json.loads(case.snapshot.read_text())["items"]), case.namespace, case.name))
    assert first == again


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_commands_are_single_quoted_kubectl_calls(case: Case) -> None:
    for command in answer(case).next_commands:
        argv = shlex.split(command.text)
        assert argv[0] == "kubectl"
        assert not {"|", ";", "&&", ">", "$("} & set(argv), command.text
        assert command.text == shlex.join(argv), command.text
        destructive = argv[1] in {
            "delete",
            "cordon",
            "drain",
            "patch",
            "uncordon",
            "label",
            "annotate",
            "scale",
        }
        assert command.changes == destructive, command.text


def _text(got: Diagnosis) -> str:
    return "\n".join((got.summary, *got.evidence, *(c.text for c in got.next_commands)))


EXPECTED = {
    # The leader is index 0 of the follower's OWN child Job (slice-1), its scheduler message is quoted,
    # the masked message is quoted and the webhook order is told as a chain.
    "jobset-leader-pending-tpu": (
        "leader maxtext-v5e-slice-1-0-",
        "missing selector: cloud.google.com/gke-nodepool",
        "8 Insufficient google.com/tpu",
        "`mpod.kb.io` finds it unscheduled and adds no nodeSelector",
        "`vpod.kb.io` checks the selector before the leader",
        "capacity short",
        "kubectl describe pod maxtext-v5e-slice-1-0-",
        "kubectl get events -n llm --field-selector involvedObject.name=maxtext-v5e-slice-1",
        "PR #1188",
    ),
    "leader-pending-taint": (
        "follower pod node selector not set",
        "sku=gpu:NoSchedule",
        "vit-huge-trainer-1",
    ),
    "leader-pending-expired-events": (
        "no FailedCreate event is left",
        "rl-rollout-actor-0-0-",
        "nvidia-h100-80gb",
    ),
    "jobset-leader-duplicate": (
        "llm-pretrain-slice-1 has 2 leader pods",
        "ended by TerminationByKubelet",
        "but got 2",
        "PR #1276",
        "v0.12.0",
    ),
    "leader-duplicate-gpu": ("validate--v1-pod.x-k8s.io", "sd-train-workers-0 has 2 leader pods", "exited 1"),
    "topology-label-missing-event": (
        "cloud.google.com/gce-topology-block",
        "0 of the 4 nodes read have it",
        "mpod.kb.io",
    ),
    "topology-label-missing-node": (
        "topology.k8s.aws/network-node-layer-3",
        "ip-10-0-40-",
        "2 of the 4 nodes read have it",
    ),
    "webhook-unavailable-jobset": (
        "jobset-system/jobset-webhook-service",
        "jobset-controller-manager",
        "kubectl get pods -n jobset-system",
    ),
    "webhook-unavailable-kueue": (
        "kueue-system/kueue-webhook-service",
        "Kueue's webhook",
        "kubectl get pods -n kueue-system",
    ),
    "create-rejected-quota": (
        "ResourceQuota `gpu-quota`",
        "kubectl describe resourcequota gpu-quota -n team-a",
    ),
    "create-rejected-runtimeclass": (
        "RuntimeClass `nvidia-cdi`",
        "kubectl get runtimeclasses",
        "mutating phase",
    ),
    "create-rejected-job-quota": (
        "child Job etl-shards-shard-3",
        "kubectl describe resourcequota job-count -n batch",
    ),
    "failed-no-policy": ("no failurePolicy", "resnet-train-workers-1", "exited 1", "BackoffLimitExceeded"),
    "failed-max-restarts": ("ReachedMaxRestarts", "maxRestarts 3", "OOMKilled"),
    "suspended-kueue": (
        "kueue.x-k8s.io/queue-name=tpu-queue",
        "48 more needed",
        "kubectl describe workloads.kueue.x-k8s.io jobset-gemma-tune-",
    ),
    "suspended-by-hand": ("set by hand", "kubectl patch jobsets.jobset.x-k8s.io sweep-lr"),
    "jobset-preemption-restarts": (
        "TerminationByKubelet",
        "imminent node shutdown",
        "cloud.google.com/gke-spot=true",
        "Remedy 1",
        "RestartingJobSet=True",
    ),
    "restarting-app-failure": (
        "Coordinator (spec.coordinator): pod bert-large-mlm-driver-0-0-",
        "kubectl logs bert-large-mlm-driver-0-0-",
        "--previous",
        "No RestartingJobSet condition: restarts show in status.restarts",
        "JobSet v0.12.0 and later set the RestartingJobSet condition",
    ),
    "restarting-node-failure": (
        "DeletionByTaintManager",
        "physical host h-",
        "stuck Terminating",
        "jobset#576",
        "kubectl cordon gke-ml-prod-a3-pool-",
        "Remedy 2",
    ),
    "restarting-pod-preemption": ("PreemptionByScheduler", "gpu-node-00.lab.internal"),
    "pods-pending-exhausted": ("sdxl-finetune-workers-0-0-", "free 0 < 2 asked"),
    "pods-pending-gated": ("kueue.x-k8s.io/topology",),
    "starting-in-order": ("rlhf-pipeline-policy-0", "StartupPolicyInProgress=True"),
    "starting-containers": ("ContainerCreating",),
    "running-after-restarts": ("restarted 2 times before", "JobsReady"),
}


@pytest.mark.parametrize("case", [c for c in CASES if c.snapshot.stem in EXPECTED], ids=lambda c: c.id)
def test_evidence_names_what_proves_it(case: Case) -> None:
    text = _text(answer(case))
    missing = [want for want in EXPECTED[case.snapshot.stem] if want not in text]
    assert missing == [], text


def test_restart_loops_on_gke_carry_the_workflow_queries() -> None:
    (case,) = [c for c in CASES if c.snapshot.stem == "jobset-preemption-restarts"]
    got = answer(case)
    queries = {s.language for s in got.snippets}
    assert queries == {"promql", "mql", "logging"}
    text = "\n".join(s.text for s in got.snippets)
    assert 'kube_jobset_restarts{jobset_name="llama3-70b-ft", cluster="ml-prod"}' in text
    # The last restart is the RestartingJobSet transition at 08:54:00: the window is 30 minutes either side.
    assert 'timestamp >= "2026-11-29T08:24:00Z" AND timestamp <= "2026-11-29T09:24:00Z"' in text
    assert "{cluster_name}" not in text
    assert "{start_time}" not in text


def test_restart_loops_off_gke_have_no_gke_queries() -> None:
    (case,) = [c for c in CASES if c.snapshot.stem == "restarting-pod-preemption"]
    assert answer(case).snippets == ()


def test_pod_verdict_speaks_the_new_funnel_words() -> None:
    """The same JobSet on nodes with GPUs to spare but no pod slot left (each already runs as many pods
    as its kubelet allows): its pending pods' triage, and so `pod_verdict`, is `node-resources`."""
    items = _items(ROOT / "tests/corpus/jobset/pods-pending-exhausted.json")
    roomy = []
    for obj in items:
        if kind(obj) == "Node":
            node_status = {**obj["status"]}
            for part in ("capacity", "allocatable"):
                node_status[part] = {**node_status[part], "nvidia.com/gpu": "64", "pods": "1"}
            obj = {**obj, "status": node_status}
        roomy.append(obj)
    found = explain(view_of(tuple(roomy), "ml-train", "sdxl-finetune"))
    assert (found.verdict, found.pod_verdict) == (JobSetVerdict.PODS_PENDING, PodVerdict.NODE_RESOURCES)


def _case(snapshot: str) -> Case:
    return next(c for c in CASES if c.snapshot.name == snapshot)


def test_failed_quotes_the_termination_message_and_shows_the_logs_first() -> None:
    found = answer(_case("failed-no-policy.json"))
    assert found.summary.endswith(
        'exited 1 (Error): "RuntimeError: CUDA error: an illegal memory access was encountered".'
    )
    assert found.next_commands[0].text == "kubectl logs resnet-train-workers-1-0-7jcbw -n vision -c pytorch"


def test_an_app_failure_loop_quotes_the_last_line_of_the_crash_and_shows_the_logs_first() -> None:
    found = answer(_case("restarting-app-failure.json"))
    quote = "\"…OSError: Can't load tokenizer for 'bert-large-uncased-mlm'. Make sure the name is right.\""
    # The cause line quotes the crash as far as it fits; the evidence quotes it whole.
    assert found.summary.startswith(
        "JobSet bert-large-mlm keeps restarting (restarts 2 of maxRestarts 5): `trainer` exited 1 (Error), "
        "restarted 2×: \"…OSError: Can't load tokenizer"
    )
    assert any(quote in line for line in found.evidence)
    assert found.next_commands[0].text.startswith("kubectl logs bert-large-mlm-driver-0-0-")
    assert found.next_commands[0].text.endswith(" -n nlp -c trainer --previous")
