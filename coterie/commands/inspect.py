"""``coterie tasks`` and ``coterie inbox``: look into a run, live or finished, read-only.

Both read the run directory only (under the coterie home, see
:mod:`coterie.runs`) and change nothing a run relies on: the board is read through
:class:`coterie.board.Board` (safe next to a live run), a mailbox through
:func:`coterie.mailbox.peek_mailbox` (no lock taken, no file written), the
message history from the ``team.message`` events of ``events.jsonl``.

Runs are named by id or a unique prefix of it (as ``coterie runs`` lists
them); without one, the most recent run of the workspace is meant. For
``inbox`` the run id is optional too: ``coterie inbox ACTOR`` (docs/teams.md)
reads the latest run, ``coterie inbox RUN_ID ACTOR`` a given one; a single
argument naming an existing run is taken as a run id with the actor missing.

With ``--backend redis://…`` (or ``$COTERIE_BACKEND``) both read the server
instead, from any host (:mod:`coterie.commands.onserver`).

Exit codes: 0 shown, 1 the run's files (or the server) could not be read, 2
usage error (no such run, no board, unknown actor, a bad backend URL).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from coterie.messages import Message

INSPECT_COMMANDS = ("tasks", "inbox")


def add_inspect_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``tasks`` and ``inbox`` on the CLI's subcommands."""
    tasks = subparsers.add_parser(
        "tasks",
        help="show the task board of a run (live or finished)",
        description=(
            "Show the task board of a team run: each task's id, status, owner, blockers, "
            "subject and result. RUN_ID defaults to the most recent run of the workspace. "
            "Read-only: safe while the run is going on. Exit codes: 0 shown, 1 the board "
            "could not be read, 2 no such run or the run has no board."
        ),
    )
    tasks.add_argument("run_id", nargs="?", metavar="RUN_ID", help="which run (default: latest)")
    _common(tasks)
    inbox = subparsers.add_parser(
        "inbox",
        help="show an actor's pending messages and message history in a run",
        description=(
            "Show what is in ACTOR's mailbox and not acknowledged yet (read without "
            "taking the mailbox's lock), then every message it sent (→) or received (←) "
            "in the run, from the event log. 'coterie inbox ACTOR' reads the most recent "
            "run; 'coterie inbox RUN_ID ACTOR' a given one. Exit codes: 0 shown, 1 the "
            "run's files could not be read, 2 no such run, or an unknown actor (the "
            "actors with a mailbox are listed)."
        ),
    )
    inbox.add_argument("first", metavar="[RUN_ID] ACTOR", help="the run (optional) and the actor")
    inbox.add_argument("second", nargs="?", help=argparse.SUPPRESS)
    _common(inbox)


def _common(parser: argparse.ArgumentParser) -> None:
    from coterie.commands.options import add_backend_option

    add_backend_option(parser)
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path.cwd(),
        help="the workspace whose run to look into (default: current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")


def run_inspect(args: argparse.Namespace, console: Console) -> int:
    """Run ``args.command`` (``tasks`` or ``inbox``); returns the exit code."""
    from coterie.backendchoice import Backend
    from coterie.commands.inspectview import InspectError, fail, show_inbox, show_tasks
    from coterie.redisclient import BackendError

    try:
        target = Backend.parse(getattr(args, "backend", None)).target
    except BackendError as exc:
        return fail(InspectError(str(exc)))
    if target is not None:
        from coterie.commands import onserver

        try:
            if args.command == "tasks":
                record, tasks = onserver.run_on_server(
                    target, onserver.read_tasks_on_server, target, args.run_id
                )
                show_tasks(console, args.json, record.run_id, record.state, tasks)
            else:
                record, actor, peeked, history = onserver.run_on_server(
                    target, onserver.read_inbox_on_server, target, args.first, args.second
                )
                pending = [p.message for p in peeked]
                extra = [{"in_flight": p.in_flight, "deliveries": p.deliveries} for p in peeked]
                show_inbox(
                    console, args.json, record.run_id, record.state, actor, pending, history, extra
                )
        except InspectError as error:
            return fail(error)
        return 0
    return {"tasks": run_tasks, "inbox": run_inbox}[args.command](args, console)


# -- finding runs ----------------------------------------------------------------


def locate_run(workdir: Path, run_id: str | None) -> Path:
    """The directory of run *run_id* (a unique prefix will do), or of the latest run."""
    from coterie.commands.inspectview import InspectError
    from coterie.runs import UnknownRun, find_run, list_runs, runs_root

    if run_id is not None:
        try:
            return find_run(workdir, run_id)
        except UnknownRun as exc:
            raise InspectError(str(exc)) from None
    try:
        runs = list_runs(workdir)
    except (ValueError, OSError) as exc:
        raise InspectError(f"cannot list the runs of {workdir}: {exc}", 1) from None
    if not runs:
        raise InspectError(f"no runs in {runs_root(workdir)}")
    return runs[-1].path


