"""The Trio side of supervision: runs children and carries out the machine's decisions.

One driver loop per supervisor owns the :class:`SupervisorMachine`. Children
report their ends, and callers their requests, through one unbounded memory
channel, so the machine sees one event at a time and a decision (a stop
ladder, say) runs to completion before the next event is looked at.

Children live in a nursery inside a *shielded* host task: cancelling the
supervisor from outside (a parent stopping it, Ctrl-C) does not tear them
all down at once; the driver sees the cancellation and stops them in reverse
start order, each with its own timeout, before re-raising it.
"""

from __future__ import annotations

import math
import traceback
from collections import deque
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import SupervisorGaveUp
from coterie.supervisors._decisions import (
    ChildInfo,
    Decision,
    GiveUp,
    RemoveChild,
    RestartChild,
    ShutDown,
    StartChild,
    StopChildren,
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
from coterie.supervisors._state import SupervisorMachine

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.events import EventLog

__all__ = ["Supervisor"]


@attrs.define(eq=False)
class _Handle:
    """One incarnation of a child: its task's scope and how it ended."""

    spec: ChildSpec
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    done: trio.Event = attrs.field(factory=trio.Event)
    stop_requested: bool = False
    error: BaseException | None = None


@attrs.frozen(eq=False)
class _Ended:
    handle: _Handle


@attrs.define(eq=False)
class _Request:
    """A caller's request, answered by setting ``done`` (with ``error`` on failure)."""

    action: str  # "add", "terminate" or "stop"
    spec: ChildSpec | None = None
    name: str = ""
    done: trio.Event = attrs.field(factory=trio.Event)
    error: Exception | None = None


_Message = _Ended | _Request


@attrs.define(eq=False)
class _Run:
    """The state of one call to :meth:`Supervisor.run`."""

    machine: SupervisorMachine
    send: trio.MemorySendChannel[_Message]
    receive: trio.MemoryReceiveChannel[_Message]
    handles: dict[str, _Handle] = attrs.field(factory=dict)
    nursery: trio.Nursery | None = None
    finished: trio.Event = attrs.field(factory=trio.Event)


class Supervisor:
    """An OTP-style supervisor of Trio tasks.

    Start it with ``await nursery.start(sup.run)``; it starts *children* in
    order, restarts them by *strategy* and their restart types, and gives up
    (stopping every child, then raising :class:`SupervisorGaveUp`) when more
    than *max_restarts* restarts fall within *period* seconds. A supervisor
    can be the child of another (:meth:`as_child`); its giving up is then a
    crash of that child. Every supervision event goes to *events*.

    Stopping, whether by :meth:`stop`, auto-shutdown, giving up or a
    cancellation from outside, always goes child by child in reverse start
    order, each bounded by its ``shutdown_timeout``; so an outside deadline
    takes effect only after that ladder. A child that outlives its timeout is
    reported abandoned and supervision carries on, but :meth:`run` cannot
    return before that task has ended (Trio cannot kill a task).

    Events: ``actor.started`` (first start, with ``attempt`` 0),
    ``actor.restarted`` (a restart is planned: ``attempt``, ``delay``), then
    ``actor.started`` again once it runs; ``actor.exited``, ``actor.crashed``
    (``reason``, ``traceback``), ``actor.stopped`` (``reason`` if its clean-up
    raised), ``actor.abandoned``; ``supervisor.gave_up``,
    ``supervisor.escalated`` (emitted by the parent whose child supervisor
    gave up) and ``supervisor.stopped`` (``reason``). All carry ``supervisor``
    and ``actor`` (the child concerned, None for ``supervisor.stopped``).
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
        self._run: _Run | None = None
        self._last: SupervisorMachine | None = None

    def __repr__(self) -> str:
        return f"<Supervisor {self.name!r} {self.strategy} children={len(self.children)}>"

    # -- public API ------------------------------------------------------------------

    def as_child(
        self,
        restart: Restart = Restart.PERMANENT,
        shutdown_timeout: float = math.inf,
        *,
        significant: bool = False,
    ) -> ChildSpec:
        """A spec that runs this supervisor as a child of another one."""
        return ChildSpec(
            name=self.name,
            start=self.run,
            restart=restart,
            shutdown_timeout=shutdown_timeout,
            kind="supervisor",
            significant=significant,
        )

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start the children, report started, and supervise until stopped.

        Returns after :meth:`stop` or an auto-shutdown; raises
        :class:`SupervisorGaveUp` once the restart intensity is exceeded and
        every child has been stopped. A supervisor runs once at a time, but
        may run again after it ended (that is how a parent restarts it).
        """
        if self._run is not None:
            raise RuntimeError(f"supervisor {self.name!r} is already running")
        machine = SupervisorMachine(
            strategy=self.strategy,
            max_restarts=self.max_restarts,
            period=self.period,
            backoff=self.backoff,
            auto_shutdown=self.auto_shutdown,
        )
        send, receive = trio.open_memory_channel[_Message](math.inf)
        run = self._run = _Run(machine, send, receive)
        self._last = machine
        try:
            async with trio.open_nursery() as outer:
                host, run.nursery = await outer.start(_host)
                try:
                    await self._execute(run, machine.start(self.children, trio.current_time()))
                    task_status.started()
                    await self._supervise(run)
                finally:
                    # Whatever ended the loop (cancellation included), no child outlives us.
                    with trio.CancelScope(shield=True):
                        if not machine.finished:
                            now = trio.current_time()
                            await self._execute(run, machine.shutdown(now, "cancelled"))
                    host.cancel()
        finally:
            self._run = None
            run.finished.set()
            _refuse_pending(run, self.name)
        if isinstance(machine.outcome, GiveUp):
            raise SupervisorGaveUp(f"supervisor {self.name!r} gave up: {machine.outcome.reason}")

    async def stop(self) -> None:
        """Stop every child in reverse start order; return once :meth:`run` has returned.

        Does nothing if the supervisor is not running.
        """
        run = self._run
        if run is None:
            return
        run.send.send_nowait(_Request("stop"))
        await run.finished.wait()

    async def start_child(self, spec: ChildSpec) -> None:
        """Add *spec* as the last child and start it; return once it is running.

        Raises :class:`ValueError` if its name is taken.
        """
        await self._ask(_Request("add", spec=spec))

    async def terminate_child(self, name: str) -> None:
        """Stop child *name* (no restart) and remove it; return once it is stopped.

        Raises :class:`LookupError` if there is no such child.
        """
        await self._ask(_Request("terminate", name=name))

    def which_children(self) -> list[ChildInfo]:
        """A snapshot of every child, in start order (of the last run, once ended)."""
        return self._last.children() if self._last is not None else []

    # -- the loop ---------------------------------------------------------------------

    async def _ask(self, request: _Request) -> None:
        run = self._run
        if run is None:
            raise RuntimeError(f"supervisor {self.name!r} is not running")
        run.send.send_nowait(request)
        await request.done.wait()
        if request.error is not None:
            raise request.error

    async def _supervise(self, run: _Run) -> None:
        machine = run.machine
        while not machine.finished:
            deadline = machine.next_deadline()
            message: _Message | None = None
            if deadline is None:
                message = await run.receive.receive()
            else:
                with trio.move_on_at(deadline):
                    message = await run.receive.receive()
            now = trio.current_time()
            if message is None:
                await self._execute(run, machine.tick(now))
            elif isinstance(message, _Ended):
                await self._execute(run, self._ended(run, message.handle, now))
            else:
                await self._serve(run, message, now)

    async def _serve(self, run: _Run, request: _Request, now: float) -> None:
        machine = run.machine
        try:
            if request.action == "stop":
                decisions = machine.shutdown(now, "stop requested")
            elif request.action == "add":
                assert request.spec is not None
                decisions = machine.add_child(request.spec, now)
            else:
                decisions = machine.terminate_child(request.name, now)
        except (ValueError, LookupError) as exc:
            request.error = exc
            decisions = []
        try:
            await self._execute(run, decisions)
        except BaseException:
            # Cancelled mid-way: the caller must not believe its request was served.
            if request.error is None:
                request.error = RuntimeError(f"supervisor {self.name!r} stopped meanwhile")
            raise
        finally:
            request.done.set()

    def _ended(self, run: _Run, handle: _Handle, now: float) -> list[Decision]:
        name = handle.spec.name
        if handle.stop_requested or run.handles.get(name) is not handle:
            return []  # we stopped it meanwhile and reported it then
        self._report_end(handle)
        if handle.error is None:
            return run.machine.child_exited(name, now)
        return run.machine.child_crashed(name, _reason(handle.error), now)

    async def _execute(self, run: _Run, decisions: list[Decision]) -> None:
        machine = run.machine
        pending = deque(decisions)
        while pending:
            decision = pending.popleft()
            match decision:
                case StartChild(name, attempt):
                    await self._spawn(run, machine.spec(name), attempt)
                    pending.extend(machine.child_started(name, trio.current_time()))
                case RestartChild(name, attempt, delay):
                    self._emit("actor.restarted", name, attempt=attempt, delay=delay)
                case StopChildren(names):
                    for name in names:
                        pending.extend(await self._stop(run, name))
                case RemoveChild(name):
                    run.handles.pop(name, None)
                case GiveUp(reason, child):
                    self._emit("supervisor.gave_up", child, reason=reason)
                case ShutDown(reason):
                    self._emit("supervisor.stopped", None, reason=reason)

    async def _spawn(self, run: _Run, spec: ChildSpec, attempt: int) -> None:
        assert run.nursery is not None
        handle = run.handles[spec.name] = _Handle(spec)
        await run.nursery.start(_child_main, run.send, handle)
        self._emit("actor.started", spec.name, attempt=attempt, kind=spec.kind)

    async def _stop(self, run: _Run, name: str) -> list[Decision]:
        """Cancel *name*, wait up to its shutdown timeout, and tell the machine how it went."""
        handle = run.handles.get(name)
        if handle is None:  # never spawned (a shutdown cut a plan short)
            return run.machine.child_stopped(name, trio.current_time())
        if handle.done.is_set() and not handle.stop_requested:
            self._report_end(handle)  # it ended on its own; its own report is now stale
        handle.stop_requested = True
        handle.scope.cancel()
        if not handle.done.is_set():
            with trio.move_on_after(handle.spec.shutdown_timeout):
                await handle.done.wait()
            now = trio.current_time()
            if not handle.done.is_set():
                # Trio cannot kill a task: it keeps running, cancelled, until its
                # shield ends, and we carry on without it.
                self._emit("actor.abandoned", name, timeout=handle.spec.shutdown_timeout)
                return run.machine.child_abandoned(name, now)
            extra = {} if handle.error is None else {"reason": _reason(handle.error)}
            self._emit("actor.stopped", name, **extra)
        return run.machine.child_stopped(name, trio.current_time())

    def _report_end(self, handle: _Handle) -> None:
        name, error = handle.spec.name, handle.error
        if self.events is None:
            return  # nothing to report to: keep the restart path cheap
        if error is None:
            self._emit("actor.exited", name)
            return
        self._emit("actor.crashed", name, reason=_reason(error), traceback=_traceback(error))
        if isinstance(error, SupervisorGaveUp):
            self._emit("supervisor.escalated", name, reason=_reason(error))

    def _emit(self, type: str, actor: str | None, **data: Any) -> None:
        if self.events is not None:
            self.events.emit(type, supervisor=self.name, actor=actor, **data)


async def _host(*, task_status: trio.TaskStatus[tuple[trio.CancelScope, trio.Nursery]]) -> None:
    """Hold the children's nursery, shielded from cancellation coming from outside."""
    with trio.CancelScope(shield=True) as scope:
        async with trio.open_nursery() as nursery:
            task_status.started((scope, nursery))
            await trio.sleep_forever()


async def _child_main(
    send: trio.MemorySendChannel[_Message],
    handle: _Handle,
    *,
    task_status: trio.TaskStatus[None],
) -> None:
    """Run one incarnation of a child in its own cancel scope and report how it ended."""
    settled = False
    try:
        try:
            with handle.scope:
                task_status.started()
                try:
                    await handle.spec.start()
                except Exception as exc:
                    handle.error = exc
        except* Exception as group:
            # What is left of a child nursery's errors once our scope has taken
            # back its own Cancelled: an error during the child's clean-up.
            handle.error = group
        settled = True
    finally:
        handle.done.set()
        # A BaseException other than our own cancellation (KeyboardInterrupt,
        # an outer cancel) is not a crash to supervise: it is propagating.
        if settled and not handle.stop_requested:
            send.send_nowait(_Ended(handle))


def _traceback(error: BaseException) -> str:
    """The traceback as text, frames only: formatting source lines and error
    markers (``traceback.format_exception``) costs ~60 us a crash, most of a restart."""
    frames = [
        f'  File "{frame.f_code.co_filename}", line {lineno}, in {frame.f_code.co_name}\n'
        for frame, lineno in traceback.walk_tb(error.__traceback__)
    ]
    return "".join(["Traceback (most recent call last):\n", *frames, f"{_reason(error)}\n"])


def _reason(error: BaseException) -> str:
    # A crash inside a child's own nursery arrives wrapped in a group: name the cause.
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _refuse_pending(run: _Run, name: str) -> None:
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
