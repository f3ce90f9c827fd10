"""`kubewhy serve`: the bot, over HTTP (`/slack/events`) or Socket Mode, with `/healthz`, `/readyz` and
`/metrics` beside it. The event loop's lag is measured from inside while it serves (`bot.looplag`),
into `kubewhy_event_loop_lag_seconds` on /metrics.

Start fails fast with one clear line: a bad setting or config file (exit 2), a token Slack refuses
(exit 2), a port it cannot listen on (exit 2), Slack or a cluster's config unreadable (exit 3).
`/slack/events` is served through `bot.gate`, which checks the signature before bolt parses anything.
SIGTERM/SIGINT stop it cleanly: no new requests, answers in flight finished, every watch ended with a
line in its thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError

from bot import gate, looplag, sentinel
from bot.app import assemble, build_app, build_client
from bot.clusters import Clusters
from bot.listeners import Deps
from bot.settings import Config, Settings, SettingsError, load_config, load_settings
from cluster.errors import ClusterError

log = logging.getLogger("kubewhy")

EXIT_OK = 0
EXIT_CONFIG = 2
EXIT_UNREACHABLE = 3
DRAIN_SECONDS = 20.0
"""How long a shutdown waits for answers in flight and watches' last lines (Kubernetes gives 30 s)."""


def run() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = load_settings()
        config = load_config(settings.kubewhy_config)
    except SettingsError as error:
        return _fail(str(error), EXIT_CONFIG)
    _forget_secrets()
    return asyncio.run(_serve(settings, config))


SECRETS = frozenset({"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"})


def _forget_secrets() -> None:
    """Take the secrets out of the process's environment once they are read: bolt's AsyncApp takes
    SLACK_BOT_TOKEN as a token beside the client it is given and warns at every start "As you gave
    client as well, token will be unused." (`slack_bolt/app/async_app.py`), and a kubeconfig's exec
    credential plugin (`cluster.credentials`) would inherit them."""
    for variable in [v for v in os.environ if v.upper() in SECRETS]:
        del os.environ[variable]


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"kubewhy serve: {message}\n")
    return status


async def _serve(settings: Settings, config: Config) -> int:
    async with aiohttp.ClientSession() as session:
        client = build_client(settings.slack_bot_token.get_secret_value(), settings.api_url, session)
        try:
            identity = await client.auth_test()
        except SlackApiError as error:
            refused = error.response.get("error")
            return _fail(
                f"Slack refused SLACK_BOT_TOKEN ({refused}); copy the Bot User OAuth Token (xoxb-…)"
                " of the installed app",
                EXIT_CONFIG,
            )
        except (aiohttp.ClientError, OSError) as error:
            return _fail(f"cannot reach Slack's Web API at {settings.api_url}: {error}", EXIT_UNREACHABLE)
        log.info("signed in to Slack team %s as %s", identity.get("team"), identity.get("user"))
        try:
            clusters = Clusters.from_config(config)
        except ClusterError as error:
            return _fail(str(error), EXIT_UNREACHABLE)
        clusters.start()
        deps = assemble(config, clusters, client)
        deps.sentinel.bot_id = identity.get("bot_id")
        try:
            async with (
                looplag.watching(deps.metrics.loop_lagged),
                sentinel.running(config, clusters, deps.sentinel, deps.metrics, deps.watches),
            ):
                await _until_stopped(settings, deps)
        except SettingsError as error:
            return _fail(str(error), EXIT_CONFIG)
        finally:
            await clusters.aclose()
    return EXIT_OK


async def _until_stopped(settings: Settings, deps: Deps) -> None:
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    app = build_app(deps, secret)
    socket = (
        AsyncSocketModeHandler(app, settings.slack_app_token.get_secret_value())
        if settings.slack_app_token
        else None
    )
    web_app = web.Application()
    if not socket:
        web_app.add_routes([web.post("/slack/events", gate.slack_events(app, secret))])

    async def slack_ready() -> bool:
        return await socket.client.is_connected() if socket else True  # HTTP: auth.test passed at start

    web_app.add_routes(
        [
            web.get("/healthz", _healthz),
            web.get("/readyz", _readyz(slack_ready, deps)),
            web.get("/metrics", _metrics(deps)),
        ]
    )
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "0.0.0.0", settings.kubewhy_port)  # every interface: it serves in a pod
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        port = settings.kubewhy_port
        raise SettingsError(f"KUBEWHY_PORT {port}: cannot listen on it: {error.strerror}") from None
    if socket:
        await socket.connect_async()  # type: ignore[no-untyped-call]  # untyped in slack_bolt
    mode = "Socket Mode" if socket else f"HTTP on port {settings.kubewhy_port}"
    log.info("kubewhy is serving (%s)", mode)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()

    log.info("stopping: finishing answers in flight and ending watches")
    if socket:
        await socket.close_async()  # type: ignore[no-untyped-call]  # untyped in slack_bolt
    await site.stop()
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            await deps.inflight.drain()
            await deps.watches.close()
    except TimeoutError:
        log.warning("stopped with work still in flight after %g s", DRAIN_SECONDS)
    await runner.cleanup()
    log.info("stopped")


async def _healthz(request: web.Request) -> web.Response:
    """The process is up and serving."""
    return web.json_response({"status": "ok"})


def _readyz(
    slack_ready: Callable[[], Awaitable[bool]], deps: Deps
) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def readyz(request: web.Request) -> web.Response:
        """200 when Slack is connected, every cluster answers and no cache is on its first sync;
        else 503. The body names each cluster's state and each cache's (`ready`, `syncing`,
        `resyncing`, `stopped` or `off`): a cache that is not `ready` leaves its cluster read
        directly, and only a first sync holds readiness back (a rollout keeps the old replica, whose
        cache is warm, serving meanwhile)."""
        slack = await slack_ready()
        not_ready = await deps.clusters.not_ready()
        body: dict[str, object] = {
            "slack": "ok" if slack else "not connected",
            "clusters": {name: not_ready.get(name, "ok") for name in deps.clusters.names},
            "caches": deps.clusters.cache_states(),
        }
        status = 200 if slack and not not_ready else 503
        return web.Response(status=status, text=json.dumps(body), content_type="application/json")

    return readyz


def _metrics(deps: Deps) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def metrics(request: web.Request) -> web.Response:
        response = web.Response(body=deps.metrics.exposition())
        response.headers["Content-Type"] = deps.metrics.CONTENT_TYPE
        return response

    return metrics