def _is_run(workdir: Path, name: str) -> bool:
    from coterie.runs import runs_root

    return (runs_root(workdir) / name / "config.json").is_file()


def _state(run_dir: Path) -> str:
    """Where the run stands (running, completed, failed, interrupted), if it says."""
    from coterie.runs import run_info

    try:
        return run_info(run_dir).state
    except (ValueError, OSError):
        return "unknown"


def mailbox_actors(run_dir: Path) -> list[str]:
    """The actors that have a mailbox in the run, sorted."""
    root = run_dir / "mailboxes"
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


# -- coterie tasks -----------------------------------------------------------------


def run_tasks(args: argparse.Namespace, console: Console) -> int:
    """``coterie tasks [RUN_ID]``: print the run's task board; returns the exit code."""
    from coterie.commands.inspectview import InspectError, fail, show_tasks

    try:
        run_dir = locate_run(args.workdir.resolve(), args.run_id)
        tasks = read_tasks(run_dir)
    except InspectError as error:
        return fail(error)
    show_tasks(console, args.json, run_dir.name, "" if args.json else _state(run_dir), tasks)
    return 0


def read_tasks(run_dir: Path) -> list[dict[str, Any]]:
    """The tasks on the run's board, as ``Task.to_json()`` dicts in id order."""
    from coterie.board import Board, BoardError
    from coterie.commands.inspectview import InspectError

    directory = run_dir / "board"
    if not (directory / "board.log").is_file():
        raise InspectError(f"run {run_dir.name} has no task board (not a team run?)")
    try:
        with Board(directory, fsync=False) as board:
            return [task.to_json() for task in board.list()]
    except (BoardError, OSError) as exc:
        raise InspectError(f"cannot read the task board of run {run_dir.name}: {exc}", 1) from None


# -- coterie inbox -----------------------------------------------------------------


def run_inbox(args: argparse.Namespace, console: Console) -> int:
    """``coterie inbox [RUN_ID] ACTOR``: print the actor's pending messages and history."""
    from coterie.commands.inspectview import InspectError, fail, show_inbox

    try:
        run_dir, actor = _inbox_target(args.workdir.resolve(), args.first, args.second)
        pending, history = read_inbox(run_dir, actor)
    except InspectError as error:
        return fail(error)
    state = "" if args.json else _state(run_dir)
    show_inbox(console, args.json, run_dir.name, state, actor, pending, history)
    return 0


def _inbox_target(workdir: Path, first: str, second: str | None) -> tuple[Path, str]:
    from coterie.commands.inspectview import InspectError

    if second is None:
        if _is_run(workdir, first):
            names = ", ".join(mailbox_actors(locate_run(workdir, first))) or "none"
            raise InspectError(
                f"{first} is a run: name an actor too, as in "
                f"'coterie inbox {first} ACTOR' (actors with a mailbox: {names})"
            )
        run_dir, actor = locate_run(workdir, None), first
    else:
        run_dir, actor = locate_run(workdir, first), second
    actors = mailbox_actors(run_dir)
    if actor not in actors:
        raise InspectError(
            f"no actor {actor!r} in run {run_dir.name}; actors with a mailbox: "
            f"{', '.join(actors) or 'none'}"
        )
    return run_dir, actor


def read_inbox(run_dir: Path, actor: str) -> tuple[list[Message], list[dict[str, Any]]]:
    """*actor*'s unacknowledged messages and its ``team.message`` history in the run.

    History items: ``{"ts", "direction": "sent" | "received", "sender", "recipient",
    "kind", "text"}``, in the order of the event log.
    """
    from coterie.commands.inspectview import InspectError
    from coterie.errors import MailboxError
    from coterie.events import read_events
    from coterie.mailbox import peek_mailbox

    try:
        pending = peek_mailbox(run_dir / "mailboxes" / actor)
    except (MailboxError, OSError) as exc:
        raise InspectError(f"cannot read the mailbox of {actor}: {exc}", 1) from None
    history: list[dict[str, Any]] = []
    events = run_dir / "events.jsonl"
    if events.is_file():
        for event in read_events(events):
            d = event.data
            if event.type != "team.message" or actor not in (d.get("sender"), d.get("recipient")):
                continue
            history.append(
                {
                    "ts": event.ts,
                    "direction": "sent" if d.get("sender") == actor else "received",
                    "sender": d.get("sender"),
                    "recipient": d.get("recipient"),
                    "kind": d.get("kind"),
                    "text": str(d.get("text", "")),
                }
            )
    return pending, history
