"""``coterie watch RUN_ID``: the live view of any run, from another terminal, read-only.

The view is the team's live view (:class:`coterie.ui.live.TeamView`), fed
from the backend's :class:`~coterie.backends.RunSource` instead of the run's
own event log: on files the run's ``events.jsonl`` (a line still being
written is waited for), the board folded from its log records and each
actor's unacknowledged messages counted from outside; on a server the run's
event stream, board log and mailbox streams, from any host. Nothing here
takes a lock of the run or writes anything of it (on files the run is
located without :func:`coterie.runs.find_run`, which may move a run whose
workspace moved).

While the run is live the events are followed as they come; once it has
ended, and its events have been quiet for a moment (a server's last events
may still be on their way), the final state is shown and the command exits
0. A run that has ended already is replayed at ``--speed`` times its
recorded pace (:class:`coterie.ui.follow.ReplaySchedule`), then shown the
same way.

Exit codes: 0 shown to the end, 1 the server could not be read, 2 no such run
(one line on stderr), 130 Ctrl-C (143 SIGTERM, 129 SIGHUP), printed nothing
more.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rich.console import Console

    from coterie.backends import Backend, RunSource
    from coterie.ui.live import TeamView

# The implementation's imports are made in the functions that use them: the parser
# (every command's, even `coterie --help`) must not pay for Trio and the live view.

#: Seconds one read of a live run's events waits for one.
BLOCK = 0.5
#: Seconds of quiet after the run stopped before its events are taken as read.
DRAIN = 1.0
MAIL_EVERY = 1.0  # seconds between two counts of its mailboxes


def add_watch_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``watch`` on the CLI's subcommands."""
    watch = subparsers.add_parser(
        "watch",
        help="watch any run live from another terminal, or replay a finished one",
        description=(
            "Show run RUN_ID (a unique prefix will do) as its own terminal shows it: the "
            "supervision tree with states and restarts, each mailbox's unacknowledged "
            "messages, the task board, crashes and messages between agents. A live run is "
            "followed until it ends; a finished run is replayed at --speed. Read-only: it "
            "takes no lock and writes nothing. Exit codes: 0 shown to the end, 2 no such "
            "run, 130 interrupted."
        ),
    )
    watch.add_argument("run_id", metavar="RUN_ID", help="the run to watch (see `coterie runs`)")
    watch.add_argument(
        "--workdir",
        type=Path,
        default=Path.cwd(),
        help="the workspace of the run (default: the current directory)",
    )
    from coterie.commands.options import add_backend_option

    add_backend_option(watch)
    watch.add_argument(
        "--speed",
        type=_speed,
        default=1.0,
        metavar="X",
        help="replay a finished run at X times its recorded pace (default 1; 0: at once)",
    )


def _speed(text: str) -> float:
    from coterie.ui.follow import ReplaySchedule

    try:
        return ReplaySchedule(float(text)).speed
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number >= 0") from None


def watch_command(args: argparse.Namespace, console: Console) -> int:
    """``coterie watch RUN_ID``; returns the exit code (Ctrl-C raises KeyboardInterrupt)."""
    import trio
    from rich.console import Console
    from rich.markup import escape

    from coterie.backends import Backend, BackendError, ReadError
    from coterie.runs import UnknownRun

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        backend = Backend.parse(getattr(args, "backend", None))
    except BackendError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    unreadable = backend.errors()
    failure: tuple[str, int] | None = None
    try:
        return trio.run(until_stopped, watch, backend, args.workdir.resolve(), args.run_id,
                        console, args.speed)  # fmt: skip
    except* (UnknownRun, BackendError) as group:
        failure = str(_first(group)), 2
    except* ReadError as group:
        error = _first(group)
        failure = str(error), error.code if isinstance(error, ReadError) else 1
    except* unreadable as group:
        failure = f"cannot read {backend.name}: {_first(group)}", 1
    said, code = failure
    err.print(f"[red]error:[/] {escape(said)}")
    return code


def _first(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def until_stopped(fn: Callable[..., Awaitable[int]], *args: object) -> int:
    """``await fn(*args)``, or ``128 + signum`` once SIGINT, SIGTERM or SIGHUP came:
    the watcher leaves quietly, taking each signal as an event (never as an
    exception raised wherever the code happens to be)."""
    import trio

    from coterie.commands.stopping import STOP_SIGNALS

    stopped: list[int] = []
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async with trio.open_nursery() as nursery:
            work = trio.CancelScope()

            async def listen() -> None:
                async for signum in signals:
                    stopped.append(signum)
                    work.cancel()
                    return

            nursery.start_soon(listen)
            code = 0
            with work:
                code = await fn(*args)
            nursery.cancel_scope.cancel()
    return 128 + stopped[0] if stopped else code


async def watch(
    backend: Backend, workdir: Path, run_id: str, console: Console, speed: float
) -> int:
    """Show run *run_id* of *backend* to its end: follow it while live, else replay it
    at *speed*."""
    import trio

    from coterie.ui.follow import ReplaySchedule, board_at
    from coterie.ui.live import TeamView

    async with backend.open_source(workdir, run_id) as source:
        config = source.config
        shown_until: list[float | None] = [None]  # a replay's board is the board of its moment

        async def read_board() -> list[dict[str, Any]]:
            return board_at(await source.board() or [], shown_until[0])

        has_board = await source.board() is not None
        view = TeamView(console, read_board if has_board else None)
        title = f"coterie watch · {config.get('command', '?')}"
        if config.get("demo"):
            title += f" {config['demo']}"
        holder = await source.live()
        if holder is not None:
            title += f" · live on {holder}" if holder else " · live"
        else:
            title += f" · replay at {speed:g}x" if speed else " · replay at once"
        view.start({"run_id": source.run_id, "title": title, "goal": config.get("goal")})
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(view.run)
                if holder is not None:
                    await _follow(view, source)
                else:
                    schedule = ReplaySchedule(speed)
                    for event in await source.events():
                        await trio.sleep(schedule.delay(event.ts))
                        shown_until[0] = event.ts
                        view.event(event)
                nursery.cancel_scope.cancel()
            shown_until[0] = None
            await _final(view, source, console)
        finally:
            view.stop()
    return 0


async def _follow(view: TeamView, source: RunSource) -> None:
    """Feed *view* the run's events as they come, until the run is not live and its
    events have been quiet for :data:`DRAIN` seconds."""
    import trio

    last_count = -MAIL_EVERY
    while True:
        # Before reading: what it wrote before it ended is read.
        live = await source.live() is not None
        for event in await source.events(wait=BLOCK if live else DRAIN):
            view.event(event)
            live = True  # events still coming: read on before deciding it ended
        if trio.current_time() - last_count >= MAIL_EVERY:
            last_count = trio.current_time()
            if view.state.set_mailboxes(await source.mail_counts()):
                view.refresh()
        if not live:
            return


async def _final(view: TeamView, source: RunSource, console: Console) -> None:
    """Show the run's final state: the tree, board and mailboxes, then how it ended."""
    from coterie.ui.follow import board_at
    from coterie.ui.live import show_end

    view.state.set_mailboxes(await source.mail_counts())
    board = await source.board()
    if board is not None:
        view.state.set_tasks(board_at(board))
    state, result = await source.outcome()
    show_end(view, console, source.run_id, state, result)
