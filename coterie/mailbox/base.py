"""What every mailbox shares: the interface, deliveries, statistics, and the
in-memory bookkeeping of pending, in-flight and acknowledged messages.

Theory of operation
-------------------
Every message has a *position* in its mailbox's log, a ``(segment, offset)``
pair that only grows. A message is *pending* (read from the log, not handed
out), *in flight* (handed out by ``receive``, not acknowledged) or
*acknowledged*. The durable state is a cursor: the position before which
everything is acknowledged, plus the set of acknowledged positions after it
(acknowledgements may come out of order, e.g. a shutdown request handled
before older work). ``Inbox`` keeps that bookkeeping; the file and memory
mailboxes differ only in where messages come from and where the cursor goes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

import attrs
import trio

from coterie.messages import Message

Position = tuple[int, int]
Predicate = Callable[[Message], bool]


@attrs.frozen
class Delivery:
    """A received message and what the mailbox knows of its history.

    ``redelivered`` is true when the message may have been handed out before:
    it was in flight when its receiver restarted, or was unacknowledged when
    the mailbox was reopened. Handlers use it (and the message id) to avoid
    acting twice.
    """

    message: Message
    position: Position
    redelivered: bool = False


@attrs.frozen
class MailboxStatistics:
    """A snapshot of a mailbox, in the spirit of ``trio.MemoryChannelStatistics``."""

    name: str
    durability: str
    pending: int
    in_flight: int
    sent: int
    received: int
    acknowledged: int
    redelivered: int
    corrupt_skipped: int
    waiting_receivers: int
    segments: int
    closed: bool


class Mailbox(Protocol):
    """The interface shared by the file-backed and in-memory mailboxes."""

    name: str

    async def send(self, message: Message) -> None: ...
    def send_nowait(self, message: Message) -> None: ...
    async def receive(self, where: Predicate | None = None) -> Delivery: ...
    def receive_nowait(self, where: Predicate | None = None) -> Delivery: ...
    async def ack(self, *deliveries: Delivery) -> None: ...
    def requeue_in_flight(self) -> int: ...
    def wake(self) -> None: ...
    async def sync(self) -> None: ...
    def statistics(self) -> MailboxStatistics: ...
    def close(self) -> None: ...
    async def aclose(self) -> None: ...


@attrs.define
class Inbox:
    """Pending / in-flight / acknowledged bookkeeping, shared by both mailboxes."""

    cursor: Position = (0, 0)
    acked_beyond: set[Position] = attrs.field(factory=set)
    pending: deque[Delivery] = attrs.field(factory=deque)
    in_flight: dict[str, Delivery] = attrs.field(factory=dict)
    # Positions read but not acknowledged, in log order; the cursor is the
    # first of them (or the scan position when there are none).
    outstanding: deque[Position] = attrs.field(factory=deque)
    scan_pos: Position = (0, 0)
    # Read but not acknowledged (pending or in flight): the holes a compact
    # cursor lists instead of everything acknowledged past a held message.
    unacked: set[Position] = attrs.field(factory=set)
    # From the cursor file: records from the cursor up to ``loaded_upto`` are
    # acknowledged but ``loaded_unacked`` (until they are read again).
    loaded_upto: Position = (0, 0)
    loaded_unacked: frozenset[Position] = frozenset()
    received: int = 0
    acknowledged: int = 0
    redelivered: int = 0
    lot: trio.lowlevel.ParkingLot = attrs.field(factory=trio.lowlevel.ParkingLot)

    def statistics(
        self,
        name: str,
        durability: str,
        *,
        sent: int,
        corrupt_skipped: int = 0,
        segments: int = 0,
        closed: bool,
    ) -> MailboxStatistics:
        """A mailbox's snapshot: these counters, and what the mailbox adds."""
        return MailboxStatistics(
            name=name,
            durability=durability,
            pending=len(self.pending),
            in_flight=len(self.in_flight),
            sent=sent,
            received=self.received,
            acknowledged=self.acknowledged,
            redelivered=self.redelivered,
            corrupt_skipped=corrupt_skipped,
            waiting_receivers=len(self.lot),
            segments=segments,
            closed=closed,
        )

    def is_acked(self, pos: Position) -> bool:
        if pos < self.cursor or pos in self.acked_beyond:
            return True
        return pos < self.loaded_upto and pos not in self.loaded_unacked

    def durable_state(self) -> tuple[Position, set[Position], Position, set[Position]]:
        """What the cursor file must say: (at, acked beyond, up to, unacked holes),
        in whichever form is smaller (both are exact)."""
        if self.loaded_upto <= self.scan_pos and len(self.acked_beyond) <= len(self.unacked):
            return self.cursor, self.acked_beyond, self.cursor, set()
        upto = max(self.scan_pos, self.loaded_upto)
        holes = self.unacked | {h for h in self.loaded_unacked if h >= self.scan_pos}
        return self.cursor, self.acked_beyond, upto, holes

    def add(self, delivery: Delivery) -> None:
        """A message read from the log at the scan position."""
        self.pending.append(delivery)
        self.outstanding.append(delivery.position)
        self.unacked.add(delivery.position)

    def take(self, where: Predicate | None) -> Delivery | None:
        if not self.pending:
            return None
        if where is None:
            delivery = self.pending.popleft()
        else:
            for i, candidate in enumerate(self.pending):
                if where(candidate.message):
                    delivery = candidate
                    del self.pending[i]
                    break
            else:
                return None
        self.in_flight[delivery.message.id] = delivery
        self.received += 1
        if delivery.redelivered:
            self.redelivered += 1
        return delivery

    def mark_acked(self, deliveries: Iterable[Delivery]) -> bool:
        """Record acknowledgements; True if the durable cursor state changed."""
        changed = False
        for delivery in deliveries:
            if self.in_flight.pop(delivery.message.id, None) is None:
                continue  # acknowledged twice, or never handed out: harmless
            self.acked_beyond.add(delivery.position)
            self.unacked.discard(delivery.position)
            self.acknowledged += 1
            changed = True
        if changed:
            self._advance()
        return changed

    def _advance(self) -> None:
        while self.outstanding and self.outstanding[0] in self.acked_beyond:
            self.acked_beyond.discard(self.outstanding.popleft())
        cursor = self.outstanding[0] if self.outstanding else self.scan_pos
        moved, self.cursor = cursor != self.cursor, cursor
        if moved and self.acked_beyond:
            # Acks found on reopen for records we skipped sit below the cursor
            # now. Only when it moved: a message held unacknowledged for long
            # must not make every later ack cost O(acks since).
            self.acked_beyond = {p for p in self.acked_beyond if p >= cursor}

    def moved_scan(self, pos: Position) -> None:
        """The scan position advanced (records read or skipped)."""
        self.scan_pos = pos
        if not self.outstanding:
            self._advance()

    def requeue_in_flight(self) -> int:
        """Put every in-flight message back in front of the pending ones, in log order."""
        if not self.in_flight:
            return 0
        back = sorted(
            (attrs.evolve(d, redelivered=True) for d in self.in_flight.values()),
            key=lambda d: d.position,
        )
        self.in_flight.clear()
        merged = sorted([*back, *self.pending], key=lambda d: d.position)
        self.pending = deque(merged)
        self.lot.unpark_all()
        return len(back)
