"""The file operations every log repeats: whole writes, cutting a torn tail, the lock file.

A log appends a record (or a batch of them) with one ``write`` to an
``O_APPEND`` file, so concurrent writers never interleave inside a record;
:func:`write_all` finishes a short write. Whoever holds the writers' lock and
finds an unfinished record at the end knows its writer died mid-write, and
cuts it off with :func:`cut_tail` before appending, keeping the bytes for
inspection. :class:`FileLock` is that lock: an ``flock`` on a file of the
log's directory, so it holds across processes.
"""

from __future__ import annotations

import fcntl
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    """Write all of *data* through *fd* (at its end, for an ``O_APPEND`` file)."""
    written = os.write(fd, data)
    if written < len(data):  # rare (a full disk, a signal): finish the rest
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]


def cut_tail(fd: int, start: int, tail: bytes, saved_to: Path, *, sync: bool) -> None:
    """Cut the torn tail *tail*, which starts at *start*, off the log open as *fd*.

    The bytes are written to *saved_to* first, so nothing is lost that a
    person might want to look at; with *sync* the shortened file is fsynced
    before this returns. Call it with the writers' lock held.
    """
    saved_to.write_bytes(tail)
    os.ftruncate(fd, start)
    if sync:
        os.fsync(fd)


class FileLock:
    """An ``flock`` on *path* (created if missing): exclusive for writers, shared for readers."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    def acquire(self, *, exclusive: bool = True, blocking: bool = True) -> bool:
        """Take the lock; ``False`` if *blocking* is false and someone else holds it."""
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(self._fd, mode if blocking else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def release(self) -> None:
        """Release the lock."""
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (releasing the lock if held)."""
        os.close(self._fd)
