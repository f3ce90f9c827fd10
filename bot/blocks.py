"""Block Kit for a check: the compact verdict message, and the details its thread holds.

Built with `slack_sdk.models.blocks`, which refuses a block past Slack's per-field limits, and packed
so that no message passes Slack's per-message limits: a long answer is split across messages, and past
`MAX_MESSAGES` it is cut with a pointer to the CLI command that prints it whole. Every piece of text
from people or clusters goes through `escape`, so it cannot mention @channel or break the markup.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot import messages, render
from cluster.errors import Ambiguous, NotFound
from handlers.reply import Reply

if TYPE_CHECKING:
    from bot.checks import Check

MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
BUTTON_VALUE_CHARS = 2000
MESSAGE_CHARS = 12_000
"""Our budget of block text per message, under the ~13.2k where Slack answers `msg_blocks_too_long`."""
MAX_MESSAGES = 4
"""Messages one answer may take: a thread stays readable, and an ephemeral answer stays within the five
uses of a response_url."""

RECHECK = "kubewhy_recheck"
WATCH = "kubewhy_watch"
DETAILS = "kubewhy_details"
ACTION_IDS = (RECHECK, WATCH, DETAILS)
_LABELS = {RECHECK: messages.RECHECK, WATCH: messages.WATCH, DETAILS: messages.DETAILS}


@dataclass(frozen=True)
class SlackMessage:
    text: str
    """The notification fallback Slack requires beside blocks."""
    blocks: tuple[dict[str, Any], ...]


def escape(text: str) -> str:
    """Slack's escaping of `&`, `<` and `>`: what remains cannot be a mention, a link or markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_chars(node: object) -> int:
    """Characters of text in blocks, as Slack counts them toward `msg_blocks_too_long`."""
    if isinstance(node, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else text_chars(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(text_chars(item) for item in node)
    return 0


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=_clip(text, HEADER_CHARS), emoji=True))


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=_clip(text, SECTION_CHARS)))


def _context(*parts: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=_clip(" · ".join(parts), SECTION_CHARS))])


def _sections(lines: Sequence[str], heading: str = "") -> Iterator[SectionBlock]:
    """Lines packed into sections of at most SECTION_CHARS, the heading atop the first."""
    chunk = [heading] if heading else []
    size = len(heading)
    for line in (_clip(line, SECTION_CHARS) for line in lines):
        if chunk and size + 1 + len(line) > SECTION_CHARS:
            yield _section("\n".join(chunk))
            chunk, size = [], -1
        chunk.append(line)
        size += 1 + len(line)
    if chunk:
        yield _section("\n".join(chunk))


def _code(text: str) -> str:
    return escape(text).replace("```", "`\u200b``")


def _code_sections(title: str, text: str) -> Iterator[SectionBlock]:
    """A code block under a title, split at lines into sections that each stay a closed code block."""
    room = SECTION_CHARS - len(title) - 10
    piece: list[str] = []
    size = 0
    pieces: list[str] = []
    for line in (_clip(line, room) for line in _code(text).splitlines() or [""]):
        if piece and size + 1 + len(line) > room:
            pieces.append("\n".join(piece))
            piece, size = [], -1
        piece.append(line)
        size += 1 + len(line)
    pieces.append("\n".join(piece))
    for i, body in enumerate(pieces):
        yield _section(f"{title if i == 0 else ''}\n```{body}```".lstrip("\n"))


def button_value(value: str) -> str:
    if len(value) > BUTTON_VALUE_CHARS:
        raise ValueError(f"a button value of {len(value)} characters exceeds Slack's {BUTTON_VALUE_CHARS}")
    return value


def _actions(actions: Sequence[str], value: str) -> ActionsBlock:
    return ActionsBlock(
        block_id="verdict",
        elements=[ButtonElement(text=_LABELS[a], action_id=a, value=button_value(value)) for a in actions],
    )


def _subject(check: Check) -> tuple[str, str]:
    """(kind, what) for headers: `pod`, `ml/trainer-0`."""
    if check.target is None:
        return "", messages.PASTED_MESSAGE
    # `/why` finds the kind: the reply says which it answered about.
    answered = check.outcome.target if isinstance(check.outcome, Reply) else None
    return messages.kind_name(answered.kind if answered else check.target.kind), str(check.target)


