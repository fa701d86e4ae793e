"""A run's background tasks on disk, and what their owners are told of them.

Each background command (Bash with ``run_in_background``, a Monitor) has a
record ``background/<id>.json`` in the run directory, written durably before
its program may run, and its output in ``background/<id>.output``. The
record says whose it is (the agent), what it runs, how it ended and whether
its owner has been told. A record still ``running`` when a run opens is one a
kill -9 cut short: its group was killed by the start-up reaper
(:func:`coterie.procgroups.reap_workspace`), and its owner is told it was
lost, never left to wait for it. Pure functions and file I/O; no Trio.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from typing import TYPE_CHECKING, Any

import attrs

from coterie.fsutil import atomic_write

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "COMPLETED",
    "FAILED",
    "RUNNING",
    "STOPPED",
    "TaskRecord",
    "event_notice",
    "finish_notice",
    "load_records",
    "new_task_id",
    "trailer",
]

RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
STOPPED = "stopped"

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_task_id() -> str:
    """A fresh id in Claude Code's shape: ``b`` and eight lower-case letters or digits."""
    return "b" + "".join(secrets.choice(_ALPHABET) for _ in range(8))


@attrs.define
class TaskRecord:
    """One background task as its record holds it."""

    id: str
    agent: str
    kind: str  # "bash" or "monitor"
    command: str
    description: str
    output: str
    status: str = RUNNING
    exit_code: int | None = None
    #: Why it ended, in words for the owner (None while it runs).
    why: str | None = None
    #: Whether its owner has been told how it ended.
    notified: bool = False
    started_at: float = attrs.field(factory=time.time)
    ended_at: float | None = None

    def save(self, directory: Path, *, sync: bool) -> None:
        """Write the record (atomically; *sync*: durably)."""
        data = json.dumps(attrs.asdict(self), sort_keys=True).encode()
        atomic_write(directory / f"{self.id}.json", data, sync=sync)

    @property
    def summary(self) -> str:
        """How it ended, in one line (Claude Code's ``summary``)."""
        what = f'Monitor "{self.description}"' if self.kind == "monitor" else (
            f'Background command "{self.description}"'
        )  # fmt: skip
        return f"{what} {self.why}" if self.why else f"{what} is running"


def load_records(directory: Path) -> list[TaskRecord]:
    """Every readable record in *directory* (a damaged one is skipped)."""
    found: list[TaskRecord] = []
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return found
    fields = {f.name for f in attrs.fields(TaskRecord)}
    for path in paths:
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            found.append(TaskRecord(**{k: v for k, v in data.items() if k in fields}))
        except (OSError, ValueError, TypeError):
            continue
    return found


def trailer(record: TaskRecord) -> str:
    """The line appended to the output file when the task ends."""
    if record.status in (COMPLETED, FAILED) and record.exit_code is not None:
        return f"\n[exit code {record.exit_code}]\n"
    return f"\n[{record.why or record.status}]\n"


def append_trailer(record: TaskRecord, *, sync: bool = True) -> None:
    """Append :func:`trailer` to the task's output file (*sync*: and make the file durable)."""
    with contextlib.suppress(OSError):
        fd = os.open(record.output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, trailer(record).encode())
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


_PREFACE = (
    "A notice from the runtime about your background work (not a message from the"
    " user, and no answer from them):"
)


def finish_notice(record: TaskRecord, tool_use_id: str | None = None) -> str:
    """What the owner is told when the task ends (Claude Code's ``task-notification``)."""
    lines = [f"<task-id>{record.id}</task-id>"]
    if tool_use_id:
        lines.append(f"<tool-use-id>{tool_use_id}</tool-use-id>")
    lines += [
        f"<output-file>{record.output}</output-file>",
        f"<status>{record.status}</status>",
        f"<summary>{record.summary}</summary>",
    ]
    return _wrap(lines)


def event_notice(record: TaskRecord, line: str) -> str:
    """What the owner of a Monitor is told of one line it printed."""
    return _wrap(
        [
            f"<task-id>{record.id}</task-id>",
            f'<summary>Monitor "{record.description}" printed a line</summary>',
            f"<event>{line}</event>",
        ]
    )


def _wrap(lines: list[str]) -> str:
    body = "\n".join(["<task-notification>", *lines, "</task-notification>"])
    return f"<system-reminder>\n{_PREFACE}\n{body}\n</system-reminder>"
