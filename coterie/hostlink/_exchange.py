"""Who owes whom an answer on the control channel: a sans-io state machine.

Theory of operation. Requests run both ways over one pair of streams, and
each side answers the other's by id:

- **Ours** (``can_use_tool``, ``hook_callback``, ``mcp_message``: coterie asks
  the host). :meth:`Exchange.ask` makes the request frame and records it as
  *pending* with a deadline. The host's response settles it
  (:class:`Answered`); :meth:`Exchange.expire` settles every pending request
  whose deadline passed (:class:`Answered` with ``timed_out``) and writes a
  cancel frame so the host stops working on it; :meth:`Exchange.abandon` does
  the same when our side no longer wants the answer (an interrupt);
  :meth:`Exchange.close` settles all of them when the host is gone. A
  response to an id that is not pending (late, or never asked) is
  :class:`Stray`, never an error: the host may answer after we gave up.
- **Theirs** (``initialize``, ``interrupt``, ``set_permission_mode``...: the
  host asks coterie). A request whose subtype the exchange was built to
  serve is *in flight* and :class:`Dispatch`-ed; its handler ends with
  :meth:`Exchange.complete` or :meth:`Exchange.fail`, which write the
  response. A cancel frame for an in-flight request drops it and says
  :class:`CancelHandler`: the handler is cancelled and nothing is answered
  (the host has stopped waiting). An unknown subtype or an unreadable
  request is answered with an error at once and goes no further; a request
  reusing the id of one still in flight is :class:`Stray` (an answer to it
  would read as the first one's).

Invariants: every request of the host that could be read gets at most one
response, none after the host cancelled it; every request of ours is settled
exactly once (answered, timed out, abandoned or lost); no decision depends
on anything but the calls made, so the machine is tested without I/O, and
the Trio layer only reads lines, calls it, writes what it returns and runs
the handlers it dispatches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.hostlink._frames import (
    Cancel,
    FrameError,
    Request,
    Response,
    UserLine,
    error_response,
    parse_line,
    success_response,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "Answered",
    "CancelHandler",
    "Decision",
    "Dispatch",
    "Exchange",
    "Stray",
    "Turn",
    "Write",
    "writes",
]


@attrs.frozen
class Write:
    """A frame to write to the host, in this order."""

    frame: Request | Response | Cancel


@attrs.frozen
class Dispatch:
    """Run the handler of the host's *request*; answer through complete / fail."""

    request: Request


@attrs.frozen
class CancelHandler:
    """The host cancelled *request_id*: cancel its handler; it answers nothing."""

    request_id: str


@attrs.frozen
class Answered:
    """One of our requests is settled: the host's *response*, or no answer at all.

    ``response`` is None when the request timed out (``timed_out``), was
    abandoned by our side, or the host went away (``reason`` says which).
    """

    request_id: str
    subtype: str
    response: Response | None
    reason: str = ""

    @property
    def timed_out(self) -> bool:
        return self.reason == "timed out"


@attrs.frozen
class Stray:
    """Something from the host that settles nothing (a late answer, an unknown id)."""

    note: str


@attrs.frozen
class Turn:
    """A conversation line from the host: the next user message."""

    raw: dict[str, Any]


Decision = Write | Dispatch | CancelHandler | Answered | Stray | Turn


@attrs.frozen
class _Pending:
    subtype: str
    deadline: float


