"""JSON merge patch (RFC 7386), the form of every pod change a fix proposes: what
`kubectl patch --type merge` sends, and what the fixes' own check applies to a copy of the pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(target: object, patch: object) -> Any:
    """RFC 7386 §2 `MergePatch(Target, Patch)`: a patch object merges key by key (null removes the
    key), anything else replaces the target whole (so a list is always replaced, never merged). The
    target is not changed; the result shares the untouched parts with it."""
    if not isinstance(patch, Mapping):
        return patch
    merged = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged
