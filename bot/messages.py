"""Every word the bot says around a diagnosis, in one place (as bolt keeps its own in
`slack_bolt/logger/messages.py`). Values that come from people or clusters arrive here already escaped
(see `bot.blocks.escape`); the diagnosis itself is rendered by `bot.blocks`.
"""

from __future__ import annotations

from collections.abc import Iterable

USAGE = {
    "triage": (
        "*/triage NAMESPACE POD* — why is this GPU/TPU pod not running?\n"
        "Also `/triage NAMESPACE/POD` and `/triage -n NAMESPACE POD`;"
        " add `--cluster NAME` to pick a cluster.\n"
        "Example: `/triage ml-training trainer-0`"
    ),
    "jobset": (
        "*/jobset why NAMESPACE NAME* — why is this JobSet stuck or restarting?\n"
        "*/jobset why PASTED-ERROR* — what an admission error from JobSet's webhooks means.\n"
        "Add `--cluster NAME` to pick a cluster.\n"
        "Example: `/jobset why ml-training llama-pretrain`"
    ),
    "why": (
        "*/why NAMESPACE NAME* — why is this pod or workload stuck? The name is looked for among pods,"
        " JobSets, TrainJobs, LeaderWorkerSets, Jobs, Deployments and StatefulSets.\n"
        "*/why NAMESPACE KIND/NAME* — when two kinds share the name (`lws/`, `sts/`, `deploy/`, `job/`…).\n"
        "Add `--cluster NAME` to pick a cluster.\n"
        "Example: `/why serving llama-405b`"
    ),
    "mention": (
        "In a kubewhy thread: `@kubewhy recheck`, `@kubewhy watch` (re-check until the verdict changes),"
        " `@kubewhy stop`.\n"
        "In any thread: `@kubewhy triage NAMESPACE POD`, `@kubewhy jobset why NAMESPACE NAME`,"
        " `@kubewhy why NAMESPACE [KIND/]NAME`, `@kubewhy help`.\n"
        "On an alert: the message shortcut *Triage with kubewhy* finds `namespace=` and `pod=`"
        " (or `jobset_name=`) in it."
    ),
}

RECHECK = "Re-check"
WATCH = "Watch"
DETAILS = "Details"
EVIDENCE = "*Evidence*"
FIXES = (
    "*Fixes*, least harm first: those that keep what the pod asks, then those that touch other workloads, "
    "then those that shrink the ask"
)
HELD_BY = "*Who holds the devices*"
COMPETING = "*Other pending pods after the same nodes*"
NEXT_COMMANDS = "*Next commands*"
CHANGES_CLUSTER = ":warning: *changes the cluster*"
EXPLAINED_OFFLINE = "explained offline from the pasted message; nothing was read from a cluster"
PASTED_MESSAGE = "pasted error"

_EMOJI = {
    "ok": ":white_check_mark:",
    "running": ":white_check_mark:",
    "completed": ":white_check_mark:",
    "schedulable": ":large_yellow_circle:",
    "starting": ":large_yellow_circle:",
    "no-request": ":large_yellow_circle:",
    "unknown": ":grey_question:",
    "not-found": ":grey_question:",
    "error": ":warning:",
}


_STATE_EMOJI = {
    "running": ":white_check_mark:",
    "succeeded": ":white_check_mark:",
    "starting": ":large_yellow_circle:",
    "failed": ":red_circle:",
    "failing": ":red_circle:",
}
"""A placed pod (`ok`) is ✅ only once it runs and is Ready (or has succeeded), 🔴 when something
holds it (`render.placed_state`)."""


def emoji(verdict: str, state: str | None = None) -> str:
    if verdict == "ok" and state is not None:
        return _STATE_EMOJI.get(state, ":large_yellow_circle:")
    return _EMOJI.get(verdict, ":red_circle:")


def usage(problem: str, topic: str) -> str:
    return f":warning: {problem}.\n{USAGE[topic]}"


def checking(what: str) -> str:
    return f"Checking {what}…"


def explaining() -> str:
    return "Explaining the pasted message…"


def header(verdict: str, kind: str, target: str, state: str | None = None) -> str:
    """`:large_yellow_circle: ok: pod ml/x`: a placed pod's emoji says whether it runs (`state`)."""
    return " ".join(filter(None, (emoji(verdict, state), f"{verdict}:", kind, target)))


def pod_patch(summary: str) -> str:
    return f"_Merge patch for: {summary}_"


def direct_message() -> str:
    return (
        "In a direct message the answer comes to you alone, without a thread: re-check with the button."
        " For a thread that others see, with watches and `@kubewhy` follow-ups, ask in a channel"
        " (`/invite @kubewhy` there first)."
    )


