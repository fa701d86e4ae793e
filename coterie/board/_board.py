"""The synchronous task board: usable from threads, processes and (wrapped) Trio.

A change runs in four steps, all under the board's thread mutex:

1. read ahead, without the flock: apply the whole records other processes
   appended since this board last looked (usually a few, often none: one
   ``fstat``). Replaying others' work is the part that grows with the number
   of processes, so it is kept out of everyone's critical section;
2. take the exclusive flock and catch up with whatever arrived meanwhile
   (cutting a torn tail, skipping damage);
3. decide: check the request against the rules (``_rules.py``) on the
   up-to-date state, raising before anything is written;
4. append the resulting records with one ``write``, apply them, unlock;

then, outside both locks, wait for an fsync covering the write (the
journal's group commit for threads) before returning. A change is visible to other
processes as soon as the flock is released and durable before its call
returns; whatever acts on it later appends after it in the same file, so the
fsync that makes the later record durable makes this one durable too.

A read needs no flock when the read-ahead reaches the end of the log: the
state is then a prefix of the log up to its end. Otherwise (a record being
written, damage to skip) it finishes under the shared flock.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import attrs

from coterie.board import ops as ops
from coterie.board._errors import BoardError
from coterie.board._rules import UNSET, Unset
from coterie.board._task import TaskStatus
from coterie.board.log import BoardCorruption, BoardLog, LogShrankError, decode
from coterie.board.ops import TaskList, Txn
from coterie.board.state import BadRecord, BoardState
from coterie.journal import ThreadGroupCommit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from os import PathLike

    from coterie.board._task import Task
    from coterie.journal import Record

T = TypeVar("T")


class BusyError(Exception):
    """A non-blocking attempt found a lock taken (the Trio wrapper then uses a thread)."""


@attrs.frozen
class BoardStatistics:
    """Counts of a board, as of its last catch-up with the log."""

    tasks: int
    pending: int
    in_progress: int
    completed: int
    failed: int
    seq: int  # sequence number of the last record applied
    log_bytes: int
    writes: int  # operations this board object wrote
    flushes: int  # fsyncs it ran (less than writes when group commit helped)


class Board:
    """The durable task board of a run, stored in *directory* (see the package docs).

    Thread-safe, and safe across processes opening the same directory. Each
    change is fsynced before its method returns (``fsync=False`` skips that,
    for tests and benchmarks). Damaged records in the log are skipped and
    reported to *on_corruption* and :attr:`corruptions`, never raised.
    """

    def __init__(
        self,
        directory: str | PathLike[str],
        *,
        fsync: bool = True,
        on_corruption: Callable[[BoardCorruption], None] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.corruptions: list[BoardCorruption] = []
        self._on_corruption = on_corruption
        self._log = BoardLog(self.directory, self._report)
        self._state = BoardState()
        self._mutex = threading.Lock()
        self._commit = ThreadGroupCommit(self._log.sync if fsync else None)
        try:
            # Exclusive, so that a torn tail left by a crash is cut off now.
            with self._locked(exclusive=True, blocking=True):
                self._catch_up(exclusive=True)
        except BaseException:
            self._log.close()
            raise

    def _report(self, corruption: BoardCorruption) -> None:
        self.corruptions.append(corruption)
        if self._on_corruption is not None:
            self._on_corruption(corruption)

    # -- the machinery -------------------------------------------------------

    @contextlib.contextmanager
    def _mutex_held(self, *, blocking: bool) -> Iterator[None]:
        if not self._mutex.acquire(blocking=blocking):
            raise BusyError
        try:
            if self._log.closed:
                raise BoardError(f"{self.directory}: the board is closed")
            yield
        finally:
            self._mutex.release()

    @contextlib.contextmanager
    def _locked(self, *, exclusive: bool, blocking: bool) -> Iterator[None]:
        with self._mutex_held(blocking=blocking):
            if not self._log.lock(exclusive=exclusive, blocking=blocking):
                raise BusyError
            try:
                yield
            finally:
                self._log.unlock()

    def _catch_up(self, *, exclusive: bool) -> None:
        try:
            records = self._log.read_tail(exclusive=exclusive)
        except LogShrankError:
            self._rebuild(exclusive=exclusive)
            return
        self._apply(records)

    def _read_ahead(self) -> bool:
        """Apply what others appended, without the flock; whether that reached the end."""
        records, at_end = self._log.read_ahead()
        self._apply(records)
        return at_end

    def _apply(self, records: list[Record]) -> None:
        for record in records:
            try:
                self._state.apply(decode(record.payload))
            except (BadRecord, ValueError) as exc:
                self._log.report(record.start, record.end, str(exc))

    def _rebuild(self, *, exclusive: bool) -> None:
        self._state = BoardState()
        self._log.offset = 0
        self._catch_up(exclusive=exclusive)

    def _run(self, op: Callable[[Txn], T], *, blocking: bool) -> tuple[int, T]:
        """Run *op* under the exclusive locks; returns the generation to make durable."""
        with self._mutex_held(blocking=blocking):
            # Replay others' records first, outside the critical section of
            # every process; under the flock only the last few remain.
            self._read_ahead()
        with self._locked(exclusive=True, blocking=blocking):
            self._catch_up(exclusive=True)
            txn = Txn(self._state)
            try:
                result = op(txn)
                if txn.chunks:
                    self._log.append(b"".join(txn.chunks))
            except BaseException:
                if txn.touched:
                    # The state moved ahead of the log: rebuild it from the log.
                    self._rebuild(exclusive=True)
                raise
            return (self._commit.note_write() if txn.chunks else 0), result

    def _read(self, fn: Callable[[BoardState], T], *, blocking: bool) -> T:
        with self._mutex_held(blocking=blocking):
            if self._read_ahead():
                # A prefix of the log up to its end: a consistent, current state.
                return fn(self._state)
        # Stopped short (a record being written, or damage to skip and report):
        # finish under the shared lock, which no writer holds meanwhile.
        with self._locked(exclusive=False, blocking=blocking):
            self._catch_up(exclusive=False)
            return fn(self._state)

    def _done(self, outcome: tuple[int, T]) -> T:
        self._commit.wait_durable(outcome[0])
        return outcome[1]

    def _stats(self, state: BoardState) -> BoardStatistics:
        c = state.counts
        return BoardStatistics(
            tasks=len(state.tasks),
            pending=c[TaskStatus.PENDING],
            in_progress=c[TaskStatus.IN_PROGRESS],
            completed=c[TaskStatus.COMPLETED],
            failed=c[TaskStatus.FAILED],
            seq=state.last_seq,
            log_bytes=self._log.offset,
            writes=self._commit.written,
            flushes=self._commit.flushes,
        )

    # -- the public API -------------------------------------------------------

    def create(
        self,
        subject: str,
        description: str,
        blocked_by: Iterable[str] = (),
        owner: str | None = None,
    ) -> Task:
        """Add a task (``task_<n+1>``), ``pending``, optionally assigned to *owner*.

        Raises :class:`UnknownTask` / :class:`InvalidTaskId` for a bad blocker.
        """
        return self._done(
            self._run(ops.create(subject, description, blocked_by, owner), blocking=True)
        )

    def get(self, task_id: str) -> Task:
        """The task as it stands now (after catching up with other processes)."""
        return self._read(ops.lookup(task_id), blocking=True)

    def list(self) -> TaskList:
        """Every task, in creation order."""
        return self._read(ops.all_tasks, blocking=True)

    def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | str | None = None,
        owner: str | Unset | None = UNSET,
        add_blocked_by: Iterable[str] = (),
        result: str | None = None,
        lease_seconds: float | None = None,
        now: float | None = None,
    ) -> Task:
        """Change a task as the lead may (``TaskUpdate``), all or nothing.

        ``owner=None`` unassigns; ``lease_seconds`` gives a lease when the
        update starts the task (otherwise an update-started task has none and
        never expires). See ``_rules.py`` for the transitions allowed.
        """
        op = ops.update(task_id, status, owner, add_blocked_by, result, lease_seconds, now)
        return self._done(self._run(op, blocking=True))

    def claim(self, worker: str, *, lease_seconds: float, now: float | None = None) -> Task | None:
        """Atomically take the next ready task for *worker*, or ``None`` if there is none.

        Ready: pending with every blocker completed. Tasks assigned to *worker*
        come first, then unassigned ones, lowest id first within each. Expired
        leases are returned to ``pending`` first (as :meth:`expire_leases`).
        """
        return self._done(self._run(ops.claim(worker, lease_seconds, now), blocking=True))

    def renew(
        self, task_id: str, worker: str, *, lease_seconds: float, now: float | None = None
    ) -> Task:
        """Extend *worker*'s lease on the task to ``now + lease_seconds``."""
        return self._done(self._run(ops.renew(task_id, worker, lease_seconds, now), blocking=True))

    def complete(self, task_id: str, worker: str, result: str) -> Task:
        """Mark the task *worker* holds ``completed`` with its *result*."""
        return self._done(self._run(ops.complete(task_id, worker, result), blocking=True))

    def fail(self, task_id: str, worker: str, reason: str) -> Task:
        """Mark the task *worker* holds ``failed``; *reason* becomes its ``result``."""
        return self._done(self._run(ops.fail(task_id, worker, reason), blocking=True))

    def release(self, task_id: str, worker: str) -> Task:
        """Hand the task back: ``pending``, unowned (even if it was assigned), no lease."""
        return self._done(self._run(ops.release(task_id, worker), blocking=True))

    def expire_leases(self, now: float | None = None) -> TaskList:
        """Return every in-progress task whose lease expired by *now* to ``pending``.

        The owner stays if it was an explicit assignment (the restarted worker
        gets its task back), else is cleared. Returns the tasks as changed.
        """
        return self._done(self._run(ops.expire(now), blocking=True))

    def statistics(self) -> BoardStatistics:
        """Task counts by status, log size, writes and fsyncs."""
        return self._read(self._stats, blocking=True)

    @property
    def seq(self) -> int:
        """Sequence number of the last record this board has applied (no catch-up)."""
        return self._state.last_seq

    def close(self) -> None:
        """Close the board's files. Completed calls stay durable; further calls raise."""
        with self._mutex:
            self._log.close()

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
