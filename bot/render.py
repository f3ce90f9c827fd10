"""A Reply as the CLI prints it: one word, a JSON object for tools, or text for people.

Pure functions with no Slack in them (Block Kit is `bot.blocks`). The JSON keys are a contract
(README, *The CLI*): every key is always present, `null` where it does not apply, so a tool reads one
shape.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any

from bot.messages import KIND_NAMES
from cluster.errors import NotFound
from diagnosis.model import (
    Autoscaling,
    Command,
    Diagnosis,
    Fix,
    Holding,
    JobSetVerdict,
    PodVerdict,
    Started,
    StartState,
)
from diagnosis.objects import age, utc
from handlers.reply import Reply

_RESOURCES = {
    "pod": "pods",
    "jobset": "jobsets.jobset.x-k8s.io",
    "leaderworkerset": "leaderworkersets.leaderworkerset.x-k8s.io",
}
_INDENT = "  "
CHANGES_MARK = "# changes the cluster:"
"""Written before every command that changes the cluster, in text, so nobody pastes one unawares."""


def as_word(reply: Reply) -> str:
    """The verdict word alone (`--format word`), for scripts and `make demo`."""
    return reply.diagnosis.verdict.value


def as_json(reply: Reply) -> dict[str, Any]:
    """The JSON object of `--format json` (README, *The CLI*): `verdict`, `summary`, `evidence`,
    `next_commands` (complete shell commands, the one list of them), `cause`, `pod_verdict`, `target`,
    `cluster`, `checked_at`, `pending_since`, `started` (a placed pod: does it run, and if not why),
    `fixes`, `holders` (who holds the devices, by workload), `competing` (other pending pods after the
    same nodes), `snippets` and `autoscaling` (whether a node will come; null for a pod that waits for
    none)."""
    d = reply.diagnosis
    return {
        "verdict": d.verdict.value,
        "summary": d.summary,
        "evidence": list(d.evidence),
        "next_commands": [c.text for c in d.next_commands],
        "cause": d.cause.value if d.cause else None,
        "pod_verdict": d.pod_verdict.value if d.pod_verdict else None,
        "target": asdict(reply.target) if reply.target else None,
        "cluster": reply.cluster or None,
        "checked_at": _rfc3339(d.checked_at),
        "pending_since": _rfc3339(d.pending_since),
        "started": _started(d.started),
        "fixes": [
            {"summary": f.summary, "pod_patch": f.pod_patch, "opens": list(f.opens)} for f in d.fixes
        ],
        "holders": [_holding(h) for h in d.holders],
        "competing": list(d.competing),
        "snippets": [{"title": s.title, "language": s.language, "text": s.text} for s in d.snippets],
        "autoscaling": _autoscaling(d.autoscaling),
    }


def _autoscaling(a: Autoscaling | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {
        "state": a.state.value,
        "by": a.by,
        "since": _rfc3339(a.since),
        "groups": [asdict(g) for g in a.groups],
        "reasons": [{"reason": reason, "groups": n} for reason, n in a.reasons],
        "quote": a.quote or None,
    }


def first_screen(reply: Reply) -> tuple[str, ...]:
    """What a person must see first, in at most five lines (the channel message says the same): the
    verdict and target, the cluster and how long it has waited, one line of cause, whether a node
    will come, the first fix."""
    d = reply.diagnosis
    verdict = f"Verdict: {d.verdict.value}" + (f" (cause: {d.cause.value})" if d.cause else "")
    about = []
    if reply.target:
        about.append(f"{KIND_NAMES.get(reply.target.kind, reply.target.kind)}: {reply.target}")
    if d.pod_verdict:
        about.append(f"blocking pod's verdict: {d.pod_verdict.value}")
    if reply.cluster:
        about.append(f"cluster: {reply.cluster}")
    if waited := waiting(d):
        about.append(f"pending for {waited}")
    lines = [verdict, " · ".join(about), _one_line(d.summary), node_line(d)]
    if first := first_fix(d):
        lines.append(f"Fix: {first}")
    return tuple(line for line in lines if line)


NO_FIX = "none found in the objects; the evidence and the next commands show where to look"
"""What the first screen says of a stuck answer with no fix, rather than staying silent."""

_NOT_STUCK = frozenset(
    {
        PodVerdict.NO_REQUEST,
        PodVerdict.OK,
        PodVerdict.SCHEDULABLE,
        JobSetVerdict.COMPLETED,
        JobSetVerdict.RUNNING,
        JobSetVerdict.STARTING,
        JobSetVerdict.SUSPENDED,
        JobSetVerdict.UNKNOWN,
    }
)
"""Verdicts that name no cause holding the pod or JobSet (a placed pod is stuck when it fails)."""


def stuck(diagnosis: Diagnosis) -> bool:
    """The answer names a cause that holds the pod or JobSet: it owes a fix, or says it has none."""
    failing = diagnosis.started is not None and diagnosis.started.state is StartState.FAILING
    return failing or diagnosis.verdict not in _NOT_STUCK


def first_fix(diagnosis: Diagnosis) -> str:
    """The first screen's fix line: the best fix, `NO_FIX` for a stuck answer without one, else ""."""
    if diagnosis.fixes:
        return fix_line(diagnosis.fixes[0])
    return NO_FIX if stuck(diagnosis) else ""


