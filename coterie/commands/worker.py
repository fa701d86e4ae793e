"""``coterie worker``: host teammates of remote team runs (docs/scale-out.md).

A worker registers on a Redis/Valkey backend with a heartbeat, takes the
teammates that runs started with ``coterie team --remote`` want hosted (up
to ``--capacity``, its fair share of them), and runs each under a supervisor
of its own (:mod:`coterie.runtime.hosting`), with the worker's workdir,
settings and ``--permission-mode`` (headless: whatever would ask is denied).
One line per hosting change on standard output. Ctrl-C or SIGTERM stop it
cleanly: its teammates are stopped and their leases released at once, so
that other workers take them over without waiting for the time to live.

Exit codes: 130 (Ctrl-C) or 143 (SIGTERM) once stopped, as every command;
2 usage error (no Redis backend, a bad capacity or heartbeat).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from coterie.commands.options import add_backend_option, setting_sources
from coterie.tools.permissions.modes import MODES

if TYPE_CHECKING:
    import argparse
    from contextlib import AbstractAsyncContextManager

    from rich.console import Console

    from coterie.backends import WorkerDirectory

__all__ = ["add_worker_command", "worker_command"]


def add_worker_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``worker`` on the CLI's subcommands."""
    worker = subparsers.add_parser(
        "worker",
        help="host teammates of remote team runs (coterie team --remote) on this machine",
        description=(
            "Host teammates of team runs started with `coterie team --backend redis://... "
            "--remote`: register with a heartbeat, take the teammates runs want hosted (up "
            "to --capacity), run each under a supervisor of this worker. The permission mode "
            "is this worker's (--permission-mode), never the run's: whoever runs the worker "
            "decides what runs on its host. Ctrl-C or SIGTERM stop it cleanly (its teammates "
            "are released at once). Exit codes: 130/143 stopped by Ctrl-C/SIGTERM, 2 usage error."
        ),
    )
    add_backend_option(worker)
    worker.add_argument("--run", metavar="RUN_ID", help="host teammates of this run only")
    worker.add_argument(
        "--capacity", type=int, default=4, metavar="N", help="teammates at most (default 4)"
    )
    worker.add_argument(
        "--workdir",
        type=Path,
        default=Path.cwd(),
        help="the workspace the teammates work in (default: the current directory)",
    )
    worker.add_argument(
        "--permission-mode",
        choices=MODES,
        default="default",
        help="how the hosted teammates' tool calls are approved (default: what asks is denied)",
    )
    worker.add_argument(
        "--setting-sources",
        type=setting_sources,
        metavar="LIST",
        help=(
            "which of this worker's settings files apply to the teammates it hosts: a"
            " comma-separated subset of user,project,local (default: all); never the run's"
        ),
    )
    worker.add_argument(
        "--heartbeat",
        type=float,
        default=1.0,
        metavar="S",
        help="seconds between heartbeats (default 1); leases lapse after 5 of them",
    )
    worker.add_argument(
        "--id", dest="worker_id", metavar="NAME", help="this worker's id (default HOST-PID)"
    )


async def worker_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie worker``: serve until a stop signal (see the module docstring)."""
    # The implementation's imports: the parser (every command's) must not pay for them.
    import trio

    from coterie.backends import Backend
    from coterie.runtime.hosting import Hosting
    from coterie.workers import WorkerConfig, serve_worker

    try:
        backend = Backend.parse(args.backend)
        directory = backend.open_workers()  # none on files: refused here
        worker_id = args.worker_id or f"{socket.gethostname()}-{os.getpid()}"
        if not 0 < args.heartbeat <= 60:
            raise ValueError("--heartbeat must be more than 0 and at most 60 seconds")
        config = WorkerConfig(
            worker_id,
            capacity=args.capacity,
            run=args.run,
            beat=args.heartbeat,
            ttl=args.heartbeat * 5,
        )
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 2

    def said(what: str, run_id: str, name: str, detail: str = "") -> None:
        where = f" {run_id}/{name}" if name else ""
        why = f": {detail}" if detail else ""
        console.print(f"{what}{where}{why}", markup=False, soft_wrap=True)

    async with directory as registry, trio.open_nursery() as nursery:
        hosting = Hosting(
            backend, worker_id, args.workdir.resolve(), args.permission_mode,
            args.setting_sources, nursery,
        )  # fmt: skip
        console.print(
            f"worker {worker_id}: capacity {config.capacity} on {backend.name}",
            markup=False,
            soft_wrap=True,
        )

        def leaving() -> AbstractAsyncContextManager[WorkerDirectory]:
            # A connection of its own: the stop closed the first.
            return backend.open_workers()

        await serve_worker(registry, config, hosting.start, on_change=said, leaving=leaving)

    return 0  # pragma: no cover - serve_worker returns only when cancelled
