"""Every corpus snapshot could have been served by one API server: no two objects of a kind share a
namespace and name, and every object has the identity the API gives it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from devtools.corpus import every_case

SNAPSHOTS = sorted({case.snapshot for case in every_case()})


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.name)
def test_objects_are_unique_and_identified(snapshot: Path) -> None:
    items = json.loads(snapshot.read_text())["items"]
    keys = Counter(
        (item["apiVersion"], item["kind"], item["metadata"].get("namespace", ""), item["metadata"]["name"])
        for item in items
    )
    assert [key for key, count in keys.items() if count > 1] == []
    uids = Counter(item["metadata"]["uid"] for item in items)
    assert [uid for uid, count in uids.items() if count > 1] == []
