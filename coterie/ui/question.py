"""A permission question as Claude Code asks it, and the answers it takes: pure.

:func:`question_lines` says who asks (a teammate by name; a solo agent is not
named), what exactly (a Bash command and its description, an edit's path and
a short diff, a write's path and size, other input capped) and why the
policy asks. :func:`choices` numbers the answers as Claude Code does::

    1. Yes
    2. Yes, and don't ask again for `npm test` commands in /work/app
    3. No, and tell bob what to do differently

(the second only when a rule can be offered, see
:mod:`coterie.tools.permissions.suggest`). :func:`parse_choice` reads one
typed line: the digit, optionally followed by the instruction for "No";
an empty line takes the default (1, as in Claude Code); Esc (a line starting
with it) is "No" without an instruction; anything else is ``None`` (ask
again). Nothing here reads the project: only the person's line decides.

The questions only a person answers have forms of their own: an
AskUserQuestion's options (:func:`option_lines`, :func:`parse_options`:
one number, several for ``multiSelect``, or the person's own words), and a
plan to approve (:data:`PLAN_CHOICES`: go on accepting edits, go on asking
about each, or keep planning with what to change).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools.permissions.suggest import Suggestion

__all__ = [
    "PLAN_CHOICES",
    "Choice",
    "Picked",
    "Reply",
    "choices",
    "option_lines",
    "parse_choice",
    "parse_options",
    "question_lines",
]

ESC = "\x1b"
INPUT_CAP = 400  # characters of a tool's input shown
DIFF_LINES = 6  # lines of each side of an edit shown

Choice = Literal["yes", "always", "no"]


@attrs.frozen
class Reply:
    """One parsed answer: which choice, and for "no" what to tell the agent."""

    choice: Choice
    instruction: str | None = None
    #: Esc: "no" at once, without asking what to do instead.
    escaped: bool = False


def _who(agent: str, team: bool) -> str:
    return agent if team and agent else ""


def question_lines(
    tool: str, input: dict[str, Any], reason: str, *, agent: str = "", team: bool = False
) -> list[str]:
    """The question's lines (plain text; the caller styles them)."""
    who = _who(agent, team)
    command = input.get("command")
    path = input.get("file_path") or input.get("path") or input.get("notebook_path")
    if tool == "Bash" and isinstance(command, str):
        head = f"{who} wants to run a Bash command:" if who else "Bash command"
        body = [f"  {line}" for line in _cap(command).splitlines() or [""]]
        description = input.get("description")
        if isinstance(description, str) and description.strip():
            body.append(f"  ({_cap(description.strip())})")
    elif isinstance(path, str) and ("old_string" in input or "new_string" in input):
        head = f"{who} wants to edit {path}:" if who else f"Edit {path}"
        body = _diff(str(input.get("old_string", "")), str(input.get("new_string", "")))
    elif isinstance(path, str) and isinstance(input.get("content"), str):
        content = input["content"]
        size = f"{len(content.splitlines())} lines, {len(content.encode())} bytes"
        head = f"{who} wants to write {path}" if who else f"Write {path}"
        body = [f"  ({size})"]
    else:
        head = f"{who} wants to use {tool}:" if who else f"Use {tool}"
        body = [f"  {_cap(json.dumps(input, ensure_ascii=False))}"]
    lines = [head, *body]
    if reason:
        lines.append(f"  why: {reason}")
    return lines


def choices(
    suggestion: Suggestion | None, project: Path, *, agent: str = "", team: bool = False
) -> list[tuple[Choice, str]]:
    """The numbered answers, in order: (choice, label)."""
    listed: list[tuple[Choice, str]] = [("yes", "Yes")]
    if suggestion is not None:
        if suggestion.persist:
            label = f"Yes, and don't ask again for {suggestion.label} in {project}"
        else:
            label = f"Yes, allow {suggestion.label}"
        listed.append(("always", label))
    who = _who(agent, team) or "the agent"
    listed.append(("no", f"No, and tell {who} what to do differently"))
    return listed


