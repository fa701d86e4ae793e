"""Keeping the checkpoint store bounded: ``cleanupPeriodDays`` (Claude Code's setting).

A run's checkpoints (its ``checkpoints/`` log and snapshots) are deleted once
its last checkpoint is older than the period; then every file content no
snapshot of the workspace's runs names any more is deleted from the shared
store. The run itself (its transcript, board, events) stays: only rewinding
it is no longer possible. Done as a run of the workspace starts.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DEFAULT_DAYS", "prune_checkpoints"]

#: Claude Code's default for ``cleanupPeriodDays``.
DEFAULT_DAYS = 30


def prune_checkpoints(runs: Path, objects: Path, days: int, *, keep: Path | None = None) -> int:
    """Delete the checkpoints of the runs under *runs* idle for over *days* days (but
    *keep*'s), then the contents in *objects* no remaining snapshot names; how many
    runs lost their checkpoints."""
    cutoff = time.time() - days * 86400
    pruned = 0
    try:
        folders = [r / "checkpoints" for r in runs.iterdir() if r != keep]
    except OSError:
        return 0
    for folder in folders:
        log = folder / "log.jsonl"
        with contextlib.suppress(OSError):
            if log.stat().st_mtime < cutoff:
                shutil.rmtree(folder)
                pruned += 1
    if pruned:
        _collect(runs, objects)
    return pruned


def _collect(runs: Path, objects: Path) -> None:
    """Delete every object of *objects* that no snapshot of a run under *runs* names."""
    named: set[str] = set()
    for snapshot in runs.glob("*/checkpoints/snapshots/*.json"):
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(snapshot.read_text())
            entries = data.get("full") or data.get("set") or {}
            named.update(e["sha"] for e in entries.values() if isinstance(e, dict) and e.get("sha"))
    for path in objects.glob("*/*"):
        if path.parent.name + path.name not in named:
            path.unlink(missing_ok=True)
