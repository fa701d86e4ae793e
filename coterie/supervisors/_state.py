"""Restart decisions of one supervisor, as a pure state machine (sans-io).

Theory of operation
===================

:class:`SupervisorMachine` decides *what* a supervisor does; it never does
it. It imports no Trio, reads no clock and starts nothing. Its driver (the
Trio layer in :mod:`._driver`, or a test) feeds it events, each carrying the
current time ``now`` explicitly, and carries out the decisions it returns, in
order:

    events in                           decisions out
    ---------                           -------------
    start(specs) / add_child(spec)      RestartChild(name, attempt, delay)
    child_started(name)                 StartChild(name, attempt)
    child_exited(name)                  StopChildren(names)
    child_crashed(name, reason)         RemoveChild(name)
    child_stopped(name)                 GiveUp(reason, child)
    child_abandoned(name)               ShutDown(reason)
    terminate_child(name)
    shutdown(reason)
    tick(now)  # time passes

Semantics are OTP's. A child that exits is restarted or removed according
to a table indexed by (restart type, crashed?): permanent always restarts,
transient only after a crash, temporary never. A restart is *planned* by the
strategy: one_for_one restarts the child alone; one_for_all stops every
other child, rest_for_one every child started after it, and the planned
children start again in start order (temporary ones among the stopped are
removed instead). Each planned restart counts once towards the intensity,
however many children it touches; when more than ``max_restarts`` restarts
fall within ``period`` seconds, the machine stops every child and gives up.

Invariants:

* Start order is the insertion order of ``_children``: a restarted child
  keeps its place, a dynamically added child goes last. Every stop list is
  in reverse start order, every batch of starts in start order.
* At most one plan is in flight. A plan that needs children stopped returns
  a single ``StopChildren`` and waits: its remaining decisions come out of
  the call that confirms the last of those stops (``child_stopped``,
  ``child_abandoned``, or an exit of a child we were stopping). Until then
  the only other events accepted are those confirmations and ``shutdown``
  (which replaces the plan); anything else is a driver bug and raises
  :class:`SupervisionProtocolError`.
* "Start after delay d" is two decisions: ``RestartChild(delay=d)`` when the
  restart is planned (the child is then RESTARTING), and ``StartChild`` from
  the first ``tick(now)`` at or after the due time (returned at once when
  ``d == 0``). ``next_deadline()`` tells the driver when to tick.
* A restart at time ``t`` counts towards the intensity while
  ``t >= now - period``; ``now`` never decreases.
* After ``GiveUp`` or ``ShutDown`` every child is stopped and the machine is
  finished: further events raise.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Sequence

import attrs

from coterie.supervisors._decisions import (
    ChildInfo,
    ChildState,
    Decision,
    GiveUp,
    RemoveChild,
    RestartChild,
    ShutDown,
    StartChild,
    StopChildren,
    SupervisionProtocolError,
)
from coterie.supervisors._spec import (
    AutoShutdown,
    Backoff,
    ChildSpec,
    Restart,
    Strategy,
    check_children,
    check_intensity,
)

__all__ = ["SupervisorMachine"]


# Whether a child that ended is started again, by (restart type, crashed?).
_RESTARTS: dict[tuple[Restart, bool], bool] = {
    (Restart.PERMANENT, False): True,
    (Restart.PERMANENT, True): True,
    (Restart.TRANSIENT, False): False,
    (Restart.TRANSIENT, True): True,
    (Restart.TEMPORARY, False): False,
    (Restart.TEMPORARY, True): False,
}

_Then = Callable[[float], list[Decision]]


@attrs.define(eq=False)
class _Child:
    spec: ChildSpec
    seq: int
    state: ChildState = ChildState.STARTING
    restarts: int = 0
    attempt: int = 0
    last_reason: str | None = None
    # this child's own restart times within the period: n for its backoff
    recent: deque[float] = attrs.field(factory=deque)


class SupervisorMachine:
    """The restart logic of one supervisor; see the module docstring."""

    def __init__(
        self,
        *,
        strategy: Strategy = Strategy.ONE_FOR_ONE,
        max_restarts: int = 3,
        period: float = 5.0,
        backoff: Backoff | None = None,
        auto_shutdown: AutoShutdown = AutoShutdown.NEVER,
    ) -> None:
        check_intensity(max_restarts, period)
        self.strategy = Strategy(strategy)
        self.max_restarts = max_restarts
        self.period = period
        self.backoff = backoff
        self.auto_shutdown = AutoShutdown(auto_shutdown)
        self._children: dict[str, _Child] = {}
        self._seq = itertools.count()
        self._restarts: deque[float] = deque()
        self._scheduled: dict[str, float] = {}  # RESTARTING child -> due time
        self._significant = 0
        self._awaiting: set[str] = set()
        self._then: _Then | None = None
        self._outcome: GiveUp | ShutDown | None = None

    # -- queries ---------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once ``GiveUp`` or ``ShutDown`` has been decided."""
        return self._outcome is not None

    @property
    def outcome(self) -> GiveUp | ShutDown | None:
        """The final decision, once finished."""
        return self._outcome

    def spec(self, name: str) -> ChildSpec:
        """The spec of child *name*."""
        return self._get(name).spec

    def children(self) -> list[ChildInfo]:
        """A snapshot of every child, in start order."""
        return [
            ChildInfo(c.spec.name, c.state, c.restarts, c.last_reason, c.spec.kind, c.spec.restart)
            for c in self._children.values()
        ]

    def next_deadline(self) -> float | None:
        """When ``tick`` next has something to start, or None."""
        if self._scheduled and not self._awaiting and self._outcome is None:
            return min(self._scheduled.values())
        return None

    # -- events ----------------------------------------------------------------

    def start(self, specs: Sequence[ChildSpec], now: float) -> list[Decision]:
        """The initial children, to be started in the given order."""
        check_children(specs, self.auto_shutdown)
        return [d for spec in specs for d in self.add_child(spec, now)]

    def add_child(self, spec: ChildSpec, now: float) -> list[Decision]:
        """A new child, started after the existing ones (``supervisor:start_child``)."""
        self._check_idle()
        if spec.name in self._children:
            raise ValueError(f"duplicate child name {spec.name!r}")
        check_children([spec], self.auto_shutdown)
        self._children[spec.name] = _Child(spec, next(self._seq))
        self._significant += spec.significant
        return [StartChild(spec.name, 0)]

    def child_started(self, name: str, now: float) -> list[Decision]:
        """The driver started *name* as told by ``StartChild``."""
        self._expect(self._get(name), ChildState.STARTING).state = ChildState.RUNNING
        return []

    def child_exited(self, name: str, now: float) -> list[Decision]:
        """*name* returned normally, on its own."""
        return self._ended(name, None, now)

    def child_crashed(self, name: str, reason: str, now: float) -> list[Decision]:
        """*name* raised an exception; *reason* says which."""
        return self._ended(name, reason, now)

    def child_stopped(self, name: str, now: float) -> list[Decision]:
        """*name*, which we were stopping, has finished."""
        return self._confirm_stop(name, now)

    def child_abandoned(self, name: str, now: float) -> list[Decision]:
        """*name* outlived its shutdown timeout; we carry on as if it had stopped."""
        return self._confirm_stop(name, now)

    def terminate_child(self, name: str, now: float) -> list[Decision]:
        """Stop *name* and remove it, with no restart (``supervisor:terminate_child``)."""
        self._check_idle()
        child = self._get(name)
        if child.state is ChildState.RESTARTING:
            return self._remove(child)
        self._expect(child, ChildState.RUNNING)
        return self._stop_then([name], now, lambda _now: self._remove(child))

    def shutdown(self, now: float, reason: str = "stop requested") -> list[Decision]:
        """Stop every child (reverse start order), then ``ShutDown``.

        Allowed while a plan is in flight: it replaces it. Idempotent once finished.
        """
        if self._outcome is not None:
            return []
        self._awaiting.clear()
        self._then = None
        return self._stop_all_then(now, ShutDown(reason))

    def tick(self, now: float) -> list[Decision]:
        """Time has passed: start the children whose restart delay is over."""
        if not self._scheduled or self._awaiting or self._outcome is not None:
            return []
        due = [name for name, at in self._scheduled.items() if at <= now]
        due.sort(key=lambda name: self._children[name].seq)
        decisions: list[Decision] = []
        for name in due:
            del self._scheduled[name]
            child = self._children[name]
            child.state = ChildState.STARTING
            decisions.append(StartChild(name, child.attempt))
        return decisions

    # -- the rules ---------------------------------------------------------------

    def _ended(self, name: str, reason: str | None, now: float) -> list[Decision]:
        child = self._get(name)
        if child.state is ChildState.STOPPING:
            return self._confirm_stop(name, now)  # it beat our cancellation to it
        self._check_idle()
        self._expect(child, ChildState.RUNNING)
        crashed = reason is not None
        child.state = ChildState.CRASHED if crashed else ChildState.STOPPED
        if crashed:
            child.last_reason = reason
        if not _RESTARTS[child.spec.restart, crashed]:
            return self._remove(child) + self._auto_shutdown(child, now)
        self._restarts.append(now)
        _prune(self._restarts, now - self.period)
        if len(self._restarts) > self.max_restarts:
            what = f"crashed ({reason})" if crashed else "exited"
            why = (
                f"more than {self.max_restarts} restarts within {self.period} s; "
                f"last: {name!r} {what}"
            )
            return self._stop_all_then(now, GiveUp(why, name))
        return self._restart(child, now)

    def _restart(self, failed: _Child, now: float) -> list[Decision]:
        group = self._group(failed)
        n = self._count_restart(failed, now)
        delay = self.backoff.delay(n) if self.backoff is not None else 0.0
        for child in group:
            if child is not failed:
                self._count_restart(child, now)
        running = [c.spec.name for c in reversed(group) if c.state is ChildState.RUNNING]

        def then(now: float) -> list[Decision]:
            decisions: list[Decision] = []
            for child in group:
                if child is not failed and child.spec.restart is Restart.TEMPORARY:
                    decisions += self._remove(child)
                    continue
                child.state = ChildState.RESTARTING
                child.restarts += 1
                child.attempt = len(child.recent)
                self._scheduled[child.spec.name] = now + delay
                decisions.append(RestartChild(child.spec.name, child.attempt, delay))
            return decisions + self.tick(now)

        return self._stop_then(running, now, then)

    def _group(self, failed: _Child) -> list[_Child]:
        """The children a restart of *failed* touches, in start order."""
        if self.strategy is Strategy.ONE_FOR_ONE:
            return [failed]
        if self.strategy is Strategy.ONE_FOR_ALL:
            return list(self._children.values())
        return [c for c in self._children.values() if c.seq >= failed.seq]

    def _count_restart(self, child: _Child, now: float) -> int:
        child.recent.append(now)
        _prune(child.recent, now - self.period)
        return len(child.recent)

    def _auto_shutdown(self, child: _Child, now: float) -> list[Decision]:
        if not child.spec.significant:
            return []
        mode = self.auto_shutdown
        if mode is AutoShutdown.ANY_SIGNIFICANT or (
            mode is AutoShutdown.ALL_SIGNIFICANT and self._significant == 0
        ):
            why = f"auto_shutdown ({mode}): significant child {child.spec.name!r} ended"
            return self._stop_all_then(now, ShutDown(why))
        return []

    def _stop_all_then(self, now: float, outcome: GiveUp | ShutDown) -> list[Decision]:
        self._scheduled.clear()  # planned restarts will not happen
        names: list[str] = []
        for child in reversed(self._children.values()):
            if child.state in (ChildState.RUNNING, ChildState.STARTING, ChildState.STOPPING):
                names.append(child.spec.name)
            elif child.state is ChildState.RESTARTING:
                child.state = ChildState.STOPPED

        def then(_now: float) -> list[Decision]:
            self._outcome = outcome
            return [outcome]

        return self._stop_then(names, now, then)

    def _stop_then(self, names: Sequence[str], now: float, then: _Then) -> list[Decision]:
        """Stop *names*, then carry on with *then* (at once if there is nothing to stop)."""
        if not names:
            return then(now)
        for name in names:
            self._children[name].state = ChildState.STOPPING
        self._awaiting = set(names)
        self._then = then
        return [StopChildren(tuple(names))]

    def _confirm_stop(self, name: str, now: float) -> list[Decision]:
        child = self._get(name)
        if name not in self._awaiting:
            raise SupervisionProtocolError(f"child {name!r} was not being stopped")
        self._awaiting.discard(name)
        child.state = ChildState.STOPPED
        if self._awaiting or self._then is None:
            return []
        then, self._then = self._then, None
        return then(now)

    def _remove(self, child: _Child) -> list[Decision]:
        name = child.spec.name
        del self._children[name]
        self._scheduled.pop(name, None)
        self._significant -= child.spec.significant
        return [RemoveChild(name)]

    # -- checks --------------------------------------------------------------------

    def _get(self, name: str) -> _Child:
        child = self._children.get(name)
        if child is None:
            raise LookupError(f"no child named {name!r}")
        return child

    def _check_idle(self) -> None:
        if self._outcome is not None:
            raise SupervisionProtocolError("the supervisor has finished")
        if self._awaiting:
            raise SupervisionProtocolError(
                f"still waiting for {sorted(self._awaiting)} to stop; one plan at a time"
            )

    @staticmethod
    def _expect(child: _Child, state: ChildState) -> _Child:
        if child.state is not state:
            raise SupervisionProtocolError(
                f"child {child.spec.name!r} is {child.state}, expected {state}"
            )
        return child


def _prune(times: deque[float], threshold: float) -> None:
    while times and times[0] < threshold:
        times.popleft()
