"""A Reply as the CLI prints it: one word, a JSON object for tools, or text for people.

Pure functions with no Slack in them (Block Kit is `bot.blocks`). The JSON keys are a contract
(README, *The CLI*): every key is always present, `null` where it does not apply, so a tool reads one
shape.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict
from typing import Any

from cluster.errors import NotFound
from diagnosis.model import Command
from handlers.reply import Reply

_KIND_NAMES = {"pod": "Pod", "jobset": "JobSet"}
_RESOURCES = {"pod": "pods", "jobset": "jobsets.jobset.x-k8s.io"}
_INDENT = "  "
CHANGES_MARK = "# changes the cluster:"
"""Written before every command that changes the cluster, in text, so nobody pastes one unawares."""


def as_word(reply: Reply) -> str:
    """The verdict word alone (`--format word`), for scripts and `make demo`."""
    return reply.diagnosis.verdict.value


def as_json(reply: Reply) -> dict[str, Any]:
    """The JSON object of `--format json`: `verdict`, `summary`, `evidence`, `next_commands` (complete
    shell commands), `cause`, `pod_verdict`, `target`, `commands` (with purpose and whether each changes
    the cluster) and `snippets`."""
    d = reply.diagnosis
    return {
        "verdict": d.verdict.value,
        "summary": d.summary,
        "evidence": list(d.evidence),
        "next_commands": [c.text for c in d.next_commands],
        "cause": d.cause.value if d.cause else None,
        "pod_verdict": d.pod_verdict.value if d.pod_verdict else None,
        "target": asdict(reply.target) if reply.target else None,
        "commands": [
            {"command": c.text, "purpose": c.purpose, "changes": c.changes} for c in d.next_commands
        ],
        "snippets": [{"title": s.title, "language": s.language, "text": s.text} for s in d.snippets],
    }


def as_text(reply: Reply) -> str:
    """The reply for a person at a terminal: the verdict and what it is about, the summary, the
    evidence, then the next commands under `#` comments (so the block can be pasted into a shell), the
    ones that change the cluster marked, and the snippets indented."""
    d = reply.diagnosis
    sections = [_heading(reply), d.summary]
    if d.evidence:
        sections.append("\n".join(["Evidence:", *(_bullet(line) for line in d.evidence)]))
    if d.next_commands:
        sections.append("\n\n".join(["Next commands:", *map(_command, d.next_commands)]))
    for snippet in d.snippets:
        sections.append(f"{snippet.title} ({snippet.language}):\n{_indented(snippet.text, 2)}")
    return "\n\n".join(s for s in sections if s)


def not_found(error: NotFound) -> str:
    """What to say when the pod or JobSet asked about does not exist: the names closest to it, and
    what the API refused to create in its namespace (a pod refused at admission never exists, so
    that refusal is usually the answer)."""
    kind = _KIND_NAMES.get(error.kind, error.kind)
    where = f"namespace {error.namespace}"
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


def _heading(reply: Reply) -> str:
    d = reply.diagnosis
    lines = [f"Verdict: {d.verdict.value}" + (f" (cause: {d.cause.value})" if d.cause else "")]
    if reply.target:
        kind = _KIND_NAMES.get(reply.target.kind, reply.target.kind)
        lines.append(f"{kind}: {reply.target}")
    if d.pod_verdict:
        lines.append(f"Blocking pod's verdict: {d.pod_verdict.value}")
    return "\n".join(lines)


def _bullet(line: str) -> str:
    first, *rest = line.splitlines() or [""]
    return "\n".join([f"{_INDENT}- {first}", *(f"{_INDENT}  {more}" for more in rest)])


def _command(command: Command) -> str:
    purpose = f"{CHANGES_MARK} {command.purpose}" if command.changes else command.purpose
    comment = "\n".join(line if line.startswith("#") else f"# {line}" for line in purpose.splitlines())
    return _indented(f"{comment}\n{command.text}", 1)


def _indented(text: str, depth: int) -> str:
    return "\n".join(f"{_INDENT * depth}{line}" if line else "" for line in text.splitlines())
