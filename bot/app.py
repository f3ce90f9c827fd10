"""The Slack app: its Web API client, its dependencies, and the bolt AsyncApp with every listener
registered explicitly.

The names registered here and the Web API methods called are listed once below, so the Slack app
manifest (deploy/) can be checked against the code.
"""

from __future__ import annotations

import logging

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot import blocks, incident_message
from bot.access import Access
from bot.answers import Poster
from bot.checks import Checker
from bot.clusters import Clusters
from bot.edge import Inflight, SeenRequests
from bot.listeners import Deps, Listeners
from bot.metrics import Metrics
from bot.sentinel import Sentinel
from bot.settings import Config
from bot.threads import Watches

COMMANDS = ("/triage", "/jobset", "/why")
SHORTCUT_CALLBACK_ID = "triage_with_kubewhy"
"""The message shortcut "Triage with kubewhy"."""
ACTION_IDS = (*blocks.ACTION_IDS, *incident_message.ACTION_IDS)
BOT_EVENTS = ("app_mention",)

WEB_API_METHODS = (
    "auth.test",  # start: fail fast on a refused token (bolt's AsyncApp would only try on the first request)
    "chat.postMessage",  # verdicts, their threads, follow-up lines
    "chat.update",  # a re-check or a watch shows the current verdict in the verdict message
    "chat.postEphemeral",  # answers and refusals for one person, where no response_url is at hand
    "conversations.replies",  # a follow-up reads its thread's verdict from message metadata
    "conversations.history",  # the sentinel reads its channels' incidents and silences back from metadata
    "usergroups.users.list",  # authorization by user group (allow.usergroups)
)
SOCKET_MODE_METHODS = ("apps.connections.open",)
"""Called with the app-level token (SLACK_APP_TOKEN) in Socket Mode."""

RATE_LIMIT_RETRIES = 3


def build_client(token: str, base_url: str, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """The Web API client, retrying a 429 after its Retry-After (not on by default in async slack_sdk)."""
    client = AsyncWebClient(token=token, base_url=base_url, session=session)
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES))
    return client


def assemble(config: Config, clusters: Clusters, client: AsyncWebClient) -> Deps:
    """Everything the listeners need, built once, inside the event loop that serves."""
    metrics = Metrics()
    metrics.track_caches(lambda: clusters.caches)
    poster = Poster(client)
    check = Checker(clusters, metrics, config.max_concurrent_checks)
    access = Access(config, client)
    return Deps(
        config=config,
        client=client,
        clusters=clusters,
        access=access,
        check=check,
        poster=poster,
        watches=Watches(poster, check, config.watch, client),
        metrics=metrics,
        seen=SeenRequests(),
        inflight=Inflight(),
        sentinel=Sentinel(config, clusters, check, poster, access, metrics),
    )


def build_app(deps: Deps, signing_secret: str) -> AsyncApp:
    """The bolt app: signature verification on, each listener registered by name."""
    app = AsyncApp(
        name="kubewhy",
        client=deps.client,
        signing_secret=signing_secret,
        logger=logging.getLogger("kubewhy.slack"),
    )
    listeners = Listeners(deps)
    app.use(listeners.edge)
    app.command(COMMANDS[0])(listeners.triage_command)
    app.command(COMMANDS[1])(listeners.jobset_command)
    app.command(COMMANDS[2])(listeners.why_command)
    app.event(BOT_EVENTS[0])(listeners.mention)
    app.action(blocks.RECHECK)(listeners.recheck_button)
    app.action(blocks.WATCH)(listeners.watch_button)
    app.action(blocks.DETAILS)(listeners.details_button)
    app.action(incident_message.RECHECK)(deps.sentinel.recheck)
    app.action(incident_message.ACKNOWLEDGE)(deps.sentinel.acknowledge)
    app.action(incident_message.SILENCE)(deps.sentinel.silence)
    app.message_shortcut(SHORTCUT_CALLBACK_ID)(listeners.shortcut)
    app.error(listeners.on_error)
    return app
