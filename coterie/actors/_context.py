"""What a running actor holds: its name, mailbox, and ways to talk to others."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import AskTimeout
from coterie.messages import Message

if TYPE_CHECKING:
    from coterie.events import EventLog
    from coterie.mailbox import Delivery, Mailbox, PostOffice


@attrs.define
class SeenIds:
    """The ids of messages an actor has handled, most recent ``limit`` of them.

    It belongs to the actor's identity, not to one incarnation, so it survives
    restarts: a message handled just before a crash (and so never
    acknowledged) is recognised when it is delivered again.
    """

    limit: int = 10_000
    _ids: OrderedDict[str, None] = attrs.field(factory=OrderedDict)

    def add(self, message_id: str) -> None:
        self._ids[message_id] = None
        if len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)


@attrs.define
class ActorContext:
    """Handed to an actor's behaviour: its identity and its links to the run."""

    name: str
    mailbox: Mailbox
    post: PostOffice
    events: EventLog | None = None
    seen: SeenIds = attrs.field(factory=SeenIds)
    current: Delivery | None = None
    stopping: bool = False

    async def send(
        self,
        to: str,
        kind: str,
        body: Any = None,
        *,
        correlation_id: str | None = None,
        reply_to: str | None = None,
    ) -> Message:
        """Send a message from this actor; returns it once durable (per policy)."""
        message = Message.new(
            self.name, to, kind, body, correlation_id=correlation_id, reply_to=reply_to
        )
        await self.post.send(message)
        return message

    async def reply(self, request: Message, kind: str, body: Any = None) -> Message:
        """Answer *request* (to its ``reply_to``, else its sender)."""
        return await self.send(
            request.reply_to or request.sender, kind, body, correlation_id=request.id
        )

    # A required timeout, as in gen_server:call: an ask must never wait forever.
    async def ask(self, to: str, kind: str, body: Any = None, *, timeout: float) -> Message:  # noqa: ASYNC109
        """Send a request and wait up to *timeout* seconds for its reply.

        The reply is taken out of this actor's mailbox by selective receive,
        so other messages keep their place. Raises :class:`AskTimeout`.
        """
        request = await self.send(to, kind, body, reply_to=self.name)
        with trio.move_on_after(timeout):
            delivery = await self.mailbox.receive(where=lambda m: m.correlation_id == request.id)
            await self.mailbox.ack(delivery)
            return delivery.message
        raise AskTimeout(f"{self.name}: no reply from {to!r} to {kind!r} within {timeout} s")

    def stop(self) -> None:
        """Stop after the current message, with a normal exit."""
        self.stopping = True

    @property
    def redelivered(self) -> bool:
        """Whether the message being handled may have been handled before."""
        return self.current is not None and self.current.redelivered

    def emit(self, type: str, **data: Any) -> None:
        """Append an event about this actor to the run's event log."""
        if self.events is not None:
            self.events.emit(type, actor=self.name, **data)
