"""Where the bot cannot post: a channel it was not invited to, a direct message. The asker still gets
the whole answer, privately, with the line that fixes it."""

from __future__ import annotations

import pytest

from tests.slack.support import Bot, shown


@pytest.mark.parametrize("error", ["not_in_channel", "channel_not_found"])
def test_a_channel_the_bot_is_not_in_gets_the_answer_privately_with_the_invite(
    bot: Bot, channel: str, error: str
) -> None:
    bot.slack.fail("chat.postMessage", error, channel=channel)
    sent = bot.command("gpu-triage case-exhaust", channel)
    replies = bot.responses(sent, at_least=2)
    text = "\n".join(shown(r) for r in replies)
    assert "/invite @kubewhy" in shown(replies[0])
    assert "exhausted: pod gpu-triage/case-exhaust" in text
    assert "Fix: free lab-node-0: end gpu-triage/case-ok" in text
    assert "Evidence" in text
    assert all(r["response_type"] == "ephemeral" for r in replies)
    assert "Sorry, something went wrong" not in text
    assert bot.bot_messages(channel) == []


def test_a_direct_message_is_answered_to_the_asker_with_where_threads_work(bot: Bot) -> None:
    dm = "D0KUBEWHY1"
    sent = bot.command("gpu-triage case-alloc0", dm)
    replies = bot.responses(sent, at_least=2)
    text = "\n".join(shown(r) for r in replies)
    assert "In a direct message the answer comes to you alone" in shown(replies[0])
    assert "allocatable-zero: pod gpu-triage/case-alloc0" in text
    assert "Fix: repair the GPU Operator validator gpu-operator/nvidia-operator-validator-9r4hm" in text
    assert bot.bot_messages(dm) == []
