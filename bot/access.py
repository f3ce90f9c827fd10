"""Who may ask what: the channel, the person (directly or through a user group), the namespace (the
cluster a channel may ask is checked where it is resolved, `bot.clusters`).

Checked before any cluster read, on every question and follow-up (a button can be clicked by anyone in
the channel). A refusal says why, in words the person can act on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.settings import Config
from handlers.requests import Target

log = logging.getLogger(__name__)


class Access:
    def __init__(
        self, config: Config, client: AsyncWebClient, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._config = config
        self._client = client
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}

    async def refusal(self, channel: str, user: str, target: Target | None) -> str | None:
        """Why `user` may not ask about `target` in `channel`, or None when they may."""
        allow = self._config.allow
        if allow.channels and channel not in allow.channels:
            return messages.channel_not_allowed()
        if (allow.users or allow.usergroups) and not (user in allow.users or await self._in_groups(user)):
            return messages.user_not_allowed()
        namespaces = self._config.channel(channel).namespaces
        if target is not None and namespaces is not None and target.namespace not in namespaces:
            return messages.namespace_not_allowed(target.namespace, namespaces)
        return None

    async def _in_groups(self, user: str) -> bool:
        for group in self._config.allow.usergroups:
            if user in await self._group_members(group):
                return True
        return False

    async def _group_members(self, group: str) -> frozenset[str]:
        """Members of a user group, cached for `usergroup_cache_seconds` (membership changes rarely,
        and usergroups.users.list is rate limited)."""
        now = self._clock()
        cached = self._members.get(group)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            response = await self._client.usergroups_users_list(usergroup=group)
            members = frozenset(response.get("users") or ())
        except SlackApiError as error:
            log.warning(
                "cannot list user group %s: %s; counting no one in it", group, error.response.get("error")
            )
            members = frozenset()
        self._members[group] = (now + self._config.usergroup_cache_seconds, members)
        return members
