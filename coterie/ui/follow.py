"""Reading a run from outside: its event log as it grows, its board, its replay pace.

Pure pieces (no I/O, no Trio) that ``coterie watch`` drives:

- :class:`LineSplitter` turns the bytes appended to ``events.jsonl`` into
  events. A line without its newline yet is kept back until the rest
  arrives (the run is writing it), so a reader that polls the file never
  sees half an event; a line that is not an event (a torn write after a
  crash, followed by the next line) is skipped, never raised.
- :class:`ReplaySchedule` says how long to wait before showing each event of
  a finished run: the recorded gap between it and the one before, divided
  by the speed (``0``: no wait at all). A recorded gap is capped at
  :data:`MAX_GAP` seconds, so that a run resumed hours after a kill -9
  replays in seconds, not hours.
- :func:`board_at` folds the board's log records (``coterie.board.read_log``)
  into its tasks as they stood at a given time, so a replay shows the board
  of the moment, not the final one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import attrs

from coterie.events import Event

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.board import LogEntry

__all__ = ["MAX_GAP", "LineSplitter", "LogTail", "ReplaySchedule", "board_at"]

#: The longest recorded pause (seconds) a replay reproduces.
MAX_GAP = 5.0


@attrs.define
class LineSplitter:
    """Bytes of a JSON-lines log in, whole events out (see the module docstring)."""

    _tail: bytes = b""
    #: Lines skipped because they were not events.
    skipped: int = 0

    def feed(self, data: bytes) -> list[Event]:
        """The events completed by *data* (appended to what came before)."""
        lines = (self._tail + data).split(b"\n")
        self._tail = lines.pop()  # b"" after a newline; else a line still being written
        events = []
        for line in lines:
            if not line.strip():
                continue
            try:
                events.append(Event.from_json(line.decode("utf-8", "replace")))
            except (ValueError, KeyError, TypeError, AttributeError):
                self.skipped += 1
        return events

    @property
    def pending(self) -> bool:
        """Whether a line is still waiting for its end."""
        return bool(self._tail)

    def drop_pending(self) -> None:
        """Forget the unfinished line: its writer is gone and will not finish it."""
        if self._tail:
            self.skipped += 1
        self._tail = b""


class LogTail:
    """An ``events.jsonl``, read as it grows (never opened for writing)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.splitter = path, 0, LineSplitter()

    def read(self) -> list[Event]:
        """The events written since the last read (a line being written waits; a log
        cut back, after a full disk, is read on from its new end)."""
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < self.offset:  # cut back: what was after the cut is gone
                    self.offset, self.splitter = size, LineSplitter()
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        return self.splitter.feed(data)


@attrs.define
class ReplaySchedule:
    """The waits of a replay at *speed* times the recorded pace (0: as fast as possible)."""

    speed: float = attrs.field(default=1.0)
    max_gap: float = MAX_GAP
    _last: float | None = attrs.field(init=False, default=None)

    @speed.validator
    def _check_speed(self, _attribute: attrs.Attribute[float], value: float) -> None:
        if not 0 <= value < float("inf"):
            raise ValueError(f"speed must be a finite number >= 0, got {value!r}")

    def delay(self, ts: float) -> float:
        """Seconds to wait before showing the event recorded at *ts* (epoch seconds)."""
        last, self._last = self._last, ts if self._last is None else max(self._last, ts)
        if last is None or self.speed == 0:
            return 0.0
        return min(max(0.0, ts - last), self.max_gap) / self.speed

    def total(self, stamps: Iterable[float]) -> float:
        """What a whole replay of events recorded at *stamps* waits (a fresh schedule)."""
        schedule = ReplaySchedule(self.speed, self.max_gap)
        return sum(schedule.delay(ts) for ts in stamps)


def board_at(entries: Iterable[LogEntry], until: float | None = None) -> list[dict[str, Any]]:
    """The tasks (``Task.to_json()`` dicts, in id order of creation) after the board
    records made up to *until* (epoch seconds; None: all of them)."""
    tasks: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if until is not None and entry.time > until:
            break
        if entry.op == "create":
            tasks[entry.task_id] = dict(entry.fields)
        elif entry.task_id in tasks:
            tasks[entry.task_id].update(entry.fields)
    return [dict(t) for t in tasks.values()]
