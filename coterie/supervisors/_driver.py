"""The Trio side of supervision: runs children and carries out the machine's decisions.

One driver loop per supervisor owns the :class:`SupervisorMachine`. Children
report their ends, and callers their requests, through one unbounded memory
channel, so the machine sees one event at a time and a decision (a start, a
stop ladder) runs to completion before the next event is looked at. A
caller's bad request raises in the caller; the supervisor carries on.

Children run in a host system task (:mod:`._tasks`): cancelling the
supervisor from outside (a parent stopping it, Ctrl-C) does not tear them
all down at once; the driver sees the cancellation and stops them in reverse
start order, each with its own timeout, before re-raising it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import ChildNotRunning, FailedToStartChild, InvalidChildSpec, SupervisorGaveUp
from coterie.supervisors._decisions import GiveUp, InitFailed
from coterie.supervisors._faults import DEFAULT_REASON, Fault, Injection
from coterie.supervisors._spec import (
    AutoShutdown,
    Backoff,
    ChildSpec,
    Restart,
    Strategy,
    check_children,
    check_intensity,
)
from coterie.supervisors._state import SupervisorMachine
from coterie.supervisors._steps import Run, Runner

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from coterie.events import EventLog
    from coterie.supervisors._decisions import ChildCounts, ChildInfo, Decision
    from coterie.supervisors._tasks import Handle

__all__ = ["Supervisor"]


@attrs.define(eq=False)
class _Request:
    """A caller's request, answered by setting ``done`` (with ``error`` on failure)."""

    action: str  # "add", "terminate", "restart", "delete", "inject" or "stop"
    spec: ChildSpec | None = None
    name: str = ""
    injection: Injection | None = None
    handle: Handle | None = None  # an injection's target, once its scope is cancelled
    done: trio.Event = attrs.field(factory=trio.Event)
    error: Exception | None = None


