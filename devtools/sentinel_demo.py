"""`python -m devtools.sentinel_demo` (in `make demo`): an incident's life in the local Slack.

In-process, as `kubewhy ask` runs the Slack pipeline: an API simulator serves a one-node GPU pool (its
GPU held by a running pod), the local Slack answers the Web API, and the bot's own parts run the
sentinel under a Lease, with thresholds of seconds instead of minutes. A Deployment's pod goes pending,
is posted once its wait passes the threshold, changes verdict when the node is tainted, and is resolved
in place when it is placed. The channel is printed as Slack shows it after each step. Then a burst of
200 pending pods from 5 Deployments, all blocked by the same full node, gives one incident listing the
five.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp

from bot import blocks, incidents, sentinel
from bot.app import assemble, build_client
from bot.clusters import Clusters
from bot.localslack import BOT_ID, LocalSlack, Message
from bot.metrics import Metrics
from bot.settings import Config
from devtools.apisim import Simulator, serve
from devtools.workloads import NODE, gpu_node, gpu_pod, placed

CHANNEL = "C0ONCALL"
TOKEN = "xoxb-kubewhy-demo"
PENDING_SECONDS = 2.0
BURST = tuple(f"sweep-{i}" for i in range(5))
BURST_PODS = 200
HOLDER = "holder-7d9f8c6b5-00000"


def _incident(slack: LocalSlack) -> Message | None:
    found = [
        m
        for m in slack.channel_messages(CHANNEL)
        if (m.metadata or {}).get("event_type") == incidents.INCIDENT
    ]
    return found[0] if found else None


def _payload(message: Message) -> dict[str, Any]:
    found: dict[str, Any] = (message.metadata or {}).get("event_payload") or {}
    return found


def _delays(metrics: Metrics) -> tuple[float, int]:
    """The sum and count of the sentinel's own measure of the time from a pod's wait to its post."""
    total = metrics.registry.get_sample_value("kubewhy_sentinel_post_delay_seconds_sum") or 0.0
    count = metrics.registry.get_sample_value("kubewhy_sentinel_post_delay_seconds_count") or 0.0
    return total, int(count)


def _mean_delay(metrics: Metrics, total: float, count: int) -> float:
    """The mean post delay of the incidents posted since `(total, count)` was read."""
    now_total, now_count = _delays(metrics)
    return (now_total - total) / max(1, now_count - count)


def _burst(slack: LocalSlack) -> list[Message]:
    """Incidents of the burst, once one counts all of its pods and its thread is written (it is
    counted in the metrics by then)."""
    found = [
        m
        for m in slack.channel_messages(CHANNEL)
        if any(w.get("namespace") == "ml-burst" for w in _payload(m).get("workloads", []))
    ]
    done = any(_payload(m).get("pods") == BURST_PODS and _payload(m).get("thread_done") for m in found)
    return found if done else []


def _replies(slack: LocalSlack, saying: str) -> list[Message]:
    """The replies in the incident's thread whose first line says `saying`."""
    incident = _incident(slack)
    thread = slack.thread(CHANNEL, incident.ts) if incident is not None else []
    return [m for m in thread if saying in (_lines(m) or [""])[0]]


def _show(slack: LocalSlack, title: str) -> None:
    """The channel, and the first line of each reply in its threads."""
    sys.stdout.write(f"\n-- {title}\n")
    for message in slack.channel_messages(CHANNEL):
        sys.stdout.write("".join(f"{line}\n" for line in _lines(message)))
        for reply in slack.thread(CHANNEL, message.ts):
            first, *rest = _lines(reply) or [""]
            more = f" (+{len(rest)} lines)" if rest else ""
            sys.stdout.write(f"  │ {first}{more}\n")


def _lines(message: Message) -> list[str]:
    return (blocks.plain_text(message.blocks) if message.blocks else message.text).splitlines()


async def _until(slack: LocalSlack, predicate: Callable[[], object]) -> None:
    await asyncio.to_thread(slack.wait_for, predicate, 30)


async def _demo(slack: LocalSlack, sim: Simulator) -> None:
    config = Config.model_validate(
        {
            "clusters": {"gpu-pool": {"kubeconfig": sim.kubeconfig}},
            "channels": {
                CHANNEL: {
                    "namespaces": ["ml-training", "ml-burst"],
                    "sentinel": {"enabled": True, "pending_minutes": PENDING_SECONDS / 60},
                }
            },
            "sentinel": {"interval_seconds": 0.25},
            "lease": {
                "namespace": "kubewhy",
                "duration_seconds": 3,
                "renew_deadline_seconds": 2,
                "retry_seconds": 0.5,
            },
        }
    )
    clusters = Clusters.from_config(config)
    clusters.start()
    async with aiohttp.ClientSession() as session:
        deps = assemble(config, clusters, build_client(TOKEN, slack.api_url, session))
        deps.sentinel.bot_id = BOT_ID
        async with sentinel.running(config, clusters, deps.sentinel, deps.metrics, deps.watches):
            pod = sim.store.put(gpu_pod("ml-training", "trainer", 0))
            sys.stdout.write(
                f"A pod of Deployment ml-training/trainer asks for 1 GPU; the pool's only GPU is taken."
                f" The channel's threshold: {PENDING_SECONDS:g} s of waiting (pending_minutes).\n"
            )
            await _until(slack, lambda: _replies(slack, ""))  # its details, in its thread
            _show(slack, f"posted {_mean_delay(deps.metrics, 0.0, 0):.1f} s after the pod began to wait")

            tainted = gpu_node(NODE, 1)
            tainted["spec"]["taints"] = [
                {"key": "nvidia.com/gpu", "value": "maintenance", "effect": "NoSchedule"}
            ]
            sim.store.put(tainted)
            await _until(slack, lambda: _replies(slack, "The verdict changed"))
            _show(
                slack, "the node is tainted for maintenance: the verdict follows, in place and in the thread"
            )

            sim.store.put(gpu_node(NODE, 1))
            sim.store.delete("Pod", "ml-serving", HOLDER)
            sim.store.put(placed(pod))
            await _until(slack, lambda: _replies(slack, "Resolved"))
            _show(slack, "the taint is lifted, the holder ends and the pod takes its GPU: resolved in place")
            posts = len(slack.channel_messages(CHANNEL))
            sys.stdout.write(f"\n{posts} message in the channel for the whole incident.\n")

            before = _delays(deps.metrics)
            for index in range(BURST_PODS // len(BURST)):
                for deployment in BURST:
                    sim.store.put(gpu_pod("ml-burst", deployment, index))
            await _until(slack, lambda: _burst(slack))
            (burst,) = _burst(slack)
            sys.stdout.write(
                f"\nA burst of {BURST_PODS} pending pods from {len(BURST)} Deployments, all blocked by the"
                f" same full node: {len(_burst(slack))} incident listing"
                f" {len(_payload(burst)['workloads'])} workloads and counting their {BURST_PODS} pods,"
                f" posted {_mean_delay(deps.metrics, *before):.1f} s after the pods began to wait.\n"
            )
            _show(slack, "the burst: one incident for one cause")
    await clusters.aclose()


def main() -> None:
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubewhy"}},
        gpu_node(NODE, 1),
        gpu_pod("ml-serving", "holder", 0, node=NODE),
    ]
    with LocalSlack(bot_token=TOKEN) as slack, serve(objects, now=datetime.now(UTC)) as sim:
        asyncio.run(_demo(slack, sim))


if __name__ == "__main__":
    main()
