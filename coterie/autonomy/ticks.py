"""A loop's ticks (``--loop SPEC``) as a pure state machine: events in, decisions out.

Theory of operation. The scheduler's driver
(:class:`coterie.actors.scheduler.Scheduler`) asks :meth:`TickMachine.next`
what to do at time *now* and reports each tick's outcome with
:meth:`TickMachine.ticked`; it saves :attr:`TickMachine.schedule` after
every tick, so that a resumed run keeps its place.

    events in                              decisions out
    ---------                              -------------
    next(now)                              Wait(seconds) | Tick(number, prompt) | Stop(reason)
    waited()                               (the wait asked for is over)
    ticked(now, outcome)                   None (go on) | Stop(reason)

A tick is due at ``schedule.due`` (wall-clock seconds); before that the
decision is to wait, and once the driver says it has waited (its clock may
run faster than the wall's, for demonstrations and tests) the tick is due.
The tick cap ends the loop before a tick would pass it. After a tick: a
failed tick ends the loop; so does reaching ``max_turns`` over all ticks. A
fixed loop (an interval) is due again ``interval`` seconds later. A dynamic
loop runs again only if the tick asked for a wake-up (its delay already
clamped by the caller, its prompt the next tick's); a tick without one ends
the loop, converged.

Invariants: ticks are numbered 1, 2, ... with no gap and no repeat (a tick
reported is counted once); ``next`` never returns a tick while one is
being run (``ticked`` must come first: a :class:`TickProtocolError`).
"""

from __future__ import annotations

import attrs

__all__ = ["Schedule", "Stop", "Tick", "TickMachine", "TickOutcome", "TickProtocolError", "Wait"]


class TickProtocolError(RuntimeError):
    """The driver fed the machine an event it cannot take now (a bug in the driver)."""


@attrs.define
class Schedule:
    """Where a loop stands (its driver keeps it in ``schedule.json``)."""

    request: str
    ticks: int = 0
    turns: int = 0
    #: What the run has cost so far (the lead's running total after the last tick).
    cost: float = 0.0
    prompt: str = ""
    due: float = 0.0


@attrs.frozen
class Wait:
    """Nothing is due for *seconds*."""

    seconds: float


@attrs.frozen
class Tick:
    """Run tick *number* on *prompt* now."""

    number: int
    prompt: str


@attrs.frozen
class Stop:
    """The loop is over, because *reason*."""

    reason: str


@attrs.frozen
class TickOutcome:
    """How one tick ended: a failure (with its subtype), its turns and the run's
    cost after it, and the wake-up it asked for (a dynamic loop)."""

    failed: bool
    subtype: str
    turns: int
    cost: float
    #: ``(delay seconds, next prompt or None)`` if the tick called ScheduleWakeup.
    wakeup: tuple[float, str | None] | None = None


@attrs.define
class TickMachine:
    """The ticks of one loop (see the module docstring)."""

    schedule: Schedule
    #: Seconds between ticks of a fixed loop; None: a dynamic loop.
    interval: float | None
    max_ticks: int = 100
    max_turns: int | None = None
    _running: bool = attrs.field(init=False, default=False)
    _waited: bool = attrs.field(init=False, default=False)

    def next(self, now: float) -> Wait | Tick | Stop:
        """What to do at *now*: wait, run the next tick, or stop at the tick cap."""
        if self._running:
            raise TickProtocolError("next() while a tick is running: report it with ticked()")
        schedule = self.schedule
        if schedule.ticks >= self.max_ticks:
            return Stop(f"the tick cap ({self.max_ticks}) was reached")
        if schedule.due > now and not self._waited:
            return Wait(schedule.due - now)
        self._running, self._waited = True, False
        return Tick(schedule.ticks + 1, schedule.prompt)

    def waited(self) -> None:
        """The wait the last :meth:`next` asked for is over: the tick is due."""
        if self._running:
            raise TickProtocolError("waited() while a tick is running")
        self._waited = True

    def ticked(self, now: float, outcome: TickOutcome) -> Stop | None:
        """The tick from the last :meth:`next` ended with *outcome*; a Stop if the loop ends."""
        if not self._running:
            raise TickProtocolError("ticked() without a tick running")
        self._running = False
        schedule = self.schedule
        schedule.ticks += 1
        schedule.turns += outcome.turns
        schedule.cost = outcome.cost  # the lead's running total: all ticks
        if outcome.failed:
            return Stop(f"tick {schedule.ticks} failed ({outcome.subtype})")
        if self.max_turns is not None and schedule.turns >= self.max_turns:
            return Stop(f"the limit of {self.max_turns} turns was reached")
        if self.interval is not None:
            schedule.due = now + self.interval
            return None
        if outcome.wakeup is None:
            return Stop("converged (no wake-up was scheduled)")
        delay, prompt = outcome.wakeup
        schedule.due = now + delay
        schedule.prompt = prompt or schedule.prompt
        return None
