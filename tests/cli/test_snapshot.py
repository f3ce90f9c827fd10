"""`kubewhy snapshot` run for real against the API simulator: it writes what the answer reads as a
snapshot file that answers as the cluster did, and keeps the CLI's exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

from devtools.apisim import serve
from tests.cli.test_cli import CLUSTER, ROOT, kubewhy

LWS_CASE = ROOT / "tests/corpus/lws/restarting-worker-crash.json"
TRAINJOB_CASE = ROOT / "tests/corpus/trainjob/gang-min-resources.json"


def test_a_pod_and_a_jobset_are_captured_and_answer_as_the_cluster(tmp_path: Path) -> None:
    pod, jobset = tmp_path / "pod.json", tmp_path / "jobset.json"
    with serve(CLUSTER) as sim:
        live = ("--kubeconfig", sim.kubeconfig, "--format", "json")
        asked = [("triage", "ml", "finetune-llama-0"), ("jobset", "why", "ml", "trainer")]
        answers = [json.loads(kubewhy(*question, *live).stdout) for question in asked]
        took_pod = kubewhy(
            "snapshot", "ml", "finetune-llama-0", "-o", str(pod), "--kubeconfig", sim.kubeconfig
        )
        took_jobset = kubewhy(
            "snapshot", "jobset", "ml", "trainer", "-o", str(jobset), "--kubeconfig", sim.kubeconfig
        )
    assert (took_pod.returncode, took_jobset.returncode) == (0, 0), took_pod.stderr + took_jobset.stderr
    assert took_pod.stdout.endswith(f"objects saved to {pod}\n")
    for question, path, expected in zip(asked, (pod, jobset), answers, strict=True):
        saved = json.loads(path.read_text())
        assert (saved["apiVersion"], saved["kind"]) == ("v1", "List")
        got = json.loads(kubewhy(*question, "--snapshot", str(path), "--format", "json").stdout)
        assert [got[k] for k in ("verdict", "summary")] == [expected[k] for k in ("verdict", "summary")]


def test_a_missing_pod_is_status_1_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "none.json"
    with serve(CLUSTER) as sim:
        done = kubewhy("snapshot", "ml", "no-such-pod", "-o", str(out), "--kubeconfig", sim.kubeconfig)
    assert done.returncode == 1
    assert done.stdout == ""
    assert not out.exists()


def test_a_bad_target_is_a_usage_error(tmp_path: Path) -> None:
    for words in (["ml"], ["pods", "ml", "x"], ["ML", "x"]):
        done = kubewhy("snapshot", *words, "-o", str(tmp_path / "x.json"))
        assert done.returncode == 2, words
        assert "Traceback" not in done.stderr


def test_an_lws_and_a_trainjob_by_its_name_are_captured_as_their_questions_read_them(tmp_path: Path) -> None:
    """`snapshot lws` saves what `lws why` reads; `snapshot why` what `why` reads (here a TrainJob,
    its runtime, PodGroup and JobSet): each file answers as the cluster did."""
    asked = [
        (LWS_CASE, ("lws", "why", "serving", "vllm-405b"), ("lws", "serving", "vllm-405b")),
        (
            TRAINJOB_CASE,
            ("why", "ml-train", "trainjob/mixtral-pretrain"),
            ("why", "ml-train", "trainjob/mixtral-pretrain"),
        ),
    ]
    for snapshot, question, form in asked:
        path = tmp_path / f"{form[0]}.json"
        with serve(snapshot) as sim:
            expected = json.loads(
                kubewhy(*question, "--kubeconfig", sim.kubeconfig, "--format", "json").stdout
            )
            took = kubewhy("snapshot", *form, "-o", str(path), "--kubeconfig", sim.kubeconfig)
        assert took.returncode == 0, took.stderr
        got = json.loads(kubewhy(*question, "--snapshot", str(path), "--format", "json").stdout)
        assert [got[k] for k in ("verdict", "summary")] == [expected[k] for k in ("verdict", "summary")]
