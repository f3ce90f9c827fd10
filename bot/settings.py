"""The bot's settings: the environment (secrets, port, Slack's URL) and the optional KUBEWHY_CONFIG file
(clusters, channel defaults, who may ask).

Both are validated at start, so a bad value stops `kubewhy serve` with one clear line (exit 2) rather
than a failure on the first command. Nothing is read at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Self

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from diagnosis.model import JobSetVerdict, LwsVerdict, PodVerdict
from handlers.requests import ClusterName, Namespace, ObjectName

SLACK_API_URL = "https://slack.com/api/"
MAX_CONFIG_BYTES = 2**20
"""A config file of a few hundred clusters and channels is tens of kilobytes."""


class SettingsError(Exception):
    """A setting or the config file is invalid; the message names which and why."""


class Settings(BaseSettings):
    """The environment of `kubewhy serve` (README, *Environment*)."""

    model_config = SettingsConfigDict(case_sensitive=False, env_ignore_empty=True, extra="ignore")

    slack_bot_token: SecretStr
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    """Set: Socket Mode. Unset: HTTP mode on KUBEWHY_PORT."""
    kubewhy_slack_api_url: HttpUrl = HttpUrl(SLACK_API_URL)
    kubewhy_port: int = Field(default=3000, ge=1, le=65535)
    kubewhy_config: Path | None = None

    @field_validator("slack_bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value().startswith("xoxb-"):
            raise ValueError("must be a bot token (xoxb-…) from OAuth & Permissions")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be an app-level token (xapp-…) with connections:write")
        return value

    @model_validator(mode="after")
    def _signing_secret_for_http(self) -> Self:
        if self.slack_app_token is None and self.slack_signing_secret is None:
            raise ValueError(
                "SLACK_SIGNING_SECRET is required in HTTP mode (Basic Information → Signing Secret);"
                " set SLACK_APP_TOKEN instead for Socket Mode"
            )
        return self

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None

    @property
    def api_url(self) -> str:
        """The Web API base URL with the trailing slash the client joins method names to."""
        url = str(self.kubewhy_slack_api_url)
        return url if url.endswith("/") else url + "/"


def _channel_id(value: str) -> str:
    if not (value[:1] in ("C", "G", "D") and value[1:].isalnum() and value.isupper()):
        raise ValueError(f"'{value}' is not a channel ID (C…, from the channel's details), not a name")
    return value


def _user_id(value: str) -> str:
    if not (value[:1] in ("U", "W") and value[1:].isalnum() and value.isupper()):
        raise ValueError(f"'{value}' is not a user ID (U… or W…, from the person's profile)")
    return value


def _usergroup_id(value: str) -> str:
    if not (value[:1] == "S" and value[1:].isalnum() and value.isupper()):
        raise ValueError(f"'{value}' is not a user group ID (S…)")
    return value


def _verdict_word(value: str) -> str:
    if value not in VERDICT_WORDS:
        raise ValueError(f"'{value}' is not a verdict word ({', '.join(sorted(VERDICT_WORDS))})")
    return value


VERDICT_WORDS = frozenset(PodVerdict) | frozenset(JobSetVerdict) | frozenset(LwsVerdict)
ChannelId = Annotated[str, AfterValidator(_channel_id)]
VerdictWord = Annotated[str, AfterValidator(_verdict_word)]
UserId = Annotated[str, AfterValidator(_user_id)]
UsergroupId = Annotated[str, AfterValidator(_usergroup_id)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CacheConfig(_Strict):
    """A watch-backed cache of the cluster's nodes and bound pods (`cluster.cache`): `/triage` then
    reads only the pod and its events from the API. On by default for every live cluster of `kubewhy
    serve`; `enabled: false` opts a cluster out (it is then read directly, as the CLI always does)."""

    enabled: bool = True
    max_objects: int = Field(default=300_000, gt=0)
    """Nodes plus bound pods; past it the cache stops and kubewhy reads the cluster directly."""


class ClusterConfig(_Strict):
    """One cluster: a kubeconfig (and context), the in-cluster service account, or a snapshot.

    With none of them, the kubeconfig is looked up as kubectl does (KUBECONFIG, ~/.kube/config), then
    in-cluster."""

    kubeconfig: Path | None = None
    context: str | None = None
    """The kubectl context people reach the cluster with, which the commands in answers name
    (`bot.clusters.kubectl_context`). A kubeconfig cluster is read through it too; an in-cluster
    cluster is read with its ServiceAccount, whatever it names."""
    in_cluster: bool = False
    snapshot: Path | None = None
    timeout: float = Field(default=5.0, gt=0, le=60)
    """Seconds for each API call."""
    cache: CacheConfig = CacheConfig()

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if self.snapshot is not None and (self.kubeconfig or self.context or self.in_cluster):
            raise ValueError("a snapshot cluster takes no kubeconfig, context or in_cluster")
        if self.in_cluster and self.kubeconfig:
            raise ValueError("an in_cluster cluster takes no kubeconfig")
        if self.snapshot is not None and self.cache.enabled and "enabled" in self.cache.model_fields_set:
            raise ValueError("a snapshot cluster takes no cache (a snapshot is read from memory already)")
        return self


class MentionConfig(_Strict):
    """Who the sentinel mentions: the Slack user group of a workload whose pods' label `label` has a
    value listed in `groups` (e.g. `{label: team, groups: {ml-infra: S0123ABCD}}`)."""

    label: str = Field(min_length=1, max_length=317)
    groups: dict[str, UsergroupId] = Field(min_length=1)


class SentinelConfig(_Strict):
    """The sentinel in one channel: kubewhy posts the stuck workloads of the channel's clusters and
    namespaces without being asked (`bot.sentinel`)."""

    enabled: bool = False
    pending_minutes: float = Field(default=10.0, gt=0)
    """How long an accelerator pod waits for a node before its workload is reported."""
    restarts: int = Field(default=3, ge=1)
    """JobSet restarts within `restarts_window_minutes` that make a restart loop worth reporting."""
    restarts_window_minutes: float = Field(default=60.0, gt=0)
    ignore: tuple[VerdictWord, ...] = ()
    """Verdicts never reported (the workload's, or its blocking pod's)."""
    max_posts_per_hour: int = Field(default=10, ge=1)
    """New incidents posted per hour at most; past it, one summary line counts the others."""
    mention: MentionConfig | None = None


class ChannelConfig(_Strict):
    cluster: ClusterName | None = None
    """The cluster asked when a command names none."""
    clusters: tuple[ClusterName, ...] | None = Field(default=None, min_length=1)
    """The clusters this channel may ask and its sentinel watches; unset: any may be asked, and the
    sentinel watches the channel's `cluster`."""
    ephemeral: bool = False
    """Answer only to the person who asked (no thread, no watch)."""
    namespaces: tuple[Namespace, ...] | None = None
    """The namespaces this channel may query; unset: all."""
    sentinel: SentinelConfig = SentinelConfig()