def placed_state(diagnosis: Diagnosis) -> str | None:
    """A placed pod's state for its emoji: `failing` when something holds it (the kubelet, an image,
    a crash loop), else its phase's (`running`, `starting`, `succeeded`, `failed`); None if not placed."""
    if diagnosis.started is not None and diagnosis.started.state is StartState.FAILING:
        return diagnosis.started.state.value
    return diagnosis.pod_state.value if diagnosis.pod_state else None


def waiting(diagnosis: Diagnosis) -> str:
    """How long the pod (or the JobSet's blocking pod) has waited, as of the reading: `42m`."""
    if diagnosis.checked_at is None:
        return ""
    return age(diagnosis.checked_at, diagnosis.pending_since)


def node_line(diagnosis: Diagnosis) -> str:
    """Whether a node will come, in one line (`Node: coming — …`), or "" where no autoscaler is seen."""
    return diagnosis.autoscaling.headline if diagnosis.autoscaling is not None else ""


def fix_line(fix: Fix) -> str:
    """A fix in one line: what to change and, when it opens few nodes, which."""
    return fix.summary


def patch_json(patch: Mapping[str, Any]) -> str:
    """A pod patch as `kubectl patch --type merge -p` takes it: one line of JSON."""
    return json.dumps(patch, separators=(",", ":"), ensure_ascii=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _rfc3339(when: datetime | None) -> str | None:
    return None if when is None else utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def _started(started: Started | None) -> dict[str, Any] | None:
    if started is None:
        return None
    return {
        "state": started.state.value,
        "container": started.container,
        "reason": started.reason,
        "message": started.message,
        "since": _rfc3339(started.since),
        "restarts": started.restarts,
    }


def _holding(h: Holding) -> dict[str, Any]:
    return {
        "kind": h.kind,
        "namespace": h.namespace,
        "name": h.name,
        "pods": list(h.pods),
        "nodes": list(h.nodes),
        "devices": dict(h.devices),
        "priority_class": h.priority_class or None,
        "priority": h.priority,
        "preemptible": h.preemptible,
        "own": h.own,
        "terminating": h.terminating,
    }


def as_text(reply: Reply) -> str:
    """The reply for a person at a terminal, in the thread's order: the verdict and what it is about,
    the summary and the first fix, the other fixes, the next commands under `#` comments (so the block
    can be pasted into a shell; the first fix's first, the ones that change the cluster marked), who
    holds the devices, the evidence, and the snippets indented."""
    d = reply.diagnosis
    sections = ["\n".join(first_screen(reply))]
    if len(d.fixes) > 1:
        sections.append("\n".join(["Other fixes:", *(_bullet(fix_line(f)) for f in d.fixes[1:])]))
    if d.next_commands:
        sections.append("\n\n".join(["Next commands:", *map(_command, d.next_commands)]))
    if d.holders:
        sections.append("\n".join(["Held by:", *(_bullet(holding_line(h)) for h in d.holders)]))
    if d.competing:
        sections.append("\n".join(["Also waiting for these nodes:", _bullet(", ".join(d.competing))]))
    if d.evidence:
        sections.append("\n".join(["Evidence:", *(_bullet(line) for line in d.evidence)]))
    for snippet in d.snippets:
        sections.append(f"{snippet.title} ({snippet.language}):\n{_indented(snippet.text, 2)}")
    return "\n\n".join(s for s in sections if s)


def not_found(error: NotFound) -> str:
    """What to say when the pod or JobSet asked about does not exist: the names closest to it, and
    what the API refused to create in its namespace (a pod refused at admission never exists, so
    that refusal is usually the answer)."""
    kind = KIND_NAMES.get(error.kind, error.kind)
    where = f"namespace {error.namespace}"
    if error.missing.namespaces is not None:
        instead = error.missing.namespaces
        return "\n".join(
            (
                f"There is no namespace {error.namespace}"
                + (f"; did you mean {_either(instead)}?" if instead else "."),
                "List them: kubectl get namespaces",
            )
        )
    similar = ", ".join(error.missing.similar)
    lines = [
        f"{kind} {error.namespace}/{error.name} not found.",
        f"Closest names in {where}: {similar}" if similar else f"No {kind} in {where} has a similar name.",
    ]
    if resource := _RESOURCES.get(error.kind):
        lines.append(f"List them: kubectl get {resource} -n {shlex.quote(error.namespace)}")
    if error.missing.rejections:
        lines.append(f"The API refused to create objects in {where}; a refused object never exists:")
        lines += (f"{_INDENT}- {rejection}" for rejection in error.missing.rejections)
    return "\n".join(lines)


def _either(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def holding_line(h: Holding) -> str:
    """`JobSet llm/maxtext (this JobSet's own): 4 pods hold google.com/tpu ×16 on 4 nodes; priority
    0 (default); preemptible by this pod`."""
    whose = " (this JobSet's own pods)" if h.own else ""
    devices = ", ".join(f"{r} ×{n}" for r, n in sorted(h.devices.items()))
    pods = h.pods[0] if len(h.pods) == 1 else f"{len(h.pods)} pods"
    nodes = h.nodes[0] if len(h.nodes) == 1 else f"{len(h.nodes)} nodes"
    rank = f"priority {h.priority}" + (f" ({h.priority_class})" if h.priority_class else "")
    terminating = f"; {h.terminating} terminating" if h.terminating else ""
    may = "preemptible by this pod" if h.preemptible else "not preemptible by this pod"
    held = f"{pods} hold{'s' if len(h.pods) == 1 else ''} {devices} on {nodes}"
    return f"{h.kind} {h.namespace}/{h.name}{whose}: {held}; {rank}; {may}{terminating}"


def _bullet(line: str) -> str:
    first, *rest = line.splitlines() or [""]
    return "\n".join([f"{_INDENT}- {first}", *(f"{_INDENT}  {more}" for more in rest)])


def _command(command: Command) -> str:
    purpose = f"{CHANGES_MARK} {command.purpose}" if command.changes else command.purpose
    comment = "\n".join(line if line.startswith("#") else f"# {line}" for line in purpose.splitlines())
    return _indented(f"{comment}\n{command.text}", 1)


def _indented(text: str, depth: int) -> str:
    return "\n".join(f"{_INDENT * depth}{line}" if line else "" for line in text.splitlines())
