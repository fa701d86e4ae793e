"""The ``control`` actor: applies the faults a run is sent (docs/faults.md).

Theory of operation. One message is one fault request (kind ``inject``):

1. a request delivered again (the run, or this actor, restarted while it was
   in flight) is never applied a second time: it is answered ``applied:
   false`` and acknowledged, so a fault cannot fire twice, nor fire long
   after the sender gave up waiting;
2. the body is parsed and checked against the names in the supervision tree
   (:func:`._rules.check`) and the run's own *guard*: a refusal is answered
   at once and nothing happens;
3. otherwise ``fault.injected`` is written to the event log *first*, then the
   fault is applied: a crash or a stop through the target's own supervisor
   (:meth:`~coterie.supervisors.Supervisor.inject`, which returns once that
   incarnation has ended), a cancel by the run's *cancel* callback (the
   composition root hands in Ctrl-C), after the answer is sent, since the
   answer could not be sent once the run is going down;
4. the answer (kind ``injected``) goes to the request's ``reply_to``.

A question of kind ``stats`` (the observer's, once a second while a page is
open) is answered at once with :func:`mailbox_counts`: which of each
mailbox's messages wait and which are in flight is known only inside the
running process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.actors import Actor, actor_spec
from coterie.control._rules import (
    CONTROL,
    INJECT,
    INJECTED,
    STATISTICS,
    STATS,
    FaultRequest,
    Refusal,
    check,
    done_message,
    parse_request,
)
from coterie.errors import ChildNotRunning, NoSuchChild, UnknownActor

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.actors import ActorContext
    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.messages import Message
    from coterie.supervisors import ChildSpec, Supervisor

__all__ = ["Control", "control_spec"]


class Control(Actor):
    """Applies fault requests to the run whose tree *root()* returns."""

    def __init__(
        self,
        root: Callable[[], Supervisor],
        cancel: Callable[[], None],
        after: Callable[[str, str], Awaitable[None]] | None = None,
        guard: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self.root = root
        self.cancel = cancel
        self.after = after
        self.guard = guard

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == STATS:
            await _answer(ctx, message, {"mailboxes": mailbox_counts(ctx.post)}, STATISTICS)
            return
        if message.kind != INJECT:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        try:
            request = parse_request(message.body)
        except ValueError as exc:
            await _answer(ctx, message, Refusal("bad_request", str(exc)).to_body())
            return
        if ctx.redelivered:
            body = _body(request, message, applied=False)
            body["message"] = "delivered again after a restart: a fault is never applied twice"
            await _answer(ctx, message, body)
            return
        tree = self.root()
        parents = {info.name: sup.name for sup, info in tree.walk()}
        refusal = check(request, list(parents), _carrying(parents))
        if refusal is None and request.actor is not None and self.guard is not None:
            why = self.guard(request.actor, request.fault)
            refusal = None if why is None else Refusal("refused", why)
        if refusal is not None:
            await _answer(ctx, message, refusal.to_body())
            return
        if request.fault == "cancel":
            self._record(ctx, request, message, None)
            text = done_message(request, None, None)
            await _answer(ctx, message, _body(request, message, message=text))
            self.cancel()
            return
        await self._apply(ctx, message, request, tree)

    async def _apply(
        self, ctx: ActorContext, message: Message, request: FaultRequest, tree: Supervisor
    ) -> None:
        actor = request.actor
        assert actor is not None
        owner = tree.find(actor)
        info = next((c for s, c in tree.walk() if c.name == actor and s is owner), None)
        if owner is None or info is None or not info.running:
            state = "gone" if info is None else str(info.state)
            refusal = Refusal("not_running", f"{actor} is {state}, not running; try again")
            await _answer(ctx, message, refusal.to_body())
            return
        self._record(ctx, request, message, owner.name)
        try:
            await owner.inject(actor, request.fault, request.crash_reason)
        except (NoSuchChild, ChildNotRunning) as exc:
            refusal = Refusal("not_running", f"{actor} ended before the fault reached it ({exc})")
            await _answer(ctx, message, refusal.to_body())
            return
        if self.after is not None:
            await self.after(actor, request.fault)
        text = done_message(request, owner.name, str(info.restart))
        await _answer(ctx, message, _body(request, message, supervisor=owner.name, message=text))

    @staticmethod
    def _record(
        ctx: ActorContext, request: FaultRequest, message: Message, supervisor: str | None
    ) -> None:
        if ctx.events is not None:
            ctx.events.emit(
                "fault.injected",
                fault=request.fault,
                actor=request.actor,
                reason=request.crash_reason if request.fault == "crash" else request.reason,
                by=request.by,
                id=message.id,
                supervisor=supervisor,
            )


def _carrying(parents: dict[str, str]) -> set[str]:
    """The control actor and the supervisors above it: a fault there would take the
    channel down with it before it could answer."""
    chain, name = set(), CONTROL
    while name in parents:
        chain.add(name)
        name = parents[name]
    return chain | {CONTROL}


def _body(request: FaultRequest, sent: Message, **extra: Any) -> dict[str, Any]:
    return {"ok": True, "applied": True, "id": sent.id, **request.to_body(), **extra}


def mailbox_counts(post: PostOffice) -> dict[str, dict[str, int]]:
    """What only the running process knows of its mailboxes: each open one's
    messages waiting (``pending``) and handed out, not acknowledged yet
    (``in_flight``)."""
    counts = {}
    for name in post.names():
        try:
            box = post[name]
        except UnknownActor:
            continue  # a mailbox of the run not open in this process
        stats = box.statistics()
        counts[name] = {"pending": stats.pending, "in_flight": stats.in_flight}
    return counts


async def _answer(
    ctx: ActorContext, message: Message, body: dict[str, Any], kind: str = INJECTED
) -> None:
    try:
        await ctx.reply(message, kind, body)
    except (UnknownActor, OSError):
        # The sender's reply mailbox is gone (it gave up and cleaned up, maybe
        # while this was written): the fault's record is the event log.
        ctx.emit("actor.late_reply", kind=kind, correlation_id=message.id)


def control_spec(
    root: Callable[[], Supervisor],
    post: PostOffice,
    *,
    cancel: Callable[[], None],
    after: Callable[[str, str], Awaitable[None]] | None = None,
    guard: Callable[[str, str], str | None] | None = None,
    events: EventLog | None = None,
) -> ChildSpec:
    """The supervisor child that runs the run's :class:`Control` actor.

    *root* returns the run's root supervisor (it is built after this spec);
    *cancel* stops the whole run as Ctrl-C does; *after(actor, fault)* runs
    once a fault has ended *actor* (a stopped teammate's tasks go back);
    *guard(actor, fault)* says why the run refuses that fault there (None: it
    does not).
    """
    return actor_spec(
        CONTROL,
        lambda _ctx: Control(root, cancel, after, guard),
        post,
        events=events,
    )