def parse_choice(line: str, listed: list[tuple[Choice, str]]) -> Reply | None:
    """The answer *line* gives among *listed* (default: the first), or None if invalid."""
    text = line.rstrip("\r\n")
    if text.startswith(ESC):
        return Reply("no", escaped=True)
    text = text.strip()
    if not text:
        return Reply(listed[0][0])
    digit, rest = text[0], text[1:].strip()
    if not digit.isdigit() or not ("1" <= digit <= str(len(listed))):
        return None
    if text[1:2] not in ("", " ", ".", ":", ")"):
        return None  # "12" or "1x": not one of the numbers
    choice = listed[int(digit) - 1][0]
    rest = rest.lstrip(".:)").strip()
    if rest and choice != "no":
        return None  # only "No" takes words after the number
    return Reply(choice, rest or None)


def _cap(text: str) -> str:
    return text if len(text) <= INPUT_CAP else text[:INPUT_CAP] + "…"


def _diff(old: str, new: str) -> list[str]:
    lines = []
    for sign, text in (("-", old), ("+", new)):
        shown = text.splitlines()
        for line in shown[:DIFF_LINES]:
            lines.append(f"  {sign} {line[:200]}")
        if len(shown) > DIFF_LINES:
            lines.append(f"  {sign} … ({len(shown) - DIFF_LINES} more lines)")
    return lines or ["  (no change shown)"]


@attrs.frozen
class Picked:
    """One answer to an AskUserQuestion question: the chosen labels, or the
    person's own words (*other*), or Esc (*escaped*: no answer)."""

    labels: tuple[str, ...] = ()
    other: str | None = None
    escaped: bool = False

    @property
    def text(self) -> str:
        """The answer as the model reads it (several labels joined by ``", "``)."""
        return self.other if self.other is not None else ", ".join(self.labels)


def option_lines(question: dict[str, Any]) -> list[str]:
    """An AskUserQuestion question's numbered options (plain text), then "Other"."""
    options = [o for o in question.get("options") or () if isinstance(o, dict)]
    lines = []
    for number, option in enumerate(options, 1):
        label, description = str(option.get("label", "")), str(option.get("description", ""))
        lines.append(f"  {number}. {label}" + (f" - {description}" if description else ""))
    lines.append(f"  {len(options) + 1}. Other (type your own answer)")
    return lines


def parse_options(line: str, question: dict[str, Any]) -> Picked | None:
    """The answer *line* gives to *question*: a number, several (``1,3``) when it
    takes several, or words of the person's own (``other``; empty when "Other" was
    chosen by its number, whose words are asked next); None to ask again (an
    empty line or one of separators only, a number out of range, several for a
    single choice)."""
    text = line.rstrip("\r\n")
    if text.startswith(ESC):
        return Picked(escaped=True)
    text = text.strip()
    if not text:
        return None
    labels = [str(o.get("label", "")) for o in question.get("options") or () if isinstance(o, dict)]
    parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()]
    if not parts:
        return None  # only separators: nothing chosen, ask again
    if not all(p.isascii() and p.isdigit() for p in parts):
        return Picked(other=text)  # the person's own words
    numbers = list(dict.fromkeys(int(p) for p in parts))
    if numbers == [len(labels) + 1]:
        return Picked(other="")  # "Other": the caller asks for the words
    if any(not 1 <= n <= len(labels) for n in numbers):
        return None
    if len(numbers) > 1 and question.get("multiSelect") is not True:
        return None
    return Picked(labels=tuple(labels[n - 1] for n in numbers))


#: The answers to a plan (ExitPlanMode), in order: the mode the run goes on in
#: (None: keep planning), and the label.
PLAN_CHOICES: tuple[tuple[str | None, str], ...] = (
    ("acceptEdits", "Yes, and accept edits automatically"),
    ("default", "Yes, and approve each edit"),
    (None, "No, keep planning (say what to change)"),
)
