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

The questions only a person answers have forms of their own, chosen by the
tool's name (:data:`TerminalAsker.forms`): an AskUserQuestion's questions one
after the other, its answers becoming the call's input (``answers``); a plan
(ExitPlanMode) approved with the mode the run goes on in, or kept with what
to change; plan mode (EnterPlanMode) entered or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import trio
from rich.markup import escape

from coterie.tools.permissions import Answer, SettingsError, add_local_allow_rule
from coterie.tools.permissions.answering import approval, refusal
from coterie.ui.lineinput import read_line
from coterie.ui.question import (
    PLAN_CHOICES,
    Picked,
    choices,
    option_lines,
    parse_choice,
    parse_options,
    question_lines,
)
from coterie.ui.region import LiveRegion

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rich.console import Console

    from coterie.tools.permissions import Mode, Suggestion

__all__ = ["TerminalAsker"]

#: A form of a question only a person answers: (asker, the call's input, agent).
_Form = "Callable[[TerminalAsker, dict[str, Any], str], Awaitable[Answer]]"


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
        form = self.forms.get(tool_name)
        async with self._one_at_a_time:
            with self.region.paused():
                if form is not None:
                    return await form(self, input, agent)
                return await self._ask(tool_name, input, reason, agent, suggestion)

    # -- the questions only a person answers -----------------------------------

    async def _questions(self, input: dict[str, Any], agent: str) -> Answer:
        """AskUserQuestion: each question asked in turn; the answers are the input."""
        who = f"{agent} asks" if self.team and agent else "Question"
        answers: dict[str, str] = {}
        for question in input.get("questions") or ():
            if not isinstance(question, dict):
                continue
            text, header = str(question.get("question", "")), question.get("header")
            chip = f"[{header}] " if isinstance(header, str) and header else ""
            self.console.print(
                f"[bold yellow]?[/] [bold]{escape(who)}: {escape(chip + text)}[/]", soft_wrap=True
            )
            for line in option_lines(question):
                self._say(line)
            several = " (several: 1,3)" if question.get("multiSelect") is True else ""
            while True:
                self._say(f"  choose a number{several} or type an answer (Esc: skip) > ", end="")
                typed = await self._read()
                if typed is None:
                    self._say("")
                    return refusal("Nobody answered the questions (end of input).")
                picked = parse_options(typed, question)
                if picked is not None and picked.other == "":
                    self._say("  your answer > ", end="")
                    words = await self._read()
                    picked = None if not words or not words.strip() else Picked(other=words.strip())
                if picked is not None:
                    break
                self._say("  type one of the numbers, or your own answer")
            if picked.escaped:
                return refusal(
                    "The user chose not to answer these questions. Go on with your best"
                    " judgement, and say what you assumed."
                )
            answers[text] = picked.text
        return approval("Answered by the user.", updated_input={**input, "answers": answers})

    async def _plan(self, input: dict[str, Any], agent: str) -> Answer:
        """ExitPlanMode: the plan shown; approved with the mode to go on in, or kept
        with what to change."""
        who = f"{agent} has a plan" if self.team and agent else "Here is the plan"
        self.console.print(f"[bold yellow]?[/] [bold]{escape(who)}:[/]", soft_wrap=True)
        plan = input.get("plan")
        for line in (
            plan if isinstance(plan, str) and plan.strip() else "(no plan given)"
        ).splitlines():
            self._say(f"  {line}")
        for item in input.get("allowedPrompts") or ():
            if isinstance(item, dict):
                self._say(f"  needs: {item.get('tool')} to {item.get('prompt')}", "dim")
        self._say("  Would you like to proceed?")
        for number, (_, label) in enumerate(PLAN_CHOICES, 1):
            self._say(f"  {number}. {label}")
        picked = await self._pick(len(PLAN_CHOICES))
        if picked is None:
            return refusal("Nobody answered about the plan (end of input); stay in plan mode.")
        chosen = PLAN_CHOICES[picked - 1][0]
        if chosen is not None:
            return approval(f"The user approved the plan ({chosen}).", mode=cast("Mode", chosen))
        self._say("  what should change? (Enter to skip) > ", end="")
        more = await self._read()
        feedback = more.strip() if more else ""
        said = f" They said: {feedback}" if feedback else ""
        return refusal(
            "The user wants to keep planning: the plan was not approved and plan mode stays"
            f" on.{said} Revise the plan, then present it again with ExitPlanMode."
        )

    async def _enter(self, input: dict[str, Any], agent: str) -> Answer:
        """EnterPlanMode: yes enters plan mode, no goes on as before."""
        who = agent if self.team and agent else "The agent"
        self.console.print(
            f"[bold yellow]?[/] [bold]{escape(who)} wants to enter plan mode[/]"
            " (read-only until you approve a plan)",
            soft_wrap=True,
        )
        self._say("  1. Yes, enter plan mode")
        self._say("  2. No, go on without it")
        picked = await self._pick(2)
        if picked == 1:
            return approval("The user agreed to plan mode.", mode="plan")
        return refusal(
            "The user does not want plan mode now: go on with the task without it."
            if picked == 2
            else "Nobody answered about plan mode (end of input): go on without it."
        )

    async def _pick(self, last: int) -> int | None:
        """A number from 1 to *last* (Enter: 1, Esc: *last*); None at end of input."""
        while True:
            self._say(f"  choose 1-{last} (Enter: 1, Esc: {last}) > ", end="")
            typed = await self._read()
            if typed is None:
                self._say("")
                return None
            text = typed.rstrip("\r\n")
            if text.startswith("\x1b"):
                return last
            text = text.strip() or "1"
            if text.isascii() and text.isdigit() and 1 <= int(text) <= last:
                return int(text)
            self._say(f"  type a number from 1 to {last}")

    #: The forms of the questions only a person answers, by the tool's name.
    forms: ClassVar[
        dict[str, Callable[[TerminalAsker, dict[str, Any], str], Awaitable[Answer]]]
    ] = {
        "AskUserQuestion": _questions,
        "ExitPlanMode": _plan,
        "EnterPlanMode": _enter,
    }

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
