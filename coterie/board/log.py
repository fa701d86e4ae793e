"""The board directory on disk: the operation log, its lock, damaged bytes.

Layout of a board directory::

    lock                   flock()ed: exclusively by a writer around
                           read-tail / decide / append, shared by a reader
                           catching up with the tail
    board.log              the operation log: framed records, oldest first
    corrupt-<offset>.bin   bytes of a torn tail cut off, kept for inspection
    rewound-<size>[-n].bin records a rewind of the run cut off (:func:`rewind_log`)

Records use the shared framing of :mod:`coterie.journal` (magic, length,
checksums; the same bytes as the mailbox's), so a torn tail is told apart
from a damaged record in the middle. The board never seals its log: an empty
record is damage. The payload is one JSON object: ``{"s": seq, "t": wall
time, "op": name, "task": {...}}`` for a creation, ``{"s", "t", "op", "id",
"set": {field: value}}`` for any other change (see ``_state.py``).

Every append happens under the exclusive lock with one ``write`` to an
``O_APPEND`` file, so whoever holds the lock and finds an unfinished record
at the end knows its writer died mid-write: that tail is torn, and is cut
off before anything is appended after it. A reader holding only the shared
lock never cuts; it stops before the unfinished record.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.board._errors import BoardError
from coterie.fsutil import fsync_dir
from coterie.journal import Corrupt, FileLock, Incomplete, Record, cut_tail, scan, write_all

if TYPE_CHECKING:
    from collections.abc import Callable
    from os import PathLike

LOG_NAME = "board.log"
LOCK_NAME = "lock"
CORRUPT_RE = re.compile(r"corrupt-\d{16}\.bin")
REWOUND_RE = re.compile(r"rewound-\d{16}(-\d+)?\.bin")


@attrs.frozen
class BoardCorruption:
    """Bytes of the log that are not a valid record: skipped, or cut off as a torn tail."""

    start: int
    end: int
    action: str  # "skipped" or "truncated"
    reason: str
    saved_to: str | None = None


@attrs.frozen
class LogEntry:
    """One record of a board's log, as :func:`read_log` returns it.

    ``seq`` numbers records 1, 2, ... in log order: the order in which the
    operations took effect, across every process. ``fields`` is the whole task
    for ``op == "create"``, else the fields the operation set.
    """

    seq: int
    time: float
    op: str
    task_id: str
    fields: dict[str, Any]


class LogShrankError(Exception):
    """The log is shorter than what was already read: someone cut it. Re-read it all."""


def check_directory(directory: Path) -> None:
    """Refuse a board directory holding anything the board does not write there."""
    if not directory.is_dir():
        raise BoardError(f"{directory}: board path exists but is not a directory")
    for name in sorted(os.listdir(directory)):
        path = directory / name
        if (
            name in (LOG_NAME, LOCK_NAME)
            or CORRUPT_RE.fullmatch(name)
            or REWOUND_RE.fullmatch(name)
        ):
            if not path.is_file() or path.is_symlink():
                raise BoardError(f"{path}: expected a regular file")
            continue
        raise BoardError(
            f"{path}: unexpected file in a task board directory; coterie refuses to open "
            "a board it did not write (move the file away)"
        )


def decode(payload: bytes) -> dict[str, Any]:
    """The JSON object of a record; ``ValueError`` if it is not one."""
    value = json.loads(payload.decode())  # from str: skips json's encoding detection
    if not isinstance(value, dict):
        raise ValueError("record is not a JSON object")
    return value


class BoardLog:
    """The open log file and lock of one board directory, and how far it was read."""

    def __init__(self, directory: Path, report: Callable[[BoardCorruption], None]) -> None:
        if directory.exists():
            check_directory(directory)
        else:
            directory.mkdir(parents=True)
        self.directory = directory
        self._report = report
        path = directory / LOG_NAME
        created = not path.exists()
        self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = FileLock(directory / LOCK_NAME)
        if created:
            fsync_dir(directory)
        self.offset = 0  # everything before this was read (and applied or reported)
        self.closed = False

    # -- locking ---------------------------------------------------------------

    def lock(self, *, exclusive: bool, blocking: bool) -> bool:
        """Take the directory's flock; ``False`` if *blocking* is false and it is taken."""
        return self._lock.acquire(exclusive=exclusive, blocking=blocking)

    def unlock(self) -> None:
        """Release the flock."""
        self._lock.release()

    # -- reading ---------------------------------------------------------------

    def read_tail(self, *, exclusive: bool) -> list[Record]:
        """The whole records appended since the last call, advancing :attr:`offset`.

        Damaged records are reported and skipped. An unfinished record at the
        end is cut off when *exclusive* (the lock holder knows no one is
        writing it), else left for later.
        """
        size = os.fstat(self._fd).st_size
        if size < self.offset:
            raise LogShrankError
        if size == self.offset:
            return []
        records: list[Record] = []
        for item in scan(os.pread(self._fd, size - self.offset, self.offset), self.offset):
            if isinstance(item, Record):
                if item.payload:
                    records.append(item)
                else:
                    self.report(item.start, item.end, "an empty record")
                self.offset = item.end
            elif isinstance(item, Corrupt):
                self.report(item.start, item.end, "bytes that are not a record")
                self.offset = item.end
            elif isinstance(item, Incomplete) and exclusive:
                self._cut(item.start, size)
        return records

    def read_ahead(self) -> tuple[list[Record], bool]:
        """Whole records appended since the last read, taken without any lock.

        Only a run of valid records starting exactly at :attr:`offset` is
        taken; it stops at the first thing that is not one (a record being
        written, a torn tail, damage) and leaves it to :meth:`read_tail` under
        the lock. That is safe even while a lock holder cuts a torn tail and
        appends in its place: bytes that pass both checksums at this offset
        are a record that is really there. Returns the records and whether
        they reach the end of the file.

        This lets a process replay what others wrote *before* queueing for the
        exclusive lock, so replay runs in parallel across processes instead of
        inside everyone's critical section.
        """
        size = os.fstat(self._fd).st_size
        if size <= self.offset:
            return [], size == self.offset
        records: list[Record] = []
        for item in scan(os.pread(self._fd, size - self.offset, self.offset), self.offset):
            if not isinstance(item, Record) or not item.payload or item.start != self.offset:
                return records, False
            records.append(item)
            self.offset = item.end
        return records, True

    def report(self, start: int, end: int, reason: str) -> None:
        """Report a skipped record."""
        self._report(BoardCorruption(start, end, "skipped", reason))

    def _cut(self, start: int, size: int) -> None:
        # A writer died mid-append (we hold the lock, so no one is writing):
        # keep the bytes for inspection, then cut them so appends follow a
        # whole record.
        saved = self.directory / f"corrupt-{start:016d}.bin"
        cut_tail(self._fd, start, os.pread(self._fd, size - start, start), saved, sync=False)
        self.offset = start
        self._report(BoardCorruption(start, size, "truncated", "a torn tail", str(saved)))

    # -- writing ---------------------------------------------------------------

    def append(self, data: bytes) -> None:
        """Write *data* (whole records) at the end; call with the exclusive lock held.

        On failure (a full disk) whatever part was written is cut off again,
        so the log never keeps half a record of an operation that raised.
        """
        start = self.offset
        try:
            write_all(self._fd, data)
        except BaseException:
            os.ftruncate(self._fd, start)
            raise
        self.offset = start + len(data)

    def sync(self) -> None:
        """Make everything written so far durable (fdatasync covers the new size too)."""
        os.fdatasync(self._fd)

    def size(self) -> int:
        """The log's length in bytes."""
        return os.fstat(self._fd).st_size

    def close(self) -> None:
        """Close the files (releasing any lock)."""
        if not self.closed:
            self.closed = True
            os.close(self._fd)
            self._lock.close()


