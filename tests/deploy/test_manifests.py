"""Each overlay renders with the real kubectl, every object passes the Kubernetes schema of the versions
we support, and the objects agree with each other and with the image: the pod runs restricted as the
image's user, on the image's port, with the one Slack token its mode needs, and only the traffic its
mode needs gets in."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from bot.settings import Settings, load_config, load_settings
from tests.deploy import dockerfile
from tests.deploy.rendered import DEPLOY, OVERLAYS, Object, container, env_names, pod_env, render, the

# The oldest Kubernetes minor we support and the newest kubernetes-validate ships schemas for.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
EXAMPLE_SECRET = DEPLOY / "base" / "slack-secret.example.yaml"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
# The token that selects each mode: `kubewhy serve` uses Socket Mode when SLACK_APP_TOKEN is set.
MODE_TOKEN = {"http": "SLACK_SIGNING_SECRET", "socket-mode": "SLACK_APP_TOKEN"}


def pod_spec(objects: tuple[Object, ...]) -> Object:
    spec: Object = the(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


def invalid(obj: Object, version: str) -> str | None:
    """Why the API server of `version` would reject `obj`, or None. Unknown fields are errors (strict)."""
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return f"{'.'.join(map(str, error.path))}: {error.message}"
    except kubernetes_validate.SchemaNotFoundError as error:
        return str(error.message)
    return None


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_rendered_object_is_valid(overlay: str, version: str) -> None:
    problems = {
        f"{obj['kind']}/{obj['metadata']['name']}": problem
        for obj in render(overlay)
        if (problem := invalid(obj, version))
    }
    assert problems == {}


def test_overlays_render_the_objects_of_their_mode() -> None:
    common = {
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
        "ConfigMap",
        "Deployment", "PodDisruptionBudget", "Service", "NetworkPolicy",
    }
    assert sorted(obj["kind"] for obj in render("http")) == sorted(common | {"Ingress"})
    assert sorted(obj["kind"] for obj in render("socket-mode")) == sorted(common)


def test_strict_validation_rejects_a_misspelt_field() -> None:
    """The control for the test above: the validator does look at nested fields."""
    deployment = copy.deepcopy(the(render("http"), "Deployment"))
    (bot,) = deployment["spec"]["template"]["spec"]["containers"]
    bot["securityContext"]["readOnlyRootFileSystem"] = True  # the field is readOnlyRootFilesystem
    assert invalid(deployment, KUBERNETES_VERSIONS[0]) is not None


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_objects_refer_to_each_other(overlay: str) -> None:
    objects = render(overlay)
    namespace = the(objects, "Namespace")["metadata"]["name"]
    assert {
        obj["metadata"].get("namespace") for obj in objects if obj["kind"] not in CLUSTER_SCOPED
    } == {namespace}

    pod = pod_spec(objects)
    account = the(objects, "ServiceAccount")["metadata"]["name"]
    assert pod["serviceAccountName"] == account
    binding = the(objects, "ClusterRoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": the(objects, "ClusterRole")["metadata"]["name"],
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]
    lease_binding = the(objects, "RoleBinding")
    assert lease_binding["roleRef"]["name"] == the(objects, "Role")["metadata"]["name"]
    assert lease_binding["subjects"] == binding["subjects"]

    labels = the(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    selector = the(objects, "Deployment")["spec"]["selector"]["matchLabels"]
    for chosen in (selector, the(objects, "Service")["spec"]["selector"],
                   the(objects, "NetworkPolicy")["spec"]["podSelector"]["matchLabels"],
                   the(objects, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"]):
        assert chosen.items() <= labels.items()

    (config_volume,) = (volume for volume in pod["volumes"] if "configMap" in volume)
    assert config_volume["configMap"]["name"] == the(objects, "ConfigMap")["metadata"]["name"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pod_runs_restricted_as_the_image_user(overlay: str) -> None:
    objects = render(overlay)
    namespace_labels = the(objects, "Namespace")["metadata"]["labels"]
    assert namespace_labels["pod-security.kubernetes.io/enforce"] == "restricted"

    uid, gid = dockerfile.user()
    assert uid != 0
    assert pod_spec(objects)["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": gid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert container(objects)["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_and_port_are_the_images(overlay: str) -> None:
    bot = container(render(overlay))
    (port,) = bot["ports"]
    assert port == {"name": "http", "containerPort": dockerfile.exposed_port(), "protocol": "TCP"}
    env = {var["name"]: var.get("value") for var in bot["env"]}
    assert env["KUBEWHY_PORT"] == str(port["containerPort"])
    assert bot["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert bot["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert bot["args"] == ["serve"]
    for bound in ("requests", "limits"):
        assert set(bot["resources"][bound]) == {"cpu", "memory"}
    repository, _, tag = bot["image"].rpartition(":")
    assert repository
    assert tag not in ("", "latest")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_mode_gets_the_bot_token_and_only_its_own_token(overlay: str) -> None:
    names = env_names(render(overlay))
    assert {"SLACK_BOT_TOKEN", MODE_TOKEN[overlay]} <= names
    assert names.isdisjoint(set(MODE_TOKEN.values()) - {MODE_TOKEN[overlay]})


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_bot_accepts_the_pods_environment_and_config(
    overlay: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot's own settings validation, given the environment and files the pod would have: every
    variable is one it reads, the mode is the overlay's, and the ConfigMap is a valid KUBEWHY_CONFIG
    that reads the cluster in-cluster."""
    objects = render(overlay)
    bot = container(objects)
    (mount,) = (m for m in bot["volumeMounts"] if m["name"] == "config")
    for key, text in the(objects, "ConfigMap")["data"].items():
        (tmp_path / key).write_text(text)

    env = pod_env(objects)
    assert {name.lower() for name in env} <= set(Settings.model_fields)
    in_pod = Path(env["KUBEWHY_CONFIG"])
    assert in_pod.parent == Path(mount["mountPath"])
    env["KUBEWHY_CONFIG"] = str(tmp_path / in_pod.name)
    for name in os.environ:
        if name.startswith(("SLACK_", "KUBEWHY_")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    settings = load_settings()
    assert settings.socket_mode == (overlay == "socket-mode")
    assert settings.kubewhy_port == bot["ports"][0]["containerPort"]
    config = load_config(settings.kubewhy_config)
    assert config.clusters[config.fallback_cluster].in_cluster


def test_example_secret_names_every_key_the_pod_reads_and_holds_no_value() -> None:
    secret = yaml.safe_load(EXAMPLE_SECRET.read_text())
    assert invalid(secret, KUBERNETES_VERSIONS[0]) is None
    assert set(secret["stringData"].values()) == {""}
    for overlay in OVERLAYS:
        objects = render(overlay)
        # `apply -k` would blank the real tokens if the example were one of the resources.
        assert "Secret" not in {obj["kind"] for obj in objects}
        assert secret["metadata"]["namespace"] == the(objects, "Namespace")["metadata"]["name"]
        refs = [var["valueFrom"]["secretKeyRef"] for var in container(objects)["env"] if "valueFrom" in var]
        assert refs
        for ref in refs:
            assert ref["name"] == secret["metadata"]["name"]
            assert ref["key"] in secret["stringData"]


def allowed_ports(rules: list[dict[str, Any]]) -> set[tuple[str, int | str]]:
    return {(port.get("protocol", "TCP"), port["port"]) for rule in rules for port in rule.get("ports", [])}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_egress_is_dns_the_api_server_and_https(overlay: str) -> None:
    policy = the(render(overlay), "NetworkPolicy")["spec"]
    assert "Egress" in policy["policyTypes"]
    assert all(rule.get("ports") for rule in policy["egress"])
    assert allowed_ports(policy["egress"]) == {("UDP", 53), ("TCP", 53), ("TCP", 443), ("TCP", 6443)}
    (dns,) = (rule for rule in policy["egress"] if ("UDP", 53) in allowed_ports([rule]))
    (peer,) = dns["to"]
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}


