"""``coterie observe``: serve the web observer of a workspace's runs (docs/observe.md).

The first line of standard output is the page's URL (token included); the
observer runs in this process's Trio loop until Ctrl-C (exit 130) or
SIGTERM (exit 0). The fault buttons go through :func:`coterie.control.inject`.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from coterie.backends import Backend
    from coterie.observe import Injector, Observer


def add_observe_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``observe`` on the CLI's subcommands."""
    observe = subparsers.add_parser(
        "observe",
        help="open a local web page that shows the runs of a workspace live",
        description=(
            "Serve a web page, on 127.0.0.1 only, that shows the workspace's runs: the "
            "supervision tree, mailboxes, the task board as a graph, the messages between "
            "actors, supervision events, turns, tokens and cost; with buttons that crash or "
            "stop an actor or cancel a run. The first line of standard output is the URL "
            "(with its secret token). Ctrl-C stops it."
        ),
    )
    observe.add_argument("--port", type=int, default=0, help="port (0, the default: any free one)")
    from coterie.commands.options import add_backend_option

    add_backend_option(observe)
    observe.add_argument(
        "--workdir",
        type=Path,
        default=Path.cwd(),
        help="the workspace whose runs to show (default: the current directory)",
    )


def default_injector() -> Injector:
    """The fault buttons' injector: :func:`coterie.control.inject`, the control channel
    ``coterie crash`` / ``stop`` / ``cancel`` use."""
    from coterie.control import inject

    return inject


def observe_command(args: argparse.Namespace) -> int:
    """Run ``coterie observe``; returns the exit code."""
    import trio  # the CLI starts without it (other commands do not need it)

    from coterie.backends import Backend, BackendError

    try:
        backend = Backend.parse(getattr(args, "backend", None))
    except BackendError as exc:
        print(f"coterie observe: {exc}", file=sys.stderr)
        return 2
    return trio.run(_main, args.workdir.resolve(), backend, args.port, default_injector())


async def _main(workdir: Path, backend: Backend, port: int, injector: Injector | None) -> int:
    import trio

    from coterie.observe import serve_observer

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            try:
                observer: Observer = await nursery.start(
                    lambda task_status: serve_observer(
                        workdir,
                        backend=backend,
                        port=port,
                        injector=injector,
                        task_status=task_status,
                    )
                )
            except OSError as exc:
                print(f"coterie observe: cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
                return 1
            print(observer.url, flush=True)
            async for signum in signals:
                nursery.cancel_scope.cancel()
                return 130 if signum == signal.SIGINT else 0
    return 0  # pragma: no cover - the signal iterator never ends
