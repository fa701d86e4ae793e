"""``coterie tasks`` and ``coterie inbox``: look into a run, live or finished, read-only.

Both read through the backend's reader (:class:`coterie.backends.RunReader`:
on files the run directory under the coterie home, on a server what the server
holds) and change nothing a run relies on: no lock taken, nothing delivered,
claimed or written. The message history comes from the run's
``team.message`` events.

Runs are named by id or a unique prefix of it (as ``coterie runs`` lists
them); without one, the most recent run of the workspace is meant. For
``inbox`` the run id is optional too: ``coterie inbox ACTOR`` (docs/teams.md)
reads the latest run, ``coterie inbox RUN_ID ACTOR`` a given one; a single
argument naming an existing run is taken as a run id with the actor missing.

With ``--backend URL`` (or ``$COTERIE_BACKEND``) naming a server, both read
the server instead, from any host.

Exit codes: 0 shown, 1 the run's files (or the server) could not be read, 2
usage error (no such run, no board, unknown actor, a bad backend URL).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from coterie.backends import RunReader

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
    from coterie.backends import Backend, BackendError, ReadError
    from coterie.commands.inspectview import fail

    try:
        reader = Backend.parse(getattr(args, "backend", None)).reader(args.workdir.resolve())
        if args.command == "tasks":
            _tasks(reader, args, console)
        else:
            _inbox(reader, args, console)
    except BackendError as exc:
        return fail(ReadError(str(exc)))
    except ReadError as error:
        return fail(error)
    return 0


def _tasks(reader: RunReader, args: argparse.Namespace, console: Console) -> None:
    """``coterie tasks [RUN_ID]``: the run's task board."""
    from coterie.backends import ReadError
    from coterie.commands.inspectview import show_tasks

    run = reader.find(args.run_id)
    tasks = reader.board(run)
    if tasks is None:
        raise ReadError(f"run {run.run_id} has no task board (not a team run?)")
    show_tasks(console, args.json, run.run_id, "" if args.json else run.state, tasks)


def _inbox(reader: RunReader, args: argparse.Namespace, console: Console) -> None:
    """``coterie inbox [RUN_ID] ACTOR``: the actor's pending messages and history."""
    from coterie.backends import ReadError
    from coterie.commands.inspectview import history_of, show_inbox

    first, second = args.first, args.second
    if second is None:
        if reader.is_run(first):
            names = ", ".join(reader.actors(reader.find(first))) or "none"
            raise ReadError(
                f"{first} is a run: name an actor too, as in "
                f"'coterie inbox {first} ACTOR' (actors with a mailbox: {names})"
            )
        run, actor = reader.find(None), first
    else:
        run, actor = reader.find(first), second
    actors = reader.actors(run)
    if actor not in actors:
        raise ReadError(
            f"no actor {actor!r} in run {run.run_id}; actors with a mailbox: "
            f"{', '.join(actors) or 'none'}"
        )
    pending = reader.pending(run, actor)
    history = history_of(reader.events(run), actor)
    show_inbox(
        console, args.json, run.run_id, "" if args.json else run.state, actor, pending, history
    )
