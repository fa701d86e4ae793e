"""Asking a person at the terminal whether a tool may run."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

import trio
from rich.markup import escape

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from rich.console import Console


class TerminalAsker:
    """Implements ``coterie.tools.Asker`` by prompting on the terminal.

    Reading standard input happens in a worker thread that is abandoned on
    cancellation, so Ctrl-C at the prompt ends the run at once. Questions
    from several agents at once (a team) are asked one at a time.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._one_at_a_time = trio.Lock()
        #: Set by a live display, to hold it still while the person answers.
        self.pause: Callable[[], AbstractContextManager[None]] | None = None

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str) -> bool:
        async with self._one_at_a_time:
            with self.pause() if self.pause is not None else contextlib.nullcontext():
                return await self._ask(tool_name, input, reason)

    async def _ask(self, tool_name: str, input: dict[str, Any], reason: str) -> bool:
        shown = json.dumps(input, ensure_ascii=False)
        if len(shown) > 400:
            shown = shown[:400] + "…"
        self.console.print(f"[bold yellow]?[/] Allow [bold]{escape(tool_name)}[/] {escape(shown)}")
        if reason:
            self.console.print(f"  [dim]{escape(reason)}[/]")
        self.console.print(escape("  allow? [y/N] "), end="")
        answer = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return answer.strip().lower() in ("y", "yes")
