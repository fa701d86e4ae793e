"""The Redis Streams mailbox: a stream per actor, read through a consumer group.

Theory of operation
-------------------
The mailbox of actor ``a`` is the stream ``<prefix>run:<run>:mailbox:a`` with
one consumer group; this process is one consumer in it. Senders ``XADD`` (with
``NOMKSTREAM``, so a name without a mailbox is refused with nothing written).
The post office's one reader (:mod:`coterie.backends.redis.intake`) blocks in
one ``XREADGROUP ... >`` for all its mailboxes and fills each one's local
buffer, from which the sync ``receive_nowait`` and the async ``receive``
(selective, ``where=``) take, as from the file mailbox. ``ack``
runs ``XACK`` and deletes the acknowledged entries in one script, so the stream
holds exactly the unacknowledged messages. Opening the mailbox first takes
over (``XAUTOCLAIM``) every message another consumer holds in flight (a dead
process, a restart), then reloads its own pending entries with their delivery
counts: ``Delivery.redelivered`` is a count above one. A message delivered
more than ``Policy.max_deliveries`` times (takeovers and ``requeue_in_flight``
both count) moves to the dead-letter stream and is reported as
``mailbox.dead_letter``. After a connection error the reader reloads its own
pending entries (an ``XREADGROUP`` answer lost on the way is there). Each
mailbox keeps a task of its own for the server work its sync methods ask
for (dead letters, delivery counts), never a blocking read.

``send_nowait`` is refused: a write is a network round trip that a sync call
cannot wait for honestly. Nothing in coterie calls it on a mailbox.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio

from coterie.backends.redis.intake import BATCH, RETRY_PAUSE, connection_errors
from coterie.backends.redis.link import GROUP, entry_id, entry_position
from coterie.errors import BackendLost, InvalidMessage, MailboxError
from coterie.mailbox.base import Delivery, Inbox, MailboxStatistics, Predicate
from coterie.messages import Message

if TYPE_CHECKING:
    from coterie.backends.redis.intake import Intake
    from coterie.backends.redis.link import RedisLink
    from coterie.mailbox.base import Position

#: How long an acknowledgement may hold up a cancellation (s).
ACK_TIMEOUT = 10.0

SEND_NOWAIT_REFUSED = (
    "send_nowait is not available on the Redis backend: a send is a round trip "
    "to the server; use 'await send(...)'"
)


class RedisMailbox:
    """One actor's mailbox on a Redis stream, received by this process."""

    def __init__(self, name: str, link: RedisLink, intake: Intake) -> None:
        self.name = name
        self.durability = link.label
        self._link = link
        self._intake = intake
        self._key = link.stream(name)
        self._inbox = Inbox()
        self._deliveries: dict[str, int] = {}  # message id -> delivery count
        self._buffered: set[Position] = set()  # pending or in flight here
        self._read_upto: Position = (0, 0)
        self._progress = trio.lowlevel.ParkingLot()
        self._ready = trio.Event()
        # Server work that sync methods ask for (dead letters, delivery counts).
        self._jobs_in, self._jobs = trio.open_memory_channel[Callable[[], Awaitable[None]]](
            math.inf
        )
        self._scope = trio.CancelScope()
        self._sent = 0
        self._corrupt = 0
        self._closed = False

    # -- on the server ---------------------------------------------------------

    async def run(self) -> None:
        """Open the mailbox on the server, have the post office's reader fill its
        buffer, and do the server work its sync methods ask for, until closed."""
        with self._scope:
            try:
                try:
                    await self._retrying(self._open_on_server)
                    await self._intake.add(self, self._key)
                finally:
                    self._ready.set()
                await self._job_worker()
            finally:  # closed, even while it was being added: read no more
                self._intake.remove(self, self._key)

    async def _retrying(self, step: Any) -> None:
        from coredis.exceptions import StreamConsumerGroupError

        while True:
            try:
                await step()
                return
            except connection_errors():
                await trio.sleep(RETRY_PAUSE)
            except StreamConsumerGroupError:
                raise self._lost() from None

    async def _open_on_server(self) -> None:
        """Open the mailbox on the server: its group, its name in the run's registry,
        what dead consumers held taken over (with ``claim_idle`` 0: everything
        in flight, and the consumers gone deleted), this consumer's pending
        entries buffered, in one round trip (more only for a long backlog)."""
        idle_ms = int(self._link.policy.claim_idle * 1000)
        first = await self._link.open_mailbox(self._key, self.name, idle_ms, BATCH)
        self._link.registered.add(self.name)
        await self.reload(first)

    async def reload(self, first: Any = None) -> None:
        """Buffer this consumer's pending entries not buffered yet, with their counts
        (at the opening, whose script read the *first* page; after a connection
        error, a read's answer lost on the way)."""
        start, reply = "-", first
        while True:
            if reply is None:
                reply = await self._link.own_pending(self._key, start, BATCH)
            scanned, rows = reply
            for raw_id, count, payload in rows:
                position = entry_position(raw_id)
                self._buffer(position, int(count), payload)
                self._read_upto = max(self._read_upto, position)
            if int(scanned) < BATCH:
                return
            start = "(" + (rows[-1][0].decode() if rows else start)
            reply = None

    def took(self, entries: Any) -> None:
        """Entries the post office's reader read from this mailbox's stream."""
        if self._closed:
            return  # they stay in flight with this consumer, for the next opening
        for entry in entries:
            position = entry_position(entry.identifier)
            self._buffer(position, 1, entry.field_values.get(b"m", b""))
            self._read_upto = max(self._read_upto, position)
        self._progress.unpark_all()

    def _lost(self) -> BackendLost:
        return self._link.lost(f"mailbox {self.name!r}")

    def _buffer(self, position: Position, count: int, payload: bytes | str) -> None:
        if position in self._buffered:
            return
        raw = payload.encode() if isinstance(payload, str) else payload
        try:
            message = Message.from_json_bytes(raw)
        except (ValueError, TypeError, InvalidMessage):
            self._corrupt += 1
            message = Message.new(self.name, self.name, "undecodable", {"raw": repr(raw[:200])})
            self._dead_letter(Delivery(message, position), count, "undecodable")
            return
        delivery = Delivery(message, position, redelivered=count > 1)
        if count > self._link.policy.max_deliveries:
            self._dead_letter(delivery, count, "too many deliveries")
            return
        self._buffered.add(position)
        self._deliveries[message.id] = count
        self._inbox.pending.append(delivery)
        self._inbox.lot.unpark_all()

    async def _job_worker(self) -> None:
        async for job in self._jobs:
            await self._retrying(job)

    def _dead_letter(self, delivery: Delivery, count: int, reason: str) -> None:
        async def job() -> None:
            await self._move_to_dead_letters(delivery, count, reason)

        self._jobs_in.send_nowait(job)

    def _record_count(self, delivery: Delivery, count: int) -> None:
        """Write a delivery count to the server (``XCLAIM ... RETRYCOUNT``), so
        that the next opening counts the deliveries of this one too."""

        async def job() -> None:
            await self._link.client.xclaim(
                self._key,
                GROUP,
                self._link.consumer,
                0,
                [entry_id(delivery.position)],
                retrycount=count,
                justid=True,
            )

        self._jobs_in.send_nowait(job)

    async def _move_to_dead_letters(self, delivery: Delivery, count: int, reason: str) -> None:
        dead_key = self._link.dead_letters(self.name)
        moved = await self._link.dead_letter(
            self._key, dead_key, entry_id(delivery.position), count, reason
        )
        if not moved:
            return  # acknowledged meanwhile
        if self._link.events is not None:
            message = delivery.message
            self._link.events.emit(
                "mailbox.dead_letter",
                actor=self.name,
                message_id=message.id,
                kind=message.kind,
                sender=message.sender,
                deliveries=count,
                reason=reason,
                stream=dead_key,
                entry=moved.decode() if isinstance(moved, bytes) else str(moved),
            )

    # -- sending -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")

    async def send(self, message: Message) -> None:
        """XADD *message*; returns once the server has it and this mailbox has
        read it (so that ``receive_nowait`` sees it, as on files)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._check_open()
        if message.recipient != self.name:
            raise InvalidMessage(
                f"message for {message.recipient!r} sent to the mailbox of {self.name!r}"
            )
        await self._ready.wait()
        position = await self._link.append(message, known=self.name)
        self._sent += 1
        # Bounded: if another consumer opened this mailbox too (against the
        # one-receiver rule), it may read the entry, and this reader never will.
        with trio.move_on_after(self._link.policy.block + 1.0):
            await self.caught_up(position)

    def send_nowait(self, message: Message) -> None:
        """Refused on Redis (see the module docstring)."""
        raise MailboxError(SEND_NOWAIT_REFUSED)

    async def caught_up(self, position: Position) -> None:
        """Wait until the reader has buffered everything up to *position* (or closed)."""
        while self._read_upto < position and not self._closed:
            await self._progress.park()

    async def sync(self) -> None:
        """Wait until every message on the server now is buffered here (or dead
        lettered): after it, ``receive_nowait`` sees all of them. While the
        server is away it waits for it (as the reader does): what is on the
        server cannot be known without it."""
        await self._ready.wait()
        while True:
            try:
                last = await self._link.client.xrevrange(self._key, count=1)
                break
            except connection_errors():
                await trio.sleep(RETRY_PAUSE)
        if last:
            await self.caught_up(entry_position(last[0].identifier))
        else:
            await trio.lowlevel.checkpoint()

    # -- receiving -----------------------------------------------------------------

    def receive_nowait(self, where: Predicate | None = None) -> Delivery:
        """The next buffered message (matching *where*), or raise ``trio.WouldBlock``."""
        self._check_open()
        delivery = self._inbox.take(where)
        if delivery is None:
            raise trio.WouldBlock
        return delivery

    async def receive(self, where: Predicate | None = None) -> Delivery:
        """Wait for the next message (the first matching *where*, if given)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            self._check_open()
            delivery = self._inbox.take(where)
            if delivery is not None:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return delivery
            await self._inbox.lot.park()

    async def ack(self, *deliveries: Delivery) -> None:
        """Acknowledge handled messages (XACK, and the entries deleted).

        Recorded here first, then on the server, shielded from cancellation
        (at most ``ACK_TIMEOUT``): an acknowledgement cancelled half-way would
        leave the server behind this process. If the server never gets it, the
        message comes back to the next opening, flagged as redelivered.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        held = []
        for delivery in deliveries:
            if self._inbox.in_flight.pop(delivery.message.id, None) is None:
                continue  # acknowledged twice, or never handed out: harmless
            self._inbox.acknowledged += 1
            self._buffered.discard(delivery.position)
            self._deliveries.pop(delivery.message.id, None)
            held.append(entry_id(delivery.position))
        if not held:
            await trio.lowlevel.checkpoint()
            return
        with trio.CancelScope(shield=True), trio.move_on_after(ACK_TIMEOUT):
            await self._link.ack(self._key, sorted(held))

    def requeue_in_flight(self) -> int:
        """Make every unacknowledged delivery pending again, counted as a delivery;
        one delivered too often goes to the dead letters instead."""
        back = list(self._inbox.in_flight.values())
        requeued = self._inbox.requeue_in_flight()
        limit = self._link.policy.max_deliveries
        for delivery in back:
            count = self._deliveries.get(delivery.message.id, 1) + 1
            self._deliveries[delivery.message.id] = count
            if count > limit:
                self._inbox.pending = type(self._inbox.pending)(
                    d for d in self._inbox.pending if d.message.id != delivery.message.id
                )
                self._buffered.discard(delivery.position)
                self._deliveries.pop(delivery.message.id, None)
                self._dead_letter(delivery, count, "too many deliveries")
            else:
                self._record_count(delivery, count)
        return requeued

    def wake(self) -> None:
        """Wake waiting receivers (the reader wakes them on every arrival)."""
        self._inbox.lot.unpark_all()

    def statistics(self) -> MailboxStatistics:
        """A snapshot of this mailbox's counters (``pending``: buffered here)."""
        return self._inbox.statistics(
            self.name,
            self.durability,
            sent=self._sent,
            corrupt_skipped=self._corrupt,
            closed=self._closed,
        )

    def close(self) -> None:
        """Close; waiting receivers get ``trio.ClosedResourceError``. Messages
        still pending or in flight stay with this consumer on the server, for
        the next opening to take over."""
        self._closed = True
        self._scope.cancel()
        self._inbox.lot.unpark_all()
        self._progress.unpark_all()

    async def aclose(self) -> None:
        """Close; waiting receivers get ``trio.ClosedResourceError``."""
        self.close()
        await trio.lowlevel.checkpoint()
