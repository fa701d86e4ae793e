"""Restart decisions of one supervisor, as a pure state machine (sans-io).

Theory of operation
===================

:class:`SupervisorMachine` decides *what* a supervisor does; it never does
it. It imports no Trio, reads no clock and starts nothing. Its driver (the
Trio layer in :mod:`._driver`, or a test) feeds it events, each carrying the
current time ``now`` explicitly, and carries out the decisions it returns, in
order:

    events in                               decisions out
    ---------                               -------------
    start(specs)                            StartChild(name, attempt)
    add_child(spec)  restart_child(name)    RestartChild(name, attempt, delay)
    delete_child(name)  terminate_child     StopChildren(names, together)
    child_started / child_ignored(name)     RemoveChild(name)
    child_start_failed(name, reason)        StartFailed(name, reason)
    child_exited / child_shutdown(name)     GiveUp(reason, child)
    child_crashed(name, reason)             InitFailed(child, reason)
    child_stopped / child_abandoned(name)   ShutDown(reason)
    shutdown(reason)   tick(now)

Semantics are OTP's. A child that exits is restarted or not according to a
table indexed by (restart type, how it ended: normal, shutdown, crash):
permanent always restarts, transient only after a crash, temporary never.
A child that is not restarted keeps its spec (shown STOPPED, not running;
``restart_child`` and ``delete_child`` act on it), except a temporary child,
and every child of a dynamic machine (``keep_specs=False``), which are
forgotten. A restart is *planned* by the strategy: one_for_one restarts the
child alone; one_for_all stops every other running child, rest_for_one every
running child started after it, and the planned children start again in
start order (temporary ones among the stopped are forgotten instead;
children that were not running stay down). Each planned restart counts once
towards the intensity, however many children it touches; when more than
``max_restarts`` restarts fall within ``period`` seconds, the machine stops
every child and gives up.

Invariants:

* Start order is the insertion order of ``_children``: a restarted child
  keeps its place, a dynamically added child goes last. Every stop list is
  in reverse start order, every batch of starts in start order.
* At most one start is in flight, since a start can fail: children due to
  start wait in ``_queue`` and each ``StartChild`` comes out of the call that
  settled the previous start (``child_started``, ``child_ignored`` or
  ``child_start_failed``). A first start that fails is the caller's error
  (``StartFailed``; a new child is forgotten), or during ``start`` the whole
  supervisor's (``InitFailed``, after stopping what started); a restart that
  fails to start is a crash, restarted by the same rules (OTP's
  ``try_again``).
* At most one plan is in flight. A plan that needs children stopped returns
  a single ``StopChildren`` and waits: its remaining decisions come out of
  the call that confirms the last of those stops (``child_stopped``,
  ``child_abandoned``, or an exit of a child we were stopping). Until then
  the only other events accepted are those confirmations and ``shutdown``
  (which replaces the plan); anything else is a driver bug and raises
  :class:`SupervisionProtocolError`. A caller's bad request (unknown name,
  name taken, not a spec) raises a :class:`SupervisionError` and changes
  nothing.
* "Start after delay d" is two decisions: ``RestartChild(delay=d)`` when the
  restart is planned (the child is then RESTARTING), and ``StartChild`` once
  a ``tick(now)`` at or after the due time queues it. Terminating a
  RESTARTING child cancels its start and, under rest_for_one, the pending
  starts of the children after it in the same plan.
* A restart at time ``t`` counts towards the intensity while
  ``t >= now - period``; ``now`` never decreases.
* After ``GiveUp``, ``InitFailed`` or ``ShutDown`` every child is stopped and
  the machine is finished: further events raise.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Sequence

from coterie.errors import (
    AlreadyPresent,
    AlreadyStarted,
    ChildIsRunning,
    ChildNotRunning,
    SupervisionError,
    TooManyChildren,
)
from coterie.supervisors._decisions import (
    ChildCounts,
    ChildInfo,
    ChildState,
    Decision,
    InitFailed,
    Outcome,
    ShutDown,
    StartFailed,
    SupervisionProtocolError,
)
from coterie.supervisors._roster import Child, Exit, Roster
from coterie.supervisors._rules import Rules
from coterie.supervisors._spec import (
    AutoShutdown,
    Backoff,
    ChildSpec,
    Strategy,
    check_children,
    check_intensity,
)

__all__ = ["SupervisorMachine"]

_Then = Callable[[float], list[Decision]]


class SupervisorMachine(Rules):
    """The restart logic of one supervisor; see the module docstring.

    ``keep_specs=False`` and ``max_children`` make it the machine of a
    dynamic supervisor (OTP's ``simple_one_for_one``): children are forgotten
    once they end for good, and there are at most ``max_children`` of them.
    """

    def __init__(
        self,
        *,
        strategy: Strategy = Strategy.ONE_FOR_ONE,
        max_restarts: int = 3,
        period: float = 5.0,
        backoff: Backoff | None = None,
        auto_shutdown: AutoShutdown = AutoShutdown.NEVER,
        keep_specs: bool = True,
        max_children: int | None = None,
    ) -> None:
        check_intensity(max_restarts, period)
        if max_children is not None and (
            isinstance(max_children, bool) or not isinstance(max_children, int) or max_children < 0
        ):
            raise ValueError(f"max_children must be None or an int >= 0, got {max_children!r}")
        self.strategy = Strategy(strategy)
        self.max_restarts = max_restarts
        self.period = period
        self.backoff = backoff
        self.auto_shutdown = AutoShutdown(auto_shutdown)
        self.keep_specs = keep_specs
        self.max_children = max_children
        self._roster = Roster()
        self._plans = itertools.count()
        self._restarts: deque[float] = deque()
        self._initial = False  # True while the children given to start() are starting
        self._awaiting: set[str] = set()
        self._then: _Then | None = None
        self._outcome: Outcome | None = None

    # -- queries ---------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once ``GiveUp``, ``InitFailed`` or ``ShutDown`` has been decided."""
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        """The final decision, once finished."""
        return self._outcome

    def spec(self, name: str) -> ChildSpec:
        """The spec of child *name*."""
        return self._roster.get(name).spec

    def children(self) -> list[ChildInfo]:
        """A snapshot of every child, in start order."""
        return self._roster.infos()

    def count_children(self) -> ChildCounts:
        """Specs, running children, and specs by kind (OTP ``count_children``)."""
        return self._roster.counts()

    def next_deadline(self) -> float | None:
        """When ``tick`` next has something to start, or None."""
        if self._awaiting or self._outcome is not None:
            return None
        return self._roster.next_deadline()

    def check_injectable(self, name: str) -> None:
        """Raise unless a fault may be aimed at *name* now: it must be a child
        (:class:`NoSuchChild`) and running, its start phase over
        (:class:`ChildNotRunning`) in a machine that has not finished."""
        child = self._roster.get(name)
        if self._outcome is not None or child.state is not ChildState.RUNNING:
            raise ChildNotRunning(f"child {name!r} is {child.state}, not running")

    # -- a caller's requests -------------------------------------------------------

    def start(self, specs: Sequence[ChildSpec], now: float) -> list[Decision]:
        """The initial children, started one by one in the given order; if one fails
        to start, the ones started are stopped and the machine ends with ``InitFailed``."""
        if len(self._roster) or self._outcome is not None:
            raise SupervisionProtocolError("start() is the first event, and comes once")
        check_children(specs, self.auto_shutdown)
        for spec in specs:
            self._roster.add(spec)
        self._initial = bool(specs)
        return self._next()

    def add_child(self, spec: ChildSpec, now: float) -> list[Decision]:
        """A new child, started after the existing ones (``supervisor:start_child``)."""
        check_children([spec], self.auto_shutdown)
        self._check_idle()
        existing = self._roster.children.get(spec.name)
        if existing is not None:
            if existing.state.running:
                raise AlreadyStarted(f"child {spec.name!r} is already started (duplicate name)")
            raise AlreadyPresent(
                f"child {spec.name!r} is already present, not running "
                "(duplicate name: restart_child or delete_child it)"
            )
        if self.max_children is not None and len(self._roster) >= self.max_children:
            raise TooManyChildren(f"already {self.max_children} children (max_children)")
        self._roster.add(spec)
        return self._next()

    def restart_child(self, name: str, now: float) -> list[Decision]:
        """Start again a kept child that is not running (``supervisor:restart_child``)."""
        self._check_idle()
        child = self._kept(name, "restart_child")
        child.answers = True
        self._roster.enqueue(child)
        return self._next()

    def delete_child(self, name: str, now: float) -> list[Decision]:
        """Forget a kept child that is not running (``supervisor:delete_child``)."""
        self._check_idle()
        return [*self._roster.remove(self._kept(name, "delete_child"))]

    def terminate_child(self, name: str, now: float) -> list[Decision]:
        """Stop *name* with no restart (``supervisor:terminate_child``); its spec is kept
        unless it is temporary or the machine is dynamic. A child that is not running
        is fine; one waiting to restart has its restart cancelled."""
        self._check_idle()
        child = self._roster.get(name)
        if child.state is ChildState.RESTARTING:
            return self._cancel_restart(child)
        if not child.state.running:
            return []
        self._expect(child, ChildState.RUNNING)
        return self._stop_then([name], now, lambda _now: self._forget_if_not_kept(child))

    def shutdown(self, now: float, reason: str = "stop requested") -> list[Decision]:
        """Stop every child (reverse start order), then ``ShutDown``.

        Allowed while a plan or a start is in flight: it replaces it.
        Idempotent once finished.
        """
        if self._outcome is not None:
            return []
        self._awaiting.clear()
        self._then = None
        return self._stop_all_then(now, ShutDown(reason))

    def tick(self, now: float) -> list[Decision]:
        """Time has passed: start the children whose restart delay is over."""
        return self._start_due(now)

    # -- what the driver saw ---------------------------------------------------------

    def child_started(self, name: str, now: float) -> list[Decision]:
        """*name* finished its start phase (or was launched, if it has none)."""
        child = self._settle_start(name)
        child.state, child.answers, child.ever_started = ChildState.RUNNING, False, True
        return self._next()

    def child_ignored(self, name: str, now: float) -> list[Decision]:
        """*name* returned during its start phase without starting (OTP ``ignore``)."""
        child = self._settle_start(name)
        child.state, child.answers = ChildState.STOPPED, False
        return self._forget_if_not_kept(child) + self._next()

    def child_start_failed(self, name: str, reason: str, now: float) -> list[Decision]:
        """*name* raised during its start phase."""
        initial = self._initial
        child = self._settle_start(name)
        answers, child.last_reason = child.answers, reason
        child.answers = False
        if initial:
            child.state = ChildState.STOPPED
            return self._stop_all_then(now, InitFailed(name, reason))
        if answers:
            child.state = ChildState.CRASHED
            decisions: list[Decision] = [StartFailed(name, reason)]
            if not child.ever_started:
                decisions += self._roster.remove(child)
            return decisions + self._next()
        # A restart that cannot start is a crash again: restarted by the same rules
        # and counted, so a child that never starts ends in GiveUp (OTP's try_again).
        return self._exit(child, Exit.CRASH, reason, now) + self._next()

    def child_exited(self, name: str, now: float) -> list[Decision]:
        """*name* returned normally, on its own."""
        return self._ended(name, Exit.NORMAL, None, now)

    def child_shutdown(self, name: str, reason: str, now: float) -> list[Decision]:
        """*name* ended with reason ``shutdown`` (a child supervisor that gave up)."""
        return self._ended(name, Exit.SHUTDOWN, reason, now)

    def child_crashed(self, name: str, reason: str, now: float) -> list[Decision]:
        """*name* raised an exception; *reason* says which."""
        return self._ended(name, Exit.CRASH, reason, now)

    def child_stopped(self, name: str, now: float) -> list[Decision]:
        """*name*, which we were stopping, has finished."""
        return self._confirm_stop(name, now)

    def child_abandoned(self, name: str, now: float) -> list[Decision]:
        """*name* outlived its shutdown timeout; we carry on as if it had stopped."""
        return self._confirm_stop(name, now)

    def _ended(self, name: str, how: Exit, reason: str | None, now: float) -> list[Decision]:
        child = self._roster.get(name)
        if child.state is ChildState.STOPPING:
            return self._confirm_stop(name, now)  # it beat our cancellation to it
        self._check_idle()
        self._expect(child, ChildState.RUNNING)
        return self._exit(child, how, reason, now)

    def _settle_start(self, name: str) -> Child:
        child = self._roster.settle(name)
        if child is None:
            raise SupervisionProtocolError(f"child {name!r} is not starting")
        if self._initial and not self._roster.queue:
            self._initial = False
        return child

    # -- checks --------------------------------------------------------------------

    def _kept(self, name: str, request: str) -> Child:
        if not self.keep_specs:
            raise SupervisionError(f"{request}: a dynamic supervisor keeps no specs")
        child = self._roster.get(name)
        if child.state is ChildState.RESTARTING:
            raise ChildIsRunning(f"{request}: child {name!r} is restarting")
        if child.state.running:
            raise ChildIsRunning(f"{request}: child {name!r} is running")
        return child

    def _check_idle(self) -> None:
        if self._outcome is not None:
            raise SupervisionProtocolError("the supervisor has finished")
        if self._awaiting:
            raise SupervisionProtocolError(
                f"still waiting for {sorted(self._awaiting)} to stop; one plan at a time"
            )
        if self._roster.in_flight is not None or self._roster.queue:
            raise SupervisionProtocolError("a start is in flight; settle it first")

    @staticmethod
    def _expect(child: Child, state: ChildState) -> Child:
        if child.state is not state:
            raise SupervisionProtocolError(
                f"child {child.name!r} is {child.state}, expected {state}"
            )
        return child
