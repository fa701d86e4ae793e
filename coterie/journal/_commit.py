"""Group commit: many writers, one flush that covers them all.

A writer notes its write (getting a generation number), then waits until a
flush that *started after* that write has finished. Whoever arrives while no
flush runs becomes the leader and runs it; the others wait for it, and a
writer whose write came too late for that flush waits for the next one. Under
load this makes one fsync cover many writes; alone, a writer pays one fsync.

Two forms of the same idea: :class:`GroupCommit` for Trio tasks (waiters
park on a Trio event; the flush runs through a :class:`SyncRunner`, inline
or in a worker thread) and :class:`ThreadGroupCommit` for threads (waiters
block on a condition variable). A Trio face over a thread-safe store puts the
first in front of the second, so that Trio tasks never wait on a thread.
Across *processes* group commit works only partly and for free: fdatasync
flushes a file's pages whoever wrote them, but each process pays its own.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import trio

from coterie.journal._sync import DISK, SyncRunner

if TYPE_CHECKING:
    from collections.abc import Callable


class GroupCommit:
    """Coalesce concurrent requests of Trio tasks for durability into shared flushes."""

    def __init__(
        self,
        prepare: Callable[[], Callable[[], None]],
        *,
        runner: SyncRunner = DISK,
    ) -> None:
        # prepare() runs in the Trio thread and returns the blocking job (the
        # fsyncs), so the job sees a consistent snapshot of what to flush.
        self._prepare = prepare
        self._runner = runner
        self._written = 0
        self._durable = 0
        self._flushing = False
        self._done = trio.Event()
        self.flushes = 0

    @property
    def unflushed(self) -> bool:
        """Something was written that no finished or running flush covers."""
        return self._written > self._durable and not self._flushing

    @property
    def flushing(self) -> bool:
        """A flush is running (a writer that must not race it waits or defers)."""
        return self._flushing

    def note_write(self) -> int:
        """Record that something was written; returns the generation to wait for."""
        self._written += 1
        return self._written

    async def wait_durable(self, generation: int) -> None:
        """Return once a flush covering *generation* has completed."""
        while self._durable < generation:
            if self._flushing:
                await self._done.wait()
                continue
            self._flushing = True
            try:
                # First let the writers that are ready to run write (those the
                # last flush woke, above all), so that this flush covers them
                # too: without it a flush in a worker thread covered only the
                # first of them, and the next one the rest (8 messages per fsync
                # with 16 senders, 10.6 with it). Inline, that yield is this
                # wait's checkpoint; the flush needs no other.
                await trio.lowlevel.cancel_shielded_checkpoint()
                if self._runner.inline:
                    target = self._written
                    self._runner.run_inline(self._prepare())
                else:
                    target = self._written
                    await self._runner.run(self._prepare())
                self.flushes += 1
                self._durable = max(self._durable, target)
            finally:
                self._flushing = False
                done, self._done = self._done, trio.Event()
                done.set()

    def flush_now(self) -> None:
        """Flush synchronously, covering everything written so far (blocks the caller)."""
        target = self._written
        self._prepare()()
        self.flushes += 1
        self._durable = max(self._durable, target)


class ThreadGroupCommit:
    """Coalesce concurrent waits of threads for durability into shared flushes.

    Thread-safe. The leader runs *flush* with the lock released, so writers
    keep noting writes meanwhile; one whose write came too late for the
    running flush leads the next.
    """

    def __init__(self, flush: Callable[[], None] | None) -> None:
        self._flush = flush  # None: nothing is ever synced (tests, benchmarks)
        self._cond = threading.Condition()
        self._flushing = False
        self.written = 0
        self.durable = 0
        self.flushes = 0

    @property
    def flushing(self) -> bool:
        """A flush is running (a writer that must not race it waits or defers)."""
        return self._flushing

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
