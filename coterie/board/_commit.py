"""Group commit across threads: one fsync covers every write made before it started.

A writer notes its write (under the board's mutex, right after appending)
and gets a generation number; it then waits until a flush that *started
after* that write has finished. Whoever finds no flush running becomes the
leader and runs one, covering every write noted so far; the others wait on a
condition variable, and one whose write came too late for the running flush
leads the next. Alone, a writer pays one fsync; under load, one fsync
serves many. The Trio wrapper (``_async.py``) puts one more level of the
same idea in front of this, so that Trio tasks wait on a Trio event rather
than on a thread.

This works across *processes* only partly and for free: fdatasync flushes
the file's pages whoever wrote them, but each process still pays its own.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class GroupCommit:
    """Coalesce concurrent waits for durability into shared flushes (thread-safe)."""

    def __init__(self, flush: Callable[[], None] | None) -> None:
        self._flush = flush  # None: nothing is ever synced (tests, benchmarks)
        self._cond = threading.Condition()
        self._flushing = False
        self.written = 0
        self.durable = 0
        self.flushes = 0

    def note_write(self) -> int:
        """Record that something was written; returns the generation to wait for."""
        with self._cond:
            self.written += 1
            if self._flush is None:
                self.durable = self.written  # nothing to wait for
            return self.written

    def wait_durable(self, generation: int) -> None:
        """Return once a flush covering *generation* has completed (blocks)."""
        if self._flush is None:
            return
        with self._cond:
            while self.durable < generation:
                if self._flushing:
                    self._cond.wait()
                    continue
                self._flushing = True
                target = self.written
                ok = False
                self._cond.release()
                try:
                    self._flush()
                    ok = True
                finally:
                    self._cond.acquire()
                    self._flushing = False
                    if ok:
                        self.flushes += 1
                        self.durable = max(self.durable, target)
                    # On failure the waiters wake up and one of them retries;
                    # the exception goes to this caller.
                    self._cond.notify_all()
