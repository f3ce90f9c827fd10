"""Slack messages drawn as SVG from the blocks the bot posted: the picture in README.md.

The header, section, context and actions blocks are laid out as Slack's desktop client shows them
(bold header, 15px text, grey context lines, outlined buttons and menus), with mrkdwn's *bold*,
_italic_, `code`, ```code blocks``` and the emoji the bot uses. Text is measured with Arial's advance
widths (Helvetica's are the same), with room to spare for a wider font; each line is one text
element whose styled runs the viewer's font lays out. Pure: blocks in, SVG text out; no fonts, no browser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

Block = Mapping[str, Any]

WIDTH = 760
AUTHOR = "kubewhy"
_LEFT = 68
"""Where a message's text starts: right of its avatar."""
_TEXT_WIDTH = WIDTH - _LEFT - 20
_SLACK = 1.2
"""How much wider than Arial a viewer's font may be (DejaVu Sans is up to 20% wider): lines are
wrapped, and buttons sized, with that room to spare."""
_ROOM = _TEXT_WIDTH / _SLACK
NBSP = "\u00a0"
_SANS = "'Helvetica Neue', Helvetica, Arial, sans-serif"
_MONO = "Menlo, Monaco, Consolas, 'Courier New', monospace"
_INK, _GREY, _LINK, _CODE = "#1d1c1d", "#616061", "#1264a3", "#e01e5a"

_ARIAL = (
    [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278]
    + [556] * 10
    + [278, 278, 584, 584, 584, 556, 1015]
    + [667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833]
    + [722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611]
    + [278, 278, 278, 469, 556, 333]
    + [556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833]
    + [556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500]
    + [334, 260, 334, 584]
)
"""Arial's advance widths, in thousandths of the font size, of the printable ASCII characters."""
_WIDER = {"·": 278, "•": 350, "→": 1000, "…": 1000, "—": 1000, "×": 584}
_BOLD = 1.08
"""Bold text is about this much wider."""

EMOJI = {
    "red_circle": "🔴",
    "large_yellow_circle": "🟡",
    "white_check_mark": "✅",
    "grey_question": "❔",
    "warning": "⚠️",
    "arrows_counterclockwise": "🔄",
    "eyes": "👀",
    "checkered_flag": "🏁",
    "hourglass": "⌛",
    "octagonal_sign": "🛑",
    "no_bell": "🔕",
    "scissors": "✂️",
    "wave": "👋",
}
"""The shortcodes the bot's messages use (`bot/messages.py`), as the characters Slack draws for them."""
_PICTURES = {char for drawn in EMOJI.values() for char in drawn if char != "\ufe0f"}

