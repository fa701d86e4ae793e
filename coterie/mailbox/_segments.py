"""The mailbox directory on disk: segment files, the writer lock, appends.

Layout of one mailbox directory::

    lock                      flock()ed by every writer around an append
    cursor                    acknowledged position (see _cursor.py)
    0000000000000001.log      segments of the record log, oldest first
    corrupt-<seg>-<off>.bin   bytes cut off a torn tail, kept for inspection

Writers in any process append whole records with one ``write`` under the
lock, always to the newest segment. A segment is only left behind once it is
at least ``segment_bytes`` long, so a writer that finds its segment still
short knows no one has rotated past it and needs no directory listing. The
writer that leaves a segment appends a *seal* record to it first, so a reader
moves on when it reads the seal, whatever segment size it was configured with.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from coterie.errors import MailboxError
from coterie.fsutil import fsync_dir
from coterie.journal import SEAL, Durability, FileLock, SyncPolicy, write_all
from coterie.mailbox._cursor import CURSOR_NAME, CURSOR_TMP

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.mailbox.base import Position

SEGMENT_RE = re.compile(r"^(\d{16})\.log$")
CORRUPT_RE = re.compile(r"^corrupt-\d{16}-\d+\.bin$")
LOCK_NAME = "lock"
DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024


def segment_path(directory: Path, number: int) -> Path:
    return directory / f"{number:016d}.log"


def list_segments(directory: Path) -> list[int]:
    """Segment numbers present in *directory*, ascending."""
    found = []
    for name in os.listdir(directory):
        m = SEGMENT_RE.match(name)
        if m:
            found.append(int(m.group(1)))
    found.sort()
    return found


def check_directory(directory: Path) -> None:
    """Refuse a mailbox directory holding anything coterie does not write there."""
    if not directory.is_dir():
        raise MailboxError(f"{directory}: mailbox path exists but is not a directory")
    for name in sorted(os.listdir(directory)):
        path = directory / name
        if name in (LOCK_NAME, CURSOR_NAME, CURSOR_TMP) or CORRUPT_RE.match(name):
            if name != LOCK_NAME and not path.is_file():
                raise MailboxError(f"{path}: expected a file")
            continue
        if SEGMENT_RE.match(name):
            if not path.is_file():
                raise MailboxError(f"{path}: a mailbox segment must be a regular file")
            continue
        raise MailboxError(
            f"{path}: unexpected file in a mailbox directory; coterie refuses to open "
            "a mailbox it did not write (move the file away)"
        )


class SegmentWriter:
    """Appends framed records to a mailbox directory, from any process."""

    def __init__(self, directory: Path, durability: Durability, segment_bytes: int) -> None:
        self.directory = directory
        self.durability = durability
        self.segment_bytes = segment_bytes
        self._lock = FileLock(directory / LOCK_NAME)
        self._segment = 0
        self._fd: int | None = None
        self._retired: list[int] = []  # fds of segments left behind, closed once synced
        self._syncs_running = 0
        self._policy = SyncPolicy(durability, self._unsynced)
        self._last_end = -1
        self.closed = False

    def wrote_last(self, name: str) -> bool:
        """Whether segment *name* ends where this writer's last record did (nobody
        else has appended since)."""
        if self._fd is None or name != segment_path(self.directory, self._segment).name:
            return False
        return os.fstat(self._fd).st_size == self._last_end

    # -- locking -------------------------------------------------------------

    def lock(self) -> None:
        self._lock.acquire()

    def unlock(self) -> None:
        self._lock.release()

    # -- appending -----------------------------------------------------------

    def append(self, data: bytes) -> tuple[Position, Position, int]:
        """Write one record; returns its start and end positions and the fd used.

        Synchronous: no other Trio task runs between choosing the segment and
        writing, and the flock keeps other processes out.
        """
        self.lock()
        try:
            fd, start = self._active_fd()
            write_all(fd, data)
            self._last_end = start + len(data)
            return (self._segment, start), (self._segment, start + len(data)), fd
        finally:
            self.unlock()

    def _active_fd(self) -> tuple[int, int]:
        """The newest segment's fd and its size (where the next record starts)."""
        if self._fd is not None:
            size = os.fstat(self._fd).st_size
            if size < self.segment_bytes and not _sealed(self._fd, size):
                return self._fd, size
        segments = list_segments(self.directory)
        newest = segments[-1] if segments else 1
        if newest != self._segment or self._fd is None:
            self._switch_to(newest)
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        # A segment sealed by someone else (a writer with smaller segments, or
        # one that died right after sealing) is left too: never write past a seal.
        if size >= self.segment_bytes or _sealed(self._fd, size):
            self._seal(self._fd)
            self._switch_to(newest + 1)
            assert self._fd is not None
            size = os.fstat(self._fd).st_size
        return self._fd, size

    @staticmethod
    def _seal(fd: int) -> None:
        # A writer that died between sealing and creating the next segment
        # left the seal already there: never write two.
        if not _sealed(fd, os.fstat(fd).st_size):
            os.write(fd, SEAL)

    def _switch_to(self, number: int) -> None:
        path = segment_path(self.directory, number)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        if created and self.durability is not Durability.NONE:
            fsync_dir(self.directory)
        if self._fd is not None:
            self._retired.append(self._fd)
            self._release_retired()
        self._fd, self._segment = fd, number

    # -- durability ----------------------------------------------------------

    async def make_durable(self, fd: int) -> None:
        """Return once the record just written through *fd* is on disk, per policy."""
        if self.durability is Durability.NONE:
            return
        self._syncs_running += 1
        try:
            await self._policy.sync(fd)
        finally:
            self._syncs_running -= 1
            self._release_retired()

    def make_durable_now(self, fd: int) -> None:
        """Blocking variant of :meth:`make_durable`, for ``send_nowait``."""
        self._policy.sync_now(fd)

    @property
    def flushes(self) -> int:
        """Group commits run by this writer (``batch`` only)."""
        return self._policy.flushes

    def _unsynced(self) -> list[int]:
        # What a group commit flushes: every segment written since the last
        # one, including those left behind meanwhile.
        return [*self._retired, *([self._fd] if self._fd is not None else [])]

    def _release_retired(self) -> None:
        # A retired fd may still be in a worker thread's fsync; close it only
        # when no sync is running (the batch flush covered it by then).
        if self._syncs_running == 0 or self.durability is Durability.NONE:
            for fd in self._retired:
                os.close(fd)
            self._retired.clear()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in [*self._retired, *([self._fd] if self._fd is not None else [])]:
            os.close(fd)
        self._retired.clear()
        self._fd = None
        self._lock.close()


def _sealed(fd: int, size: int) -> bool:
    """Whether the segment open as *fd* (of *size* bytes) ends with a seal."""
    return size >= len(SEAL) and os.pread(fd, len(SEAL), size - len(SEAL)) == SEAL
