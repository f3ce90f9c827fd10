"""The first screen of every corpus answer (the channel message, and the head of `--format text`) fits in
five lines and says the verdict and target, the cause, the first fix, how long it waited and the
cluster; where an autoscaler is seen, one more line after the cause says whether a node will come.
Everything else is in the thread."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot import blocks
from bot.checks import Check
from bot.render import NO_FIX, as_text, first_screen, fix_line, node_line, stuck
from cluster.snapshot import SnapshotReader
from devtools.corpus import Case, cases
from handlers import jobset, triage
from handlers.reply import Reply, Scope
from handlers.requests import Target

CASES = [*cases("triage"), *cases("jobset")]
CLUSTER = "gke-prod"


async def _reply(case: Case) -> Reply:
    reader, scope = SnapshotReader.from_path(case.snapshot), Scope(CLUSTER)
    if case.kind == "triage":
        return await triage.triage(reader, case.namespace, case.name, scope)
    return await jobset.why(reader, case.namespace, case.name, scope)


def _check(case: Case, reply: Reply) -> Check:
    target = Target(
        kind="pod" if case.kind == "triage" else "jobset",
        namespace=case.namespace,
        name=case.name,
        cluster=CLUSTER,
    )
    return Check(target, reply, datetime(2026, 11, 29, 9, 0, tzinfo=UTC))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_the_channel_message_fits_in_five_lines(case: Case) -> None:
    reply = await _reply(case)
    shown = blocks.plain_text(blocks.verdict_message(_check(case, reply), blocks.ACTION_IDS, "{}").blocks)
    lines = shown.splitlines()
    coming = node_line(reply.diagnosis)
    assert len(lines) <= 5 + bool(coming), shown
    assert f"{case.verdict}:" in lines[0]
    assert f"{case.namespace}/{case.name}" in lines[0]
    assert f"cluster {CLUSTER}" in shown
    if coming:
        assert lines[2] == blocks.escape(coming)
    if reply.diagnosis.fixes:
        assert lines[2 + bool(coming)].startswith("Fix: ")
    if reply.diagnosis.pending_since is not None:
        assert "waiting " in shown


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_the_text_answer_starts_with_the_same_first_screen(case: Case) -> None:
    reply = await _reply(case)
    screen = first_screen(reply)
    assert len(screen) <= 5 + bool(node_line(reply.diagnosis))
    assert as_text(reply).startswith("\n".join(screen) + "\n\n") or as_text(reply) == "\n".join(screen)
    assert screen[0].startswith(f"Verdict: {case.verdict}")
    assert f"cluster: {CLUSTER}" in screen[1]
    if reply.diagnosis.fixes:
        assert screen[-1] == f"Fix: {reply.diagnosis.fixes[0].summary}"


PLACED = [c for c in cases("triage") if c.started]


@pytest.mark.parametrize("case", PLACED, ids=lambda c: c.id)
async def test_a_placed_pod_is_green_when_it_runs_and_red_when_it_fails(case: Case) -> None:
    """The channel message of a placed pod (`ok`): ✅ when it runs, 🔴 when something holds it, 🟡
    while it starts; a failing one leads with its cause."""
    reply = await _reply(case)
    shown = blocks.plain_text(blocks.verdict_message(_check(case, reply), blocks.ACTION_IDS, "{}").blocks)
    emoji = {"running": ":white_check_mark:", "failing": ":red_circle:", "starting": ":large_yellow_circle:"}
    assert shown.startswith(f"{emoji[str(case.started)]} ok: pod {case.namespace}/{case.name}")
    if case.started == "failing":
        assert " but does not run: " in shown.splitlines()[1]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_a_stuck_answer_has_a_fix_or_says_it_has_none(case: Case) -> None:
    """Every verdict that names what holds a pod or JobSet leads to a fix on the first screen, or says
    in one line that the objects show none: never silence."""
    reply = await _reply(case)
    screen = first_screen(reply)
    shown = blocks.plain_text(blocks.verdict_message(_check(case, reply), blocks.ACTION_IDS, "{}").blocks)
    if stuck(reply.diagnosis):
        fix = f"Fix: {fix_line(reply.diagnosis.fixes[0])}" if reply.diagnosis.fixes else f"Fix: {NO_FIX}"
        assert screen[-1] == fix
        # After the verdict and the cause, and the line that says whether a node will come, if any.
        assert shown.splitlines()[3 if node_line(reply.diagnosis) else 2] == fix
    else:
        assert not any(line.startswith("Fix: ") for line in screen) or reply.diagnosis.fixes
