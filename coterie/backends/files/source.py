"""One run followed from its run directory (``watch``, ``observe``), read-only.

Its events are ``events.jsonl`` read as it grows (a line being written
waits for its end; never opened for writing), its liveness the run's lock,
its board the board's log, its mailboxes counted with
:func:`coterie.mailbox.peek_mailbox` (no lock taken, nothing written).
"""

from __future__ import annotations

import contextlib
import glob
import os
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from coterie.board import LogEntry
    from coterie.events import Event

__all__ = ["POLL", "FileSource", "locate", "mail_counts", "open_source"]

POLL = 0.1  # seconds between two reads of a live run's log


def locate(workdir: Path, run_id: str) -> Path:
    """The directory of run *run_id* (or a unique prefix) of *workdir*, found without
    changing anything; :class:`~coterie.runs.UnknownRun` if there is none or several."""
    from coterie.runs import UnknownRun, runs_root

    root = runs_root(workdir)
    if run_id and "/" not in run_id and (root / run_id / "config.json").is_file():
        return root / run_id
    found = sorted(p for p in root.glob(glob.escape(run_id) + "*") if (p / "config.json").is_file())
    if run_id and len(found) == 1:
        return found[0]
    what = "is ambiguous" if found else "not found"
    raise UnknownRun(f"run {run_id!r} {what} in the workspace {workdir} (see `coterie runs`)")


def mail_counts(run_dir: Path, known: dict[str, tuple[Any, int]] | None = None) -> dict[str, int]:
    """Each actor's unacknowledged messages (pending or in flight), read from outside;
    *known* remembers each mailbox's count by a fingerprint of its files, so that
    a mailbox that did not change is not read again."""
    from coterie.errors import MailboxError
    from coterie.mailbox import peek_mailbox

    known = {} if known is None else known
    root, counts = run_dir / "mailboxes", dict[str, int]()
    try:
        names = sorted(p.name for p in root.iterdir() if p.is_dir())
    except OSError:
        return counts
    for name in names:
        directory = root / name
        key = _fingerprint(directory)
        seen = known.get(name)
        if seen is not None and seen[0] == key:
            counts[name] = seen[1]
            continue
        try:
            count = len(peek_mailbox(directory))
        except (MailboxError, OSError):
            continue  # a mailbox being made, or damaged: no count rather than a crash
        known[name] = (key, count)
        counts[name] = count
    return counts


def _fingerprint(directory: Path) -> Any:
    """What changes whenever a mailbox's count may have (its files' sizes and times)."""
    try:
        return tuple(
            sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(directory))
        )
    except OSError:
        return None


class FileSource:
    """The run in *run_dir* (see the module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        from coterie.runs import DamagedRun, read_config
        from coterie.ui.follow import LogTail

        self.run_dir = run_dir
        self.run_id = run_dir.name
        try:
            self.config: dict[str, Any] = read_config(run_dir)
        except DamagedRun:
            self.config = {}
        self._tail = LogTail(run_dir / "events.jsonl")
        self._counted: dict[str, tuple[Any, int]] = {}

    async def live(self) -> str | None:
        from coterie.runs import is_live

        return "" if is_live(self.run_dir) else None

    async def events(self, wait: float = 0.0) -> list[Event]:
        fresh = await trio.to_thread.run_sync(self._tail.read)  # a long log: off the loop
        if not fresh and wait > 0:
            await trio.sleep(min(wait, POLL))
            fresh = await trio.to_thread.run_sync(self._tail.read)
        return fresh

    async def board(self) -> list[LogEntry] | None:
        from coterie.board import read_log

        directory = self.run_dir / "board"
        if not directory.is_dir():
            return None
        return await trio.to_thread.run_sync(read_log, directory)

    async def mail_counts(self) -> dict[str, int]:
        return await trio.to_thread.run_sync(mail_counts, self.run_dir, self._counted)

    async def outcome(self) -> tuple[str, str | None]:
        from coterie.runs import run_info

        info = run_info(self.run_dir)
        return info.state, info.result


@contextlib.asynccontextmanager
async def open_source(workdir: Path, run_id: str) -> AsyncIterator[FileSource]:
    """Run *run_id* (a unique prefix) of *workdir*, to follow."""
    yield FileSource(locate(workdir, run_id))