def rewind_log(directory: Path, size: int) -> int:
    """Put the board of a stopped run back to when its log was *size* bytes long (a
    rewind of the run's conversation): the records after that are cut off, kept
    beside the log as ``rewound-<size>.bin``; how many tasks their cut took away.
    Nothing is done if the log is not longer, or *size* is not the end of a record
    (a ``BoardError``: the log is not the one the size was taken of)."""
    path = directory / LOG_NAME
    lock = FileLock(directory / LOCK_NAME)
    fd = os.open(path, os.O_RDWR)
    try:
        lock.acquire(exclusive=True)
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        if len(data) <= size:
            return 0
        ends = {item.end for item in scan(data) if isinstance(item, Record)}
        if size != 0 and size not in ends:
            raise BoardError(f"{path}: {size} is not the end of a record; not rewound")
        tail = data[size:]
        gone = [log_entry(item.payload) for item in scan(tail) if isinstance(item, Record)]
        saved, again = directory / f"rewound-{size:016d}.bin", 1
        while saved.exists():  # rewound to the same length before: that cut is kept too
            saved, again = directory / f"rewound-{size:016d}-{again}.bin", again + 1
        cut_tail(fd, size, tail, saved, sync=True)
    finally:
        os.close(fd)
        lock.close()
    fsync_dir(directory)
    return sum(1 for entry in gone if entry is not None and entry.op == "create")


def read_log(directory: str | PathLike[str]) -> list[LogEntry]:
    """Every readable record of the board in *directory*, in log order.

    For inspection and audits (``coterie tasks``, tests): it takes no lock and
    changes nothing, skipping damaged records and an unfinished tail.
    """
    try:
        data = (Path(directory) / LOG_NAME).read_bytes()
    except FileNotFoundError:
        return []
    entries: list[LogEntry] = []
    for item in scan(data):
        if not isinstance(item, Record) or not item.payload:
            continue
        entry = log_entry(item.payload)
        if entry is not None:
            entries.append(entry)
    return entries


def log_entry(payload: bytes) -> LogEntry | None:
    """The :class:`LogEntry` of one record's JSON, ``None`` if it is not a record."""
    try:
        rec = decode(payload)
        created = rec["op"] == "create"
        return LogEntry(
            seq=rec["s"],
            time=rec["t"],
            op=rec["op"],
            task_id=rec["task"]["id"] if created else rec["id"],
            fields=rec["task"] if created else rec["set"],
        )
    except (ValueError, KeyError, TypeError):
        return None
