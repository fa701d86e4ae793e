"""The task board on Redis/Valkey: the file board's log as a stream, the same rules.

Keys (all through :meth:`RedisTarget.key`, namespaced by run)::

    <prefix>run:<run_id>:board:log          a stream: entry ``0-<n>`` holds the
                                            n-th record, field ``r``: the file
                                            log's JSON, plus a nonce ``u``
    <prefix>run:<run_id>:board:log:turn     which writer may append next (TTL)
    <prefix>run:<run_id>:board:log:wake     wakes one writer waiting for it
    <prefix>run:<run_id>:board:log:waiting  set while a writer waits (TTL)

Theory of operation
-------------------
Each process keeps its own :class:`BoardState`, folded from the stream by
the same pure code as the file board (``_state.py``), and runs the same
operations (``_ops.py``, which decide by ``_rules.py``). A change is
optimistic concurrency on the log's length:

1. copy the state (tasks are immutable; the copy is a few dict copies) and
   run the operation on the copy, which yields the records to append (or a
   refusal: then nothing is to be appended);
2. send them with ``APPEND`` (a script, in ``scripts.py``): *if the stream
   still holds exactly the records this process has read*, append them and
   say so; else append nothing and return the records this process is
   missing;
3. on success the copy becomes the state (and a refusal is raised); on a
   conflict the missing records are applied to the state and the operation
   runs again from step 1.

A decision that writes nothing (a claim finding no ready task, a refusal, an
update that changes nothing) goes through step 2 too, with no records: it is
returned only once the server confirmed it was taken on the whole log, so
this board is exactly as linearizable as the file one. One round trip per
attempt, whatever the outcome.

Plain optimistic retries collapse under contention (eight busy workers lost
about six races per claim and completion), so the writer that lost a race
gets the *turn* for ``TURN_MS``: the others are told to wait, and do so on
the wake-up list (``BLPOP``, no polling) until an append wakes one of them.
Safety never rests on the turn: a holder that died or stalled past it is
still refused by the length check if the log moved on.

Why a script rather than WATCH/MULTI/EXEC: the script *is* that check, and
holds no rule of the board (it compares a length, appends, or returns what
follows). WATCH would take three round trips (WATCH, a read, MULTI..EXEC)
and so a wider window for a conflict under eight contending workers, and
``coredis``'s pipelines cannot read between WATCH and MULTI on the watched
connection.

Waiting for a change (``wait_for_change``) blocks on the server, never
polls, and yet no waiter ever runs a blocking command itself: coredis (6.9)
drops the connection of a blocking command that is cancelled and never
gives its pool slot back, so a waiter cut short (a lead woken by mail first)
used up one of the client's 64 connections, and after 64 the next call
waited forever. One *follower* task per board runs the one ``XREAD BLOCK``
on the log while anyone waits, reads what was added and wakes every waiter;
it blocks on a connection of its own (:mod:`coterie.backends.redis.reading`),
made again after it is lost, and is cut short only when the board closes.
After a read that found changes it lingers ``FOLLOW_LINGER`` before reading
again, so that a busy spell's changes come a few per read, not one read each
in every process of the run. A waiter whose board is behind parks at once:
the follower's read returns at once with what it missed. A
writer waiting for its turn (``BLPOP``, never cancelled) is the only other
blocking command: a server lost while one waits costs the board's client one
of its connections.

Durability is the server's (docs/scale-out.md): with ``appendonly yes``
and ``appendfsync always`` a change is on the server's disk before the call
returns; ``everysec`` can lose the last second; replication is asynchronous.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from coterie.backends.redis.boardlog import BATCH, log_key, payload, tagged, text
from coterie.backends.redis.client import connect
from coterie.backends.redis.reading import ReadConnection
from coterie.backends.redis.scripts import APPEND
from coterie.board import BoardError, BoardLost, BoardRefusal, BoardStatistics, TaskStatus
from coterie.board import ops as ops
from coterie.board.face import BoardOperations
from coterie.board.log import BoardCorruption, decode
from coterie.board.state import BadRecord, BoardState

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator

    import coredis

    from coterie.backends.redis.client import RedisTarget
    from coterie.board.ops import Txn

T = TypeVar("T")

#: How long a writer that lost a race keeps the turn (module docs), in ms.
TURN_MS = 1000

#: How many times one append is sent while its connection breaks before the reply.
LOST_REPLIES = 3

#: How long the follower's one blocking read waits on the server (s), and its
#: pause after the server did not answer.
FOLLOW_BLOCK = 5.0
FOLLOW_RETRY = 0.2
#: Seconds the follower lets pass after a read that found changes before it reads
#: again: a change after a quiet spell wakes the waiters at once, the changes of
#: a busy spell (a team's claims and completions, many a second) are read a few
#: at a time instead of one round trip each for every process of the run.
FOLLOW_LINGER = 0.05


@contextlib.asynccontextmanager
async def open_redis_board(
    target: RedisTarget,
    run_id: str,
    *,
    on_corruption: Callable[[BoardCorruption], None] | None = None,
    on_change: Callable[[object], None] | None = None,
) -> AsyncIterator[RedisBoard]:
    """Open run *run_id*'s board on the server *target* (replaying its log); closed on exit.

    The board is shared by every process and host opening the same run on
    the same server. *on_change* and *on_corruption* as for ``open_board``.
    """
    async with connect(target) as client, trio.open_nursery() as nursery:
        board = RedisBoard(
            client, log_key(target, run_id), on_corruption=on_corruption, on_change=on_change
        )
        await board._catch_up()
        await nursery.start(board._follow, target, name=f"board follower {board.key}")
        try:
            yield board
        finally:
            board.closed = True
            # The follower's read is cut short only here, with its client closing.
            nursery.cancel_scope.cancel()


class RedisBoard(BoardOperations):
    """The board of one run on a Redis server: :class:`AsyncBoard`'s methods and
    ``on_change``, the same semantics (see the module docs for how)."""

    def __init__(
        self,
        client: coredis.Redis[bytes],
        key: str,
        *,
        on_corruption: Callable[[BoardCorruption], None] | None = None,
        on_change: Callable[[object], None] | None = None,
    ) -> None:
        self.key = key
        self._token = secrets.token_hex(8)  # this board's name when it has the turn
        self._keys = [key, f"{key}:turn", f"{key}:wake", f"{key}:waiting"]
        self.corruptions: list[BoardCorruption] = []
        #: Called with an operation's result after every change it made.
        self.on_change = on_change
        #: Set once the board's client is closed; calls then raise BoardError.
        self.closed = False
        self._client = client
        self._append = client.register_script(APPEND)
        self._on_corruption = on_corruption
        self._state = BoardState()
        self._records_read = 0  # records of the stream read (applied or reported)
        self._lock = trio.Lock()  # one operation at a time in this process
        self._writes = 0
        self._conflicts = 0
        self._attempt = 0
        # Waiting for the log to grow (wait_for_change): the waiters park on
        # _grown; the follower's one blocking read wakes them (module docs).
        self._grown = trio.lowlevel.ParkingLot()
        self._waiters = 0
        self._someone_waits = trio.Event()

    # -- machinery -----------------------------------------------------------

    @contextlib.contextmanager
    def _server_trouble(self, outcome: str) -> Iterator[None]:
        # Imported here, as in coterie.backends.redis.client: a run on files never pays for it.
        from coredis.exceptions import ConnectionError as LostServer

        try:
            yield
        except (LostServer, TimeoutError) as exc:
            raise BoardError(
                f"{self.key}: the Redis server did not answer ({exc}); {outcome}"
            ) from exc

    def _check_open(self) -> None:
        if self.closed:
            raise BoardError(f"{self.key}: the board is closed")

    def _apply(self, payloads: Iterable[bytes]) -> None:
        """Fold the records that follow :attr:`_records_read` into the state, in order."""
        for record in payloads:
            self._records_read += 1
            try:
                self._state.apply(decode(record))
            except (BadRecord, ValueError) as exc:
                where = self._records_read
                corruption = BoardCorruption(where, where, "skipped", str(exc))
                self.corruptions.append(corruption)
                if self._on_corruption is not None:
                    self._on_corruption(corruption)

    async def _catch_up(self) -> None:
        while True:
            batch = await self._client.xrange(
                self.key, f"(0-{self._records_read}", "+", count=BATCH
            )
            self._apply(payload(entry.field_values) for entry in batch)
            if len(batch) < BATCH:
                return

    async def _mutate(self, op: Callable[[Txn], T]) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        self._check_open()
        # Once started an operation finishes: a claim is never lost to a
        # cancel between the write and the return (as on the file board).
        with trio.CancelScope(shield=True), self._server_trouble("the change may have been made"):
            async with self._lock:
                result, wrote = await self._attempts(op)
        if wrote and self.on_change is not None:
            self.on_change(result)
        return result

    async def _attempts(self, op: Callable[[Txn], T]) -> tuple[T, bool]:
        while True:
            scratch = self._state.copy()
            self._attempt += 1
            # Records of this attempt carry its nonce, so that a reply lost to
            # a dropped connection is recognised: the same call sent again
            # (_append_sent) finds its own records in the log, not a conflict.
            nonce = f'{{"u":"{self._token}-{self._attempt}",'.encode()
            txn = ops.Txn(scratch, frame=functools.partial(tagged, nonce))
            refusal: BoardRefusal | None = None
            try:
                result = op(txn)
                records = txn.chunks
            except BoardRefusal as exc:
                refusal, records = exc, []
            args: list[int | str | bytes] = [
                self._records_read,
                BATCH,
                self._token,
                TURN_MS,
                *records,
            ]
            reply = await self._append_sent(args)
            outcome = int(reply[0])
            if outcome == 3:
                raise BoardLost(
                    f"the Redis server no longer holds the task board this run read ({self.key}:"
                    f" {self._records_read} records): it restarted without its data, or was"
                    " flushed; the run stopped"
                )
            missed = [bytes(entry[1][1]) for entry in reply[1]] if outcome == 0 else []
            if outcome == 1 or (records and missed[: len(records)] == records):
                if refusal is not None:
                    raise refusal  # decided on the whole log: a true refusal
                if records:
                    self._state = scratch
                    self._records_read += len(records)
                    self._writes += 1
                    self._apply(missed[len(records) :])
                return result, bool(records)
            self._conflicts += 1
            if outcome == 0:
                # Someone wrote first: take their records, and decide again
                # (with the turn, so that no one else can write meanwhile).
                self._apply(missed)
            else:
                # Another writer has the turn: wait until it passes it on (or
                # it lapses, if that writer died), without polling.
                await self._client.blpop([self._keys[2]], timeout=TURN_MS / 1000)

    async def _append_sent(self, args: list[int | str | bytes]) -> Any:
        """The append script's reply; the same call sent again (up to
        :data:`LOST_REPLIES` times) when the connection broke once it was sent:
        the log then says whether it was carried out. One that could not even
        be sent was waited for already (the client waits out a server away)."""
        from coredis.exceptions import ConnectionError as LostServer

        from coterie.backends.redis.refusals import not_connected

        sent = 0
        while True:
            sent += 1
            try:
                return await self._append(keys=self._keys, args=args)
            except LostServer as exc:
                if sent == LOST_REPLIES or not_connected(exc):
                    raise

    async def _take_read(self, grown: Any) -> None:
        """Apply the records the follower read (the ones this board has not, in
        order), then whatever follows them on the server."""
        async with self._lock:
            entries = [e for batch in grown.values() for e in batch]
            for entry in entries:
                n = int(text(entry.identifier).partition("-")[2])
                if n == self._records_read + 1:  # not applied meanwhile by a catch-up
                    self._apply([payload(entry.field_values)])
            if len(entries) == BATCH:
                with self._server_trouble("nothing was changed"):
                    await self._catch_up()

    async def _read(self, fn: Callable[[BoardState], T]) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        self._check_open()
        async with self._lock:
            with self._server_trouble("nothing was changed"):
                await self._catch_up()
            return fn(self._state)

    async def _read_known(self, fn: Callable[[BoardState], T]) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        self._check_open()
        return fn(self._state)  # what this board has read: no round trip

    def _stats(self, state: BoardState) -> BoardStatistics:
        c = state.counts
        return BoardStatistics(
            tasks=len(state.tasks),
            pending=c[TaskStatus.PENDING],
            in_progress=c[TaskStatus.IN_PROGRESS],
            completed=c[TaskStatus.COMPLETED],
            failed=c[TaskStatus.FAILED],
            seq=state.last_seq,
            log_bytes=self._records_read,  # records, not bytes: a stream has no byte size
            writes=self._writes,
            flushes=0,  # the server's AOF policy fsyncs, not this client
        )

    # -- the public API ------------------------------------------------------

    async def statistics(self) -> BoardStatistics:
        """:meth:`Board.statistics` (``log_bytes`` counts records; ``flushes`` is 0)."""
        return await self._read(self._stats)

    @property
    def seq(self) -> int:
        """Sequence number of the last record this board has applied (no catch-up)."""
        return self._state.last_seq

    @property
    def conflicts(self) -> int:
        """Attempts of this board that lost a race and were decided again."""
        return self._conflicts

    async def wait_for_change(self, after: int, *, poll_interval: float = 1.0) -> int:
        """Wait until the board's sequence number exceeds *after*; returns it.

        Woken by the server, not by polling: the board's follower blocks in
        one ``XREAD`` on the log for every waiter of this process, so a change
        by any process wakes them at once (*poll_interval*, the file board's,
        is not used). A waiter cut short costs nothing on the server.
        """
        del poll_interval
        while True:
            # What the follower read is known here already: no round trip for it. A
            # change this board has not read yet is no round trip of its own either:
            # the follower's read returns at once with it.
            seq = self._state.last_seq
            if seq > after:
                return seq
            self._waiters += 1
            self._someone_waits.set()
            try:
                await self._grown.park()
            finally:
                self._waiters -= 1

    async def _follow(
        self, target: RedisTarget, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """While anyone waits, block on the server until the log holds more than
        this board has read; then read it and wake the waiters (module docs)."""
        from coterie.backends.redis.client import server_errors

        trouble: tuple[type[Exception], ...] = (*server_errors(), BoardError)
        block_ms = int(FOLLOW_BLOCK * 1000)
        async with ReadConnection(target) as reading:
            task_status.started()
            lost = False
            while not self.closed:
                if not self._waiters:
                    await self._someone_waits.wait()
                    self._someone_waits = trio.Event()
                    continue
                try:
                    if lost:
                        await reading.renew()
                        lost = False
                    grown = await reading.client.xread(
                        {self.key: f"0-{self._records_read}"}, count=BATCH, block=block_ms
                    )
                    if grown:
                        await self._take_read(grown)
                except trouble:
                    # Waiting rides out a server away (the waiters stay parked): the
                    # follower reads again, on a new connection, once it answers.
                    lost = True
                    await trio.sleep(FOLLOW_RETRY)
                    continue
                if grown:
                    self._grown.unpark_all()
                    await trio.sleep(FOLLOW_LINGER)

    async def aclose(self) -> None:
        """Mark the board closed (the client is closed by ``open_redis_board``)."""
        self.closed = True
        await trio.lowlevel.checkpoint()
