"""Slack message metadata: what the bot's messages say they are about, read back and validated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def metadata_payload(model: type[Model], message: Mapping[str, Any], event_type: str) -> Model | None:
    """The payload of a message's Slack metadata of this event type, or None when the message carries
    none or a payload that does not validate (metadata is shown to anyone who reads the channel)."""
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != event_type:
        return None
    try:
        return model.model_validate(metadata.get("event_payload"))
    except ValidationError:
        return None
