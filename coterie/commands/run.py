"""``coterie run PROMPT``: one agent (a team of one) on a prompt."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

import trio

from coterie.models import ModelError
from coterie.session import open_agent
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

    from coterie.events import Event


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
            with session.events.subscribe(buffer=math.inf) as feed:  # type: ignore[arg-type]
                result = await _query_showing(session.query, args.prompt, feed, view)
    except ModelError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    view.finish({**result, "run_id": session.run_id})
    return 1 if result["is_error"] else 0


async def _query_showing(
    query: Any, prompt: str, feed: trio.MemoryReceiveChannel[Event], view: View
) -> dict[str, Any]:
    """Run the query while the view renders events as they come."""
    out: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:

        async def show() -> None:
            async for event in feed:
                view.event(event)

        nursery.start_soon(show)
        out = (await query(prompt)).to_dict()
        # Everything emitted before the result is already in the channel.
        while True:
            try:
                view.event(feed.receive_nowait())
            except trio.WouldBlock:
                break
        nursery.cancel_scope.cancel()
    return out