def not_in_channel() -> str:
    return (
        ":wave: I can't post in this conversation, so here is the answer for you alone."
        " To share answers, threads and watches here, invite me: `/invite @kubewhy`."
    )


def pending_for(waited: str) -> str:
    return f"waiting *{waited}*"


KIND_NAMES = {
    "pod": "Pod",
    "jobset": "JobSet",
    "leaderworkerset": "LeaderWorkerSet",
    "trainjob": "TrainJob",
    "job": "Job",
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "any": "object",
}
"""Each kind of `target.kind` as people write it."""


def kind_name(kind: str) -> str:
    """As `KIND_NAMES`, but a pod stays `pod`, as Slack's headers have always said it."""
    return kind if kind == "pod" else KIND_NAMES.get(kind, kind)


def checked_on(cluster: str, at: str) -> str:
    return f"cluster *{cluster}* · checked {at} UTC"


def details_in_thread() -> str:
    return "evidence and next commands in the thread"


def cause(value: str) -> str:
    return f"restart cause: *{value}*"


def blocking_pod(verdict: str) -> str:
    return f"blocking pod's triage: *{verdict}*"


def not_found(kind: str, namespace: str, name: str, cluster: str) -> str:
    return f"There is no {kind} `{name}` in namespace `{namespace}` on cluster *{cluster}*."


def no_namespace(namespace: str, cluster: str) -> str:
    return f"There is no namespace `{namespace}` on cluster *{cluster}*."


def similar(names: Iterable[str]) -> str:
    return "Did you mean: " + ", ".join(f"`{n}`" for n in names) + "?"


def rejections(messages: Iterable[str]) -> str:
    lines = "\n".join(f"• {m}" for m in messages)
    return f"Creations the API refused in this namespace (a refused pod never exists):\n{lines}"


def cluster_failed(cluster: str) -> str:
    return f"cannot read cluster {cluster}"


def fix(hint: str) -> str:
    return f"*Fix:* {hint}"


def truncated(shown: int, total: int, cli: str) -> str:
    return (
        f":scissors: Showing {shown} of {total} parts; the rest did not fit in Slack."
        f" The full answer: `{cli}`"
    )


def cli_command(kind: str, namespace: str, name: str) -> str:
    if kind == "pod":
        return f"kubewhy triage {namespace} {name}"
    if kind == "jobset":
        return f"kubewhy jobset why {namespace} {name}"
    if kind == "leaderworkerset":
        return f"kubewhy lws why {namespace} {name}"
    return f"kubewhy why {namespace} {name if kind == 'any' else f'{kind}/{name}'}"


def ambiguous(names: Iterable[str]) -> str:
    return "That name is borne by several objects; ask for one: " + ", ".join(f"`{n}`" for n in names) + "."


def changed(before: str, after: str, summary: str) -> str:
    return f":arrows_counterclockwise: Changed since the last check: *{before}* → *{after}*. {summary}"


def unchanged(verdict: str) -> str:
    return f"No change since the last check: still *{verdict}*."


def watch_started(target: str, interval: float, minutes: float) -> str:
    return (
        f":eyes: Watching {target}: re-checking every {interval:g} s for up to {minutes:g} min."
        " I'll post here when the verdict changes. `@kubewhy stop` ends it."
    )


def watch_resumed(target: str) -> str:
    return (
        f":eyes: Watching {target} again: the replica that watched it stopped, this one carries on."
        " `@kubewhy stop` ends it."
    )


def watch_already(target: str) -> str:
    return f"Already watching {target} in this thread. `@kubewhy stop` ends it."


def watch_settled(target: str, verdict: str) -> str:
    return f":checkered_flag: Watch of {target} ended: the verdict is *{verdict}*."


def watch_timed_out(target: str, minutes: float, verdict: str) -> str:
    return f":hourglass: Watch of {target} ended after {minutes:g} min; the verdict is still *{verdict}*."


def watch_stopped(target: str, user: str) -> str:
    return f":octagonal_sign: Watch of {target} stopped by <@{user}>."


def watch_shutdown(target: str) -> str:
    return (
        f":octagonal_sign: Watch of {target} ended: kubewhy is shutting down."
        " Ask `@kubewhy watch` again once it is back."
    )


def watch_stopping() -> str:
    return "Stopping the watch at its next re-check…"


def no_watch() -> str:
    return "Nothing is being watched in this thread."


def too_many_watches(limit: int) -> str:
    return f"kubewhy is already running {limit} watches; stop one (`@kubewhy stop`) or try later."


def no_verdict_here() -> str:
    return (
        "This thread has no kubewhy verdict to follow up. Ask in it with"
        " `@kubewhy triage NAMESPACE POD` or `@kubewhy jobset why NAMESPACE NAME`."
    )


