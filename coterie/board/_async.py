"""The Trio face of the board: the same operations, awaitable.

An operation holds the board's locks for microseconds (read the new tail,
decide, one ``write``), so it runs *inline* in the Trio thread whenever both
locks are free, found by trying them without blocking. Only when one is
taken (another thread, or another process, is mid-operation) does it move
to a worker thread to wait for it, so the event loop never blocks on a lock.
A thread hop costs more than the whole operation on the fast path.

Durability is the journal's group commit for Trio tasks in front of its
group commit for threads: the first task to need an fsync becomes the
leader, lets every task that is ready run first (their writes then share the
flush), and flushes; the others wait on a Trio event. The flush goes through
the journal's shared fsync runner: inline while the disk is fast, else in a
worker thread.

Cancellation: an operation that has not started when its task is cancelled
raises ``Cancelled`` and does nothing. Once started it is shielded and
finishes, durably, and its result is returned: a claim is never lost to a
cancel between the write and the return. The cancel is delivered at the
caller's next checkpoint.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, TypeVar

import trio

from coterie.board._board import Board, BoardStatistics, BusyError
from coterie.board.face import BoardOperations
from coterie.journal import GroupCommit

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from os import PathLike

    from coterie.board.log import BoardCorruption
    from coterie.board.ops import Txn
    from coterie.board.state import BoardState

T = TypeVar("T")


@contextlib.asynccontextmanager
async def open_board(
    directory: str | PathLike[str],
    *,
    fsync: bool = True,
    on_corruption: Callable[[BoardCorruption], None] | None = None,
    on_change: Callable[[object], None] | None = None,
) -> AsyncIterator[AsyncBoard]:
    """Open the board in *directory* for Trio code; closed on exit.

    Opening replays the log, which can take a while for a long one, so it
    runs in a worker thread. *on_change* is called with an operation's result
    after every change it made durable.
    """
    board = await trio.to_thread.run_sync(
        functools.partial(Board, directory, fsync=fsync, on_corruption=on_corruption)
    )
    try:
        yield AsyncBoard(board, on_change=on_change)
    finally:
        board.close()


class AsyncBoard(BoardOperations):
    """Awaitable wrappers around a :class:`Board`; see :class:`Board` for each method."""

    def __init__(self, board: Board, *, on_change: Callable[[object], None] | None = None) -> None:
        self.board = board
        # Trio tasks share flushes here, so that only the leader waits on the
        # board's thread-level group commit.
        self._commit = GroupCommit(self._prepare_flush)
        self._changed = trio.Event()
        #: Called with an operation's result after every change it made
        #: durable (the team runtime reports ``board.changed`` events with it).
        self.on_change = on_change

    # -- machinery -----------------------------------------------------------

    async def _mutate(self, op: Callable[[Txn], T]) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        with trio.CancelScope(shield=True):
            try:
                generation, result = self.board._run(op, blocking=False)
            except BusyError:
                generation, result = await trio.to_thread.run_sync(
                    functools.partial(self.board._run, op, blocking=True)
                )
            await self._wait_durable(generation)
        if generation:
            self._changed.set()
            self._changed = trio.Event()
            if self.on_change is not None:
                self.on_change(result)
        return result

    async def _read(self, fn: Callable[[BoardState], T]) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            result = self.board._read(fn, blocking=False)
        except BusyError:
            return await trio.to_thread.run_sync(
                functools.partial(self.board._read, fn, blocking=True)
            )
        await trio.lowlevel.cancel_shielded_checkpoint()
        return result

    async def _wait_durable(self, generation: int) -> None:
        if self.board._commit.durable >= generation:
            # Nothing written, no fsyncs, or another thread's flush covered it.
            await trio.lowlevel.checkpoint()
            return
        await self._commit.wait_durable(self._commit.note_write())

    def _prepare_flush(self) -> Callable[[], None]:
        # Called when a flush starts: it covers every write noted so far by
        # the board, which includes those of every task waiting here.
        commit = self.board._commit
        return functools.partial(commit.wait_durable, commit.written)

    # -- the public API ------------------------------------------------------

    async def statistics(self) -> BoardStatistics:
        """:meth:`Board.statistics`."""
        return await self._read(self.board._stats)

    async def wait_for_change(self, after: int, *, poll_interval: float = 0.2) -> int:
        """Wait until the board's sequence number exceeds *after*; returns it.

        Changes made through this object wake the waiter at once; changes by
        other processes are noticed within *poll_interval* seconds (a cheap
        ``fstat`` of the log). Use it to idle without polling hot:
        ``seq = await board.wait_for_change(seq)``.
        """
        while True:
            seq = await self._read(_last_seq)
            if seq > after:
                return seq
            with trio.move_on_after(poll_interval):
                await self._changed.wait()

    async def aclose(self) -> None:
        """Close the underlying board."""
        self.board.close()
        await trio.lowlevel.checkpoint()


def _last_seq(state: BoardState) -> int:
    return state.last_seq
