"""``coterie compact RUN_ID [FOCUS]``: Claude Code's ``/compact`` on a stopped run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.commands.driving import USAGE_ERRORS
from coterie.session import compact_run

if TYPE_CHECKING:
    import argparse

    from rich.console import Console


async def compact_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Summarise the Lead's history of run ``args.run_id``; print what it did."""
    try:
        report = await compact_run(args.workdir, args.run_id, args.focus)
    except USAGE_ERRORS as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    console.print(
        f"compacted run {args.run_id}: {report.messages_before} → {report.messages_after} "
        f"messages, about {report.tokens_before:,} → {report.tokens_after:,} tokens "
        f"(stages {', '.join(map(str, report.stages)) or 'none'})"
    )
    return 0
