"""Asking a person at the terminal whether a tool may run, as Claude Code asks.

The question (:mod:`coterie.ui.question`) names the agent in a team, shows
what exactly would run and why the policy asks, and offers numbered answers:
``1`` yes once, ``2`` yes and don't ask again (a rule, see
:mod:`coterie.tools.permissions.suggest`), ``3`` no, optionally with what to
do instead. Questions from several agents are asked one at a time, with the
live display paused (erased, a team's task board kept in sight above the
question, the display redrawn below the answer). The line is read
with :func:`coterie.ui.lineinput.read_line`: no thread, so a cancelled
question leaves nothing that would take the next line typed. Ctrl-C at the
prompt ends the run, as it does anywhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from rich.markup import escape

from coterie.tools.permissions import Answer, SettingsError, add_local_allow_rule
from coterie.ui.lineinput import read_line
from coterie.ui.question import choices, parse_choice, question_lines
from coterie.ui.region import LiveRegion

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rich.console import Console

    from coterie.tools.permissions import Suggestion

__all__ = ["TerminalAsker"]


class TerminalAsker:
    """Implements ``coterie.tools.Asker`` by prompting on the terminal.

    *region* is the live region shared with the run's view (it is paused while
    the person answers; the console's own by default); *project* is where
    "don't ask again" rules are written (``.claude/settings.local.json``);
    *team* names the asking agent in each question; *read* reads one line (None at end of input).
    """

    def __init__(
        self,
        console: Console,
        *,
        region: LiveRegion | None = None,
        project: Path | None = None,
        team: bool = False,
        read: Callable[[], Awaitable[str | None]] = read_line,
    ) -> None:
        self.console = console
        self.region = region if region is not None else LiveRegion.of(console)
        self.project = Path(project) if project is not None else Path.cwd()
        self.team = team
        self._read = read
        self._one_at_a_time = trio.Lock()

    async def ask(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        *,
        agent: str = "",
        suggestion: Suggestion | None = None,
    ) -> Answer:
        """Ask the person; their answer (a denial at end of input)."""
        async with self._one_at_a_time:
            with self.region.paused():
                return await self._ask(tool_name, input, reason, agent, suggestion)

    async def _ask(
        self,
        tool: str,
        input: dict[str, Any],
        reason: str,
        agent: str,
        suggestion: Suggestion | None,
    ) -> Answer:
        listed = choices(suggestion, self.project, agent=agent, team=self.team)
        head, *body = question_lines(tool, input, reason, agent=agent, team=self.team)
        self.console.print(f"[bold yellow]?[/] [bold]{escape(head)}[/]", soft_wrap=True)
        for line in body:
            style = "dim" if line.startswith("  why: ") else ""
            self._say(line, style)
        self._say("  Do you want to proceed?")
        for number, (_, label) in enumerate(listed, 1):
            self._say(f"  {number}. {label}")
        last = len(listed)
        while True:
            self._say(f"  choose 1-{last} (Enter: 1, Esc: {last}) > ", end="")
            typed = await self._read()
            if typed is None:
                self._say("")
                return Answer(False, "Nobody answered the question (end of input).")
            reply = parse_choice(typed, listed)
            if reply is not None:
                break
            self._say(f"  type a number from 1 to {last}")
        if reply.choice == "yes":
            return Answer(True)
        if reply.choice == "always" and suggestion is not None:
            if suggestion.persist:
                await self._save(suggestion.rule)
            else:
                self._say(f"  {suggestion.label} are allowed for the rest of this run", "dim")
            return Answer(True, grant=suggestion.rule)
        instruction = reply.instruction
        if instruction is None and not reply.escaped:
            who = agent if self.team and agent else "the agent"
            self._say(f"  what should {who} do instead? (Enter to skip) > ", end="")
            more = await self._read()
            instruction = more.strip() if more else None
        return Answer(False, instruction=instruction or None)

    async def _save(self, rule: str) -> None:
        try:  # a write and two fsyncs: off the event loop, but waited for
            path = await trio.to_thread.run_sync(add_local_allow_rule, self.project, rule)
        except (OSError, SettingsError) as exc:
            self._say(f"  {rule} is allowed for this run, but was not saved: {exc}", "yellow")
        else:
            self._say(f"  saved {rule} to {path}", "dim")

    def _say(self, line: str, style: str = "", end: str = "\n") -> None:
        self.console.print(
            line, style=style, end=end, markup=False, highlight=False, soft_wrap=True
        )
