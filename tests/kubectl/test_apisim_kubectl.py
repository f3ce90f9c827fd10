"""Real kubectl 1.37 against the API simulator: discovery, server-side Tables (wide, label columns,
all namespaces), selectors, describe with the events of both APIs, logs, custom resources."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import botenv
from devtools.apisim import Simulator, serve
from tests.live.support import GPU_CLUSTER

pytestmark = pytest.mark.kubectl


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with serve(GPU_CLUSTER) as running:
        yield running


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def kubectl(sim: Simulator, home: Path, *args: str) -> str:
    done = botenv.kubectl(args, sim.kubeconfig, home)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()]


def test_get_pods_wide_in_all_namespaces(sim: Simulator, home: Path) -> None:
    header, *rows = _rows(kubectl(sim, home, "get", "pods", "-A", "-o", "wide"))
    assert header[:6] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "NODE" in header
    by_name = {row[1]: row for row in rows}
    assert by_name["vllm-llama3-8b-7d9f8b6c5-k2xjp"][:4] == [
        "ml-serve",
        "vllm-llama3-8b-7d9f8b6c5-k2xjp",
        "1/1",
        "Running",
    ]
    assert by_name["batch-infer-0-4tq8m"][3] == "SchedulingGated"
    assert by_name["sweep-lr-3e4-2-bk9vd"][3] == "Terminating"


def test_label_columns_and_selectors(sim: Simulator, home: Path) -> None:
    output = kubectl(
        sim,
        home,
        "get",
        "nodes",
        "-l",
        "cloud.google.com/gke-accelerator",
        "-L",
        "cloud.google.com/gke-accelerator",
    )
    header, *rows = _rows(output)
    assert header[-1] == "GKE-ACCELERATOR"
    assert sorted(row[-1] for row in rows) == ["nvidia-l4", "nvidia-tesla-a100", "nvidia-tesla-a100"]
    cordoned = _rows(kubectl(sim, home, "get", "node", "gke-ml-prod-cpu-pool-5b7e1c44-zz2w"))[1]
    assert cordoned[1] == "Ready,SchedulingDisabled"


def test_field_selector_in_all_namespaces(sim: Simulator, home: Path) -> None:
    output = kubectl(sim, home, "get", "pods", "-A", "--field-selector", "status.phase=Pending", "-o", "name")
    assert "pod/notebook-alice" in output.split()
    assert "pod/vllm-llama3-8b-7d9f8b6c5-k2xjp" not in output


def test_events_table_reads_both_apis(sim: Simulator, home: Path) -> None:
    core = kubectl(
        sim, home, "get", "events", "-n", "ml-train", "--field-selector", "involvedObject.name=notebook-alice"
    )
    assert "FailedScheduling" in core
    assert "pod/notebook-alice" in core
    new = kubectl(sim, home, "get", "events.v1.events.k8s.io", "-n", "ml-train", "-o", "name")
    assert len(new.split()) == len(
        _rows(kubectl(sim, home, "get", "events", "-n", "ml-train", "--no-headers"))
    )


def test_describe_pod_shows_its_events(sim: Simulator, home: Path) -> None:
    output = kubectl(sim, home, "describe", "pod", "notebook-alice", "-n", "ml-train")
    assert re.search(r"^Status:\s+Pending$", output, re.MULTILINE)
    assert "FailedScheduling" in output
    assert "untolerated taint {nvidia.com/gpu: present}" in output


def test_describe_node_lists_its_pods(sim: Simulator, home: Path) -> None:
    output = kubectl(sim, home, "describe", "node", "gke-ml-prod-a100-pool-3f9c2a1b-7xkq")
    assert "vllm-llama3-8b-7d9f8b6c5-k2xjp" in output
    assert "nvidia.com/gpu" in output


def test_custom_resources_and_short_names(sim: Simulator, home: Path) -> None:
    assert (
        _rows(kubectl(sim, home, "get", "jobsets.jobset.x-k8s.io", "-n", "ml-train"))[1][0] == "resnet-dist"
    )
    workloads = kubectl(sim, home, "get", "wl", "-n", "ml-train", "-o", "name").split()
    assert workloads == [
        "workload.kueue.x-k8s.io/job-nightly-eval-29411520-8f2a1",
        "workload.kueue.x-k8s.io/jobset-resnet-dist-3c8e1",
    ]
    assert "a100-cq" in kubectl(sim, home, "describe", "localqueue", "ml-train-queue", "-n", "ml-train")


def test_logs_of_a_running_container(sim: Simulator, home: Path) -> None:
    output = kubectl(sim, home, "logs", "vllm-llama3-8b-7d9f8b6c5-k2xjp", "-n", "ml-serve", "--tail=5")
    assert "simulated log of container main" in output


def test_api_resources_from_discovery(sim: Simulator, home: Path) -> None:
    names = {row[0] for row in _rows(kubectl(sim, home, "api-resources", "--no-headers"))}
    assert {"pods", "nodes", "events", "jobs", "jobsets", "workloads", "runtimeclasses"} <= names
