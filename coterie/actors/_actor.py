"""The actor base: a receive loop around a behaviour, and its supervision spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import trio

from coterie.actors._context import ActorContext, SeenIds
from coterie.messages import Message, check_actor_name
from coterie.supervisors import ChildSpec, Restart

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.events import EventLog
    from coterie.mailbox import PostOffice

STOP = "stop"
"""Message kind that asks an actor to stop once the messages before it are handled."""


class Behaviour(Protocol):
    """Anything with ``async run(ctx)`` can be supervised as an actor."""

    async def run(self, ctx: ActorContext) -> None: ...


class Actor:
    """Base class: override :meth:`handle` (and optionally the hooks).

    The loop takes one message at a time, skips ids it has already handled,
    calls :meth:`handle`, then acknowledges. A crash leaves the message
    unacknowledged, so the restarted actor gets it again; a ``stop`` message
    or :meth:`ActorContext.stop` ends the loop with a normal exit.
    """

    async def on_start(self, ctx: ActorContext) -> None:
        """Called when this incarnation starts, before the first message."""

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        """Handle one message. Raise to crash (the supervisor decides what next)."""
        raise NotImplementedError

    async def on_late_reply(self, ctx: ActorContext, message: Message) -> None:
        """A reply arrived that no ``ask`` is waiting for (it timed out, or we restarted)."""
        ctx.emit("actor.late_reply", kind=message.kind, correlation_id=message.correlation_id)

    async def run(self, ctx: ActorContext) -> None:
        """The receive loop: take, handle, done (see :mod:`._context`)."""
        ctx.mailbox.requeue_in_flight()
        ctx.stopping = False
        await self.on_start(ctx)
        while not ctx.stopping:
            delivery = await ctx.take()
            message = delivery.message
            ctx.current = delivery
            try:
                if message.kind == STOP:
                    ctx.stop()
                elif message.correlation_id is not None:
                    await self.on_late_reply(ctx, message)
                else:
                    await self.handle(ctx, message)
            finally:
                ctx.current = None
            await ctx.done(delivery)


def actor_spec(
    name: str,
    factory: Callable[[ActorContext], Behaviour],
    post: PostOffice,
    *,
    events: EventLog | None = None,
    restart: Restart = Restart.PERMANENT,
    shutdown_timeout: float = 5.0,
) -> ChildSpec:
    """A supervisor child that runs a fresh ``factory(ctx)`` behaviour as actor *name*.

    The factory gets the actor's context, so the behaviour it builds is
    complete from the start (its tools, gate and clients bound to this
    actor); building it is the child's start phase, so a factory that raises
    is a failed start (:class:`~coterie.errors.FailedToStartChild` for
    ``start_child``). The mailbox and the set of handled ids outlive each incarnation;
    the behaviour object does not (a restart starts from a clean state, as in
    OTP).
    """
    check_actor_name(name)
    mailbox = post.open(name)
    seen = SeenIds()

    async def start(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        # The start phase is building the behaviour (its transcript read back,
        # its tools bound): if that fails, the start fails, as OTP's init does.
        ctx = ActorContext(name=name, mailbox=mailbox, post=post, events=events, seen=seen)
        behaviour = factory(ctx)
        task_status.started()
        await behaviour.run(ctx)
        await trio.lowlevel.checkpoint()

    return ChildSpec(
        name=name,
        start=start,
        restart=restart,
        shutdown_timeout=shutdown_timeout,
        reports_started=True,
    )
