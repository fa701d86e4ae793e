"""The file-backed mailbox: the durable default.

One directory per actor (layout in ``_segments.py``). The owner of a mailbox
(its receiver) opens it with :func:`open_file_mailbox`; on open it refuses a
directory holding foreign files, reads the cursor, and cuts a torn tail off
the newest segment (keeping the cut bytes in a ``corrupt-*.bin`` file). It
then reads the log lazily from the cursor (``_reader.py``). Senders in the same process write
through the owner and wake its receivers directly; senders in other
processes append under the directory's flock, and the owner is woken by
inotify (``_watch.py``), or notices within ``poll_interval`` seconds where
inotify is not available.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coterie.errors import InvalidMessage, MailboxError
from coterie.journal import Durability, GroupCommit, encode
from coterie.mailbox import _watch
from coterie.mailbox._cursor import CursorState, encode_cursor, read_cursor, write_cursor
from coterie.mailbox._reader import CorruptRecord, LogReader, log_end, repair_tail, write_point
from coterie.mailbox._segments import (
    DEFAULT_SEGMENT_BYTES,
    SegmentWriter,
    check_directory,
    list_segments,
    segment_path,
)
from coterie.mailbox.base import (
    Delivery,
    Inbox,
    MailboxStatistics,
    Position,
    Predicate,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.messages import Message

#: Acknowledgements of messages that need no fsync (``Message.durable`` false)
#: between two unsynced cursor writes, when no durable ack writes it sooner:
#: at most this many come back after a kill -9 (redelivered: a service answers
#: a redelivered request with its safe answer, and a reply nobody waits for is
#: a late reply).
UNSYNCED_ACKS_PER_WRITE = 32

# Owners open in this process, by resolved directory, so that any sender in
# the process can wake the receiver without polling.
_OWNERS: dict[Path, FileMailbox] = {}


def owner_of(directory: Path) -> FileMailbox | None:
    """The mailbox open as owner of *directory* in this process, if any."""
    return _OWNERS.get(directory.resolve())


def open_file_mailbox(
    directory: Path,
    *,
    name: str | None = None,
    durability: Durability = Durability.BATCH,
    poll_interval: float | None = 0.2,
    watch: bool = True,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    on_corruption: Callable[[CorruptRecord], None] | None = None,
) -> FileMailbox:
    """Open (creating if needed) the mailbox in *directory* as its receiver.

    Writes by other processes wake a waiting receiver through inotify where
    the platform has it (``watch``), else by polling every ``poll_interval``
    seconds (``None``: only senders in this process wake it).
    """
    directory = Path(directory)
    if directory.exists():
        check_directory(directory)
    else:
        directory.mkdir(parents=True)
    key = directory.resolve()
    if key in _OWNERS:
        raise MailboxError(f"{directory}: mailbox is already open in this process")
    state = read_cursor(directory)
    mailbox = FileMailbox(
        directory=directory,
        name=name or directory.name,
        durability=durability,
        poll_interval=poll_interval,
        watch=watch,
        segment_bytes=segment_bytes,
        on_corruption=on_corruption,
        cursor=state,
    )
    _OWNERS[key] = mailbox
    return mailbox


class FileMailbox:
    """A durable mailbox backed by an append-only, segmented record log."""

    def __init__(
        self,
        *,
        directory: Path,
        name: str,
        durability: Durability,
        poll_interval: float | None,
        watch: bool,
        segment_bytes: int,
        on_corruption: Callable[[CorruptRecord], None] | None,
        cursor: CursorState,
    ) -> None:
        self.name = name
        self.directory = directory
        self.durability = durability
        self.poll_interval = poll_interval
        self._on_corruption = on_corruption
        self._syncs = durability is not Durability.NONE
        self._writer = SegmentWriter(directory, durability, segment_bytes)
        self._watch = watch
        self._watcher: _watch.Watcher | None = None
        self._stale = True  # the log may hold records not read yet
        self._unarrived: set[Position] = set()  # appended here, not yet durable
        self._sent = 0
        self._corrupt = 0
        self._closed = False
        self._cursor_commit = GroupCommit(self._prepare_cursor_flush)
        self._unsynced_acks = 0  # acks of non-durable messages not in the cursor file
        on_disk = cursor
        self._writer.lock()
        try:
            self._oldest = repair_tail(directory, name, self._report)
            open_end = log_end(directory)
        finally:
            self._writer.unlock()
        # The next record goes at the end of the newest segment, or at the
        # start of the next one if the newest is sealed. Positions at or past
        # that point (a tail cut off after being acknowledged, a damaged seal
        # cut off with it) will be reused: forget them, and persist that
        # before anything new is written.
        end = write_point(directory, open_end)
        at, upto = min(on_disk.at, end), min(on_disk.upto, end)
        acked = {p for p in on_disk.acked if p < end}
        holes = frozenset(p for p in on_disk.unacked if at <= p < upto)
        changed = (at, upto, holes) != (on_disk.at, on_disk.upto, on_disk.unacked)
        if changed or acked != on_disk.acked:
            data = encode_cursor(at, acked, upto, holes)
            write_cursor(directory, data, sync=self._syncs)
        self._inbox = Inbox(
            cursor=at,
            acked_beyond=acked,
            scan_pos=at,
            loaded_upto=upto,
            loaded_unacked=holes,
        )
        self._reader = LogReader(directory, name, self._inbox, open_end, self._report)

    def _refill(self) -> None:
        if self._reader.refill(self._unarrived):
            # Stopped short of records that may already be durable (ours,
            # arrived out of order): read on once the horizon moves.
            self._stale = True

    def _report(self, record: CorruptRecord) -> None:
        self._corrupt += 1
        if self._on_corruption is not None:
            self._on_corruption(record)

    def _take(self, where: Predicate | None) -> Delivery | None:
        delivery = self._inbox.take(where)
        # Re-read the log only if it may hold unread records: always when no
        # one will tell us of writes from elsewhere, else after being told.
        watcher = self._watcher
        if (
            delivery is None
            and not self._closed
            and (self._stale or watcher is None or watcher.closed)
        ):
            self._stale = False
            self._refill()
            delivery = self._inbox.take(where)
        return delivery

    def receive_nowait(self, where: Predicate | None = None) -> Delivery:
        """The next pending message (matching *where*), or raise ``trio.WouldBlock``."""
        if self._closed:
            raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
        delivery = self._take(where)
        if delivery is None:
            raise trio.WouldBlock
        return delivery

    async def receive(self, where: Predicate | None = None) -> Delivery:
        """Wait for the next pending message (the first matching *where*, if given)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        watched = self._watched()
        while True:
            if self._closed:
                raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
            delivery = self._take(where)
            if delivery is not None:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return delivery
            if watched or self.poll_interval is None:
                await self._inbox.lot.park()
            else:
                with trio.move_on_after(self.poll_interval) as poll:
                    await self._inbox.lot.park()
                if poll.cancelled_caught:
                    self._reader.look_further = self._stale = True

    def _watched(self) -> bool:
        """Make sure the kernel tells us of writes by other processes, if it can."""
        if not self._watch:
            return False
        w = _watch.watcher()
        if w is None:
            return False
        if w is not self._watcher:
            self._watcher = None
            if not w.watch(self.directory, id(self), self._changed_elsewhere):
                return False
            self._watcher = w
            self._stale = True  # anything written before the watch began
        return True

    def _changed_elsewhere(self, name: str, mask: int) -> None:
        if mask == _watch.IN_MODIFY and self._writer.wrote_last(name):
            return  # our own append: already delivered or flagged
        self._reader.look_further = self._stale = True
        if len(self._inbox.lot):
            self._inbox.lot.unpark_all()

    # -- sending ---------------------------------------------------------------

    def _write(self, message: Message) -> tuple[Position, Position, int]:
        if self._closed:
            raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
        if message.recipient != self.name:
            raise InvalidMessage(
                f"message for {message.recipient!r} sent to the mailbox of {self.name!r}"
            )
        data = encode(message.to_json_bytes())
        start, end, fd = self._writer.append(data)
        self._unarrived.add(start)
        self._sent += 1
        return start, end, fd

    async def send(self, message: Message) -> None:
        """Append *message*; returns once it is as durable as the policy promises."""
        await trio.lowlevel.checkpoint_if_cancelled()
        start, end, fd = self._write(message)
        try:
            if message.durable:
                await self._writer.make_durable(fd)
        finally:
            self._arrived(start, end, message)
        # Let the receiver we just woke run before this task writes again (and,
        # under ``none``, this is the checkpoint every send should have).
        await trio.lowlevel.cancel_shielded_checkpoint()

    def send_nowait(self, message: Message) -> None:
        """Like :meth:`send`, but any fsync blocks the event loop."""
        start, end, fd = self._write(message)
        try:
            if message.durable:
                self._writer.make_durable_now(fd)
        finally:
            self._arrived(start, end, message)

    def _arrived(self, start: Position, end: Position, message: Message) -> None:
        self._unarrived.discard(start)
        inbox = self._inbox
        if inbox.scan_pos == start and not self._closed:
            # Nothing unread lies before it: skip re-reading it from the file.
            inbox.add(Delivery(message, start))
            inbox.moved_scan(end)
        else:
            self._stale = self._reader.look_further = True
        inbox.lot.unpark_all()

    def wake(self) -> None:
        """Tell waiting receivers that someone else appended to the log."""
        self._stale = True
        self._inbox.lot.unpark_all()

    async def sync(self) -> None:
        """Read the log to its end now: after it, ``receive_nowait`` sees every
        message appended before the call, whether or not the watcher has told of
        it yet."""
        await trio.lowlevel.checkpoint()
        if not self._closed:
            self._stale = False
            self._reader.look_further = True
            self._refill()

    # -- acknowledging ---------------------------------------------------------

    async def ack(self, *deliveries: Delivery) -> None:
        """Acknowledge handled messages; returns once the cursor is durable per policy."""
        if not self._inbox.mark_acked(deliveries):
            await trio.lowlevel.checkpoint()
            return
        if self.durability is Durability.NONE:
            self._prepare_cursor_flush()()
            await trio.lowlevel.checkpoint()
        elif not any(d.message.durable for d in deliveries):
            # Messages that need no fsync (see Message.durable): acknowledged in
            # memory; the cursor file gets it with the next durable ack, at
            # close, or unsynced every UNSYNCED_ACKS_PER_WRITE such acks (a
            # rename costs more than the round trip it records), so a kill -9
            # redelivers at most that many, flagged as redelivered.
            self._cursor_commit.note_write()
            self._unsynced_acks += 1
            if self._unsynced_acks >= UNSYNCED_ACKS_PER_WRITE and not self._cursor_commit.flushing:
                self._prepare_cursor_flush(durable=False)()
            await trio.lowlevel.checkpoint()
        else:
            # Shielded: an acknowledgement cancelled half-way would leave the
            # cursor on disk behind the one in memory, and a clean stop would
            # then redeliver what was handled. The wait is one short flush.
            with trio.CancelScope(shield=True):
                await self._cursor_commit.wait_durable(self._cursor_commit.note_write())

    def _prepare_cursor_flush(self, *, durable: bool = True) -> Callable[[], None]:
        # Never raced by a second writer: the group commit runs one flush at a
        # time, and the unsynced write of ``ack`` waits while one runs.
        self._unsynced_acks = 0
        data = encode_cursor(*self._inbox.durable_state())
        cursor_segment = self._inbox.cursor[0]
        doomed = list(range(self._oldest or 1, cursor_segment)) if durable else []
        if doomed:
            # Never the newest segment, even fully acknowledged (the cursor may
            # point at a successor not created yet, after a crash between
            # sealing and creating it): writers number new segments after the
            # newest one they find, so the numbering must never restart.
            existing = list_segments(self.directory)
            newest = existing[-1] if existing else 0
            doomed = [n for n in doomed if n < newest]
            self._oldest = doomed[-1] + 1 if doomed else self._oldest
        sync = self._syncs and durable
        directory = self.directory

        def job() -> None:
            write_cursor(directory, data, sync=sync)
            # Only after the cursor is durable: fully acknowledged segments go.
            for number in doomed:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(segment_path(directory, number))

        return job

    def requeue_in_flight(self) -> int:
        """Make every unacknowledged delivery pending again (for a restarted receiver)."""
        return self._inbox.requeue_in_flight()

    # -- the rest --------------------------------------------------------------

    def statistics(self) -> MailboxStatistics:
        """A snapshot of this mailbox's counters."""
        if not self._closed:
            self._reader.look_further = True
            self._refill()
        segments = 0 if self._closed else len(list_segments(self.directory))
        return self._inbox.statistics(
            self.name,
            self.durability.value,
            sent=self._sent,
            corrupt_skipped=self._corrupt,
            segments=segments,
            closed=self._closed,
        )

    async def aclose(self) -> None:
        """Close the mailbox; waiting receivers get ``trio.ClosedResourceError``."""
        self.close()
        await trio.lowlevel.checkpoint()

    def close(self) -> None:
        """Synchronous :meth:`aclose`."""
        if self._closed:
            return
        self._closed = True
        if self._cursor_commit.unflushed:
            self._cursor_commit.flush_now()
        self._inbox.lot.unpark_all()
        self._writer.close()
        if self._watcher is not None:
            self._watcher.unwatch(id(self))
            self._watcher = None
        self._reader.close()
        _OWNERS.pop(self.directory.resolve(), None)
