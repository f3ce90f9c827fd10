"""Prometheus metrics of one bot, in its own registry (no process-global state): questions by command
and verdict, how long answers take, and API errors by kind."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest


class Metrics:
    CONTENT_TYPE = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter(
            "kubewhy_commands",
            "Questions answered, by command and verdict.",
            ["command", "verdict"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kubewhy_answer_seconds",
            "From the request to the answer posted, by command.",
            ["command"],
            registry=self.registry,
            buckets=(0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30),
        )
        self.api_errors = Counter(
            "kubewhy_api_errors",
            "Errors from the Kubernetes API and Slack's Web API, by kind.",
            ["kind"],
            registry=self.registry,
        )

    def answered(self, command: str, verdict: str, seconds: float) -> None:
        self.commands.labels(command=command, verdict=verdict).inc()
        self.latency.labels(command=command).observe(seconds)

    def api_error(self, kind: str) -> None:
        self.api_errors.labels(kind=kind).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