def nothing_in_alert() -> str:
    return (
        "I could not find a `namespace=` label with `pod=` or `jobset_name=` in that message."
        " Ask in its thread with `@kubewhy triage NAMESPACE POD`."
    )


def channel_not_allowed() -> str:
    return (
        "kubewhy is not enabled in this channel (the `allow.channels` list of its config does not name it)."
    )


def user_not_allowed() -> str:
    return (
        "You are not allowed to query kubewhy: you are not in its `allow.users` list"
        " nor in one of its `allow.usergroups`."
    )


def namespace_not_allowed(namespace: str, allowed: Iterable[str]) -> str:
    names = ", ".join(f"`{n}`" for n in allowed) or "none"
    return f"This channel may not query namespace `{namespace}`; it may query: {names}."


def unknown_cluster(cluster: str, known: Iterable[str]) -> str:
    names = ", ".join(f"`{c}`" for c in known)
    return f"There is no cluster named `{cluster}`. Known clusters: {names}."


def cluster_not_allowed(cluster: str, allowed: Iterable[str]) -> str:
    names = ", ".join(f"`{c}`" for c in allowed)
    return f"This channel may not ask cluster `{cluster}`. It may ask: {names}."


def unexpected(request_id: str) -> str:
    return (
        f":warning: Sorry, something went wrong on kubewhy's side (request `{request_id}`)."
        " It is logged; please try again."
    )


def detail_fallback(target: str) -> str:
    return f"Evidence and next commands for {target}"


# ---- the sentinel (bot/sentinel.py, bot/incident_message.py)

SILENCE = "Silence…"
ACKNOWLEDGE = "Acknowledge"
SILENCE_CHOICES = (
    ("incident", 60, "This incident for 1 hour"),
    ("incident", 240, "This incident for 4 hours"),
    ("incident", 1440, "This incident for 24 hours"),
    ("namespace", 60, "Its namespace for 1 hour"),
    ("namespace", 240, "Its namespace for 4 hours"),
    ("namespace", 1440, "Its namespace for 24 hours"),
)


def minutes(seconds: float) -> str:
    """A duration as people say it: `45 s`, `12 min`, `3 h 05 min`."""
    if seconds < 60:
        return f"{max(0, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest:02d} min"


def _of(workloads: int) -> str:
    return f" of {workloads} workloads" if workloads > 1 else ""


def incident_waiting(pods: int, waited: str, workloads: int = 1) -> str:
    return f"*{pods} pod{'s' if pods != 1 else ''}*{_of(workloads)} waiting for a node for {waited}."


def incident_restarting(restarts: int, window: float, workloads: int = 1) -> str:
    return f"*Restarted {restarts} time{'s' if restarts != 1 else ''}*{_of(workloads)} within {window:g} min."


def incident_member(what: str, pods: int, restarts: int) -> str:
    count = f"{pods} pod{'s' if pods != 1 else ''}" if pods else f"{restarts} restarts"
    return f"• {what} · {count}"


def more_members(count: int) -> str:
    return f"• and {count} more"


def mention(groups: str) -> str:
    return f"cc {groups}"


def joined(groups: str, what: str) -> str:
    return f"{groups}: {what} joined this incident."


def acknowledged(user: str, at: str) -> str:
    return f":eyes: Acknowledged by <@{user}> at {at} UTC."


def rechecked(user: str, at: str) -> str:
    return f":arrows_counterclockwise: Re-checked by <@{user}> at {at} UTC."


def first_fix(summary: str) -> str:
    return f"*First fix:* {summary}"


def incident_facts(cluster: str, since: str) -> str:
    return f"cluster *{cluster}* · stuck since {since} UTC · posted by kubewhy's sentinel"


def resolved_header(what: str) -> str:
    return f":white_check_mark: resolved: {what}"


def resolved(waited: str, verdict: str) -> str:
    return f"No pod waits any more: resolved {waited} after it began (it was *{verdict}*)."


def resolved_restarts(window: float, verdict: str) -> str:
    return f"No restart within {window:g} min: resolved (it was *{verdict}*)."


def resolved_line(waited: str) -> str:
    return f":white_check_mark: Resolved, {waited} after it began."


def verdict_changed(before: str, after: str, summary: str) -> str:
    return f"The verdict changed: *{before}* → *{after}*. {summary}"


def silenced(scope: str, user: str, until: str) -> str:
    return f":no_bell: {scope.capitalize()} silenced by <@{user}> until {until} UTC."


def held(count: int, limit: int) -> str:
    return (
        f":hourglass: {count} more stuck workload{'s' if count != 1 else ''} not posted: this channel's"
        f" sentinel posts at most {limit} per hour (`channels.ID.sentinel.max_posts_per_hour`)."
        " Ask with /triage or /jobset why."
    )
