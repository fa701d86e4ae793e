"""The Trio tasks of supervision: where children run and how their ends are reported.

Children run in a nursery held by a *system task* (:func:`open_host`), not
inside :meth:`Supervisor.run`: so cancelling a supervisor from outside does
not tear its children down at once (the driver stops them one by one), and a
child abandoned after its ``shutdown_timeout`` can finish its shielded
clean-up in the background without keeping ``run()`` or ``stop()`` waiting.

:func:`child_main` runs one incarnation of a child in its own cancel scope.
Its start phase ends with ``nursery.start`` returning :data:`STARTED`,
:data:`IGNORED` or :data:`START_FAILED` (the error is on the handle); later
ends are sent to the driver as :class:`Ended`.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any, Final, cast

import attrs
import trio

from coterie.supervisors._faults import end_of

if TYPE_CHECKING:
    from coterie.supervisors._faults import Injection
    from coterie.supervisors._spec import ChildSpec

__all__ = [
    "IGNORED",
    "STARTED",
    "START_FAILED",
    "Ended",
    "Handle",
    "child_main",
    "open_host",
    "reason_of",
    "traceback_of",
]

STARTED: Final = "started"
IGNORED: Final = "ignored"
START_FAILED: Final = "start_failed"


@attrs.define(eq=False)
class Handle:
    """One incarnation of a child: its task's scope and how it ended."""

    spec: ChildSpec
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    done: trio.Event = attrs.field(factory=trio.Event)
    stop_requested: bool = False
    error: BaseException | None = None
    #: A fault injected into this incarnation (its scope is cancelled then).
    injected: Injection | None = None


@attrs.frozen(eq=False)
class Ended:
    """A child's incarnation ended on its own (``handle.error`` says how)."""

    handle: Handle


@attrs.define(eq=False)
class _Status:
    """The ``task_status`` a reporting child gets: forwards its first ``started()``."""

    outer: trio.TaskStatus[str]
    done: bool = False

    def started(self, value: object = None) -> None:
        if self.done:
            raise RuntimeError("called 'started' twice on the same task status")
        self.done = True
        self.outer.started(STARTED)


async def child_main(
    send: trio.MemorySendChannel[Any],
    handle: Handle,
    *,
    task_status: trio.TaskStatus[str],
) -> None:
    """Run one incarnation of a child in its own cancel scope and report how it ended."""
    spec = handle.spec
    status = _Status(task_status)
    settled = False
    try:
        with handle.scope:
            if spec.reports_started:
                await spec.start(task_status=cast("trio.TaskStatus[Any]", status))
            else:
                status.started()
                await spec.start()
        settled = True
    except trio.Cancelled:
        raise  # not ours (our scope absorbs its own): the host is going away
    except BaseException as exc:
        # Anything else is how the child ended: a crash, a shutdown exit, an error
        # in its clean-up once cancelled, or a KeyboardInterrupt for the driver to raise.
        handle.error = exc
        settled = True
    finally:
        if settled and handle.injected is not None and not handle.stop_requested:
            handle.error = end_of(handle.injected, handle.error)
        handle.done.set()
        if settled and not status.done:
            task_status.started(START_FAILED if handle.error is not None else IGNORED)
        elif settled and not handle.stop_requested:
            send.send_nowait(Ended(handle))


async def open_host(name: str) -> tuple[trio.CancelScope, trio.Nursery]:
    """Start a system task holding a nursery for children; return its scope and nursery.

    Cancelling the scope ends the host once its children have ended; nobody
    waits for that, so an abandoned child never blocks its supervisor.
    """
    ready = trio.Event()
    box: list[tuple[trio.CancelScope, trio.Nursery]] = []

    async def host() -> None:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                box.append((scope, nursery))
                ready.set()
                await trio.sleep_forever()

    trio.lowlevel.spawn_system_task(host, name=f"supervisor {name} children")
    with trio.CancelScope(shield=True):  # it is set at the host's first step
        await ready.wait()
    return box[0]


def traceback_of(error: BaseException) -> str:
    """The traceback as text, frames only: formatting source lines and error
    markers (``traceback.format_exception``) costs ~60 us a crash, most of a restart."""
    frames = [
        f'  File "{frame.f_code.co_filename}", line {lineno}, in {frame.f_code.co_name}\n'
        for frame, lineno in traceback.walk_tb(error.__traceback__)
    ]
    return "".join(["Traceback (most recent call last):\n", *frames, f"{reason_of(error)}\n"])


def reason_of(error: BaseException) -> str:
    """``Type: message`` for an error, unwrapping a group of one (a child nursery's crash)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