class AllowConfig(_Strict):
    """Who may ask. Each list that is set must be satisfied: the channel is listed, and the person is
    listed or in a listed user group."""

    channels: tuple[ChannelId, ...] = ()
    users: tuple[UserId, ...] = ()
    usergroups: tuple[UsergroupId, ...] = ()


class WatchConfig(_Strict):
    interval_seconds: float = Field(default=30.0, gt=0)
    max_minutes: float = Field(default=30.0, gt=0, le=24 * 60)


class LeaseConfig(_Strict):
    """The Lease (`coordination.k8s.io/v1`) under which one replica at a time runs the sentinel."""

    cluster: ClusterName | None = None
    """The cluster the bot runs in, where the Lease lives; unset: `default_cluster`."""
    namespace: Namespace | None = None
    """The bot's namespace; unset: the pod's own (its ServiceAccount's namespace file)."""
    name: ObjectName = "kubewhy"
    duration_seconds: float = Field(default=15.0, gt=0)
    renew_deadline_seconds: float = Field(default=10.0, gt=0)
    retry_seconds: float = Field(default=2.0, gt=0)

    @model_validator(mode="after")
    def _timings(self) -> Self:
        if not self.retry_seconds < self.renew_deadline_seconds < self.duration_seconds:
            raise ValueError("the lease needs retry_seconds < renew_deadline_seconds < duration_seconds")
        return self


class SentinelTiming(_Strict):
    interval_seconds: float = Field(default=15.0, gt=0)
    """How often the leader looks for stuck workloads, re-checks the open incidents and reads back
    the channels' state (incidents, silences) from Slack."""


