"""``coterie crash``, ``coterie stop`` and ``coterie cancel``: faults into a live run.

Each sends one request down the run's control channel
(:func:`coterie.control.inject`) and prints one line once the run has
recorded the fault (docs/faults.md). Runs are named by id or a unique
prefix, as for ``coterie resume``.

With ``--backend URL`` (or ``$COTERIE_BACKEND``) naming a server, the run is
one the server knows, from any host: the request goes through the run's post
office there (the backend's :class:`~coterie.backends.RunAddress`).

Exit codes: 0 done; 1 the run is not running, did not answer in time, or the
actor is not running right now; 2 no such run (or an ambiguous prefix), or no
such actor in the run (the known ones and the closest are named).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from coterie.commands.options import add_backend_option
from coterie.control.timeouts import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

    from coterie.backends import RunAddress

FAULT_COMMANDS = ("crash", "stop", "cancel")

_HELP = {
    "crash": "make an actor of a live run crash, as a bug would (its supervisor decides what next)",
    "stop": "make an actor of a live run exit normally (a permanent one is restarted, as in OTP)",
    "cancel": "cancel a live run as Ctrl-C in its terminal would (resumable)",
}


def add_fault_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``crash``, ``stop`` and ``cancel`` on the CLI's subcommands."""
    for name in FAULT_COMMANDS:
        parser = subparsers.add_parser(
            name,
            help=_HELP[name],
            description=(
                f"{_HELP[name][0].upper()}{_HELP[name][1:]}. The request goes through the run's"
                " control channel; the command returns once the run has recorded it"
                " (event fault.injected). Exit codes: 0 done, 1 the run is not running or did"
                " not answer, 2 no such run or actor. See docs/faults.md."
            ),
        )
        parser.add_argument("run_id", metavar="RUN_ID", help="the run (a unique prefix is enough)")
        if name != "cancel":
            parser.add_argument("actor", metavar="ACTOR", help="the actor (see `coterie watch`)")
        if name == "crash":
            parser.add_argument("--reason", metavar="TEXT", help="what the crash says")
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=f"how long to wait for the run's answer (default {DEFAULT_TIMEOUT:g})",
        )
        parser.add_argument(
            "--workdir",
            type=Path,
            default=Path.cwd(),
            help="the workspace (default: the current directory)",
        )
        add_backend_option(parser)


def injector() -> str:
    """Who injects a fault from this command: ``cli pid N on HOST``."""
    return f"cli pid {os.getpid()} on {socket.gethostname()}"


async def fault_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Inject the command's fault into the run; print what was done; the exit code."""
    # The implementation's imports: the parser (every command's) must not pay for them.
    from coterie.backends import BackendError
    from coterie.control import ControlError, FaultRefused, NoSuchActor, inject
    from coterie.runs import UnknownRun

    command = args.command
    try:
        run = await _the_run(args)
    except (UnknownRun, BackendError) as exc:
        err.print(f"coterie {command}: {exc}", markup=False, soft_wrap=True)
        return 2
    try:
        answer = await inject(
            run,
            command,
            getattr(args, "actor", None),
            reason=getattr(args, "reason", None),
            by=injector(),
            timeout=args.timeout,
        )
    except NoSuchActor as exc:
        err.print(f"coterie {command}: {exc}", markup=False, soft_wrap=True)
        return exc.exit_code
    except FaultRefused as exc:
        err.print(f"coterie {command}: {exc}", markup=False, soft_wrap=True)
        return exc.code
    except ControlError as exc:
        err.print(f"coterie {command}: {exc}", markup=False, soft_wrap=True)
        return exc.exit_code
    console.print(f"{answer['message']} (run {run.run_id})", markup=False, soft_wrap=True)
    return 0


async def _the_run(args: argparse.Namespace) -> RunAddress:
    """The run named, as the backend reaches it (in this home, or on a server)."""
    from coterie.backends import Backend

    backend = Backend.parse(args.backend)
    return await backend.address(args.workdir, args.run_id)
