"""``coterie runs``: the runs of a workspace and where each stands."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coterie.runs import DAMAGED, LEGACY_RUNS, list_runs

if TYPE_CHECKING:
    import argparse


_COLOURS = {
    "running": "cyan",
    "completed": "green",
    "failed": "red",
    "interrupted": "yellow",
    "damaged": "red",
}


def list_command(args: argparse.Namespace, console: Console) -> int:
    """Print the workspace's runs, newest last (``--json``: one object per line)."""
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
    interrupted = [i.run_id for i in runs if i.state == "interrupted"]
    if interrupted:
        console.print(f"[dim]resume an interrupted run with: coterie resume {interrupted[-1]}[/]")
    return 0
