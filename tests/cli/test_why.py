"""`kubewhy lws why NS NAME` and `kubewhy why NS [KIND/]NAME`, run for real: the verdict and the JSON
`target` (its `kind` lower case, the owner the name names), and the exit statuses of a name no object
bears (1), several objects bear (2) or a kind kubewhy does not know (2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.corpus import CORPUS
from tests.cli.test_cli import kubewhy, one_line

LWS = CORPUS / "lws"


def answer(*args: str) -> dict[str, Any]:
    done = kubewhy(*args, "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_lws_why_gives_the_verdict_and_the_blocking_pods_triage() -> None:
    got = answer("lws", "why", "serving", "llama-405b", "--snapshot", str(LWS / "partial-groups.json"))
    assert (got["verdict"], got["pod_verdict"]) == ("partial-groups", "exhausted")
    assert got["target"] == {"kind": "leaderworkerset", "namespace": "serving", "name": "llama-405b"}
    assert any(c.startswith("kubectl get statefulsets -n serving -l ") for c in got["next_commands"])


@pytest.mark.parametrize(
    ("name", "kind", "verdict"),
    [
        # The leader StatefulSet bears the LWS's name and is owned by it: the answer is the LWS's.
        ("llama-405b", "leaderworkerset", "running"),
        # The leader pod bears its worker StatefulSet's name and owns it: the answer is the pod's.
        ("llama-405b-0", "pod", "ok"),
        # Asked by kind: the StatefulSet, through the triage of its first pod.
        ("statefulset/llama-405b", "statefulset", "ok"),
        ("sts/llama-405b-1", "statefulset", "ok"),
    ],
)
def test_why_answers_about_the_owner_the_name_names(name: str, kind: str, verdict: str) -> None:
    got = answer("why", "serving", name, "--snapshot", str(LWS / "running-vllm.json"))
    target = got["target"]
    assert (target["kind"], target["name"], got["verdict"]) == (kind, name.split("/")[-1], verdict)
    if kind == "statefulset":
        assert got["pod_verdict"] == "ok"


def test_why_asks_which_when_two_owners_share_a_name(tmp_path: Path) -> None:
    items = [
        {"apiVersion": api, "kind": kind, "metadata": {"name": "web", "namespace": "ml", "uid": uid}}
        for api, kind, uid in (("apps/v1", "Deployment", "u-1"), ("batch/v1", "Job", "u-2"))
    ]
    snapshot = tmp_path / "two.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    done = kubewhy("why", "ml", "web", "--snapshot", str(snapshot))
    assert (done.returncode, done.stdout) == (2, "")
    assert "job/web" in one_line(done.stderr)
    assert "deployment/web" in done.stderr


def test_why_of_a_name_nothing_bears_is_not_found() -> None:
    done = kubewhy("why", "serving", "nothing-here", "--snapshot", str(LWS / "running-vllm.json"))
    assert (done.returncode, done.stdout) == (1, "")
    assert "nothing-here" in done.stderr


def test_why_refuses_an_unknown_kind() -> None:
    done = kubewhy("why", "serving", "cronjob/x", "--snapshot", str(LWS / "running-vllm.json"))
    assert (done.returncode, done.stdout) == (2, "")
    assert "unknown kind 'cronjob'" in done.stderr