@attrs.define
class Exchange:
    """The control channel's bookkeeping; *serves* names the host's subtypes we answer."""

    serves: frozenset[str]
    #: Prefix of our request ids (unique per process: a host may see two CLIs).
    prefix: str = "coterie"
    _count: int = 0
    _pending: dict[str, _Pending] = attrs.field(factory=dict)
    _in_flight: set[str] = attrs.field(factory=set)
    _lines: int = 0

    # -- our requests --------------------------------------------------------------

    def ask(self, subtype: str, body: dict[str, Any], *, now: float, timeout: float) -> Request:
        """Our request *subtype* with *body*, recorded as pending until *now* + *timeout*;
        write the frame returned."""
        self._count += 1
        request_id = f"{self.prefix}_{self._count}"
        self._pending[request_id] = _Pending(subtype, now + timeout)
        return Request(request_id, subtype, {**body, "subtype": subtype})

    def expire(self, now: float) -> list[Decision]:
        """Settle the pending requests whose deadline is past *now* (the host is told)."""
        late = [rid for rid, p in self._pending.items() if p.deadline <= now]
        return [d for rid in late for d in self._give_up(rid, "timed out")]

    def abandon(self, request_id: str) -> list[Decision]:
        """Our side no longer wants *request_id*'s answer (an interrupt)."""
        if request_id not in self._pending:
            return []
        return self._give_up(request_id, "abandoned")

    def next_deadline(self) -> float | None:
        """When :meth:`expire` next has something to do."""
        return min((p.deadline for p in self._pending.values()), default=None)

    def close(self) -> list[Decision]:
        """The host's input ended: every request of ours is settled unanswered (no
        answer can come). Its requests still being handled are answered when done:
        it may still read the output."""
        lost = [Answered(rid, p.subtype, None, "host gone") for rid, p in self._pending.items()]
        self._pending.clear()
        return list(lost)

    def _give_up(self, request_id: str, reason: str) -> list[Decision]:
        pending = self._pending.pop(request_id)
        return [
            Write(Cancel(request_id)),
            Answered(request_id, pending.subtype, None, reason),
        ]

    @property
    def pending(self) -> frozenset[str]:
        """The ids of our requests still waiting for the host."""
        return frozenset(self._pending)

    # -- what the host sends ---------------------------------------------------------

    def receive(self, line: str) -> list[Decision]:
        """What to do about one line of the host's input."""
        self._lines += 1
        try:
            frame = parse_line(line, self._lines)
        except FrameError as exc:
            if exc.request_id is not None:
                return [Write(error_response(exc.request_id, str(exc)))]
            return [Stray(str(exc))]
        if frame is None:
            return []
        if isinstance(frame, UserLine):
            return [Turn(frame.raw)]
        if isinstance(frame, Response):
            return self._settle(frame)
        if isinstance(frame, Cancel):
            if frame.request_id in self._in_flight:
                self._in_flight.discard(frame.request_id)
                return [CancelHandler(frame.request_id)]
            return [Stray(f"a cancel for {frame.request_id}, which is not running")]
        return self._admit(frame)

    def _settle(self, response: Response) -> list[Decision]:
        pending = self._pending.pop(response.request_id, None)
        if pending is None:
            return [Stray(f"an answer to {response.request_id}, which is not waiting")]
        return [Answered(response.request_id, pending.subtype, response)]

    def _admit(self, request: Request) -> list[Decision]:
        if request.request_id in self._in_flight:
            # An answer now would read as the first request's: that one answers.
            return [Stray(f"a second request {request.request_id}, while the first runs")]
        if request.subtype not in self.serves:
            known = ", ".join(sorted(self.serves))
            error = f"unsupported control request subtype {request.subtype!r} (known: {known})"
            return [Write(error_response(request.request_id, error))]
        self._in_flight.add(request.request_id)
        return [Dispatch(request)]

    def complete(self, request_id: str, body: dict[str, Any]) -> list[Decision]:
        """The handler of *request_id* succeeded with *body*."""
        return self._answer(request_id, success_response(request_id, body))

    def fail(self, request_id: str, error: str, code: str | None = None) -> list[Decision]:
        """The handler of *request_id* failed, saying *error* (and the ``error_code``
        *code*, if any)."""
        return self._answer(request_id, error_response(request_id, error, code))

    def _answer(self, request_id: str, response: Response) -> list[Decision]:
        if request_id not in self._in_flight:
            return []  # cancelled by the host meanwhile: it waits for nothing
        self._in_flight.discard(request_id)
        return [Write(response)]

    @property
    def in_flight(self) -> frozenset[str]:
        """The ids of the host's requests whose handlers are running."""
        return frozenset(self._in_flight)


def writes(decisions: Iterable[Decision]) -> list[Request | Response | Cancel]:
    """The frames among *decisions*, in order."""
    return [d.frame for d in decisions if isinstance(d, Write)]
