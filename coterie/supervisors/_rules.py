"""The OTP rules a supervisor's machine applies when a child ends (pure, no Trio).

:class:`Rules` is the half of :class:`~._state.SupervisorMachine` that
decides: the restart table applied to an exit, the restart intensity, the
group a strategy restarts, the stop-then-continue plans and the start queue.
The machine's public events (:mod:`._state`, whose docstring states the
invariants) call these; nothing else does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.supervisors._decisions import (
    ChildState,
    Decision,
    GiveUp,
    RestartChild,
    ShutDown,
    StartChild,
    StopChildren,
    SupervisionProtocolError,
)
from coterie.supervisors._roster import LIVE, RESTARTS, Exit, prune
from coterie.supervisors._spec import AutoShutdown, Restart, Strategy

if TYPE_CHECKING:
    import itertools
    from collections import deque
    from collections.abc import Callable, Sequence

    from coterie.supervisors._decisions import Outcome
    from coterie.supervisors._roster import Child, Roster
    from coterie.supervisors._spec import Backoff

    _Then = Callable[[float], list[Decision]]

__all__ = ["Rules"]


class Rules:
    """Restart rules over the state that :class:`SupervisorMachine` initialises."""

    strategy: Strategy
    max_restarts: int
    period: float
    backoff: Backoff | None
    auto_shutdown: AutoShutdown
    keep_specs: bool
    _roster: Roster
    _plans: itertools.count[int]
    _restarts: deque[float]
    _initial: bool
    _awaiting: set[str]
    _then: _Then | None
    _outcome: Outcome | None

    def _start_due(self, now: float) -> list[Decision]:
        """Queue the children whose restart delay is over; start the first."""
        if self._awaiting or self._outcome is not None:
            return []
        self._roster.queue_due(now)
        return self._next()

    def _exit(self, child: Child, how: Exit, reason: str | None, now: float) -> list[Decision]:
        child.state = ChildState.CRASHED if how is Exit.CRASH else ChildState.STOPPED
        if reason is not None:
            child.last_reason = reason
        if not RESTARTS[child.spec.restart, how]:
            return self._forget_if_not_kept(child) + self._auto_shutdown(child, now)
        self._restarts.append(now)
        prune(self._restarts, now - self.period)
        if len(self._restarts) > self.max_restarts:
            what = how.value if reason is None else f"{how.value} ({reason})"
            why = (
                f"more than {self.max_restarts} restarts within {self.period} s; "
                f"last: {child.name!r} {what}"
            )
            return self._stop_all_then(now, GiveUp(why, child.name))
        return self._restart(child, now)

    def _restart(self, failed: Child, now: float) -> list[Decision]:
        group = self._group(failed)
        n = self._count_restart(failed, now)
        delay = self.backoff.delay(n) if self.backoff is not None else 0.0
        for child in group:
            if child is not failed:
                self._count_restart(child, now)
            if child in self._roster.queue:  # due to start in a batch: planned again instead
                self._roster.queue.remove(child)
        running = [c.name for c in reversed(group) if c.state is ChildState.RUNNING]
        plan = next(self._plans)

        def then(now: float) -> list[Decision]:
            decisions: list[Decision] = []
            for child in group:
                if child is not failed and child.spec.restart is Restart.TEMPORARY:
                    decisions += self._roster.remove(child)
                    continue
                child.state, child.plan = ChildState.RESTARTING, plan
                child.restarts += 1
                child.attempt = len(child.recent)
                child.answers = False
                self._roster.scheduled[child.name] = now + delay
                decisions.append(RestartChild(child.name, child.attempt, delay))
            return decisions + self._start_due(now)

        return self._stop_then(running, now, then)

    def _group(self, failed: Child) -> list[Child]:
        """The children a restart of *failed* touches, in start order."""
        if self.strategy is Strategy.ONE_FOR_ONE:
            return [failed]
        rest = self.strategy is Strategy.REST_FOR_ONE
        # A kept child that is not running was stopped on purpose: it stays down.
        return [
            c
            for c in self._roster
            if (c is failed or c.state in LIVE) and not (rest and c.seq < failed.seq)
        ]

    def _cancel_restart(self, child: Child) -> list[Decision]:
        """Terminating a child that waits to restart: it, and under rest_for_one the
        children after it in the same plan, will not start."""
        cancelled = [child]
        if self.strategy is Strategy.REST_FOR_ONE and child.plan is not None:
            cancelled += [
                c
                for c in self._roster
                if c.plan == child.plan and c.seq > child.seq and c.state is ChildState.RESTARTING
            ]
        decisions: list[Decision] = []
        for c in cancelled:
            self._roster.scheduled.pop(c.name, None)
            c.state, c.plan = ChildState.STOPPED, None
            decisions += self._forget_if_not_kept(c)
        return decisions

    def _count_restart(self, child: Child, now: float) -> int:
        child.recent.append(now)
        prune(child.recent, now - self.period)
        return len(child.recent)

    def _auto_shutdown(self, child: Child, now: float) -> list[Decision]:
        if not child.spec.significant:
            return []
        mode = self.auto_shutdown
        if mode is AutoShutdown.ANY_SIGNIFICANT or (
            mode is AutoShutdown.ALL_SIGNIFICANT
            and not any(c.spec.significant and c.state in LIVE for c in self._roster)
        ):
            why = f"auto_shutdown ({mode}): significant child {child.name!r} ended"
            return self._stop_all_then(now, ShutDown(why))
        return []

    def _stop_all_then(self, now: float, outcome: Outcome) -> list[Decision]:
        in_flight = self._roster.drop_pending()  # planned starts will not happen
        self._initial = False
        names: list[str] = []
        for child in reversed(self._roster):
            if child.state.running:
                names.append(child.name)
            elif child.state is ChildState.RESTARTING:
                child.state = ChildState.STOPPED
        assert in_flight is None or in_flight.name in names

        def then(_now: float) -> list[Decision]:
            self._outcome = outcome
            return [outcome]

        return self._stop_then(names, now, then, together=not self.keep_specs)

    def _stop_then(
        self, names: Sequence[str], now: float, then: _Then, *, together: bool = False
    ) -> list[Decision]:
        """Stop *names*, then carry on with *then* (at once if there is nothing to stop)."""
        if not names:
            return then(now)
        for name in names:
            self._roster.children[name].state = ChildState.STOPPING
        self._awaiting = set(names)
        self._then = then
        return [StopChildren(tuple(names), together)]

    def _confirm_stop(self, name: str, now: float) -> list[Decision]:
        child = self._roster.get(name)
        if name not in self._awaiting:
            raise SupervisionProtocolError(f"child {name!r} was not being stopped")
        self._awaiting.discard(name)
        child.state = ChildState.STOPPED
        if self._awaiting or self._then is None:
            return []
        then, self._then = self._then, None
        return then(now) + self._next()

    def _next(self) -> list[Decision]:
        """The next queued start, if nothing else is in flight."""
        if self._awaiting or self._outcome is not None:
            return []
        child = self._roster.start_next()
        if child is None:
            return []
        child.state = ChildState.STARTING
        return [StartChild(child.name, child.attempt)]

    def _forget_if_not_kept(self, child: Child) -> list[Decision]:
        if child.spec.restart is Restart.TEMPORARY or not self.keep_specs:
            return [*self._roster.remove(child)]
        return []
