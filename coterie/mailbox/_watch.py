"""Cross-process wake-ups: inotify on Linux, so idle receivers cost nothing.

A receiver in this process learns of a record appended by *another* process
through the kernel: one inotify descriptor per Trio run watches the
directories of the mailboxes that have receivers waiting, and a system task
wakes them when a directory changes. Where inotify is not available (not
Linux, or out of watches) :func:`watcher` returns None and mailboxes fall
back to polling every ``poll_interval`` seconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from pathlib import Path

IN_MODIFY = 0x00000002
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
_MASK = IN_MODIFY | IN_MOVED_TO | IN_CREATE
_EVENT = struct.Struct("iIII")

_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.inotify_init1  # noqa: B018 - probe that the symbol exists
    except (OSError, AttributeError):
        _libc = None

Wake = Callable[[str, int], None]
"""Called with the name of the file that changed (``""`` if unknown) and the event mask."""


class Watcher:
    """One inotify descriptor for one Trio run, waking mailboxes by directory."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._by_wd: dict[int, dict[int, Wake]] = {}
        self._wd_of: dict[int, int] = {}  # key -> watch descriptor
        self.closed = False

    def watch(self, directory: Path, key: int, wake: Wake) -> bool:
        """Call *wake* when *directory* changes; False if the kernel refused a watch."""
        if key in self._wd_of:
            return True
        assert _libc is not None
        wd = _libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK)
        if wd < 0:
            return False  # ENOSPC (out of watches) and the like: caller polls
        self._by_wd.setdefault(wd, {})[key] = wake
        self._wd_of[key] = wd
        return True

    def unwatch(self, key: int) -> None:
        """Stop waking *key*; drop the kernel watch when nobody uses it."""
        wd = self._wd_of.pop(key, None)
        if wd is None:
            return
        users = self._by_wd.get(wd, {})
        users.pop(key, None)
        if not users and not self.closed:
            self._by_wd.pop(wd, None)
            assert _libc is not None
            _libc.inotify_rm_watch(self._fd, wd)

    async def pump(self) -> None:
        """The system task: read events and wake the mailboxes concerned."""
        try:
            while True:
                await trio.lowlevel.wait_readable(self._fd)
                try:
                    data = os.read(self._fd, 64 * 1024)
                except BlockingIOError:
                    continue
                woken: dict[tuple[int, str], int] = {}
                pos = 0
                while pos + _EVENT.size <= len(data):
                    wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                    start = pos + _EVENT.size
                    name = data[start : start + length].rstrip(b"\0").decode(errors="replace")
                    pos = start + length
                    if mask & IN_Q_OVERFLOW:
                        for every in self._by_wd:  # events were lost: wake everyone
                            woken[(every, "")] = IN_CREATE
                    elif name.endswith(".log"):  # the cursor and lock files are ours
                        woken[(wd, name)] = woken.get((wd, name), 0) | mask
                for (wd, name), mask in woken.items():
                    for wake in list(self._by_wd.get(wd, {}).values()):
                        wake(name, mask)
        finally:
            self.closed = True
            _WATCHERS.pop(id(trio.lowlevel.current_root_task()), None)
            os.close(self._fd)


_WATCHERS: dict[int, Watcher] = {}


def watcher() -> Watcher | None:
    """The watcher of the current Trio run (started on first use), or None."""
    if _libc is None:
        return None
    key = id(trio.lowlevel.current_root_task())
    found = _WATCHERS.get(key)
    if found is not None and not found.closed:
        return found
    fd = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        return None  # out of inotify instances or descriptors: callers poll
    created = Watcher(fd)
    _WATCHERS[key] = created
    trio.lowlevel.spawn_system_task(created.pump, name="coterie-mailbox-watcher")
    return created