class Supervisor(Runner):
    """An OTP-style supervisor of Trio tasks.

    Start it with ``await nursery.start(sup.run)``, which returns once every
    child has started (children with a start phase, nested supervisors among
    them, have finished it) or raises :class:`FailedToStartChild` if one
    failed to start. It restarts children by *strategy* and their restart
    types, and gives up (stopping every child, then raising
    :class:`SupervisorGaveUp`) when more than *max_restarts* restarts fall
    within *period* seconds. Under a parent supervisor (:meth:`as_child`)
    giving up is an exit with reason ``shutdown``: the parent restarts a
    permanent child supervisor (counting it against its own intensity) and
    not a transient or temporary one. Every supervision event goes to *events*.

    Stopping, whether by :meth:`stop`, auto-shutdown, giving up or a
    cancellation from outside, always goes child by child in reverse start
    order, each bounded by its ``shutdown_timeout``. A child that outlives its
    timeout is reported abandoned; its task finishes its clean-up in the
    background and never keeps :meth:`run` or :meth:`stop` waiting.

    Events: ``actor.started`` (``attempt``, 0 for the first start),
    ``actor.restarted`` (a restart is planned: ``attempt``, ``delay``), then
    ``actor.started`` again once it runs; ``actor.exited`` (``reason`` for a
    ``shutdown`` exit), ``actor.crashed`` (``reason``, ``traceback``;
    ``during_start`` when it failed its start phase), ``actor.ignored``,
    ``actor.stopped`` (``reason`` if its clean-up raised), ``actor.abandoned``;
    ``supervisor.gave_up``, ``supervisor.escalated`` (emitted by the parent
    whose child supervisor gave up) and ``supervisor.stopped`` (``reason``).
    All carry ``supervisor`` and ``actor`` (the child concerned, None for
    ``supervisor.stopped``).
    """

    def __init__(
        self,
        name: str,
        children: Sequence[ChildSpec] = (),
        *,
        strategy: Strategy = Strategy.ONE_FOR_ONE,
        max_restarts: int = 3,
        period: float = 5.0,
        backoff: Backoff | None = None,
        auto_shutdown: AutoShutdown = AutoShutdown.NEVER,
        events: EventLog | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a supervisor needs a non-empty name, got {name!r}")
        check_intensity(max_restarts, period)
        self.name = name
        self.children = tuple(children)
        self.strategy = Strategy(strategy)
        self.max_restarts = max_restarts
        self.period = period
        self.backoff = backoff
        self.auto_shutdown = AutoShutdown(auto_shutdown)
        self.events = events
        check_children(self.children, self.auto_shutdown)
        self._run: Run | None = None
        self._last: SupervisorMachine | None = None

    def __repr__(self) -> str:
        return f"<Supervisor {self.name!r} {self.strategy} children={len(self.children)}>"

    def _machine(self) -> SupervisorMachine:
        return SupervisorMachine(
            strategy=self.strategy,
            max_restarts=self.max_restarts,
            period=self.period,
            backoff=self.backoff,
            auto_shutdown=self.auto_shutdown,
        )

    # -- public API ------------------------------------------------------------------

    def as_child(
        self,
        restart: Restart = Restart.PERMANENT,
        shutdown_timeout: float = math.inf,
        *,
        significant: bool = False,
    ) -> ChildSpec:
        """A spec that runs this supervisor as a child of another one.

        Its start phase is its own: the parent's start of it returns once its
        whole subtree is up, and fails if one of its children fails to start.
        """
        return ChildSpec(
            name=self.name,
            start=self.run,
            restart=restart,
            shutdown_timeout=shutdown_timeout,
            kind="supervisor",
            significant=significant,
            reports_started=True,
            supervisor=self,
        )

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start the children, report started, and supervise until stopped.

        Returns after :meth:`stop` or an auto-shutdown; raises
        :class:`SupervisorGaveUp` once the restart intensity is exceeded and
        every child has been stopped, and :class:`FailedToStartChild` (before
        reporting started) when an initial child fails to start. A supervisor
        runs once at a time, but may run again after it ended (that is how a
        parent restarts it).
        """
        if self._run is not None:
            raise RuntimeError(f"supervisor {self.name!r} is already running")
        machine = self._last = self._machine()
        send, receive = trio.open_memory_channel[Any](math.inf)
        run = self._run = Run(machine, send, receive)
        try:
            await self._drive(run, self.children, task_status)
        finally:
            self._run = None
            _refuse_pending(run, self.name)
        outcome = machine.outcome
        if isinstance(outcome, GiveUp):
            raise SupervisorGaveUp(f"supervisor {self.name!r} gave up: {outcome.reason}")
        if isinstance(outcome, InitFailed):
            raise FailedToStartChild(outcome.child, outcome.reason)

    async def stop(self) -> None:
        """Stop every child in reverse start order; return once :meth:`run` has returned.

        Does nothing if the supervisor is not running.
        """
        run = self._run
        if run is None:
            return
        run.send.send_nowait(_Request("stop"))
        await run.finished.wait()

    async def start_child(self, spec: ChildSpec) -> str:
        """Add *spec* as the last child and start it; return its name once it has started.

        Raises :class:`InvalidChildSpec` for something that is not a spec,
        :class:`AlreadyStarted` / :class:`AlreadyPresent` (both
        :class:`ValueError`) if its name is taken, :class:`FailedToStartChild`
        if it fails during its start phase (the supervisor keeps no child).
        """
        if not isinstance(spec, ChildSpec):
            raise InvalidChildSpec(f"start_child needs a ChildSpec, got {spec!r}")
        await self._ask(_Request("add", spec=spec))
        return spec.name

    async def terminate_child(self, name: str) -> None:
        """Stop child *name* without restarting it; return once it is stopped.

        Its spec is kept (shown not running; see :meth:`restart_child`,
        :meth:`delete_child`) unless it is temporary. Terminating a child that
        is not running is fine; one waiting to restart is not restarted.
        Raises :class:`NoSuchChild` (a :class:`LookupError`) if there is none.
        """
        await self._ask(_Request("terminate", name=name))

    async def restart_child(self, name: str) -> None:
        """Start again the kept child *name*; return once it has started.

        Raises :class:`NoSuchChild`, :class:`ChildIsRunning` (running or
        waiting to restart) or :class:`FailedToStartChild` (its spec is kept).
        """
        await self._ask(_Request("restart", name=name))

    async def delete_child(self, name: str) -> None:
        """Forget the kept child *name*, which must not be running."""
        await self._ask(_Request("delete", name=name))

    async def inject(self, name: str, fault: Fault | str, reason: str = DEFAULT_REASON) -> None:
        """Make the running child *name* crash (``"crash"``) or exit normally (``"stop"``).

        The child's scope is cancelled; once its task has finished its clean-up
        it ends with :class:`~coterie.errors.InjectedCrash` (*reason*) for a
        crash, normally for a stop, and this supervisor handles that end as it
        would the child's own: its restart type, the restart intensity and the
        usual events (``actor.crashed`` or ``actor.exited``, then
        ``actor.restarted`` when it is restarted). Returns once that
        incarnation has ended. Raises :class:`NoSuchChild` for no such child
        and :class:`ChildNotRunning` when it is not running (or this
        supervisor is not). See :meth:`find` for a child further down the tree.
        """
        request = _Request("inject", name=name, injection=Injection(fault, reason))
        if self._run is None:
            raise ChildNotRunning(f"supervisor {self.name!r} is not running")
        await self._ask(request)
        if request.handle is not None:
            await request.handle.done.wait()

    def find(self, actor: str) -> Supervisor | None:
        """The supervisor, this one or one anywhere below it, with a child named *actor*."""
        for supervisor, info in self.walk():
            if info.name == actor:
                return supervisor
        return None

    def walk(self) -> Iterator[tuple[Supervisor, ChildInfo]]:
        """Every child of the tree below this supervisor with its supervisor, in
        start order, each child supervisor followed by its own children."""
        machine = self._last
        for info in self.which_children():
            yield self, info
            nested = machine.spec(info.name).supervisor if machine is not None else None
            if isinstance(nested, Supervisor):
                yield from nested.walk()

    def which_children(self) -> list[ChildInfo]:
        """A snapshot of every child, in start order (of the last run, once ended)."""
        return self._last.children() if self._last is not None else []

    def count_children(self) -> ChildCounts:
        """Specs, running children, and specs by kind, as OTP's ``count_children``."""
        return (self._last or self._machine()).count_children()

    # -- requests ---------------------------------------------------------------------

    async def _ask(self, request: _Request) -> None:
        run = self._run
        if run is None:
            raise RuntimeError(f"supervisor {self.name!r} is not running")
        run.send.send_nowait(request)
        await request.done.wait()
        if request.error is not None:
            raise request.error

    async def _serve(self, run: Run, request: object, now: float) -> None:
        assert isinstance(request, _Request)
        machine = run.machine
        try:
            match request.action:
                case "stop":
                    decisions = machine.shutdown(now, "stop requested")
                case "add":
                    assert request.spec is not None
                    decisions = machine.add_child(request.spec, now)
                case "terminate":
                    decisions = machine.terminate_child(request.name, now)
                case "restart":
                    decisions = machine.restart_child(request.name, now)
                case "inject":
                    decisions = self._inject(run, request)
                case _:
                    decisions = machine.delete_child(request.name, now)
        except (ValueError, LookupError, TypeError, RuntimeError) as exc:
            # A bad request is the caller's error; the supervisor lives on.
            request.error = exc
            decisions = []
        try:
            failure = await self._execute(run, decisions)
            if failure is not None and request.error is None:
                request.error = FailedToStartChild(failure.name, failure.reason)
        except BaseException:
            # Cancelled mid-way: the caller must not believe its request was served.
            if request.error is None:
                request.error = RuntimeError(f"supervisor {self.name!r} stopped meanwhile")
            raise
        finally:
            request.done.set()

    @staticmethod
    def _inject(run: Run, request: _Request) -> list[Decision]:
        """Aim the request's fault at its child: mark the incarnation, cancel its scope."""
        run.machine.check_injectable(request.name)
        handle = run.handles.get(request.name)
        if handle is None or handle.done.is_set() or handle.stop_requested:
            # It ended meanwhile: its end waits in the channel, behind this request.
            raise ChildNotRunning(f"child {request.name!r} has just ended")
        handle.injected = request.injection
        handle.scope.cancel()
        request.handle = handle
        return []


def _refuse_pending(run: Run, name: str) -> None:
    """Answer requests that arrived too late to be served."""
    while True:
        try:
            message = run.receive.receive_nowait()
        except trio.WouldBlock:
            return
        if isinstance(message, _Request):
            if message.action != "stop":
                message.error = RuntimeError(f"supervisor {name!r} has stopped")
            message.done.set()
