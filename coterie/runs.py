"""Run directories: where one run keeps its mailboxes, events and configuration.

A run lives in ``<workdir>/.coterie/runs/<run_id>/``::

    config.json     what was asked for (so a run can be inspected and resumed)
    events.jsonl    the append-only event log
    mailboxes/      one durable mailbox directory per actor
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coterie.fsutil import atomic_write
from coterie.ids import new_run_id

RUNS_DIR = Path(".coterie") / "runs"


def runs_root(workdir: Path) -> Path:
    """The folder holding every run of a workspace."""
    return workdir / RUNS_DIR


def create_run(workdir: Path, config: dict[str, Any]) -> tuple[str, Path]:
    """Make a new run directory with its ``config.json``; returns (run_id, path)."""
    run_id = new_run_id()
    path = runs_root(workdir) / run_id
    (path / "mailboxes").mkdir(parents=True)
    text = json.dumps({"run_id": run_id, **config}, indent=2) + "\n"
    atomic_write(path / "config.json", text.encode(), sync=True)
    return run_id, path
