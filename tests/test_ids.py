"""Message and run ids."""

from __future__ import annotations

import re
import uuid

from coterie.ids import new_id, new_run_id


def test_message_ids_are_uuid7_and_sort_in_creation_order() -> None:
    ids = [new_id() for _ in range(5000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    parsed = uuid.UUID(ids[0])
    assert parsed.version == 7
    assert str(parsed) == ids[0]


def test_run_ids_are_readable_and_sortable() -> None:
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", new_run_id())