class Config(_Strict):
    """The KUBEWHY_CONFIG file. Without one: a single cluster found like kubectl finds it, and every
    channel may query every namespace."""

    clusters: dict[ClusterName, ClusterConfig] = Field(default_factory=lambda: {"default": ClusterConfig()})
    default_cluster: ClusterName | None = None
    channels: dict[ChannelId, ChannelConfig] = Field(default_factory=dict)
    allow: AllowConfig = AllowConfig()
    watch: WatchConfig = WatchConfig()
    sentinel: SentinelTiming = SentinelTiming()
    lease: LeaseConfig = LeaseConfig()
    usergroup_cache_seconds: float = Field(default=300.0, ge=0)
    max_concurrent_checks: int = Field(default=4, ge=1, le=64)
    """Checks (reads and diagnoses) run at once; more wait, already acknowledged (`bot.checks`)."""

    @model_validator(mode="after")
    def _clusters_known(self) -> Self:
        if not self.clusters:
            raise ValueError("clusters: name at least one cluster")
        if self.default_cluster is None and len(self.clusters) > 1:
            raise ValueError("default_cluster: required when there are several clusters")
        named = {"default_cluster": self.default_cluster, "lease.cluster": self.lease.cluster}
        for channel, c in self.channels.items():
            named[f"channels.{channel}.cluster"] = c.cluster
            if c.clusters is not None and c.cluster is not None and c.cluster not in c.clusters:
                raise ValueError(f"channels.{channel}.cluster: '{c.cluster}' is not among its clusters")
            named |= {f"channels.{channel}.clusters[{i}]": name for i, name in enumerate(c.clusters or ())}
        for where, cluster in named.items():
            if cluster is not None and cluster not in self.clusters:
                raise ValueError(f"{where}: no cluster named '{cluster}' in clusters")
        if self.sentinel_channels:
            watched = {c for channel in self.sentinel_channels for c in self.watched_clusters(channel)}
            for cluster in sorted(watched | {self.lease.cluster or self.fallback_cluster}):
                if self.clusters[cluster].snapshot is not None:
                    raise ValueError(
                        f"clusters.{cluster}: the sentinel watches it or holds its Lease there, so it must be"
                        " a live cluster, not a snapshot"
                    )
        return self

    @property
    def fallback_cluster(self) -> str:
        return self.default_cluster or next(iter(self.clusters))

    def channel(self, channel_id: str) -> ChannelConfig:
        return self.channels.get(channel_id, ChannelConfig())

    def channel_cluster(self, channel_id: str) -> str:
        """The cluster a channel's command asks when it names none."""
        channel = self.channel(channel_id)
        return channel.cluster or (channel.clusters[0] if channel.clusters else self.fallback_cluster)

    def watched_clusters(self, channel_id: str) -> tuple[str, ...]:
        """The clusters a channel's sentinel watches."""
        return self.channel(channel_id).clusters or (self.channel_cluster(channel_id),)

    @property
    def sentinel_channels(self) -> tuple[str, ...]:
        return tuple(c for c, config in self.channels.items() if config.sentinel.enabled)

    def relative_to(self, folder: Path) -> Config:
        """Paths in the file are relative to the file's folder, as a person writing it expects."""

        def resolve(path: Path | None) -> Path | None:
            return None if path is None else folder / path.expanduser()

        clusters = {
            name: c.model_copy(update={"kubeconfig": resolve(c.kubeconfig), "snapshot": resolve(c.snapshot)})
            for name, c in self.clusters.items()
        }
        return self.model_copy(update={"clusters": clusters})


def _first_problem(error: ValidationError) -> tuple[str, str]:
    """Where the first problem is (dotted field path, may be empty) and what it is."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    if first["type"] == "missing":
        return location, "is required"
    if first["type"] == "value_error":  # our validators' own words, without pydantic's "Value error, "
        return location, str(first.get("ctx", {}).get("error", first["msg"]))
    return location, first["msg"]


def load_settings() -> Settings:
    """Read and check the environment, or SettingsError naming the variable."""
    try:
        return Settings()  # type: ignore[call-arg]  # pydantic-settings fills the fields from the environment
    except ValidationError as error:
        variable, problem = _first_problem(error)
        raise SettingsError(f"{variable.upper()} {problem}" if variable else problem) from None


def load_config(path: Path | None) -> Config:
    """The config file at `path` (KUBEWHY_CONFIG), or the defaults when there is none."""
    if path is None:
        return Config()
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise SettingsError(f"KUBEWHY_CONFIG {path}: larger than {MAX_CONFIG_BYTES // 2**20} MiB")
        data = yaml.safe_load(raw.decode("utf-8"))
    except OSError as error:
        raise SettingsError(f"KUBEWHY_CONFIG {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise SettingsError(f"KUBEWHY_CONFIG {path}: not UTF-8 text (byte {error.start})") from None
    except yaml.YAMLError as error:
        raise SettingsError(f"KUBEWHY_CONFIG {path}: not valid YAML: {error}") from None
    except RecursionError:
        raise SettingsError(f"KUBEWHY_CONFIG {path}: nested too deeply to be kubewhy's config") from None
    try:
        config = Config.model_validate(data if data is not None else {})
    except ValidationError as error:
        location, problem = _first_problem(error)
        where = f"{path}: {location}" if location else str(path)
        raise SettingsError(f"KUBEWHY_CONFIG {where}: {problem}") from None
    return config.relative_to(path.resolve().parent)
