"""The in-memory mailbox: the file mailbox's semantics without the disk.

For tests and for embedding where nothing needs to survive the process.
Acknowledgement, redelivery after :meth:`MemoryMailbox.requeue_in_flight`,
selective receive and validation behave exactly as in the file mailbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.errors import InvalidMessage
from coterie.mailbox.base import Delivery, Inbox, MailboxStatistics, Predicate

if TYPE_CHECKING:
    from coterie.messages import Message


class MemoryMailbox:
    """A mailbox that lives and dies with its process."""

    durability = "memory"

    def __init__(self, name: str) -> None:
        self.name = name
        self._inbox = Inbox(cursor=(0, 0), scan_pos=(0, 0))
        self._seq = 0
        self._closed = False

    def send_nowait(self, message: Message) -> None:
        """Queue *message* at once."""
        if self._closed:
            raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
        if message.recipient != self.name:
            raise InvalidMessage(
                f"message for {message.recipient!r} sent to the mailbox of {self.name!r}"
            )
        message.to_json_bytes()  # the same validation as on disk
        self._inbox.add(Delivery(message, (0, self._seq)))
        self._seq += 1
        self._inbox.moved_scan((0, self._seq))
        self._inbox.lot.unpark_all()

    async def send(self, message: Message) -> None:
        """Queue *message*."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self.send_nowait(message)
        await trio.lowlevel.cancel_shielded_checkpoint()

    def receive_nowait(self, where: Predicate | None = None) -> Delivery:
        """The next pending message (matching *where*), or raise ``trio.WouldBlock``."""
        if self._closed:
            raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
        delivery = self._inbox.take(where)
        if delivery is None:
            raise trio.WouldBlock
        return delivery

    async def receive(self, where: Predicate | None = None) -> Delivery:
        """Wait for the next pending message (the first matching *where*, if given)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise trio.ClosedResourceError(f"mailbox {self.name!r} is closed")
            delivery = self._inbox.take(where)
            if delivery is not None:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return delivery
            await self._inbox.lot.park()

    async def ack(self, *deliveries: Delivery) -> None:
        """Acknowledge handled messages."""
        self._inbox.mark_acked(deliveries)
        await trio.lowlevel.checkpoint()

    def requeue_in_flight(self) -> int:
        """Make every unacknowledged delivery pending again (for a restarted receiver)."""
        return self._inbox.requeue_in_flight()

    def wake(self) -> None:
        """Wake waiting receivers (nothing else writes to a memory mailbox)."""
        self._inbox.lot.unpark_all()

    async def sync(self) -> None:
        """Nothing to catch up with: a send is in the buffer when it returns."""
        await trio.lowlevel.checkpoint()

    def statistics(self) -> MailboxStatistics:
        """A snapshot of this mailbox's counters."""
        return self._inbox.statistics(
            self.name, self.durability, sent=self._seq, closed=self._closed
        )

    def close(self) -> None:
        """Close; waiting receivers get ``trio.ClosedResourceError``."""
        self._closed = True
        self._inbox.lot.unpark_all()

    async def aclose(self) -> None:
        """Close; waiting receivers get ``trio.ClosedResourceError``."""
        self.close()
        await trio.lowlevel.checkpoint()
