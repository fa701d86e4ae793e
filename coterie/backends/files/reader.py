"""The runs of a workspace, read from their run directories without touching them.

The board is read through :class:`coterie.board.Board` (safe next to a live
run), a mailbox through :func:`coterie.mailbox.peek_mailbox` (no lock taken,
no file written), the events from ``events.jsonl``. Nothing here imports
Trio: ``coterie runs``, ``tasks`` and ``inbox`` on files start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.backends.protocol import Pending, ReadError

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.backends.protocol import RunSummary
    from coterie.events import Event

__all__ = ["FileReader"]


class FileReader:
    """The runs of the workspace *workdir* (see the module docstring)."""

    spans_workspaces = False

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.place = f"the workspace {workdir}"

    def runs(self) -> list[RunSummary]:
        from coterie.runs import list_runs

        return list(list_runs(self.workdir))

    def find(self, run_id: str | None) -> RunSummary:
        from coterie.runs import UnknownRun, find_run, list_runs, run_info, runs_root

        if run_id is not None:
            try:
                return run_info(find_run(self.workdir, run_id))
            except UnknownRun as exc:
                raise ReadError(str(exc)) from None
        try:
            runs = list_runs(self.workdir)
        except (ValueError, OSError) as exc:
            raise ReadError(f"cannot list the runs of {self.workdir}: {exc}", 1) from None
        if not runs:
            raise ReadError(f"no runs in {runs_root(self.workdir)}")
        return runs[-1]

    def is_run(self, name: str) -> bool:
        from coterie.runs import runs_root

        return "/" not in name and (runs_root(self.workdir) / name / "config.json").is_file()

    def board(self, run: RunSummary) -> list[dict[str, Any]] | None:
        from coterie.board import Board, BoardError

        directory = self._path(run) / "board"
        if not (directory / "board.log").is_file():
            return None
        try:
            with Board(directory, fsync=False) as board:
                return [task.to_json() for task in board.list()]
        except (BoardError, OSError) as exc:
            raise ReadError(f"cannot read the task board of run {run.run_id}: {exc}", 1) from None

    def actors(self, run: RunSummary) -> list[str]:
        root = self._path(run) / "mailboxes"
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def pending(self, run: RunSummary, actor: str) -> list[Pending]:
        from coterie.errors import MailboxError
        from coterie.mailbox import peek_mailbox

        try:
            return [Pending(m) for m in peek_mailbox(self._path(run) / "mailboxes" / actor)]
        except (MailboxError, OSError) as exc:
            raise ReadError(f"cannot read the mailbox of {actor}: {exc}", 1) from None

    def events(self, run: RunSummary) -> list[Event]:
        from coterie.events import read_events

        path = self._path(run) / "events.jsonl"
        return list(read_events(path)) if path.is_file() else []

    def resume_hint(self, run_id: str) -> str:
        return f"coterie resume {run_id}"

    def _path(self, run: RunSummary) -> Path:
        from coterie.runs import runs_root

        return runs_root(self.workdir) / run.run_id
