"""``coterie checkpoints RUN_ID`` and ``coterie rewind RUN_ID --to N`` (docs/checkpoints.md)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

import attrs
from rich.markup import escape

from coterie.checkpoints import (
    BadCheckpoint,
    RestoreRefused,
    RewindRefused,
    list_checkpoints,
    rewind_run,
)
from coterie.runs import RunBusy, UnknownRun

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

#: Paths shown per checkpoint before "… N more".
SHOWN = 8


def checkpoints_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """List run ``args.run_id``'s checkpoints: number, time, prompt, files changed after it."""
    try:
        rows = list_checkpoints(args.workdir, args.run_id)
    except UnknownRun as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    if args.json:  # one object per line, as `coterie runs --json`
        for row in rows:
            console.file.write(json.dumps(attrs.asdict(row)) + "\n")
        return 0
    if not rows:
        console.print(f"run {escape(args.run_id)} has no checkpoints")
        return 0
    for row in rows:
        when = dt.datetime.fromtimestamp(row.at).strftime("%Y-%m-%d %H:%M:%S")
        first = row.text.strip().splitlines()[0] if row.text.strip() else ""
        label = f"rewind to {row.to}" if row.kind == "rewind" else first[:70]
        console.print(f"[bold]{row.n:>3}[/]  {when}  {escape(label)}")
        for path, who in list(row.changed.items())[:SHOWN]:
            by = f" [dim]({escape(', '.join(who))})[/]" if who else ""
            console.print(f"       {escape(path)}{by}")
        if len(row.changed) > SHOWN:
            console.print(f"       [dim]… {len(row.changed) - SHOWN} more[/]")
    return 0


async def rewind_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Rewind run ``args.run_id`` to checkpoint ``args.to``."""
    code = not args.conversation or args.code
    conversation = not args.code or args.conversation
    try:
        report = await rewind_run(
            args.workdir, args.run_id, args.to, code=code, conversation=conversation,
            force=args.force,
        )  # fmt: skip
    except (UnknownRun, BadCheckpoint, RunBusy) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    except (RewindRefused, RestoreRefused) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 1
    said = [f"rewound run {escape(args.run_id)} to checkpoint {report.to}"]
    if code:
        said.append(f"{len(report.restored)} file{'s' * (len(report.restored) != 1)} put back")
    if report.dropped is not None:
        said.append(
            f"{report.dropped} message{'s' * (report.dropped != 1)} of the conversation dropped"
        )
    if report.teammates:
        said.append(f"the conversations of {escape(', '.join(report.teammates))} cut back")
    if report.tasks_dropped:
        tasks = report.tasks_dropped
        said.append(f"{tasks} task{'s' * (tasks != 1)} of the board dropped")
    console.print("; ".join(said) + f" (checkpoint {report.checkpoint} undoes it)")
    return 0
