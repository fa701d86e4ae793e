"""How a supervisor's driver carries out decisions: start, stop, report (Trio).

:class:`Runner` is the decision-executing half of :class:`Supervisor`: the
loop over events, one method per decision, the stop ladder and the events it
emits. It holds no policy: every choice comes from the machine.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import BackendLost, ShutdownExit, SupervisorGaveUp
from coterie.supervisors._decisions import (
    Decision,
    GiveUp,
    InitFailed,
    RemoveChild,
    RestartChild,
    ShutDown,
    StartChild,
    StartFailed,
    StopChildren,
)
from coterie.supervisors._tasks import (
    IGNORED,
    STARTED,
    Ended,
    Handle,
    child_main,
    open_host,
    reason_of,
    traceback_of,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.events import EventLog, EventType
    from coterie.supervisors._spec import ChildSpec
    from coterie.supervisors._state import SupervisorMachine

__all__ = ["Run", "Runner"]

# Scheduler passes a child gets, once its timeout is over, to finish a clean-up
# that does not block: a zero timeout (brutal kill) must not call a child that
# ends as soon as it is cancelled abandoned just because it had not run yet.
_GRACE_PASSES = 10


@attrs.define(eq=False)
class Run:
    """The state of one call to :meth:`Supervisor.run`."""

    machine: SupervisorMachine
    send: trio.MemorySendChannel[Any]
    receive: trio.MemoryReceiveChannel[Any]
    handles: dict[str, Handle] = attrs.field(factory=dict)
    nursery: trio.Nursery | None = None
    finished: trio.Event = attrs.field(factory=trio.Event)


class Runner:
    """Drives one :class:`SupervisorMachine` (see :mod:`._driver` for the public face)."""

    name: str
    events: EventLog | None

    async def _serve(self, run: Run, request: object, now: float) -> None:
        raise NotImplementedError

    async def _drive(
        self, run: Run, children: Sequence[ChildSpec], task_status: trio.TaskStatus[None]
    ) -> None:
        machine = run.machine
        host, run.nursery = await open_host(self.name)
        try:
            try:
                await self._execute(run, machine.start(children, trio.current_time()))
                if not machine.finished:
                    task_status.started()
                    await self._supervise(run)
            finally:
                # Whatever ended the loop (cancellation included), no child outlives us,
                # except abandoned ones, which finish in the host on their own.
                with trio.CancelScope(shield=True):
                    if not machine.finished:
                        now = trio.current_time()
                        await self._execute(run, machine.shutdown(now, "cancelled"))
        finally:
            host.cancel()
            run.finished.set()

    async def _supervise(self, run: Run) -> None:
        machine = run.machine
        while not machine.finished:
            deadline = machine.next_deadline()
            message: object = None
            if deadline is None:
                message = await run.receive.receive()
            else:
                with trio.move_on_at(deadline):
                    message = await run.receive.receive()
            now = trio.current_time()
            if message is None:
                await self._execute(run, machine.tick(now))
            elif isinstance(message, Ended):
                await self._execute(run, self._ended(run, message.handle, now))
            else:
                await self._serve(run, message, now)

    def _ended(self, run: Run, handle: Handle, now: float) -> list[Decision]:
        name, error = handle.spec.name, handle.error
        if handle.stop_requested or run.handles.get(name) is not handle:
            return []  # we stopped it meanwhile and reported it then
        _raise_if_fatal(error)
        self._report_end(handle)
        if error is None:
            return run.machine.child_exited(name, now)
        if isinstance(error, ShutdownExit):
            return run.machine.child_shutdown(name, reason_of(error), now)
        return run.machine.child_crashed(name, reason_of(error), now)

    async def _execute(self, run: Run, decisions: list[Decision]) -> StartFailed | None:
        """Carry out *decisions* and those they lead to; the failed start, if any."""
        failed: StartFailed | None = None
        pending = deque(decisions)
        while pending:
            decision = pending.popleft()
            match decision:
                case StartChild(name, attempt):
                    pending.extend(await self._spawn(run, name, attempt))
                case RestartChild(name, attempt, delay):
                    self._emit("actor.restarted", name, attempt=attempt, delay=delay)
                case StopChildren(names, together) if together:
                    pending.extend(await self._stop_together(run, names))
                case StopChildren(names):
                    for name in names:
                        pending.extend(await self._stop(run, name))
                case RemoveChild(name):
                    run.handles.pop(name, None)
                case StartFailed():
                    failed = decision
                case GiveUp(reason, child):
                    self._emit("supervisor.gave_up", child, reason=reason)
                case InitFailed(child, reason):
                    why = f"failed to start child {child!r}: {reason}"
                    self._emit("supervisor.stopped", None, reason=why)
                case ShutDown(reason):
                    self._emit("supervisor.stopped", None, reason=reason)
        return failed

    async def _spawn(self, run: Run, name: str, attempt: int) -> list[Decision]:
        assert run.nursery is not None
        machine = run.machine
        spec = machine.spec(name)
        handle = run.handles[name] = Handle(spec)
        outcome = await run.nursery.start(child_main, run.send, handle)
        now = trio.current_time()
        if outcome == STARTED:
            self._emit("actor.started", name, attempt=attempt, kind=spec.kind)
            return machine.child_started(name, now)
        if outcome == IGNORED:
            self._emit("actor.ignored", name)
            return machine.child_ignored(name, now)
        error = handle.error
        assert error is not None
        _raise_if_fatal(error)
        reason = reason_of(error)
        if self.events is not None:
            tb = traceback_of(error)
            self._emit("actor.crashed", name, reason=reason, traceback=tb, during_start=True)
        return machine.child_start_failed(name, reason, now)

    async def _stop(self, run: Run, name: str) -> list[Decision]:
        """Cancel *name*, wait up to its shutdown timeout, and tell the machine how it went."""
        handle = self._cancel(run, name)
        if handle is not None and not handle.done.is_set():
            await _wait_stopped(handle)
        return self._stopped(run, name, handle)

    async def _stop_together(self, run: Run, names: Sequence[str]) -> list[Decision]:
        """Cancel all of *names* at once, then wait for them side by side."""
        handles = {name: self._cancel(run, name) for name in names}
        async with trio.open_nursery() as nursery:
            for handle in handles.values():
                if handle is not None and not handle.done.is_set():
                    nursery.start_soon(_wait_stopped, handle)
        return [d for name in names for d in self._stopped(run, name, handles[name])]

    def _cancel(self, run: Run, name: str) -> Handle | None:
        handle = run.handles.get(name)
        if handle is None:  # never spawned (a shutdown cut a plan short)
            return None
        if handle.done.is_set() and not handle.stop_requested:
            self._report_end(handle)  # it ended on its own; its own report is now stale
            handle.stop_requested = True
            return None
        handle.stop_requested = True
        handle.scope.cancel()
        return handle

    def _stopped(self, run: Run, name: str, handle: Handle | None) -> list[Decision]:
        now = trio.current_time()
        if handle is None:
            return run.machine.child_stopped(name, now)
        if not handle.done.is_set():
            # Trio cannot kill a task: it keeps running, cancelled, until its shield
            # ends, in the host; we carry on without it.
            self._emit("actor.abandoned", name, timeout=handle.spec.shutdown_timeout)
            return run.machine.child_abandoned(name, now)
        extra = {} if handle.error is None else {"reason": reason_of(handle.error)}
        self._emit("actor.stopped", name, **extra)
        return run.machine.child_stopped(name, now)

    def _report_end(self, handle: Handle) -> None:
        name, error = handle.spec.name, handle.error
        if self.events is None:
            return  # nothing to report to: keep the restart path cheap
        if error is None:
            self._emit("actor.exited", name)
        elif isinstance(error, ShutdownExit):
            self._emit("actor.exited", name, reason=f"shutdown: {reason_of(error)}")
            if isinstance(error, SupervisorGaveUp):
                self._emit("supervisor.escalated", name, reason=reason_of(error))
        else:
            self._emit(
                "actor.crashed", name, reason=reason_of(error), traceback=traceback_of(error)
            )

    def _emit(self, type: EventType, actor: str | None, **data: Any) -> None:
        if self.events is not None:
            self.events.emit(type, supervisor=self.name, actor=actor, **data)


async def _wait_stopped(handle: Handle) -> None:
    with trio.move_on_after(handle.spec.shutdown_timeout):
        await handle.done.wait()
    for _ in range(_GRACE_PASSES):
        if handle.done.is_set():
            return
        await trio.lowlevel.cancel_shielded_checkpoint()


def _raise_if_fatal(error: BaseException | None) -> None:
    """A KeyboardInterrupt or SystemExit in a child is not a crash to supervise; nor
    is the backend's loss of the run's data (:class:`~coterie.errors.BackendLost`,
    alone or in a group): no restart can bring it back, so the run stops at once
    rather than crash its actors until their supervisors give up."""
    if error is None:
        return
    if not isinstance(error, (Exception, BaseExceptionGroup)):
        raise error
    lost = _lost(error)
    if lost is not None:
        raise lost


def _lost(error: BaseException) -> BackendLost | None:
    if isinstance(error, BackendLost):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _lost(inner)) is not None:
                return found
    return None
