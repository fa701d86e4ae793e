"""How a run stops: on a signal (SIGINT, SIGTERM, SIGHUP) or on a disk that takes no
more writes, always with its clean-up, and always promptly.

:func:`stoppable` runs a command until it returns or a stop signal arrives;
:class:`StorageWatch` ends a run at the first sign that its storage failed.
Both leave the run interrupted and resumable.

Trio is imported where a run uses it: the command line imports :class:`Stopped`
to map every command's exit, ``coterie --help`` included, and must not pay for
Trio's run machinery then.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

from coterie.fsutil import STORAGE_ERRNOS, is_storage_error

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from rich.console import Console

    from coterie.events import Event

__all__ = [
    "STOP_SIGNALS",
    "STORAGE_ERRNOS",
    "StorageFailed",
    "StorageWatch",
    "Stopped",
    "is_storage_error",
    "stoppable",
    "storage_cause",
    "leaves",
    "describe",
]


#: How such an error reads in an actor's crash report (``str(OSError)`` starts so),
#: for a crash the supervisor reported before any write of ours failed.
_STORAGE_MARKERS = tuple(f"[Errno {n}] {os.strerror(n)}" for n in sorted(STORAGE_ERRNOS))


def describe(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def storage_cause(exc: BaseException) -> OSError | None:
    """A storage error *exc* is, contains, or was raised from (a wrapped start failure)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and is_storage_error(current):
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


class StorageFailed(Exception):
    """Raised in the run's nursery once its storage failed: it cancels the work."""


class StorageWatch:
    """Stops a run whose storage failed, instead of letting it crash and restart.

    Restarting an agent cannot help while the disk is full: each attempt
    crashes on its first write, and the writes in between tear the logs. So
    the first sign of it (the event log cannot be written, or an actor crashed
    on such an error) ends the run at once: everything is cancelled, the run
    is left as it was (resumable; what was acknowledged is on disk), and the
    command says why and exits 1.
    """

    def __init__(self) -> None:
        import trio

        self.reason = ""
        self._broken = trio.Event()
        self._token = trio.lowlevel.current_trio_token()

    def fail(self, reason: str) -> None:
        """Record the first *reason* and wake :meth:`watch` (from any thread)."""
        if not self.reason:
            self.reason = reason
            self._token.run_sync_soon(self._broken.set)

    def log_failed(self, exc: OSError) -> None:
        """The event log's failure callback."""
        self.fail(describe(exc))

    def event(self, event: Event) -> None:
        """An event listener: an actor that crashed on a full or read-only disk."""
        if event.type != "actor.crashed":
            return
        text = f"{event.data.get('reason', '')}\n{event.data.get('traceback', '')}"
        if any(marker in text for marker in _STORAGE_MARKERS):
            self.fail(f"{event.data.get('actor')} crashed: {event.data.get('reason')}")

    async def watch(self) -> None:
        """Wait for a failure, then raise :class:`StorageFailed` into the run."""
        await self._broken.wait()
        raise StorageFailed(self.reason)


class Stopped(BaseException):
    """The process was asked to stop by SIGTERM or SIGHUP.

    A :class:`BaseException`, as :class:`KeyboardInterrupt` is: nothing may
    catch it on the way out, and everything on the way runs its clean-up
    (tools' process groups killed, logs flushed, the run's lock released,
    leaving it interrupted and resumable).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def interrupt_process() -> None:
    """``coterie cancel`` of a run this process holds: Ctrl-C, delivered to the
    process as the terminal would deliver it (:func:`stoppable` takes it from there;
    in a conversation it interrupts the turn, as Ctrl-C does)."""
    signal.raise_signal(signal.SIGINT)


#: The signals that end a run as Ctrl-C does (systemd, Docker and CI send SIGTERM;
#: a closed terminal SIGHUP).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def stoppable(
    command: Callable[[argparse.Namespace, Console, Console], Awaitable[int]],
    args: argparse.Namespace,
    console: Console,
    err: Console,
) -> int:
    """Run *command* until it returns or a stop signal arrives.

    On SIGINT, SIGTERM or SIGHUP the command is cancelled, its clean-up runs
    (tools' groups killed, logs flushed, the run's lock released: it is left
    interrupted and resumable), then :class:`KeyboardInterrupt` (SIGINT) or
    :class:`Stopped` is raised. A second signal while the clean-up still runs
    ends the process at once, as kill -9 would (which a run survives: the
    next start kills the groups left behind): Ctrl-C always works, even if
    some clean-up step hangs.
    """
    import trio

    code = 0
    received: list[int] = []
    work = trio.CancelScope()
    try:
        with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for signum in signals:
                        if received:
                            err.print("[red]interrupted again:[/] exiting without clean-up")
                            os._exit(128 + signum)
                        received.append(signum)
                        work.cancel()

                nursery.start_soon(watch)
                with work:
                    code = await command(args, console, err)
                nursery.cancel_scope.cancel()
    except Exception:
        if not received:
            raise
        # The stop's cancellation made the command fail on its way out (a client
        # that turns a cancelled call into an error of its own: coredis's
        # "Unable to establish a connection"). The clean-up ran; the stop is what
        # happened, and what the exit code says.
    if received:
        if received[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Stopped(received[0])
    return code
