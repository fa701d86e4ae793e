"""``coterie run PROMPT``: one agent (a team of one) on a prompt."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console

from coterie.errors import SupervisorGaveUp
from coterie.models import ModelError, Usage
from coterie.session import open_agent
from coterie.tools import RuleError, SettingsError
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View

if TYPE_CHECKING:
    import argparse


def _view(args: argparse.Namespace, console: Console) -> View:
    if not args.print:
        return ConsoleView(console)
    return {"text": TextView, "json": JsonView, "stream-json": StreamJsonView}[args.output_format]()


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run the agent on ``args.prompt``; returns the exit code."""
    view = _view(args, console)
    interactive = not args.print and sys.stdin.isatty()
    started = time.monotonic()
    started_run: dict[str, str] = {}
    result: dict[str, Any] | None = None
    try:
        result = await _run(args, console, view, interactive, started_run)
    except* SupervisorGaveUp as group:
        # The Lead kept crashing past its supervisor's restart intensity.
        reason = str(group.exceptions[0])
        err.print(f"[red]error:[/] the run was stopped: {reason}")
        result = {
            "result": f"The run was stopped after repeated crashes: {reason}",
            "is_error": True,
            "subtype": "error_during_execution",
            "num_turns": 0,
            "usage": Usage().to_dict(),
            "total_cost_usd": 0.0,
            "duration_ms": int((time.monotonic() - started) * 1000),
        }
    if result is None:
        return 2  # a usage error, already reported
    view.finish({**result, "run_id": started_run.get("run_id", "")})
    return 1 if result["is_error"] else 0


async def _run(
    args: argparse.Namespace,
    console: Console,
    view: View,
    interactive: bool,
    started_run: dict[str, str],
) -> dict[str, Any] | None:
    err = Console(stderr=True, highlight=False)
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
            started_run["run_id"] = session.run_id
            view.start(info)
            with session.events.listen(view.event):
                return (await session.query(args.prompt)).to_dict()
    except (ModelError, SettingsError, RuleError, ValueError) as exc:
        # No credentials, a malformed scenario or settings file, a bad mode.
        err.print(f"[red]error:[/] {exc}")
        return None
