"""``cleanupPeriodDays``: a run's checkpoints older than the period go, with the file
contents no other snapshot names; recent runs and the running one keep theirs; an
untrusted workspace cannot set it."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import pytest

from coterie.checkpoints import checkpoint_log
from coterie.checkpoints.retention import prune_checkpoints
from coterie.tools.permissions import SettingsError, load_settings_file

if TYPE_CHECKING:
    from pathlib import Path


def a_run(runs: Path, name: str, content: str, *, age_days: float) -> Path:
    """A run whose one checkpoint holds a file with *content*, *age_days* old."""
    run_dir = runs / name
    workspace = run_dir / "ws"
    workspace.mkdir(parents=True)
    (workspace / "f.txt").write_text(content)
    log = checkpoint_log(run_dir)
    log.begin(workspace, request=f"r-{name}", text="go")
    old = time.time() - age_days * 86400
    os.utime(log.folder / "log.jsonl", (old, old))
    return run_dir


def test_old_checkpoints_and_the_contents_only_they_named_go(tmp_path: Path) -> None:
    runs = tmp_path / "project" / "runs"
    old = a_run(runs, "old", "only in the old run", age_days=40)
    recent = a_run(runs, "recent", "in the recent run", age_days=1)
    running = a_run(runs, "running", "old but running", age_days=90)
    objects = checkpoint_log(old).store.root
    assert len(list(objects.glob("*/*"))) == 3
    assert prune_checkpoints(runs, objects, 30, keep=running) == 1
    assert not (old / "checkpoints").exists()
    assert (recent / "checkpoints" / "log.jsonl").exists()
    assert (running / "checkpoints" / "log.jsonl").exists()
    kept = {p.read_text() for p in objects.glob("*/*")}
    assert kept == {"in the recent run", "old but running"}
    assert checkpoint_log(recent).checkpoints()[0].n == 1


def test_the_setting_is_read_and_checked_and_an_untrusted_workspace_cannot_set_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"cleanupPeriodDays": 7}))
    assert load_settings_file(path).cleanup_period_days == 7
    assert load_settings_file(path, trusted=False).cleanup_period_days is None
    path.write_text(json.dumps({"cleanupPeriodDays": 0}))
    with pytest.raises(SettingsError, match="cleanupPeriodDays"):
        load_settings_file(path)
