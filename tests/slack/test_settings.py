"""Settings and the config file: validated at start, a bad value stops `kubewhy serve` with one clear
line and no traceback, and a token Slack refuses stops it before it serves."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from bot.settings import Config, SettingsError, load_config
from devtools.botenv import KUBEWHY, bot_env, free_port, refused_port
from devtools.slack import DevSlack
from tests.slack.support import TOKEN, kubeconfig_for


def serve_fails(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(KUBEWHY), "serve"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "Traceback" not in done.stderr
    return done


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"SLACK_BOT_TOKEN": ""}, "kubewhy serve: SLACK_BOT_TOKEN is required"),
        ({"SLACK_BOT_TOKEN": "xoxp-user-token"}, "SLACK_BOT_TOKEN must be a bot token (xoxb-…)"),
        ({"SLACK_SIGNING_SECRET": ""}, "SLACK_SIGNING_SECRET is required in HTTP mode"),
        ({"SLACK_APP_TOKEN": "xoxb-not-an-app-token"}, "SLACK_APP_TOKEN must be an app-level token (xapp-…)"),
        ({"KUBEWHY_PORT": "http"}, "KUBEWHY_PORT Input should be a valid integer"),
        ({"KUBEWHY_PORT": "70000"}, "KUBEWHY_PORT Input should be less than or equal to 65535"),
        ({"KUBEWHY_SLACK_API_URL": "slack"}, "KUBEWHY_SLACK_API_URL Input should be a valid URL"),
        (
            {"KUBEWHY_CONFIG": "/nonexistent/kubewhy.yaml"},
            "KUBEWHY_CONFIG /nonexistent/kubewhy.yaml: No such file",
        ),
    ],
)
def test_a_bad_setting_stops_the_start_with_one_clear_line(change: dict[str, str], message: str) -> None:
    env = bot_env(DevSlack(bot_token=TOKEN), free_port(), None)
    env |= change
    done = serve_fails({k: v for k, v in env.items() if v})
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_refused_token_stops_the_start(tmp_path: Path) -> None:
    with DevSlack(bot_token="xoxb-the-right-one") as slack:
        env = bot_env(slack, free_port(), None) | {"SLACK_BOT_TOKEN": "xoxb-revoked"}
        done = serve_fails(env)
        assert [c.method for c in slack.calls] == ["auth.test"]
    assert done.returncode == 2
    assert "Slack refused SLACK_BOT_TOKEN (invalid_auth)" in done.stderr


def test_slack_unreachable_stops_the_start() -> None:
    env = bot_env(DevSlack(bot_token=TOKEN), free_port(), None)
    with refused_port() as nowhere:
        env["KUBEWHY_SLACK_API_URL"] = f"http://127.0.0.1:{nowhere}/api/"
        done = serve_fails(env)
    assert done.returncode == 3
    assert "cannot reach Slack's Web API at http://127.0.0.1:" in done.stderr


def test_an_unreadable_snapshot_cluster_stops_the_start(tmp_path: Path) -> None:
    config = tmp_path / "kubewhy.yaml"
    config.write_text(yaml.safe_dump({"clusters": {"demo": {"snapshot": "missing.json"}}}))
    with DevSlack(bot_token=TOKEN) as slack:
        done = serve_fails(bot_env(slack, free_port(), config))
    assert done.returncode == 3
    assert f"cannot read snapshot {tmp_path / 'missing.json'}" in done.stderr


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("clusters: [", "not valid YAML"),
        ("clustres: {}", "clustres: Extra inputs are not permitted"),
        ("clusters: {}", "clusters: name at least one cluster"),
        ("clusters: {a: {}, b: {}}", "default_cluster: required when there are several clusters"),
        ("clusters: {a: {}}\ndefault_cluster: b", "default_cluster: no cluster named 'b'"),
        ("channels: {'#oncall': {}}", "'#oncall' is not a channel ID"),
        ("channels: {C0A: {namespaces: [ML]}}", "'ML' is not a namespace name"),
        ("channels: {C0A: {cluster: prod}}", "channels.C0A.cluster: no cluster named 'prod'"),
        ("channels: {C0A: {clusters: []}}", "channels.C0A.clusters: Tuple should have at least 1 item"),
        ("allow: {users: [alice]}", "'alice' is not a user ID"),
        ("allow: {usergroups: [oncall]}", "'oncall' is not a user group ID"),
        ("clusters: {a: {snapshot: x.json, context: prod}}", "a snapshot cluster takes no kubeconfig"),
        ("clusters: {a: {in_cluster: true, kubeconfig: k}}", "an in_cluster cluster takes no kubeconfig"),
        ("watch: {interval_seconds: 0}", "watch.interval_seconds: Input should be greater than 0"),
        ("clusters: {a: {snapshot: x.json, cache: {enabled: true}}}", "a snapshot cluster takes no cache"),
        ("clusters: {a: {cache: {max_objects: 0}}}", "clusters.a.cache.max_objects: Input should be greater"),
        ("clusters: {a: {cache: {enable: true}}}", "clusters.a.cache.enable: Extra inputs are not permitted"),
        ("max_concurrent_checks: 0", "max_concurrent_checks: Input should be greater than or equal to 1"),
        ("channels: {C0A: {sentinel: {ignore: [stuck]}}}", "'stuck' is not a verdict word (allocatable"),
        ("channels: {C0A: {sentinel: {pending_minutes: 0}}}", "channels.C0A.sentinel.pending_minutes: Input"),
        ("channels: {C0A: {sentinel: {restarts: 0}}}", "channels.C0A.sentinel.restarts: Input should be"),
        ("channels: {C0A: {clusters: [prod]}}", "channels.C0A.clusters[0]: no cluster named 'prod'"),
        (
            "clusters: {a: {}, b: {}}\ndefault_cluster: a\nchannels: {C0A: {cluster: a, clusters: [b]}}",
            "channels.C0A.cluster: 'a' is not among its clusters",
        ),
        ("lease: {cluster: prod}", "lease.cluster: no cluster named 'prod'"),
        ("lease: {retry_seconds: 20}", "the lease needs retry_seconds < renew_deadline_seconds <"),
        (
            "clusters: {demo: {snapshot: x.json}}\nchannels: {C0A: {sentinel: {enabled: true}}}",
            "clusters.demo: the sentinel watches it or holds its Lease there, so it must be a live cluster",
        ),
    ],
)
def test_a_bad_config_file_names_the_key_and_the_problem(tmp_path: Path, config: str, message: str) -> None:
    path = tmp_path / "kubewhy.yaml"
    path.write_text(config)
    with pytest.raises(SettingsError) as refused:
        load_config(path)
    assert str(refused.value).startswith(f"KUBEWHY_CONFIG {path}")
    assert message in str(refused.value)


def test_the_sentinel_out_of_a_pod_needs_the_leases_namespace(tmp_path: Path) -> None:
    config = tmp_path / "kubewhy.yaml"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(kubeconfig_for(f"http://127.0.0.1:{free_port()}")))
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": {"prod": {"kubeconfig": str(kubeconfig)}},
                "channels": {"C0A": {"sentinel": {"enabled": True}}},
            }
        )
    )
    with DevSlack(bot_token=TOKEN) as slack:
        done = serve_fails(bot_env(slack, free_port(), config))
    assert done.returncode == 2
    assert "lease.namespace is required when kubewhy does not run in a pod" in done.stderr


def test_no_config_is_one_cluster_found_like_kubectl() -> None:
    config = load_config(None)
    assert list(config.clusters) == ["default"]
    assert config.fallback_cluster == "default"
    assert config.channel("C0ANY").namespaces is None
    assert not config.allow.channels


def test_the_cache_is_on_unless_a_cluster_opts_out(tmp_path: Path) -> None:
    path = tmp_path / "kubewhy.yaml"
    path.write_text(
        "clusters: {big: {in_cluster: true, cache: {max_objects: 500000}}, small: {cache: {enabled: false}},"
        " demo: {snapshot: lab.json}}\n"
        "default_cluster: big\n"
    )
    config = load_config(path)
    assert config.clusters["big"].cache.enabled
    assert config.clusters["big"].cache.max_objects == 500_000
    assert not config.clusters["small"].cache.enabled
    assert config.clusters["small"].cache.max_objects == 300_000
    # A snapshot has nothing to cache: the default does not make it an error, asking for one does.
    assert config.clusters["demo"].snapshot == tmp_path / "lab.json"


def test_an_in_cluster_cluster_may_name_the_context_people_reach_it_with(tmp_path: Path) -> None:
    """For its commands alone (tests/kubectl/test_commands.py pastes them): it is still read in-cluster."""
    path = tmp_path / "kubewhy.yaml"
    path.write_text("clusters: {gpu-prod: {in_cluster: true, context: gke_acme_us-central1_gpu-prod}}\n")
    cluster = load_config(path).clusters["gpu-prod"]
    assert (cluster.in_cluster, cluster.context) == (True, "gke_acme_us-central1_gpu-prod")


def test_paths_in_the_config_are_relative_to_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "kubewhy.yaml"
    path.parent.mkdir()
    path.write_text(
        "clusters: {demo: {snapshot: snaps/lab.json}, prod: {kubeconfig: /etc/kube/config}}\n"
        "default_cluster: prod\n"
    )
    config = load_config(path)
    assert config.clusters["demo"].snapshot == tmp_path / "conf" / "snaps" / "lab.json"
    assert config.clusters["prod"].kubeconfig == Path("/etc/kube/config")
    assert isinstance(config, Config)
