"""``coterie run PROMPT``: one agent (a team of one) on a prompt."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from coterie.models import ModelError
from coterie.session import open_agent
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View

if TYPE_CHECKING:
    import argparse

    from rich.console import Console


def _view(args: argparse.Namespace, console: Console) -> View:
    if not args.print:
        return ConsoleView(console)
    return {"text": TextView, "json": JsonView, "stream-json": StreamJsonView}[args.output_format]()


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run the agent on ``args.prompt``; returns the exit code."""
    view = _view(args, console)
    interactive = not args.print and sys.stdin.isatty()
    try:
        agent = open_agent(
            args.workdir,
            model=args.model,
            scenario=args.scenario,
            permission_mode=args.permission_mode,
            add_dirs=args.add_dir,
            max_turns=args.max_turns,
            max_budget_usd=args.max_budget_usd,
            asker=TerminalAsker(console) if interactive else None,
        )
        async with agent as session:
            info = {
                "run_id": session.run_id,
                "cwd": str(args.workdir),
                "model": session.config.model if not args.scenario else "scripted",
                "permission_mode": session.config.permission_mode,
            }
            view.start(info)
            with session.events.listen(view.event):
                result = (await session.query(args.prompt)).to_dict()
    except ModelError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    view.finish({**result, "run_id": session.run_id})
    return 1 if result["is_error"] else 0
