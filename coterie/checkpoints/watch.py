"""Watching a workspace for changes between snapshots (Linux inotify), so that a
snapshot looks again only at what changed, as git's file-system monitor does.

:class:`Watcher` is the thin I/O layer over :class:`~.changes.ChangeLog`: it
adds a watch on each directory as a walk enters it (before the walk lists
it, so a change is either listed or queued, never missed) and, when a
snapshot is taken, reads every event the kernel queued since the last one
without blocking. Nothing runs between snapshots: the kernel keeps the
queue (``fs.inotify.max_queued_events``; past it, an overflow event, and
the next snapshot walks everything).

What a watch cannot see is left to the walk that opens every session: a
file changed through a hard link from outside the workspace, or by another
machine on a network file system. Where inotify is missing or refused (not
Linux, no instances or watches left: ``fs.inotify.max_user_watches``), or
the workspace has more directories than a quarter of the user's watches
(the rest stay for editors and other tools), :func:`open_watcher` answers
None, or the watcher turns itself off, and every snapshot walks the whole
workspace as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from pathlib import Path

from coterie.checkpoints.changes import EVENTS, IN_IGNORED, ChangeLog, Dirty
from coterie.checkpoints.snapshot import SKIPPED_DIRS

__all__ = ["Watcher", "open_watcher"]

_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_EXCL_UNLINK = 0x04000000
_MASK = EVENTS | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)
_READ = 1 << 16


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


class Watcher:
    """The inotify instance watching the directories under *root* (see the module
    docstring). Thread-safe: a snapshot may run in any worker thread."""

    def __init__(self, root: Path, fd: int, libc: ctypes.CDLL, budget: int) -> None:
        self.root = root
        self._fd: int | None = fd
        self._libc = libc
        self._log = ChangeLog(SKIPPED_DIRS)
        self._lock = threading.Lock()
        #: At most this many directories are watched; a larger workspace is walked.
        self.budget = budget
        self._watched: set[int] = set()

    @property
    def on(self) -> bool:
        """Whether the watcher still tracks changes (False once closed or refused)."""
        return self._fd is not None

    def watch(self, rel: str) -> None:
        """Watch directory *rel* (``""``: the root) from now on; called by a walk
        before it lists the directory."""
        with self._lock:
            if self._fd is None:
                return
            path = os.path.join(self.root, rel) if rel else str(self.root)
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
            if wd >= 0:
                self._log.watching(wd, rel)
                self._watched.add(wd)
                if len(self._watched) > self.budget:
                    self._off()  # leave the user's other programs their watches
                return
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return  # gone, or not ours to read: the walk will not list it either
            self._off()  # no watches left (ENOSPC) or worse: walk everything from now on

    def changes(self) -> Dirty | None:
        """What changed since the last call (None: walk everything, watching each
        directory again as it is entered)."""
        with self._lock:
            if self._fd is None:
                return None
            try:
                self._drain(self._fd)
            except OSError:
                self._off()
                return None
            return self._log.take()

    def lost(self) -> None:
        """The changes last taken are in no snapshot: the next one walks everything."""
        with self._lock:
            self._log.lost()

    def close(self) -> None:
        with self._lock:
            self._off()

    def _drain(self, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, _READ)
            except BlockingIOError:
                return
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                start = offset + _HEADER.size
                name = os.fsdecode(data[start : start + length].rstrip(b"\0"))
                offset = start + length
                if mask & IN_IGNORED:
                    self._watched.discard(wd)
                for gone in self._log.event(wd, mask, name):
                    self._libc.inotify_rm_watch(fd, gone)  # EINVAL if gone already: fine
                    self._watched.discard(gone)

    def _off(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._log.lost()


def open_watcher(root: Path, budget: int | None = None) -> Watcher | None:
    """A watcher for *root*, not yet watching anything (at most *budget* directories,
    by default a quarter of the user's watches); None where inotify is not available."""
    libc = _libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        return None
    return Watcher(root, fd, libc, _budget() if budget is None else budget)


def _budget() -> int:
    """How many directories one watcher may watch: a quarter of the user's
    ``fs.inotify.max_user_watches`` (editors and other tools need theirs)."""
    try:
        limit = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        limit = 8192  # the kernel's old default
    return max(limit // 4, 1)
