"""What a running actor holds: its name, mailbox, and the one way it takes and asks.

Delivery belongs here, and nowhere else. A behaviour takes a message with
:meth:`ActorContext.take` (or :meth:`~ActorContext.poll`, which does not
wait), handles it, and marks it :meth:`~ActorContext.done`: only then is it
acknowledged and its id remembered. A message whose id was handled already
(delivered again after a crash) is acknowledged on the way and never handed
out; a behaviour that crashes before ``done`` leaves its message
unacknowledged, so its restarted incarnation gets it again.

A request with a correlated reply is :meth:`~ActorContext.call`: a durable
request (an id fixed by the caller makes a re-send after a crash the same
request), its reply taken by selective receive so that other messages keep
their place, acknowledged, all within a timeout. ``durable=False`` asks for
a round trip whose messages need no fsync (a request that can be asked
again: its reply inherits the flag; see :class:`~coterie.messages.Message`).
Its two halves,
:meth:`~ActorContext.request` and :meth:`~ActorContext.reply_for`, are there
for a caller that must record the reply before acknowledging it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import AskTimeout
from coterie.messages import Message

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.events import EventLog, EventType
    from coterie.mailbox import Delivery, Mailbox, PostOffice

    Predicate = Callable[[Message], bool]


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
    #: The delivery being handled by the actor base's receive loop.
    current: Delivery | None = None
    stopping: bool = False

    # -- taking messages ---------------------------------------------------------

    async def take(self, where: Predicate | None = None) -> Delivery:
        """The next message not handled yet (matching *where*), waiting for one.

        Copies of messages handled already are acknowledged on the way.
        """
        while True:
            delivery = await self.mailbox.receive(where=where)
            if delivery.message.id not in self.seen:
                return delivery
            await self.mailbox.ack(delivery)

    async def sync(self) -> None:
        """Wait until :meth:`poll` sees every message sent to this actor before the
        call (a mailbox on a server is read by a task of its own, which may lag).
        Before deciding on "nothing is waiting", an actor syncs."""
        await self.mailbox.sync()

    async def poll(self, where: Predicate | None = None) -> Delivery | None:
        """Like :meth:`take`, but ``None`` at once when nothing is waiting."""
        while True:
            try:
                delivery = self.mailbox.receive_nowait(where=where)
            except trio.WouldBlock:
                return None
            if delivery.message.id not in self.seen:
                return delivery
            await self.mailbox.ack(delivery)

    async def done(self, *deliveries: Delivery) -> None:
        """These deliveries are handled: remember their ids, then acknowledge them
        (together: one cursor write, so after a crash all or none come back)."""
        for delivery in deliveries:
            self.seen.add(delivery.message.id)
        await self.mailbox.ack(*deliveries)

    # -- sending -------------------------------------------------------------------

    async def send(
        self,
        to: str,
        kind: str,
        body: Any = None,
        *,
        correlation_id: str | None = None,
        reply_to: str | None = None,
        id: str | None = None,
    ) -> Message:
        """Send a message from this actor; returns it once durable (per policy)."""
        message = Message.new(
            self.name, to, kind, body, correlation_id=correlation_id, reply_to=reply_to, id=id
        )
        await self.post.send(message)
        return message

    async def reply(self, request: Message, kind: str, body: Any = None) -> Message:
        """Answer *request* (to its ``reply_to``, else its sender), as durable as it."""
        message = Message.new(
            self.name,
            request.reply_to or request.sender,
            kind,
            body,
            correlation_id=request.id,
            durable=request.durable,
        )
        await self.post.send(message)
        return message

    def request(
        self, to: str, kind: str, body: Any = None, *, id: str | None = None, durable: bool = True
    ) -> Message:
        """A request from this actor to *to*, its reply to come back here (not sent yet)."""
        return Message.new(self.name, to, kind, body, reply_to=self.name, id=id, durable=durable)

    async def reply_for(self, request_id: str, *, timeout: float = math.inf) -> Delivery:  # noqa: ASYNC109
        """The reply to request *request_id*, unacknowledged (:meth:`done` it);
        :class:`AskTimeout` after *timeout* seconds."""
        with trio.move_on_after(timeout):
            return await self.take(where=lambda m: m.correlation_id == request_id)
        raise AskTimeout(f"{self.name}: no reply to {request_id!r} within {timeout:g} s")

    # A required timeout, as in gen_server:call: a call must never wait by accident.
    async def call(
        self,
        to: str,
        kind: str,
        body: Any = None,
        *,
        timeout: float,  # noqa: ASYNC109
        id: str | None = None,
        durable: bool = True,
    ) -> Message:
        """Send a request and wait up to *timeout* seconds for its reply.

        An *id* fixed by the caller makes a call repeated after a crash the
        same request, which its recipient recognises. ``durable=False``: the
        request and its reply are not fsynced (for a request that can be asked
        again). Raises :class:`AskTimeout` (a ``TimeoutError``) naming the
        recipient.
        """
        request = self.request(to, kind, body, id=id, durable=durable)
        await self.post.send(request)
        try:
            delivery = await self.reply_for(request.id, timeout=timeout)
        except AskTimeout:
            raise AskTimeout(
                f"{self.name}: no reply from {to!r} to {kind!r} within {timeout:g} s"
            ) from None
        await self.done(delivery)
        return delivery.message

    # -- the rest ------------------------------------------------------------------

    def stop(self) -> None:
        """Stop after the current message, with a normal exit."""
        self.stopping = True

    @property
    def redelivered(self) -> bool:
        """Whether the message being handled may have been handled before."""
        return self.current is not None and self.current.redelivered

    def emit(self, type: EventType, **data: Any) -> None:
        """Append an event about this actor to the run's event log."""
        if self.events is not None:
            self.events.emit(type, actor=self.name, **data)