def verdict_blocks(
    check: Check, actions: Sequence[str] = (), button: str = "", threaded: bool = True
) -> list[Block]:
    """The compact answer: verdict as header, one-line summary, where it came from, buttons."""
    kind, what = _subject(check)
    outcome = check.outcome
    cluster = check.target.cluster or "" if check.target is not None else ""
    at = check.at.strftime("%H:%M:%S")
    blocks: list[Block] = []
    if isinstance(outcome, Reply):
        # The first screen (README, *In Slack*): verdict and target, one line of cause, the first fix,
        # how long it has waited and the cluster; the rest is in the thread.
        diagnosis = outcome.diagnosis
        blocks += [
            _header(messages.header(check.verdict, kind, what, render.placed_state(diagnosis))),
            _section(escape(" ".join(diagnosis.summary.split()))),
        ]
        if coming := render.node_line(diagnosis):
            blocks.append(_section(escape(coming)))
        if first := render.first_fix(diagnosis):
            blocks.append(_section(messages.fix(escape(first))))
        facts = [messages.cause(str(diagnosis.cause))] if diagnosis.cause else []
        facts += [messages.blocking_pod(str(diagnosis.pod_verdict))] if diagnosis.pod_verdict else []
        facts += [messages.pending_for(waited)] if (waited := render.waiting(diagnosis)) else []
        facts.append(messages.checked_on(cluster, at) if check.target else messages.EXPLAINED_OFFLINE)
        facts += [messages.details_in_thread()] if threaded else []
        blocks.append(_context(*facts))
    elif isinstance(outcome, Ambiguous):
        blocks += [
            _header(messages.header(check.verdict, kind, what)),
            _section(messages.ambiguous(escape(n) for n in outcome.missing.similar)),
        ]
    elif isinstance(outcome, NotFound):
        assert check.target is not None  # only a cluster read finds nothing
        namespaces = outcome.missing.namespaces
        blocks += [
            _header(messages.header(check.verdict, kind, what)),
            _section(
                messages.not_found(kind, check.target.namespace, check.target.name, cluster)
                if namespaces is None
                else messages.no_namespace(check.target.namespace, cluster)
            ),
        ]
        if namespaces:
            blocks.append(_section(messages.similar(escape(n) for n in namespaces)))
        if outcome.missing.similar:
            blocks.append(_section(messages.similar(escape(n) for n in outcome.missing.similar)))
        if outcome.missing.rejections:
            blocks += _sections([messages.rejections(escape(r) for r in outcome.missing.rejections)])
        blocks.append(_context(messages.checked_on(cluster, at)))
    else:
        blocks += [
            _header(f"{messages.emoji(check.verdict)} {messages.cluster_failed(cluster)}"),
            _section(escape(outcome.message)),
        ]
        if outcome.hint:
            blocks.append(_section(messages.fix(escape(outcome.hint))))
        blocks.append(_context(messages.checked_on(cluster, at), f"{kind} {what}"))
    if actions:
        blocks.append(_actions(actions, button))
    return blocks


def detail_blocks(check: Check) -> list[Block]:
    """What the thread holds: the fixes, the next commands (changing ones marked; the first fix's
    first), who holds the devices, the evidence, the snippets. Not-found and cluster failures say
    everything in the verdict message."""
    if not isinstance(check.outcome, Reply):
        return []
    diagnosis = check.outcome.diagnosis
    blocks: list[Block] = []
    if diagnosis.fixes:
        blocks += _sections([f"• {escape(render.fix_line(f))}" for f in diagnosis.fixes], messages.FIXES)
    for fix in diagnosis.fixes:
        if fix.pod_patch is not None:
            title = messages.pod_patch(escape(fix.summary))
            blocks += _code_sections(title, render.patch_json(fix.pod_patch))
    if diagnosis.next_commands:
        blocks.append(_section(messages.NEXT_COMMANDS))
    for command in diagnosis.next_commands:
        title = f"{messages.CHANGES_CLUSTER} — " if command.changes else ""
        blocks += _code_sections(f"{title}_{escape(command.purpose)}_", command.text)
    if diagnosis.holders:
        held = [f"• {escape(render.holding_line(h))}" for h in diagnosis.holders]
        blocks += _sections(held, messages.HELD_BY)
    if diagnosis.competing:
        blocks += _sections([escape(", ".join(diagnosis.competing))], messages.COMPETING)
    blocks += _sections([f"• {escape(e)}" for e in diagnosis.evidence], messages.EVIDENCE)
    for snippet in diagnosis.snippets:
        blocks += _code_sections(f"*{escape(snippet.title)}* ({escape(snippet.language)})", snippet.text)
    return blocks


