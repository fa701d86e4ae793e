"""The order of the lead's turns on one console in a conversation: the person's
request, and the cron jobs fired while it runs (:class:`TurnOrder`, sans-io)."""

from __future__ import annotations

import functools
import weakref
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from coterie.events import Event

__all__ = ["TurnOrder"]

#: In :class:`TurnOrder`'s queue, the person's request (the others are cron jobs' ids).
_MINE = ""


class TurnOrder:
    """The order of the lead's turns in a conversation, shared by all that shows
    them on one console (sans-io: fed the events, and told by the conversation).

    The lead takes its prompts one at a time: the person's, and those of the cron
    jobs that fire (``cron.fired``). A fire that lands while the person's turn runs
    waits for it, and its turn may start before the conversation has printed that
    turn's closing line: its events are held until :meth:`printed`, then shown.
    Each fire's turn is announced when it starts. Inert (everything shown as it
    comes) until a conversation says it :meth:`sent` a request.
    """

    def __init__(self) -> None:
        self._queue: deque[str] = deque()  # the lead's prompts, in the order it takes them
        self._active = False  # a conversation tracks its requests
        self._blind = False  # a request of several lead turns is in flight (/goal, /loop)
        self._closed = False  # the person's turn ended; its closing line is not printed yet
        self._announced = False  # the fire at the queue's front was announced
        self._held: list[Callable[[], None]] = []
        self._last: tuple[Event | None, bool, str | None] = (None, False, None)

    @classmethod
    def of(cls, console: Console) -> TurnOrder:
        """The turn order of *console* (made on first use): one per console."""
        order = _ORDERS.get(console)
        if order is None:
            order = _ORDERS[console] = cls()
        return order

    def sent(self, *, one_turn: bool = True) -> None:
        """The conversation sent the lead a request: one turn, or several (a goal,
        a loop, a resumed request: their fires are shown as they come)."""
        self._active = True
        if one_turn:
            self._queue.append(_MINE)
        else:
            self._blind = True

    def printed(self) -> None:
        """The request's closing line is printed: show what was held after it."""
        if self._blind:  # which fires ran meanwhile is unknown: none is announced
            self._blind = False
            self._queue.clear()
        if _MINE in self._queue:  # its turn never ended as one (a hook blocked it)
            self._queue.remove(_MINE)
        self._closed = False
        held, self._held = self._held, []
        for show in held:
            show()

    def route(
        self,
        event: Event,
        show: Callable[[Event], None],
        announce: Callable[[str], None] | None = None,
    ) -> None:
        """Pass *event* to *show* now, or once the person's closing line is printed;
        first the job to *announce* if a fire's turn starts with it. Everyone fed
        the same event is told the same."""
        if event is not self._last[0]:
            self._last = (event, *self._decide(event))
        _, held, job = self._last
        steps = [functools.partial(show, event)]
        if job is not None and announce is not None:
            steps.insert(0, functools.partial(announce, job))
        if held:
            self._held.extend(steps)
            return
        for step in steps:
            step()

    def _decide(self, event: Event) -> tuple[bool, str | None]:
        held, job = self._closed, None
        front = self._queue[0] if self._queue else _MINE
        if self._active and not self._blind and front != _MINE and not self._announced:
            self._announced, job = True, front
        if event.type == "cron.fired":
            self._queue.append(str(event.data.get("job") or "?"))
        elif _ends_a_turn(event) and self._queue and not self._blind:
            self._closed = self._queue.popleft() == _MINE
            self._announced = False
        return held, job


def _ends_a_turn(event: Event) -> bool:
    return event.type == "agent.result" and event.data.get("actor") == "lead"


_ORDERS: weakref.WeakKeyDictionary[Console, TurnOrder] = weakref.WeakKeyDictionary()
