"""Where fsyncs run: inline while the disk is fast, in a worker thread when not.

Handing an fsync to a worker thread costs two thread switches, 100-200 us on
a small VM: more than the fsync itself on a fast disk. So jobs run inline
(blocking the event loop for their duration) while a moving average of their
duration stays under ``inline_below`` seconds; when the disk gets slower they
move to a worker thread, where a slow disk stalls only the tasks waiting for
it. Threaded jobs keep being timed, so a disk that is fast again is noticed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Callable


class SyncRunner:
    """Runs blocking durability jobs, choosing inline or a thread by how fast they are."""

    def __init__(self, inline_below: float = 0.0005, weight: float = 0.1) -> None:
        self.inline_below = inline_below
        self.weight = weight
        self.average = 0.0
        self.inline_runs = 0
        self.threaded_runs = 0

    @property
    def inline(self) -> bool:
        """Whether the next job will run inline."""
        return self.average < self.inline_below

    def _timed(self, job: Callable[[], None]) -> float:
        start = time.perf_counter()
        job()
        return time.perf_counter() - start

    def _learn(self, took: float) -> None:
        self.average += self.weight * (took - self.average)

    def run_inline(self, job: Callable[[], None]) -> None:
        """Run *job* now in the Trio thread, blocking the loop, and learn its duration.

        For a caller that found :attr:`inline` true and has just yielded, so
        that a second checkpoint would only cost a scheduling round.
        """
        self.inline_runs += 1
        # _timed and _learn by hand: this runs once per flush on the hot path.
        start = time.perf_counter()
        job()
        self.average += self.weight * (time.perf_counter() - start - self.average)

    async def run(self, job: Callable[[], None]) -> None:
        """Run *job* to completion; a checkpoint either way."""
        if self.inline:
            self.run_inline(job)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        self.threaded_runs += 1
        # abandon_on_cancel=False (the default): the job always finishes, so a
        # file is never left half-synced by a cancelled waiter.
        self._learn(await trio.to_thread.run_sync(self._timed, job))


DISK = SyncRunner()
"""The runner every log shares (mailboxes, boards, transcripts): fsync speed is
the disk's, not one log's."""
