"""``coterie watch RUN_ID``: the live view of any run, from another terminal, read-only.

The view is the team's live view (:class:`coterie.ui.live.TeamView`), fed
with the events of the run's ``events.jsonl`` instead of the run's own event
log, with the board folded from its log records (``coterie.board.read_log``)
and each actor's unacknowledged messages counted with
:func:`coterie.mailbox.peek_mailbox`. Nothing here takes a lock of the run or
writes a file of it (the run is located without :func:`coterie.runs.find_run`,
which may move a run whose workspace moved).

While the run is live (:func:`coterie.runs.is_live`) the log is followed as
it grows (a line still being written is waited for, see
:class:`coterie.ui.follow.LineSplitter`); once the run has ended the final
state is shown and the command exits 0. A run that has ended already is
replayed at ``--speed`` times its recorded pace
(:class:`coterie.ui.follow.ReplaySchedule`), then shown the same way.

With ``--backend redis://…`` (or ``$COTERIE_BACKEND``) the run is read from
the server instead, from any host: :mod:`coterie.commands.watchserver`.

Exit codes: 0 shown to the end, 1 the server could not be read, 2 no such run
(one line on stderr), 130 Ctrl-C (143 SIGTERM, 129 SIGHUP), printed nothing
more.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rich.console import Console

    from coterie.events import Event
    from coterie.ui.live import TeamView

# The implementation's imports are made in the functions that use them: the parser
# (every command's, even `coterie --help`) must not pay for Trio and the live view.

POLL = 0.1  # seconds between two reads of a live run's log
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


def locate(workdir: Path, run_id: str) -> Path:
    """The directory of run *run_id* (or a unique prefix) of *workdir*, found without
    changing anything; :class:`UnknownRun` if there is none or several."""
    from coterie.runs import UnknownRun, runs_root

    root = runs_root(workdir)
    if run_id and "/" not in run_id and (root / run_id / "config.json").is_file():
        return root / run_id
    found = sorted(p for p in root.glob(glob.escape(run_id) + "*") if (p / "config.json").is_file())
    if run_id and len(found) == 1:
        return found[0]
    what = "is ambiguous" if found else "not found"
    raise UnknownRun(f"run {run_id!r} {what} in the workspace {workdir} (see `coterie runs`)")


def mail_counts(run_dir: Path) -> dict[str, int]:
    """Each actor's unacknowledged messages (pending or in flight), read from outside."""
    from coterie.errors import MailboxError
    from coterie.mailbox import peek_mailbox

    root, counts = run_dir / "mailboxes", {}
    if not root.is_dir():
        return {}
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            counts[directory.name] = len(peek_mailbox(directory))
        except (MailboxError, OSError):
            continue  # a mailbox being made, or damaged: no count rather than a crash
    return counts


class LogTail:
    """The run's ``events.jsonl``, read as it grows (never opened for writing)."""

    def __init__(self, path: Path) -> None:
        from coterie.ui.follow import LineSplitter

        self.path, self.offset, self.splitter = path, 0, LineSplitter()

    def read(self) -> list[Event]:
        """The events written since the last read (a line being written waits)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        return self.splitter.feed(data)


def watch_command(args: argparse.Namespace, console: Console) -> int:
    """``coterie watch RUN_ID``; returns the exit code (Ctrl-C raises KeyboardInterrupt)."""
    import trio
    from rich.console import Console
    from rich.markup import escape

    from coterie.backendchoice import Backend
    from coterie.commands.inspectview import InspectError
    from coterie.redisclient import BackendError
    from coterie.runs import UnknownRun

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        target = Backend.parse(getattr(args, "backend", None)).target
        if target is not None:
            from coterie.commands.onserver import run_on_server
            from coterie.commands.watchserver import watch_on_server

            return run_on_server(
                target, until_stopped, watch_on_server, target, args.run_id, console, args.speed
            )
        run_dir = locate(args.workdir.resolve(), args.run_id)
    except (UnknownRun, BackendError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    except InspectError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return exc.code
    return trio.run(until_stopped, watch, run_dir, console, args.speed)


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


async def watch(run_dir: Path, console: Console, speed: float) -> int:
    """Show run *run_dir* to its end: follow it while live, else replay it at *speed*."""
    import trio

    from coterie.board import read_log
    from coterie.runs import DamagedRun, is_live, read_config
    from coterie.ui.follow import ReplaySchedule, board_at
    from coterie.ui.live import TeamView

    try:
        config = read_config(run_dir)
    except DamagedRun:
        config = {}
    board = run_dir / "board"
    shown_until: list[float | None] = [None]  # a replay's board is the board of its moment

    def read_board() -> list[dict[str, Any]]:
        return board_at(read_log(board), shown_until[0])

    view = TeamView(console, read_board if board.is_dir() else None)
    title = f"coterie watch · {config.get('command', '?')}"
    if config.get("demo"):
        title += f" {config['demo']}"
    live = is_live(run_dir)
    if live:
        title += " · live"
    else:
        title += f" · replay at {speed:g}x" if speed else " · replay at once"
    view.start({"run_id": run_dir.name, "title": title, "goal": config.get("goal")})
    tail = LogTail(run_dir / "events.jsonl")
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(view.run)
            if live:
                await _follow(view, tail, run_dir)
            else:
                events = tail.read()
                schedule = ReplaySchedule(speed)
                for event in events:
                    await trio.sleep(schedule.delay(event.ts))
                    shown_until[0] = event.ts
                    view.event(event)
            nursery.cancel_scope.cancel()
        shown_until[0] = None
        _final(view, run_dir, console)
    finally:
        view.stop()
    return 0


async def _follow(view: TeamView, tail: LogTail, run_dir: Path) -> None:
    """Feed *view* the run's events as they are written, until the run is not live."""
    import trio

    from coterie.runs import is_live

    last_count = -MAIL_EVERY
    while True:
        live = is_live(run_dir)  # before reading: what it wrote before it ended is read
        for event in tail.read():
            view.event(event)
        if trio.current_time() - last_count >= MAIL_EVERY:
            last_count = trio.current_time()
            if view.state.set_mailboxes(mail_counts(run_dir)):
                view.refresh()
        if not live:
            tail.splitter.drop_pending()  # its writer is gone: the line stays torn
            return
        await trio.sleep(POLL)


def _final(view: TeamView, run_dir: Path, console: Console) -> None:
    """Show the run's final state: the tree, board and mailboxes, then how it ended."""
    from coterie.board import read_log
    from coterie.runs import run_info
    from coterie.ui.follow import board_at
    from coterie.ui.live import show_end

    view.state.set_mailboxes(mail_counts(run_dir))
    if view.state.board_changed or (run_dir / "board").is_dir():
        view.state.set_tasks(board_at(read_log(run_dir / "board")))
    info = run_info(run_dir)
    show_end(view, console, run_dir.name, info.state, info.result)
