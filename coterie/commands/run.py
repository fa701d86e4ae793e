"""``coterie run PROMPT`` and ``coterie resume RUN_ID``: one agent (a team of one)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from coterie.errors import CoterieError, SupervisorGaveUp
from coterie.models import ModelError, Usage
from coterie.runs import find_run, read_config, read_state
from coterie.session import AgentSession, open_agent
from coterie.tools import RuleError, SettingsError
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from rich.console import Console

#: What can go wrong before a run starts: no credentials, a malformed scenario
#: or settings file, a bad mode, an unknown or busy run.
USAGE_ERRORS = (ModelError, SettingsError, RuleError, CoterieError, ValueError)


def _view(args: argparse.Namespace, console: Console) -> View:
    if not args.print:
        return ConsoleView(console)
    return {"text": TextView, "json": JsonView, "stream-json": StreamJsonView}[args.output_format]()


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie run``: the agent on ``args.prompt``; returns the exit code."""
    asker = _asker(args, console)

    def agent() -> AbstractAsyncContextManager[AgentSession]:
        return open_agent(
            args.workdir,
            model=args.model,
            scenario=args.scenario,
            permission_mode=args.permission_mode,
            add_dirs=args.add_dir,
            max_turns=args.max_turns,
            max_budget_usd=args.max_budget_usd,
            context_window=args.context_window,
            compact_at=args.compact_at,
            asker=asker,
            record={"prompt": args.prompt},
        )

    return await _drive(args, console, err, agent, lambda s: s.query(args.prompt))


async def resume_run(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie resume RUN_ID [PROMPT]``: finish an interrupted run, or go on with PROMPT."""
    try:
        run_dir = find_run(args.workdir.resolve(), args.run_id)
        config = read_config(run_dir)
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    if config.get("command", "run") != "run":
        err.print(f"[red]error:[/] run {run_dir.name} is a {config.get('command')!r} run")
        return 2
    state = read_state(run_dir)
    if args.prompt is None and state.get("state") in ("completed", "failed"):
        view = _view(args, console)
        view.finish({**state["result"], "run_id": run_dir.name})
        err.print(f"[dim]run {run_dir.name} had already finished; nothing to resume[/]")
        return 1 if state["result"]["is_error"] else 0

    async def go_on(session: AgentSession) -> Any:
        pending = await session.resume()  # the interrupted request comes first
        if args.prompt is not None:
            return await session.query(args.prompt)
        if pending is None:  # killed before the first request was recorded
            return await session.query(str(config.get("prompt", "")))
        return pending

    def agent() -> AbstractAsyncContextManager[AgentSession]:
        return open_agent(args.workdir, asker=_asker(args, console), resume=run_dir.name)

    return await _drive(args, console, err, agent, go_on)


def _asker(args: argparse.Namespace, console: Console) -> TerminalAsker | None:
    interactive = not args.print and sys.stdin.isatty()
    return TerminalAsker(console) if interactive else None


async def _drive(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    agent: Callable[[], AbstractAsyncContextManager[AgentSession]],
    work: Callable[[AgentSession], Awaitable[Any]],
) -> int:
    view = _view(args, console)
    started = time.monotonic()
    run_id = ""
    result: dict[str, Any] | None = None
    try:
        async with agent() as session:
            run_id = session.run_id
            view.start(
                {
                    "run_id": run_id,
                    "cwd": str(session.config.workdir),
                    "model": "scripted" if session.config.scenario else session.config.model,
                    "permission_mode": session.config.permission_mode,
                }
            )
            with session.events.listen(view.event):
                result = (await work(session)).to_dict()
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
    except* USAGE_ERRORS as group:
        err.print(f"[red]error:[/] {group.exceptions[0]}")
    if result is None:
        return 2
    view.finish({**result, "run_id": run_id})
    return 1 if result["is_error"] else 0
