"""The work on a prompt is done and recorded, then the snapshot of its end cannot be
stored (a full disk): the answer stands, and the checkpoint is said to have no end."""

from __future__ import annotations

import errno
import json
from typing import TYPE_CHECKING

import trio

from coterie.checkpoints import CheckpointLog
from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def test_an_end_snapshot_the_disk_cannot_hold_leaves_the_answer_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: CheckpointLog, workspace: Path, n: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(CheckpointLog, "end", full)
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"name": "end", "tracks": {"lead": [{"text": "done"}]}}))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(workdir, scenario=str(scenario)) as session:
        with session.events.subscribe() as events:
            result = await session.query("go")
            seen = []
            while True:
                try:
                    seen.append(events.receive_nowait())
                except trio.WouldBlock:
                    break
    said = [e.data["reason"] for e in seen if e.type == "checkpoint.skipped"]
    assert (result.is_error, result.result) == (False, "done")
    assert said == ["checkpoint 1 has no end: its snapshot could not be stored"
                    " ([Errno 28] No space left on device)"]  # fmt: skip
