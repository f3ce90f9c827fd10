"""What goes wrong between kubewhy and the API server becomes a typed error that says what failed:
RBAC refusals name the resource, throttling and server errors are retried within a bound (honouring
Retry-After), and a cluster that cannot be read makes the CLI exit 3 with one line."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import certifi
import pytest
import yaml

from cluster.errors import ClusterError, Forbidden, NotFound, Unavailable
from cluster.live import LiveReader
from cluster.transport import Retry
from devtools.apisim import Faults, serve
from devtools.corpus import CORPUS
from diagnosis.model import PodVerdict
from diagnosis.triage.classify import classify
from tests.live.support import GPU_CLUSTER, live_reader

KUEUE_GATED = CORPUS / "triage" / "kueue-gated.json"

KUBEWHY = Path(sys.executable).with_name("kubewhy")
PENDING = ("ml-train", "llama-ft-0-x7k2p")
"""Pinned to the A100 pool: its triage reads the pod, its events, nodes and bound pods."""


async def test_rbac_refusal_of_nodes_names_nodes_at_cluster_scope() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.forbid("nodes", verb="list")
        async with live_reader(sim) as reader:
            with pytest.raises(Forbidden) as refused:
                await reader.triage_view(*PENDING)
    assert (refused.value.verb, refused.value.resource, refused.value.namespace, refused.value.group) == (
        "list",
        "nodes",
        None,
        "",
    )
    assert "cannot list nodes at cluster scope" in refused.value.message


async def test_a_refusal_of_events_leaves_them_out_with_a_line_saying_so() -> None:
    """Events only enrich the answer: the pod is still triaged, and the evidence says what is missing."""
    with serve(GPU_CLUSTER) as sim:
        sim.faults.forbid("events")
        async with live_reader(sim) as reader:
            view, _ = await reader.triage_view(*PENDING)
    assert view.events == ()
    assert view.notes == ("events: forbidden — grant list on events",)
    assert len(view.nodes) > 0


async def test_a_refusal_of_kueue_workloads_names_the_group_in_the_evidence() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.forbid("workloads")
        async with live_reader(sim) as reader:
            view = await reader.jobset_view("ml-train", "resnet-dist")
    assert view.workloads == ()
    assert view.notes == ("Kueue workloads: forbidden — grant list on workloads.kueue.x-k8s.io",)
    assert view.jobs != ()


async def test_without_kueue_a_jobset_has_no_workloads() -> None:
    with serve(GPU_CLUSTER, without=["kueue.x-k8s.io"]) as sim:
        async with live_reader(sim) as reader:
            view = await reader.jobset_view("ml-train", "resnet-dist")
    assert view.workloads == ()
    assert [r.path for r in sim.requests if r.resource == "workloads"] == [
        "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml-train/workloads"
    ]


async def test_server_errors_are_retried_then_answered() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(500, times=2)
        async with live_reader(sim) as reader:
            view, _ = await reader.triage_view(*PENDING)
            assert reader.stats.retries == 2
    assert view.pod["metadata"]["name"] == PENDING[1]


async def test_a_failing_server_is_given_up_after_the_bound() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(503, times=None)
        async with live_reader(sim) as reader:
            with pytest.raises(Unavailable) as down:
                await reader.ping()
    assert [r.path.rstrip("/") for r in sim.requests] == ["/version"] * Retry().attempts
    assert f"HTTP 503 Service Unavailable (after {Retry().attempts} tries)" in down.value.message
    assert "unable to handle the request" in down.value.message


async def test_throttling_waits_as_long_as_retry_after_asks() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.throttle(times=1, retry_after=1)
        async with live_reader(sim) as reader:
            await reader.ping()
    first, second = sim.requests
    assert second.at - first.at >= 1.0


async def test_a_retry_after_beyond_the_cap_is_not_waited_for() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.throttle(times=None, retry_after=600)
        async with live_reader(sim) as reader:
            with pytest.raises(Unavailable) as throttled:
                await reader.ping()
    assert len(sim.requests) == 1
    assert "HTTP 429 Too Many Requests (the server asked to retry after 600 s)" in throttled.value.message


async def test_a_dropped_connection_is_retried() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.drop(times=1)
        async with live_reader(sim) as reader:
            await reader.ping()
            assert reader.stats.retries == 1


async def test_connections_dropped_every_time_make_it_unavailable() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.drop(times=None)
        async with live_reader(sim) as reader:
            with pytest.raises(Unavailable, match="closed without an answer"):
                await reader.ping()
    assert len(sim.requests) == Retry().attempts


async def test_a_slow_server_times_out() -> None:
    with serve(GPU_CLUSTER, Faults(latency=1.0)) as sim:
        async with live_reader(sim, call_timeout=0.3) as reader:
            with pytest.raises(Unavailable, match=r"no answer within 0\.3 s \(timed out\)") as slow:
                await reader.triage_view(*PENDING)
    assert slow.value.server == sim.url


async def test_a_stopped_server_refuses_the_connection(tmp_path: Path) -> None:
    with serve(GPU_CLUSTER) as sim:
        url = sim.url
    reader = LiveReader.from_kubeconfig(str(_kubeconfig(tmp_path, url)), None)
    try:
        with pytest.raises(Unavailable, match="connection refused"):
            await reader.ping()
    finally:
        await reader.aclose()


async def test_an_unknown_host_fails_on_dns(tmp_path: Path) -> None:
    reader = LiveReader.from_kubeconfig(
        str(_kubeconfig(tmp_path, "http://kubewhy-no-such-host.invalid:6443")), None
    )
    try:
        with pytest.raises(Unavailable, match=r"does not resolve \(DNS\)"):
            await reader.ping()
    finally:
        await reader.aclose()


async def test_the_proxy_of_the_environment_is_used_for_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client takes its proxy from the environment, as kubectl does; kubewhy pins it once (the
    loaders' refresh hooks would make the client read the environment again before every call), and
    every call, the first and the next, still goes through it: here a proxy that is down."""
    for variable in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed.getsockname()[1]}")
    with serve(GPU_CLUSTER) as sim:
        reader = LiveReader.from_kubeconfig(str(_kubeconfig(tmp_path, sim.url)), None, timeout=1.0)
        try:
            for _ in range(2):
                with pytest.raises(Unavailable, match="proxy"):
                    await reader.ping()
        finally:
            await reader.aclose()
        assert sim.requests == []


