"""``coterie runs``: the runs of a workspace and where each stands.

With ``--backend URL`` (or ``$COTERIE_BACKEND``) naming a server: every run
the server knows, from any host or workspace, with the workspace each ran in.
Written once, against the backend's reader (:mod:`coterie.backends.protocol`).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coterie.runs import DAMAGED, INTERRUPTED, LEGACY_RUNS

if TYPE_CHECKING:
    import argparse

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
    """Print the runs, newest last (``--json``: one object per line)."""
    from coterie.backends import Backend, BackendError, ReadError

    err = Console(stderr=True, highlight=False)
    workdir = args.workdir.resolve()
    try:
        reader = Backend.parse(getattr(args, "backend", None)).reader(workdir)
        runs = reader.runs()
    except BackendError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    except ReadError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return exc.code
    if not reader.spans_workspaces and (workdir / LEGACY_RUNS).is_dir():
        err.print(
            f"[yellow]note:[/] {workdir / LEGACY_RUNS} holds runs of an older coterie, kept in the"
            " workspace where an agent could change them; they are not listed or resumed."
        )
    if args.json:
        for info in runs:
            console.file.write(json.dumps(info.to_dict()) + "\n")
        return 0
    if not runs:
        console.print(f"no runs in {escape(reader.place)}")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("RUN", "COMMAND", "STATE", "UPDATED"):
        table.add_column(column, no_wrap=True)
    if reader.spans_workspaces:
        table.add_column("WORKSPACE", overflow="fold")  # another host's path: long, wrapped
    table.add_column("REQUEST")
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
        where = [escape(info.where or "")] if reader.spans_workspaces else []
        table.add_row(
            info.run_id, info.command, f"[{colour}]{info.state}[/]", updated, *where,
            escape(request[:80]),
        )  # fmt: skip
    console.print(table)
    for info in runs:
        if info.state == DAMAGED:
            console.print(f"[red]damaged:[/] {escape(info.request)}")
    # Only what `coterie resume` takes (a demo's run is not resumed).
    interrupted = [i.run_id for i in runs if i.state == INTERRUPTED and i.command in RESUMABLE]
    if interrupted:
        console.print(
            f"[dim]resume an interrupted run with: {escape(reader.resume_hint(interrupted[-1]))}[/]"
        )
    return 0
