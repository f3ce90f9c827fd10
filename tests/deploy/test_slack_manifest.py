"""The Slack app manifests declare what bot/app.py registers (commands, shortcut, events) and the bot
scopes its Web API calls need, no more; the HTTP one sends everything to the Ingress's path, and the
Socket Mode one is the same app without URLs."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bot import app
from tests.deploy.rendered import DEPLOY, Object, render, the

MANIFESTS = {
    "http": DEPLOY / "slack-app-manifest.yaml",
    "socket-mode": DEPLOY / "slack-app-manifest-socket.yaml",
}
EVENTS_PATH = "/slack/events"

# The bot-token scopes each Web API method needs, from "Required scopes" on Slack's page for it
# (https://docs.slack.dev/reference/methods/<method>). conversations.replies and .history need the
# history scope of each kind of conversation they read: the bot answers in public and private channels.
METHOD_SCOPES: dict[str, tuple[str, ...]] = {
    "auth.test": (),  # "No scope required"
    "chat.postMessage": ("chat:write",),
    "chat.update": ("chat:write",),
    "chat.postEphemeral": ("chat:write",),
    "conversations.replies": ("channels:history", "groups:history"),
    "conversations.history": ("channels:history", "groups:history"),
    "usergroups.users.list": ("usergroups:read",),
}
# The scope each bot event needs (https://docs.slack.dev/reference/events/app_mention).
EVENT_SCOPES = {"app_mention": ("app_mentions:read",)}
# Slash commands and shortcuts need `commands` (https://docs.slack.dev/reference/scopes/commands).
COMMAND_SCOPE = "commands"
# Called with the app-level token, whose scope is not a bot scope and cannot be set in a manifest
# (https://docs.slack.dev/reference/methods/apps.connections.open: connections:write).
APP_TOKEN_SCOPES = {"apps.connections.open": "connections:write"}


def manifest(mode: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(MANIFESTS[mode].read_text())
    return loaded


def urls(node: object) -> list[str]:
    """Every `url` and `request_url` value in the manifest."""
    if isinstance(node, dict):
        own = [value for key, value in node.items() if key in ("url", "request_url")]
        return own + [url for value in node.values() for url in urls(value)]
    if isinstance(node, list):
        return [url for item in node for url in urls(item)]
    return []


def without_urls(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: without_urls(value) for key, value in node.items() if key not in ("url", "request_url")}
    if isinstance(node, list):
        return [without_urls(item) for item in node]
    return node


def test_every_method_the_bot_calls_has_its_scopes_listed_here() -> None:
    """A new Web API call fails here until its scope is looked up and added to both manifests."""
    assert set(app.WEB_API_METHODS) == set(METHOD_SCOPES)
    assert set(app.SOCKET_MODE_METHODS) == set(APP_TOKEN_SCOPES)


@pytest.mark.parametrize("mode", MANIFESTS)
def test_bot_scopes_are_exactly_what_the_code_needs(mode: str) -> None:
    needed = {COMMAND_SCOPE}
    needed |= {scope for event in app.BOT_EVENTS for scope in EVENT_SCOPES[event]}
    needed |= {scope for method in app.WEB_API_METHODS for scope in METHOD_SCOPES[method]}
    scopes = manifest(mode)["oauth_config"]["scopes"]
    assert sorted(scopes["bot"]) == sorted(needed)
    assert set(scopes) == {"bot"}  # no user-token scopes: the bot acts as itself only


@pytest.mark.parametrize("mode", MANIFESTS)
def test_manifest_declares_what_the_app_registers(mode: str) -> None:
    features = manifest(mode)["features"]
    settings = manifest(mode)["settings"]
    commands = features["slash_commands"]
    assert [command["command"] for command in commands] == list(app.COMMANDS)
    for command in commands:
        assert command["description"]
        assert "NAMESPACE" in command["usage_hint"]
        # The bot parses the raw text (a pasted admission error, NS/POD); Slack must not rewrite it.
        assert command["should_escape"] is False
    (shortcut,) = features["shortcuts"]
    assert (shortcut["name"], shortcut["type"], shortcut["callback_id"]) == (
        "Triage with kubewhy", "message", app.SHORTCUT_CALLBACK_ID
    )
    assert settings["event_subscriptions"]["bot_events"] == list(app.BOT_EVENTS)
    # Buttons (app.ACTION_IDS) and the shortcut arrive as interactivity.
    assert app.ACTION_IDS
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is (mode == "socket-mode")


def test_http_manifest_sends_everything_to_the_ingress() -> None:
    ingress: Object = the(render("http"), "Ingress")
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["path"] == EVENTS_PATH
    expected = f"https://{rule['host']}{EVENTS_PATH}"
    found = urls(manifest("http"))
    # each slash command, the event subscription and interactivity
    assert len(found) == len(app.COMMANDS) + 2
    assert set(found) == {expected}


def test_socket_manifest_is_the_http_one_without_urls() -> None:
    socket = manifest("socket-mode")
    assert urls(socket) == []
    expected = without_urls(manifest("http"))
    expected["settings"]["socket_mode_enabled"] = True
    assert socket == expected