_SHORTCODE = re.compile(r":([a-z0-9_]+):")
_INLINE = re.compile(r"`([^`\n]+)`|(?<!\w)\*([^*\n]+)\*(?!\w)|(?<!\w)_([^_\n]+)_(?!\w)")
_CODE_BLOCK = re.compile(r"```(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Run:
    """Text of one style: "" (plain), "bold", "italic" or "code"."""

    text: str
    style: str = ""


def emoji(text: str) -> str:
    return _SHORTCODE.sub(lambda m: EMOJI.get(m.group(1), m.group(0)), text)


def runs(line: str) -> list[Run]:
    """One line of mrkdwn as styled runs, Slack's escapes undone."""
    found: list[Run] = []
    at = 0
    for match in _INLINE.finditer(line):
        if match.start() > at:
            found.append(Run(html.unescape(emoji(line[at : match.start()]))))
        code, bold, italic = match.groups()
        if code is not None:
            found.append(Run(html.unescape(code), "code"))
        else:
            found.append(Run(html.unescape(emoji(bold or italic)), "bold" if bold else "italic"))
        at = match.end()
    if at < len(line):
        found.append(Run(html.unescape(emoji(line[at:]))))
    return found


def width(text: str, style: str, size: float) -> float:
    """The advance of `text` in pixels at `size`."""
    if style == "code":  # inline code is set 2px smaller, in a monospaced font
        return 0.6 * (size - 2) * len(text)
    total = 0
    for char in text:
        code = ord(char)
        if 32 <= code < 127:
            total += _ARIAL[code - 32]
        elif char in _PICTURES:
            total += 1300
        elif char != "\ufe0f":  # the emoji variation selector takes no room
            total += _WIDER.get(char, 600)
    return total / 1000 * size * (_BOLD if style == "bold" else 1)


def wrap(line: Sequence[Run], size: float, room: float) -> list[list[Run]]:
    """The runs broken into lines of at most `room` pixels, at spaces (inside a word too long for a
    line, anywhere)."""
    pieces = [Run(p, run.style) for run in line for p in re.split(r"( )", run.text) if p]
    lines: list[list[Run]] = [[]]
    used = 0.0
    for piece in pieces:
        advance = width(piece.text, piece.style, size)
        if piece.text == " " and not lines[-1]:
            continue
        if used + advance > room and lines[-1] and piece.text != " ":
            lines.append([])
            used = 0.0
        while advance > room:  # a word wider than a line: cut it
            cut = max(1, int(len(piece.text) * room / advance))
            while cut > 1 and width(piece.text[:cut], piece.style, size) > room:
                cut -= 1
            lines[-1].append(Run(piece.text[:cut], piece.style))
            lines.append([])
            piece = Run(piece.text[cut:], piece.style)
            advance = width(piece.text, piece.style, size)
        lines[-1].append(piece)
        used += advance
    return [_merged(line) for line in lines]


def _merged(line: list[Run]) -> list[Run]:
    """Neighbouring pieces of one style as one run; trailing spaces dropped."""
    merged: list[Run] = []
    for piece in line:
        if merged and merged[-1].style == piece.style:
            merged[-1] = Run(merged[-1].text + piece.text, piece.style)
        else:
            merged.append(piece)
    if merged:
        merged[-1] = Run(merged[-1].text.rstrip(" "), merged[-1].style)
    return [r for r in merged if r.text]


class Canvas:
    """SVG elements, and how far down the picture they reach."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.y = 16.0

    def line(
        self, runs_: Sequence[Run], size: float, color: str = _INK, x: float = _LEFT, centred: bool = False
    ) -> None:
        """One line of runs from x (or centred on x) at the current y: one text element, each styled
        run a tspan, so the font lays them out one after the other."""
        spans = "".join(_span(run, size) for run in runs_)
        middle = ' text-anchor="middle"' if centred else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{self.y:.1f}" font-family="{_SANS}" font-size="{size}" fill="{color}"'
            f"{middle}>{spans}</text>"
        )

    def code(self, text: str, size: float) -> None:
        """One line of a code block, its spaces kept."""
        self.parts.append(
            f'<text x="{_LEFT + 9}" y="{self.y:.1f}" font-family="{_MONO}" font-size="{size}" '
            f'fill="{_INK}">{escape(text.replace(" ", NBSP))}</text>'
        )

    def box(self, x: float, y: float, w: float, h: float, fill: str, stroke: str, radius: float) -> None:
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{radius}" '
            f'fill="{fill}" stroke="{stroke}"/>'
        )

    def svg(self, title: str) -> str:
        height = round(self.y + 16)
        return "\n".join(
            [
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
                f'viewBox="0 0 {WIDTH} {height}" role="img">',
                f"<title>{escape(title)}</title>",
                f'<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{height - 1}" rx="8" fill="#ffffff" '
                'stroke="#dddddd"/>',
                *self.parts,
                "</svg>\n",
            ]
        )


def _span(run: Run, size: float) -> str:
    text = escape(run.text)
    if run.style == "code":
        return f'<tspan font-family="{_MONO}" font-size="{size - 2}" fill="{_CODE}">{text}</tspan>'
    if run.style == "bold":
        return f'<tspan font-weight="700">{text}</tspan>'
    if run.style == "italic":
        return f'<tspan font-style="italic">{text}</tspan>'
    return text


def _paragraph(canvas: Canvas, text: str, size: float, leading: float, color: str = _INK) -> None:
    for source in text.split("\n"):
        for wrapped in wrap(runs(source), size, _ROOM):
            canvas.y += leading
            canvas.line(wrapped, size, color)


def _code_block(canvas: Canvas, code: str) -> None:
    size, leading = 12.0, 18.0
    per_line = int((_TEXT_WIDTH - 18) / (0.6 * size))
    lines = [
        piece[i : i + per_line]
        for piece in html.unescape(code).split("\n")
        for i in range(0, max(len(piece), 1), per_line)
    ]
    top = canvas.y + 8
    canvas.box(_LEFT, top, _TEXT_WIDTH, leading * len(lines) + 14, "#f8f8f8", "#dddddd", 4)
    canvas.y = top + 3
    for code_line in lines:
        canvas.y += leading
        canvas.code(code_line, size)
    canvas.y += 11


def _section(canvas: Canvas, text: str) -> None:
    """Prose and code blocks, in order: a code block starts on its own line."""
    for i, part in enumerate(_CODE_BLOCK.split(text)):
        if i % 2:
            _code_block(canvas, part)
        elif part.strip("\n"):
            _paragraph(canvas, part.strip("\n"), 15, 22)


def _actions(canvas: Canvas, elements: Sequence[Block]) -> None:
    """Buttons and menus, each outlined, its label centred."""
    top = canvas.y + 10
    x = float(_LEFT)
    for element in elements:
        label = (element.get("text") or element.get("placeholder") or {}).get("text", "")
        label += "  ▾" if element.get("type") == "static_select" else ""
        room = width(label, "bold", 13) * _SLACK + 24
        canvas.box(x, top, room, 28, "#ffffff", "#bbbbbb", 4)
        canvas.y = top + 18.5
        canvas.line([Run(label, "bold")], 13, x=x + room / 2, centred=True)
        x += room + 8
    canvas.y = top + 30


def _blocks(canvas: Canvas, blocks: Sequence[Block]) -> None:
    for block in blocks:
        kind = block.get("type")
        if kind == "header":
            canvas.y += 6
            for wrapped in wrap([Run(emoji(block["text"]["text"]), "bold")], 18, _ROOM):
                canvas.y += 26
                canvas.line(wrapped, 18)
            canvas.y += 4
        elif kind == "section":
            _section(canvas, block["text"]["text"])
            canvas.y += 4
        elif kind == "context":
            canvas.y += 2
            _paragraph(canvas, " ".join(e.get("text", "") for e in block["elements"]), 12, 18, _GREY)
            canvas.y += 4
        elif kind == "actions":
            _actions(canvas, block["elements"])


def _message(canvas: Canvas, blocks: Sequence[Block]) -> None:
    """A message of the bot: its avatar, its name with the APP badge, its blocks."""
    top = canvas.y
    canvas.box(20, top + 4, 36, 36, "#4a154b", "#4a154b", 6)
    canvas.y = top + 27
    canvas.line([Run("kw", "bold")], 14, "#ffffff", x=38, centred=True)
    canvas.y = top + 20
    canvas.line([Run(AUTHOR, "bold")], 15)
    badge = _LEFT + width(AUTHOR, "bold", 15) * _SLACK + 6
    canvas.box(badge, canvas.y - 11, 30, 14, "#e8e8e8", "#e8e8e8", 3)
    canvas.line([Run("APP", "bold")], 9, _GREY, x=badge + 15, centred=True)
    canvas.y += 4
    _blocks(canvas, blocks)
    canvas.y += 12


def _replies(canvas: Canvas, count: int) -> None:
    """The thread's divider: how many replies, then a rule."""
    label = f"{count} repl{'y' if count == 1 else 'ies'}"
    canvas.y += 8
    canvas.line([Run(label, "bold")], 13, _LINK)
    start, rule = _LEFT + width(label, "bold", 13) * _SLACK + 10, canvas.y - 4
    canvas.parts.append(
        f'<line x1="{start:.1f}" y1="{rule:.1f}" x2="{WIDTH - 20}" y2="{rule:.1f}" stroke="#dddddd"/>'
    )
    canvas.y += 8


def picture(message: Sequence[Block], thread: Sequence[Sequence[Block]]) -> str:
    """The message and its thread's replies beneath it, as one SVG document."""
    canvas = Canvas()
    _message(canvas, message)
    if thread:
        _replies(canvas, len(thread))
        for reply in thread:
            _message(canvas, reply)
    return canvas.svg(" ".join(_titles(message)))


def _titles(blocks: Sequence[Block]) -> Iterator[str]:
    """The header's words: the picture's title, for screen readers."""
    for block in blocks:
        if block.get("type") == "header":
            yield emoji(block["text"]["text"])
