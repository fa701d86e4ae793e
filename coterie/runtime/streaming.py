"""The Trio layer of :meth:`AgentSession.stream`: one request, its typed messages
as they happen.

Theory of operation: the stream registers a synchronous listener on the run's
event log before anything else (``EventLog.listen``, not ``subscribe``: a
subscriber's buffer drops events when it is full, a listener never misses
one). The listener feeds each event to :class:`~coterie.ui.streamlines.StreamLines`,
the converter the ``stream-json`` output uses, and queues the lines it makes;
the queue has no bound, so a consumer slower than the run only delays its
messages (the run never waits for it: emitting never blocks). The request is
then sent as :meth:`AgentSession.query` sends it (recorded before it is sent,
marked sent after), so it is as durable and resumable. The generator waits
for the request's reply with a cancel scope the listener cancels whenever it
queued a line, yields what was queued, and waits again; taking a reply from
a mailbox is cancel-safe, so a wake-up loses nothing. No task is started and
nothing is yielded inside a cancel scope or a nursery, as Trio requires of
an async generator. Once the reply is taken its outcome is recorded and
acknowledged (shielded: all or nothing), the lines queued by then are
yielded, and the request's ``result`` line ends the stream.

Stopping early (``break``, an exception in the consumer, a cancellation):
closing the generator interrupts the request, as :meth:`AgentSession.interrupt`
does, then waits (shielded, at most :data:`ABANDON_GRACE` seconds) for its
``error_interrupted`` result and records it, unless another request was
recorded since; a request still unanswered then stays pending, for
:meth:`AgentSession.resume`. Close the stream with :func:`contextlib.aclosing`
to have this done before the next statement; a bare ``break`` leaves it to
Trio, which closes an abandoned generator soon after in a task of its own.
"""

from __future__ import annotations

import weakref
from collections import deque
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors.lead import INTERRUPT
from coterie.sdkmessages import message_of
from coterie.ui.streamlines import StreamLines

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Awaitable, Callable

    from coterie.actors import ActorContext
    from coterie.agent import RunResult
    from coterie.events import Event, EventLog
    from coterie.mailbox import Delivery
    from coterie.runtime.options import RunOptions
    from coterie.sdkmessages import Message

__all__ = ["ABANDON_GRACE", "RequestLink", "first_stream", "start_info", "stream_request"]

#: Seconds an abandoned stream waits for its interrupted request's result.
ABANDON_GRACE = 30.0

#: The sessions whose ``system/init`` went out already (by ``id``; a session that
#: is collected leaves, so its id can be reused).
_STARTED: weakref.WeakValueDictionary[int, object] = weakref.WeakValueDictionary()


def first_stream(session: object) -> bool:
    """True the first time it is asked about *session* (its first stream)."""
    if _STARTED.get(id(session)) is session:
        return False
    _STARTED[id(session)] = session
    return True


def start_info(run_id: str, options: RunOptions, mode: str, info: dict[str, Any]) -> dict[str, Any]:
    """What ``system/init`` says of a run: the fields the CLI gives its view."""
    return {
        "run_id": run_id,
        "cwd": str(options.workdir),
        "model": "scripted" if options.scenario else options.model,
        "permission_mode": mode,
        "teammates": list(options.teammates),
        "goal": options.goal,
        **info,
    }


@attrs.frozen
class RequestLink:
    """What a stream needs of its session: the user's mailbox, and how the session
    sends a request and settles its reply (``AgentSession._send``, ``_settle``:
    recorded in ``state.json`` as :meth:`AgentSession.query` records them)."""

    user: ActorContext
    send: Callable[[str, str, dict[str, Any], str], Awaitable[str]]
    settle: Callable[[str, Delivery], Awaitable[RunResult]]


@attrs.define
class _Queue:
    """The listener: each event through the converter, its lines queued, the
    waiting stream woken. An error of the converter is kept for the consumer
    (a listener must not raise into whoever emitted the event)."""

    lines: StreamLines
    queued: deque[dict[str, Any]] = attrs.field(factory=deque)
    wake: trio.CancelScope | None = None
    error: Exception | None = None

    def event(self, event: Event) -> None:
        if self.error is not None:
            return
        try:
            made = self.lines.event(event)
        except Exception as exc:  # reported to the consumer, by take()
            self.error = exc
            made = []
        self.queued.extend(made)
        if (made or self.error) and self.wake is not None:
            self.wake.cancel()

    def take(self) -> list[Message]:
        if self.error is not None:
            raise self.error
        taken = _typed(list(self.queued))
        self.queued.clear()
        return taken


async def stream_request(
    link: RequestLink,
    events: EventLog,
    request: tuple[str, str, dict[str, Any], str],
    info: dict[str, Any],
    *,
    init: Callable[[], bool],
    partial: bool = False,
    hook_events: bool = False,
) -> AsyncGenerator[Message, None]:
    """Send *request* (``to``, ``kind``, ``body``, ``text``) and yield its messages
    (see the module docstring): ``system/init`` of the run *info* describes first
    if *init* says so when iteration starts, ``stream_event`` messages with
    *partial*, hook messages with *hook_events*."""
    to, kind, body, text = request
    lines = StreamLines(partial=partial, hook_events=hook_events)
    start = lines.start(info)
    queue = _Queue(lines)
    with events.listen(queue.event):
        if init():
            for message in _typed(start):
                yield message
        sent = await link.send(to, kind, body, text)
        result: RunResult | None = None
        try:
            while result is None:
                for message in queue.take():
                    yield message
                delivery: Delivery | None = None
                with trio.CancelScope() as queue.wake:
                    if queue.queued or queue.error is not None:
                        queue.wake.cancel()
                    delivery = await link.user.reply_for(sent)
                queue.wake = None
                if delivery is not None:
                    with trio.CancelScope(shield=True):
                        result = await link.settle(sent, delivery)
        finally:
            queue.wake = None
            if result is None:
                await _abandon(link, to, sent)
        for message in queue.take():
            yield message
        for message in _typed(lines.finish({**result.to_dict(), "run_id": lines.session_id})):
            yield message


def _typed(lines: list[dict[str, Any]]) -> list[Message]:
    return [message for message in map(message_of, lines) if message is not None]


async def _abandon(link: RequestLink, to: str, request_id: str) -> None:
    """The consumer stopped early: interrupt the request and settle its result."""
    with trio.CancelScope(shield=True), trio.move_on_after(ABANDON_GRACE):
        try:
            await link.user.send(to, INTERRUPT, {"request": request_id})
            await link.settle(request_id, await link.user.reply_for(request_id))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # the run is stopping: the request stays pending, to resume