async def test_tls_to_a_plain_http_server_fails_on_tls(tmp_path: Path) -> None:
    with serve(GPU_CLUSTER) as sim:
        config = _kubeconfig(tmp_path, sim.url.replace("http://", "https://"), insecure=True)
        reader = LiveReader.from_kubeconfig(str(config), None)
        try:
            with pytest.raises(Unavailable, match="TLS failed"):
                await reader.ping()
        finally:
            await reader.aclose()


async def test_response_bodies_are_cut_short_in_messages_and_in_the_chain() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(500, times=None, message="etcd: " + "x" * 5000)
        async with live_reader(sim) as reader:
            with pytest.raises(Unavailable) as down:
                await reader.ping()
    assert len(down.value.message) < 600
    assert len(str(down.value.__cause__)) < 2000


async def test_a_missing_pod_suggests_names_and_quotes_refused_creations() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with live_reader(sim) as reader:
            with pytest.raises(NotFound) as missing:
                await reader.triage_view("ml-train", "llama-ft-0")
    assert (missing.value.kind, missing.value.namespace, missing.value.name) == (
        "pod",
        "ml-train",
        "llama-ft-0",
    )
    assert missing.value.missing.similar[0] == "llama-ft-0-x7k2p"
    assert any("exceeded quota: ml-train-gpu" in r for r in missing.value.missing.rejections)
    names_list = [r for r in sim.requests if r.verb == "list" and r.resource == "pods"]
    assert [r.namespace for r in names_list] == ["ml-train"]
    assert "as=PartialObjectMetadataList" in names_list[0].accept


async def test_a_missing_jobset_suggests_jobsets() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with live_reader(sim) as reader:
            with pytest.raises(NotFound) as missing:
                await reader.jobset_view("ml-train", "resnet")
    assert missing.value.kind == "jobset"
    assert missing.value.missing.similar == ("resnet-dist",)


async def test_a_namespace_that_does_not_exist_is_said_with_the_closest_namespaces() -> None:
    with serve(GPU_CLUSTER) as sim:
        async with live_reader(sim) as reader:
            with pytest.raises(NotFound) as typo:
                await reader.triage_view("ml-trian", "llama-ft-0-x7k2p")
            with pytest.raises(NotFound) as there:
                await reader.jobset_view("ml-serve", "resnet-dist")
    assert typo.value.missing.namespaces == ("ml-train",)
    assert there.value.missing.namespaces is None  # ml-serve exists, it only has no JobSet


async def test_kubeconfig_from_the_environment_and_a_named_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(GPU_CLUSTER) as sim:
        config = _kubeconfig(tmp_path, "http://kubewhy-no-such-host.invalid", also={"apisim": sim.url})
        monkeypatch.setenv("KUBECONFIG", str(config))
        reader = LiveReader.from_kubeconfig(None, "apisim")
        try:
            await reader.ping()
        finally:
            await reader.aclose()
    assert [r.path.rstrip("/") for r in sim.requests] == ["/version"]


def test_a_missing_kubeconfig_is_named(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match=r"kubeconfig .*/absent does not exist"):
        LiveReader.from_kubeconfig(str(tmp_path / "absent"), None)


