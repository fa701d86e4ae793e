"""A run's snapshots on disk: deltas on the one before, a whole one again when the chain
grows long or names more paths than the whole one holds; every snapshot loads back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from coterie.checkpoints import CheckpointLog, ObjectStore, scan
from coterie.checkpoints import record as record_module

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def whole_ones(log: CheckpointLog) -> list[int]:
    folder = log.folder / "snapshots"
    ids = sorted(int(p.stem) for p in folder.glob("*.json"))
    return [i for i in ids if "full" in json.loads((folder / f"{i}.json").read_text())]


def test_a_whole_snapshot_comes_back_after_so_many_deltas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_module, "FULL_EVERY", 3)
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(10):
        (root / f"f{i}").write_text("x")
    store = ObjectStore(tmp_path / "objects")
    log = CheckpointLog(tmp_path / "run", objects=tmp_path / "objects")
    saved = {}
    for i in range(10):
        (root / f"f{i}").write_text(f"changed {i}")
        snapshot = scan(root, store)
        saved[log.save(snapshot)] = snapshot
    assert whole_ones(log) == [1, 4, 7, 10]
    fresh = CheckpointLog(tmp_path / "run", objects=tmp_path / "objects")
    assert all(fresh.load(sid).files == snap.files for sid, snap in saved.items())


def test_deltas_naming_more_paths_than_the_whole_one_holds_make_a_whole_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = ObjectStore(tmp_path / "objects")
    log = CheckpointLog(tmp_path / "run")
    for round_ in range(3):
        for i in range(4):
            (root / f"f{i}").write_text(f"{round_}")
        log.save(scan(root, store))
    # 1 whole (4 paths); 2 names 4 (4 in all); 3 would make 8: a whole one.
    assert whole_ones(log) == [1, 3]
    # A new session goes on with the chain on disk: one path more is a delta.
    later = CheckpointLog(tmp_path / "run")
    (root / "f0").write_text("last")
    later.save(scan(root, store))
    assert whole_ones(later) == [1, 3]
    assert later.load(4).files == scan(root, store).files
