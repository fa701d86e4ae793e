"""``coterie runs``: the runs of a workspace and where each stands.

With ``--backend redis://…`` (or ``$COTERIE_BACKEND``): every run the server
knows, from any host or workspace, read from its registry
(:mod:`coterie.runregistry`), with the workspace each ran in.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coterie.runs import DAMAGED, INTERRUPTED, LEGACY_RUNS, list_runs

if TYPE_CHECKING:
    import argparse

    from coterie.redisclient import RedisTarget

#: The commands whose runs `coterie resume` goes on with.
RESUMABLE = ("run", "team")


_COLOURS = {
    "running": "cyan",
    "completed": "green",
    "failed": "red",
    "interrupted": "yellow",
    "damaged": "red",
}


def list_command(args: argparse.Namespace, console: Console) -> int:
    """Print the workspace's runs, newest last (``--json``: one object per line)."""
    from coterie.backendchoice import Backend
    from coterie.redisclient import BackendError

    try:
        target = Backend.parse(getattr(args, "backend", None)).target
    except BackendError as exc:
        Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    if target is not None:
        return _list_on_server(args, console, target)
    workdir = args.workdir.resolve()
    runs = list_runs(workdir)
    if (workdir / LEGACY_RUNS).is_dir():
        Console(stderr=True, highlight=False).print(
            f"[yellow]note:[/] {workdir / LEGACY_RUNS} holds runs of an older coterie, kept in the"
            " workspace where an agent could change them; they are not listed or resumed."
        )
    if args.json:
        for info in runs:
            console.file.write(json.dumps(info.to_dict()) + "\n")
        return 0
    if not runs:
        console.print(f"no runs in {args.workdir.resolve()}")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("RUN", "COMMAND", "STATE", "UPDATED", "REQUEST"):
        table.add_column(column, no_wrap=column != "REQUEST")
    for info in runs:
        colour = _COLOURS.get(info.state, "white")
        updated = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.updated_at))
            if info.updated_at
            else "-"
        )
        request = info.request.splitlines()[0] if info.request else ""
        if info.state == DAMAGED:
            request = "(its files cannot be read: see below)"
        table.add_row(
            info.run_id,
            info.command,
            f"[{colour}]{info.state}[/]",
            updated,
            escape(request[:80]),
        )
    console.print(table)
    for info in runs:
        if info.state == DAMAGED:
            console.print(f"[red]damaged:[/] {escape(info.request)}")
    # Only what `coterie resume` takes (a demo's run is not resumed).
    interrupted = [i.run_id for i in runs if i.state == "interrupted" and i.command in RESUMABLE]
    if interrupted:
        console.print(f"[dim]resume an interrupted run with: coterie resume {interrupted[-1]}[/]")
    return 0


def _list_on_server(args: argparse.Namespace, console: Console, target: RedisTarget) -> int:
    """``coterie runs --backend URL``: every run the server knows, oldest first."""
    from coterie.commands.inspectview import InspectError
    from coterie.commands.onserver import list_on_server, run_on_server

    try:
        runs = run_on_server(target, list_on_server, target)
    except InspectError as exc:
        Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(exc))}")
        return exc.code
    if args.json:
        for run in runs:
            console.file.write(json.dumps(run.to_dict()) + "\n")
        return 0
    if not runs:
        console.print(f"no runs on {target.url}")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("RUN", "COMMAND", "STATE", "UPDATED"):
        table.add_column(column, no_wrap=True)
    table.add_column("WORKSPACE", overflow="fold")  # another host's path: long, wrapped
    table.add_column("REQUEST")
    for run in runs:
        colour = _COLOURS.get(run.state, "white")
        updated = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.updated_at))
            if run.updated_at
            else "-"
        )
        request = run.request.splitlines()[0] if run.request else ""
        where = f"{run.host}:{run.workspace}" if run.host else run.workspace
        table.add_row(
            run.run_id,
            run.command,
            f"[{colour}]{run.state}[/]",
            updated,
            escape(where),
            escape(request[:80]),
        )
    console.print(table)
    interrupted = [r.run_id for r in runs if r.state == INTERRUPTED and r.command in RESUMABLE]
    if interrupted:
        console.print(
            "[dim]resume an interrupted run, from any host, with: coterie resume"
            f" {interrupted[-1]} --backend {escape(target.url)}[/]"
        )
    return 0