def test_socket_mode_admits_nothing_inbound() -> None:
    objects = render("socket-mode")
    policy = the(objects, "NetworkPolicy")["spec"]
    assert "Ingress" in policy["policyTypes"]
    assert policy.get("ingress", []) == []
    assert the(objects, "Service")["spec"]["type"] == "ClusterIP"


def test_http_mode_admits_only_the_ingress_controller_to_slack_events() -> None:
    objects = render("http")
    policy = the(objects, "NetworkPolicy")["spec"]
    (rule,) = policy["ingress"]
    assert allowed_ports([rule]) == {("TCP", container(objects)["ports"][0]["containerPort"])}
    assert rule["from"]
    assert all("namespaceSelector" in peer and "ipBlock" not in peer for peer in rule["from"])

    service = the(objects, "Service")
    (service_port,) = service["spec"]["ports"]
    assert service["spec"]["type"] == "ClusterIP"
    assert service_port["targetPort"] == container(objects)["ports"][0]["name"]

    ingress = the(objects, "Ingress")["spec"]
    routes = [
        (rule["host"], path["path"], path["pathType"], path["backend"]["service"])
        for rule in ingress["rules"]
        for path in rule["http"]["paths"]
    ]
    assert routes == [
        (
            "kubewhy.example.com",
            "/slack/events",
            "Exact",
            {"name": service["metadata"]["name"], "port": {"name": service_port["name"]}},
        )
    ]
    assert [host for tls in ingress["tls"] for host in tls["hosts"]] == ["kubewhy.example.com"]
