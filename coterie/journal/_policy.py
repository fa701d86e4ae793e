"""Durability policies: what a log does after an append, before the append returns.

A log names its policy with :class:`Durability` and hands each append's file
descriptor to a :class:`SyncPolicy`, which fsyncs it at once (``always``),
lets it share a group commit with concurrent appends (``batch``), or does
nothing (``none``). The fsyncs run through the shared :data:`DISK` runner, so
they stay inline while the disk is fast and move to a worker thread when it
is slow.
"""

from __future__ import annotations

import enum
import functools
import os
from typing import TYPE_CHECKING

from coterie.journal._commit import GroupCommit
from coterie.journal._sync import DISK, SyncRunner

if TYPE_CHECKING:
    from collections.abc import Callable


class Durability(enum.Enum):
    """When an append (a message sent, an acknowledgement, a transcript entry) reaches the disk.

    ``always``: fsync before the append returns, one fsync per append.
    ``batch``: group commit; concurrent appends share one fsync, and each
    returns after the fsync that covers it.
    ``none``: written to the OS, never fsynced (survives kill -9, not power loss).
    """

    ALWAYS = "always"
    BATCH = "batch"
    NONE = "none"


class SyncPolicy:
    """Makes each append as durable as *durability* promises.

    *files* returns the descriptors a group commit must flush: every file
    written since the last flush (a segmented log passes the segments it left
    behind too). It is called in the Trio thread when a flush starts, so the
    flush covers a consistent snapshot.
    """

    def __init__(
        self,
        durability: Durability,
        files: Callable[[], list[int]],
        *,
        runner: SyncRunner = DISK,
    ) -> None:
        self.durability = durability
        self._files = files
        self._runner = runner
        self._commit = GroupCommit(self._prepare, runner=runner)

    @property
    def flushes(self) -> int:
        """Group commits run so far (``batch`` only)."""
        return self._commit.flushes

    async def sync(self, fd: int) -> None:
        """Return once what was just appended through *fd* is durable, per the policy.

        Under ``none`` this returns at once, without a checkpoint: the caller
        decides where its checkpoint goes. A cancelled wait never leaves a
        fsync half done (the runner does not abandon its job).
        """
        if self.durability is Durability.NONE:
            return
        if self.durability is Durability.ALWAYS:
            await self._runner.run(functools.partial(os.fdatasync, fd))
        else:
            await self._commit.wait_durable(self._commit.note_write())

    def sync_now(self, fd: int) -> None:
        """Blocking :meth:`sync`, for callers outside Trio's await (``send_nowait``)."""
        if self.durability is Durability.ALWAYS:
            os.fdatasync(fd)
        elif self.durability is Durability.BATCH:
            self._commit.note_write()
            self._commit.flush_now()

    def _prepare(self) -> Callable[[], None]:
        fds = self._files()

        def flush() -> None:
            for fd in fds:
                # fdatasync suffices for an append: it flushes the new size too.
                os.fdatasync(fd)

        return flush
