"""The Trio layer over :class:`~coterie.hostlink.Exchange`: lines in, handlers run, lines out.

:class:`HostLink` reads the host's lines, hands each to the exchange and
does what it decides: writes frames through the one line writer it was given
(the owner of standard output, so control frames never interleave inside
another line), runs each dispatched handler in a cancel scope of its own (a
host's cancel cancels it), settles :meth:`HostLink.ask` calls, and puts the
conversation's lines on a channel for the run. Timeouts of our requests come
from the exchange's deadlines, so a test drives them with ``autojump_clock``.
When the host's input ends, every pending request is settled unanswered and
the channel of turns closes.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from coterie.hostlink._exchange import (
    Answered,
    CancelHandler,
    Dispatch,
    Exchange,
    Stray,
    Turn,
    Write,
)
from coterie.hostlink._frames import Request, RequestRefused, encode

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Mapping

    from coterie.hostlink._exchange import Decision
    from coterie.hostlink._frames import Response

__all__ = ["Handler", "HostLink"]

#: A handler of one host request: its answer's body, or an exception whose words
#: become the error response.
Handler: TypeAlias = Callable[[Request], Awaitable[dict[str, Any]]]


@attrs.define
class HostLink:
    """One host's control channel, driven by :meth:`run` in a nursery of the run."""

    handlers: Mapping[str, Handler]
    write_line: Callable[[str], Awaitable[None]]
    #: Told of lines that settle nothing (a late answer, an unreadable line).
    on_stray: Callable[[str], None] = lambda note: None
    _exchange: Exchange = attrs.field(init=False)
    _scopes: dict[str, trio.CancelScope] = attrs.field(init=False, factory=dict)
    _waiting: dict[str, tuple[trio.Event, list[Answered]]] = attrs.field(init=False, factory=dict)
    _changed: trio.Event = attrs.field(init=False, factory=trio.Event)
    _send_turn: trio.MemorySendChannel[dict[str, Any]] = attrs.field(init=False)
    #: The host's conversation lines (``type`` ``user``), in order; closed at its EOF.
    turns: trio.MemoryReceiveChannel[dict[str, Any]] = attrs.field(init=False)
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)
    _closed: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self._exchange = Exchange(frozenset(self.handlers))
        self._send_turn, self.turns = trio.open_memory_channel[dict[str, Any]](math.inf)

    async def run(self, lines: AsyncIterable[str]) -> None:
        """Serve the host until its input ends; then settle what is pending. The
        host's requests still being handled then are answered when they are done
        (a ``set_permission_mode`` waiting for the run to open, its host having
        written its last line): the caller's cancellation ends them with the run."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            timer = trio.CancelScope()
            nursery.start_soon(self._timer, timer)
            try:
                async for line in lines:
                    await self._do(self._exchange.receive(line))
            except BaseException:
                nursery.cancel_scope.cancel()
                raise
            finally:
                self._closed = True
                with trio.CancelScope(shield=True):
                    await self._do(self._exchange.close())
                    await self._send_turn.aclose()
                timer.cancel()

    async def ask(
        self, subtype: str, body: dict[str, Any], *, answer_within: float
    ) -> Response | None:
        """Ask the host; its response, or None when it gave none within *answer_within*
        seconds (it is then told to stop) or is gone."""
        if self._closed:
            return None
        request = self._exchange.ask(subtype, body, now=trio.current_time(), timeout=answer_within)
        done = trio.Event()
        settled: list[Answered] = []
        self._waiting[request.request_id] = (done, settled)
        self._changed.set()
        try:
            await self.write_line(encode(request))
            await done.wait()
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await self._do(self._exchange.abandon(request.request_id))
            raise
        finally:
            self._waiting.pop(request.request_id, None)
        return settled[0].response

    async def _timer(self, scope: trio.CancelScope) -> None:
        with scope:
            await self._expiring()

    async def _expiring(self) -> None:
        while True:
            deadline = self._exchange.next_deadline()
            with trio.move_on_at(math.inf if deadline is None else deadline):
                await self._changed.wait()
                self._changed = trio.Event()
                continue
            await self._do(self._exchange.expire(trio.current_time()))

    async def _do(self, decisions: list[Decision]) -> None:
        for decision in decisions:
            if isinstance(decision, Write):
                await self.write_line(encode(decision.frame))
            elif isinstance(decision, Dispatch):
                assert self._nursery is not None
                scope = trio.CancelScope()
                self._scopes[decision.request.request_id] = scope
                self._nursery.start_soon(self._handle, decision.request, scope)
            elif isinstance(decision, CancelHandler):
                running = self._scopes.pop(decision.request_id, None)
                if running is not None:
                    running.cancel()
            elif isinstance(decision, Answered):
                waiter = self._waiting.get(decision.request_id)
                if waiter is not None:
                    waiter[1].append(decision)
                    waiter[0].set()
            elif isinstance(decision, Turn):
                self._send_turn.send_nowait(decision.raw)
            elif isinstance(decision, Stray):
                self.on_stray(decision.note)

    async def _handle(self, request: Request, scope: trio.CancelScope) -> None:
        handler = self.handlers[request.subtype]
        decisions: list[Decision] = []
        with scope:
            try:
                body = await handler(request)
            except Exception as exc:  # a handler's failure is the host's error answer
                code = exc.code if isinstance(exc, RequestRefused) else None
                decisions = self._exchange.fail(
                    request.request_id, str(exc) or type(exc).__name__, code
                )
            else:
                decisions = self._exchange.complete(request.request_id, body)
        self._scopes.pop(request.request_id, None)
        await self._do(decisions)
