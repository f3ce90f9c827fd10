"""Slack text → typed requests: what the person asked for, with every name validated.

Text from Slack is untrusted: it reaches kubectl commands and API URLs only through these models,
whose names pass the checks of `handlers.names` (which also reads the forms that name a pod or a
JobSet, for the CLI too). Anything that does not parse raises `UsageError`, naming the problem so the
bot can answer with the usage and an example.

Forms understood (README, *In Slack*):
    /triage NS POD | NS/POD | -n NS POD | help            [--cluster NAME anywhere]
    /jobset why NS NAME | NS/NAME | -n NS NAME | help     [--cluster NAME anywhere]
    /jobset why <a pasted admission error>
    /why NS [KIND/]NAME | -n NS [KIND/]NAME | help         [--cluster NAME anywhere]
    @kubewhy recheck | watch | stop | help | triage … | jobset why … | why …
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from diagnosis.objects import Ref
from handlers import names

Topic = Literal["triage", "jobset", "why", "mention"]
"""Which usage text answers a malformed or help request."""


class UsageError(Exception):
    """The text does not parse; `problem` says why, `topic` picks the usage text to show."""

    def __init__(self, topic: Topic, problem: str) -> None:
        super().__init__(problem)
        self.topic = topic
        self.problem = problem


Namespace = Annotated[str, AfterValidator(names.namespace)]
ObjectName = Annotated[str, AfterValidator(names.object_name)]
ClusterName = Annotated[str, AfterValidator(names.cluster)]


Kind = Literal["pod", "jobset", "leaderworkerset", "trainjob", "job", "deployment", "statefulset", "any"]
"""What a Target names: a kind of `cluster.reader.NAMED_KINDS`, lower case, or `any` (`/why NS NAME`:
whatever bears the name)."""


class Target(BaseModel):
    """A pod to triage, a JobSet to explain or any object `/why` names, on a named cluster (None: the
    channel's default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    namespace: Namespace
    name: ObjectName
    cluster: ClusterName | None = None

    @property
    def ref(self) -> Ref:
        return Ref(self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class Explain(BaseModel):
    """`/jobset why <pasted error>`: explain an admission error offline."""

    model_config = ConfigDict(frozen=True)

    message: str = Field(min_length=1, max_length=12_000)


class Help(BaseModel):
    model_config = ConfigDict(frozen=True)

    topic: Topic


class FollowUp(BaseModel):
    """A thread follow-up about the verdict the thread already holds."""

    model_config = ConfigDict(frozen=True)

    action: Literal["recheck", "watch", "stop"]


Request = Target | Explain | Help | FollowUp


def unescape(text: str) -> str:
    """Undo Slack's escaping of message text (only `&`, `<` and `>` are escaped)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def target(kind: Kind, namespace: str, name: str, cluster: str | None, topic: Topic) -> Target:
    """A validated Target, or UsageError naming the bad value."""
    try:
        return Target(kind=kind, namespace=namespace, name=name, cluster=cluster)
    except ValidationError as error:
        first = error.errors()[0]
        cause = first.get("ctx", {}).get("error")
        raise UsageError(topic, str(cause) if cause else first["msg"]) from None


def _options(words: list[str], topic: Topic) -> tuple[list[str], dict[str, str]]:
    """Split `--cluster NAME`, `-n NS` (also `--namespace`, `--opt=value`) from the positional words."""
    aliases = {"--cluster": "cluster", "-n": "namespace", "--namespace": "namespace"}
    positional: list[str] = []
    options: dict[str, str] = {}
    rest = iter(words)
    for word in rest:
        flag, eq, inline = word.partition("=")
        if flag not in aliases:
            if word.startswith("-"):
                raise UsageError(topic, f"unknown option '{names.shown(word)}'")
            positional.append(word)
            continue
        value = inline if eq else next(rest, "")
        if not value:
            raise UsageError(topic, f"{flag} needs a value")
        if aliases[flag] in options:
            raise UsageError(topic, f"{flag} is given twice")
        options[aliases[flag]] = value
    return positional, options


def _target_words(kind: Literal["pod", "jobset"], words: list[str], topic: Topic) -> Target:
    """`NS NAME`, `NS/NAME` or `-n NS NAME` (`handlers.names`), with `--cluster` anywhere."""
    positional, options = _options(words, topic)
    try:
        namespace, name = names.namespace_and_name(
            "pod" if kind == "pod" else "JobSet", positional, options.get("namespace")
        )
    except ValueError as error:
        raise UsageError(topic, str(error)) from None
    return target(kind, namespace, name, options.get("cluster"), topic)


def _is_help(words: list[str]) -> bool:
    return not words or words[0].lower() in ("help", "-h", "--help")


def parse_triage(text: str, topic: Topic = "triage") -> Target | Help:
    """The text after `/triage`."""
    words = unescape(text).split()
    if _is_help(words):
        return Help(topic="triage")
    return _target_words("pod", words, topic)


def parse_jobset(text: str, topic: Topic = "jobset") -> Target | Explain | Help:
    """The text after `/jobset`: `why NS NAME`, `why <pasted error>` or `help`.

    One or two words (besides options) name a JobSet and must be valid names; more is a pasted error
    message, explained offline.
    """
    plain = unescape(text).strip()
    verb, _, rest = plain.partition(" ")
    if _is_help(plain.split()):
        return Help(topic="jobset")
    if verb.lower() != "why":
        raise UsageError(topic, f"unknown subcommand '{names.shown(verb)}' (try `why`)")
    words = rest.split()
    if not words:
        raise UsageError(topic, "give a namespace and a JobSet name, or paste the error message")
    try:
        positional, _ = _options(words, topic)
    except UsageError:
        positional = words
    if len(positional) <= 2:
        return _target_words("jobset", words, topic)
    return Explain(message=rest.strip()[:12_000])


def parse_why(text: str, topic: Topic = "why") -> Target | Help:
    """The text after `/why`: `NS [KIND/]NAME` (or `-n NS [KIND/]NAME`), or `help`."""
    words = unescape(text).split()
    if _is_help(words):
        return Help(topic="why")
    positional, options = _options(words, topic)
    try:
        namespace, kind, name = names.namespace_kind_and_name(positional, options.get("namespace"))
    except ValueError as error:
        raise UsageError(topic, str(error)) from None
    named = cast(Kind, kind.lower()) if kind else "any"  # NAMED_KINDS, lower case
    return target(named, namespace, name, options.get("cluster"), topic)


_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_FOLLOW_UPS: dict[str, Literal["recheck", "watch", "stop"]] = {
    "recheck": "recheck",
    "re-check": "recheck",
    "watch": "watch",
    "stop": "stop",
}


def parse_mention(text: str) -> Request:
    """The text of an `app_mention` event: what follows the last `<@U…>` mention (`hey @kubewhy
    recheck`), or, when nothing follows it, what precedes it (`recheck @kubewhy`)."""
    parts = _MENTION.split(text)
    words = parts[-1].split() or " ".join(parts).split()
    if _is_help(words):
        return Help(topic="mention")
    first, rest = words[0].lower(), " ".join(words[1:])
    if first in _FOLLOW_UPS:
        if rest:
            raise UsageError("mention", f"`{first}` takes nothing after it")
        return FollowUp(action=_FOLLOW_UPS[first])
    if first == "triage":
        return parse_triage(rest, topic="mention")
    if first == "jobset":
        return parse_jobset(rest, topic="mention")
    if first == "why":
        return parse_why(rest, topic="mention")
    raise UsageError("mention", f"I don't know '{names.shown(unescape(words[0]))}'")


_ALERT_LABEL = re.compile(
    r"(?<![\w.])(namespace|pod|jobset_name|jobset)\s*(?:=|:)\s*[\"'`*_]*([a-z0-9][a-z0-9.-]*)", re.IGNORECASE
)


def find_in_alert(text: str) -> Target | None:
    """The pod (or, without a pod label, the JobSet) an alert is about, from its labels.

    Alertmanager templates print labels as `namespace=ml`, `namespace="ml"` or `namespace: ml`. Only
    labels are read: the names still pass the same validation as a typed command.
    """
    labels: dict[str, str] = {}
    for key, value in _ALERT_LABEL.findall(unescape(text)):
        labels.setdefault(key.lower(), value)
    namespace = labels.get("namespace")
    jobset = labels.get("jobset_name") or labels.get("jobset")
    if namespace is None:
        return None
    try:
        if "pod" in labels:
            return target("pod", namespace, labels["pod"], None, "mention")
        if jobset is not None:
            return target("jobset", namespace, jobset, None, "mention")
    except UsageError:
        return None
    return None