def test_an_unknown_context_is_named(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match=r"\(context staging\)"):
        LiveReader.from_kubeconfig(str(_kubeconfig(tmp_path, "http://127.0.0.1:1")), "staging")


def test_without_any_kubeconfig_it_falls_back_to_the_service_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ClusterError, match="not running in a cluster"):
        LiveReader.from_kubeconfig(None, None)


async def test_in_a_pod_it_reads_the_service_account_through_the_clients_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client's in-cluster loader (`kubernetes/config/incluster_config.py`, loaded by
    `cluster.kube` without the package's `__init__`) reads the ServiceAccount's token and CA, and the
    reader goes to the API server's service over TLS: the simulator answers in plain HTTP, so the
    handshake fails, named."""
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("service-account-token")
    shutil.copyfile(certifi.where(), ca)  # a CA bundle, as a pod mounts one
    monkeypatch.setattr("kubernetes.config.incluster_config.SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr("kubernetes.config.incluster_config.SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with serve(GPU_CLUSTER) as sim:
        host, port = sim.url.removeprefix("http://").rsplit(":", 1)
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
        reader = LiveReader.from_kubeconfig(None, None)
        try:
            with pytest.raises(Unavailable, match=f"https://{host}:{port}.*TLS failed"):
                await reader.ping()
        finally:
            await reader.aclose()
        assert sim.requests == []


# — the CLI over real HTTP —


def _kubewhy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KUBEWHY), *args], capture_output=True, text=True, timeout=60, check=False)


def test_cli_answers_from_a_live_cluster() -> None:
    with serve(GPU_CLUSTER) as sim:
        done = _kubewhy("triage", *PENDING, "--kubeconfig", sim.kubeconfig, "--format", "word")
    assert (done.returncode, done.stdout, done.stderr) == (0, "exhausted\n", "")


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (lambda f: f.forbid("nodes"), "forbidden: cannot list nodes at cluster scope"),
        (lambda f: f.forbid("pods", verb="get"), "forbidden: cannot get pods in namespace ml-train"),
        (lambda f: f.fail(503, times=None), "HTTP 503 Service Unavailable (after 3 tries)"),
        (lambda f: f.throttle(times=None, retry_after=120), "asked to retry after 120 s"),
        (lambda f: f.drop(times=None), "closed without an answer"),
    ],
    ids=["forbidden-nodes", "forbidden-get-pod", "503", "429", "dropped"],
)
def test_cli_exits_3_with_one_line_naming_what_failed(fault: Callable[[Faults], object], said: str) -> None:
    with serve(GPU_CLUSTER) as sim:
        fault(sim.faults)
        done = _kubewhy("triage", *PENDING, "--kubeconfig", sim.kubeconfig)
    assert done.returncode == 3
    assert done.stdout == ""
    assert said in done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def _kubeconfig(
    folder: Path, server: str, insecure: bool = False, also: dict[str, str] | None = None
) -> Path:
    """A kubeconfig whose current context `c` points at `server`; `also` adds contexts by name → URL."""
    servers = {"c": server, **(also or {})}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [
            {
                "name": n,
                "cluster": {"server": url, **({"insecure-skip-tls-verify": True} if insecure else {})},
            }
            for n, url in servers.items()
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in servers],
    }
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


async def test_a_refused_read_of_kueue_workloads_is_a_line_of_evidence() -> None:
    """The Workload says why Kueue holds a gated pod, but the verdict does not need it: a refused
    read still gives `gated`, with a line saying what could not be read."""
    with serve(KUEUE_GATED) as sim:
        sim.faults.forbid("workloads", verb="list")
        async with live_reader(sim) as reader:
            found = classify(*await reader.triage_view("team-a", "llm-sft-0-c7bjc"))
    assert found.verdict is PodVerdict.GATED
    unread = [e for e in found.evidence if e.startswith("Kueue Workloads of team-a: forbidden — ")]
    assert len(unread) == 1
    assert "workloads" in unread[0]
    assert not any(e.startswith("QuotaReserved") for e in found.evidence)
async def test_a_404_on_a_read_other_than_the_object_asked_about_is_an_unreadable_cluster() -> None:
    """Only the pod or JobSet asked about may be missing: a 404 on listing nodes is no `not-found`."""
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(404, times=None, resource="nodes")
        async with live_reader(sim) as reader:
            with pytest.raises(ClusterError, match=r"answered 404 for nodes — ") as unreadable:
                await reader.triage_view(*PENDING)
    assert not isinstance(unreadable.value, NotFound)


async def test_a_404_on_version_too_is_no_kubernetes_api() -> None:
    with serve(GPU_CLUSTER) as sim:
        sim.faults.fail(404, times=None)
        async with live_reader(sim) as reader:
            with pytest.raises(Unavailable, match="HTTP 404 on /version: this URL does not serve"):
                await reader.jobset_view("ml-train", "resnet-dist")
