"""README.md shows what the code does: its example answer is what the CLI prints and its picture is
drawn from what the bot posts (both made by `devtools.readme_example`), its verdict tables list every
verdict word in the order the checks run, it names every button and the shortcut, and every README
section the repository points to exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from bot import messages
from devtools import slack_svg
from devtools.corpus import ROOT
from devtools.readme_example import PICTURE, README, REGENERATE, cli_text, example_in, slack_picture, steady
from diagnosis.model import JobSetVerdict, LwsVerdict, PodVerdict, TrainJobVerdict

STALE = f"out of date: `{REGENERATE}` rewrites README.md's example and {PICTURE.relative_to(ROOT)}"
SVG = "{http://www.w3.org/2000/svg}"


def readme() -> str:
    return README.read_text()


def test_the_example_is_what_the_cli_prints() -> None:
    assert example_in(readme()) == cli_text(), STALE


def test_the_picture_is_drawn_from_what_the_bot_posts() -> None:
    assert steady(PICTURE.read_text()) == steady(slack_picture()), STALE
    assert f"]({PICTURE.relative_to(ROOT)})" in readme()


def test_the_picture_draws_mrkdwn_as_slack_shows_it() -> None:
    svg = slack_svg.picture(
        [
            {"type": "header", "text": {"type": "plain_text", "text": ":red_circle: taint: pod ml/a"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": "*Fix:* add `tolerations` &lt;now&gt;"}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": "cluster *lab* · _checked_"}]},
            {
                "type": "actions",
                "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Watch"}}],
            },
        ],
        [
            [
                {
                    "type": "section",
                    "text": {"type": "mrkdwn", "text": "*Next commands*\n```kubectl  get pods```"},
                }
            ]
        ],
    )
    root = ElementTree.fromstring(svg)
    lines = ["".join(text.itertext()) for text in root.iter(f"{SVG}text")]
    assert lines == [
        "kw",
        "kubewhy",
        "APP",
        "🔴 taint: pod ml/a",
        "Fix: add tolerations <now>",
        "cluster lab · checked",
        "Watch",
        "1 reply",
        "kw",
        "kubewhy",
        "APP",
        "Next commands",
        f"kubectl{slack_svg.NBSP}{slack_svg.NBSP}get{slack_svg.NBSP}pods",
    ]
    styled = {
        (span.get("font-weight"), span.get("font-style"), span.text) for span in root.iter(f"{SVG}tspan")
    }
    assert {("700", None, "Fix:"), ("700", None, "lab"), (None, "italic", "checked")} <= styled
    (code,) = [span for span in root.iter(f"{SVG}tspan") if span.text == "tolerations"]
    assert "monospace" in (code.get("font-family") or "")


def test_a_long_line_is_wrapped_within_the_room_given() -> None:
    words = [
        slack_svg.Run("lab-node-0 has 1 nvidia.com/gpu free of 2 " * 12),
        slack_svg.Run("x" * 90, "code"),
    ]
    lines = slack_svg.wrap(words, 15, 400)
    assert len(lines) > 5
    assert all(sum(slack_svg.width(r.text, r.style, 15) for r in line) <= 400 for line in lines)
    assert "".join(r.text for line in lines for r in line).replace(" ", "") == "".join(
        r.text for r in words
    ).replace(" ", "")


VERDICTS: list[tuple[str, type[StrEnum]]] = [
    ("/triage", PodVerdict),
    ("/jobset why", JobSetVerdict),
    ("kubewhy lws why", LwsVerdict),
    ("/jobset why NS TRAINJOB", TrainJobVerdict),
]


@pytest.mark.parametrize(("question", "verdicts"), VERDICTS)
def test_each_verdict_has_its_row_in_the_order_the_checks_run(question: str, verdicts: type[StrEnum]) -> None:
    """The meanings live in README.md alone (ARCHITECTURE.md names the functions): a new verdict word
    without its row fails here."""
    header = f"| `{question}` verdict | meaning, checked in this order |"
    assert header in readme(), f"README.md has no table headed {header}"
    table = readme().split(header, 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^\| `([a-z-]+)` \|", table, re.MULTILINE) == [str(v) for v in verdicts]


def test_every_button_and_the_shortcut_are_described() -> None:
    buttons = (messages.RECHECK, messages.WATCH, messages.DETAILS, messages.ACKNOWLEDGE, messages.SILENCE)
    assert [b for b in buttons if f"| `{b}` |" not in readme()] == []
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
    assert [s["name"] for s in manifest["features"]["shortcuts"] if f"*{s['name']}*" not in readme()] == []


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def sources() -> Iterator[Path]:
    """The repository's own text: code, manifests, docs (not the virtualenv, the CRDs, the corpus, or
    this file's examples of references)."""
    skipped = {ROOT / "devtools" / "kubereal" / "crds", ROOT / "tests" / "corpus", Path(__file__)}
    kinds = (".py", ".md", ".yaml", ".yml", ".toml")
    for top in sorted(ROOT.iterdir()):
        if top.name.startswith("."):
            continue
        for path in top.rglob("*") if top.is_dir() else [top]:
            text = path.suffix in kinds or path.name in ("Dockerfile", "Makefile")
            if text and path.is_file() and not any(path.is_relative_to(s) for s in skipped):
                yield path


def test_every_readme_section_the_repository_points_to_exists() -> None:
    """`README, *Title*`, `README, "Title"` and `README.md#anchor` anywhere, and `see *Title*` inside
    README.md, name a heading of README.md."""
    headings = re.findall(r"^#+ (.+)$", readme(), re.MULTILINE)
    titles, anchors = set(headings), {slug(h) for h in headings}
    reference = re.compile(r'README(?:\.md)?, (?:\*([^*]+)\*|"([^"]+)")|README\.md#([\w-]+)')
    missing = []
    for path in sources():
        for star, quoted, anchor in reference.findall(path.read_text()):
            title = " ".join((star or quoted).split())
            if (anchor and anchor not in anchors) or (title and title not in titles):
                missing.append(f"{path.relative_to(ROOT)}: {anchor or title}")
    seen = {" ".join(t.split()) for t in re.findall(r"\bsee \*([^*]+)\*", readme())}
    missing += [f"README.md: see {t}" for t in sorted(seen - titles)]
    assert missing == []
    configmap = (ROOT / "deploy" / "base" / "configmap.yaml").read_text()
    assert 'README, "Cluster names and kubectl contexts"' in configmap


def test_every_file_readme_links_to_exists() -> None:
    linked = re.findall(r"\]\(((?!https?:|#)[^)\s]+)\)", readme())
    assert linked
    assert [link for link in linked if not (ROOT / link).exists()] == []