def pack(blocks: Sequence[Block], text: str, cli: str) -> list[SlackMessage]:
    """Blocks into as few messages as Slack's limits allow; past MAX_MESSAGES, cut with a pointer to
    `cli`, the command that prints the whole answer (room for it is kept in every message)."""
    pages: list[list[dict[str, Any]]] = [[]]
    size = 0
    for block in blocks:
        raw = block.to_dict()
        chars = text_chars(raw)
        if pages[-1] and (len(pages[-1]) >= MAX_BLOCKS - 1 or size + chars > MESSAGE_CHARS):
            pages.append([])
            size = 0
        pages[-1].append(raw)
        size += chars
    if len(pages) > MAX_MESSAGES:
        pointer = _context(messages.truncated(MAX_MESSAGES, len(pages), escape(cli)))
        pages = pages[:MAX_MESSAGES]
        pages[-1].append(pointer.to_dict())
    fallback = escape(_clip(text, 300))
    return [SlackMessage(fallback, tuple(page)) for page in pages if page]


def verdict_message(check: Check, actions: Sequence[str], button: str) -> SlackMessage:
    kind, what = _subject(check)
    blocks = tuple(b.to_dict() for b in verdict_blocks(check, actions, button))
    return SlackMessage(escape(" ".join(filter(None, (f"{check.verdict}:", kind, what)))), blocks)


def detail_messages(
    check: Check, ephemeral_actions: Sequence[str] | None = None, button: str = ""
) -> list[SlackMessage]:
    """The thread's messages. For an ephemeral answer, which has no thread, `ephemeral_actions` puts
    the verdict (with those buttons) first."""
    _, what = _subject(check)
    blocks = detail_blocks(check)
    if ephemeral_actions is not None:
        blocks = verdict_blocks(check, ephemeral_actions, button, threaded=False) + blocks
    target = check.target
    cli = (
        messages.cli_command(target.kind, target.namespace, target.name)
        if target
        else "kubewhy jobset why --message '…'"
    )
    return pack(blocks, messages.detail_fallback(what), cli)


def note(text: str) -> SlackMessage:
    """A one-section message of bot wording (already escaped where it quotes people)."""
    return SlackMessage(_clip(text, 300), (_section(text).to_dict(),))


def _unmarked(mrkdwn: str) -> str:
    """mrkdwn for a terminal: code blocks indented on lines of their own, *bold* and whole-line
    _italics_ plain, entities decoded."""
    pieces = mrkdwn.split("```")
    for i, piece in enumerate(pieces):
        if i % 2:
            pieces[i] = "\n" + textwrap.indent(piece, "    ")
        else:
            pieces[i] = re.sub(r"(?m)^_(.+)_$", r"\1", re.sub(r"\*([^*\n]+)\*", r"\1", piece))
    return "".join(pieces).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def plain_text(blocks: Iterable[dict[str, Any]]) -> str:
    """Blocks as Slack shows them, for a terminal: headers, sections, context lines, [buttons] and
    [menus]."""
    lines: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind in ("header", "section"):
            lines.append(block.get("text", {}).get("text", ""))
        elif kind == "context":
            lines.append(" · ".join(e.get("text", "") for e in block.get("elements", [])))
        elif kind == "actions":
            labels = (e.get("text") or e.get("placeholder") or {} for e in block.get("elements", []))
            buttons = (label.get("text", "") for label in labels)
            lines.append(" ".join(f"[{b}]" for b in buttons))
    return _unmarked("\n".join(lines))
