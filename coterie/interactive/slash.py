"""Slash input: its parser and the table of the session's own commands (pure).

``/name args`` is a command when the line's first character is ``/`` and
the name is a word (letters, digits, ``-``, ``_``, ``:`` for a plugin's
namespaced command); anything else, ``/usr/bin/ls is missing`` included, is a prompt
for the model (as in Claude Code, a path is not a command). The table lists
each built-in command once, with its help; what it does is the conversation's
(:mod:`.conversation` maps each name to its handler).
"""

from __future__ import annotations

import difflib
import re

import attrs

__all__ = ["COMMANDS", "SlashCommand", "SlashInput", "closest", "parse_slash"]

_SLASH = re.compile(r"/([A-Za-z][A-Za-z0-9_:-]*)(?:[ \t]+(.*))?", re.DOTALL)


@attrs.frozen
class SlashInput:
    """A line read as ``/name args`` (args stripped, "" when none)."""

    name: str
    args: str


def parse_slash(line: str) -> SlashInput | None:
    """*line* as a slash command, or None if it is a prompt for the model."""
    text = line.strip()
    match = _SLASH.fullmatch(text)
    if match is None:
        return None
    return SlashInput(match[1].lower(), (match[2] or "").strip())


@attrs.frozen
class SlashCommand:
    """One of the session's own commands: its name, argument and help line."""

    name: str
    help: str
    argument: str = ""

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument}".rstrip()


#: The session's own commands, in the order ``/help`` lists them.
COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "list the commands"),
    SlashCommand("clear", "start a new conversation (a new run; the old one stays resumable)"),
    SlashCommand("compact", "summarise the conversation now, keeping FOCUS", "[focus]"),
    SlashCommand("cost", "tokens and USD spent in this run so far"),
    SlashCommand("model", "show the model, or use NAME for the next turns", "[name]"),
    SlashCommand(
        "output-style", "list the output styles, or answer in NAME from the next turn", "[name]"
    ),
    SlashCommand("permissions", "the permission mode and rules in force, and where from"),
    SlashCommand("agents", "the subagent types: built-in and custom"),
    SlashCommand("plugin", "the installed plugins and the marketplaces"),
    SlashCommand("tasks", "the task board of this workspace's team runs"),
    SlashCommand("goal", "work on COND until the evaluator judges it met (as --goal)", "COND"),
    SlashCommand("loop", "run a prompt again and again (as --loop SPEC)", "SPEC"),
    SlashCommand(
        "rewind",
        "put files and conversation back to checkpoint N (without N: list them);"
        " add code or conversation for one only, force over outside changes",
        "[n] [code|conversation] [force]",
    ),
    SlashCommand("resume", "switch to run ID (without ID: list the runs)", "[id]"),
    SlashCommand("exit", "leave the session (Ctrl-D does too)"),
)

BY_NAME = {command.name: command for command in COMMANDS}


def closest(name: str, names: list[str]) -> str | None:
    """The known command name nearest to *name*, if any is near enough."""
    matches = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    if matches:
        return matches[0]
    prefixed = [n for n in names if n.startswith(name[:2])] if len(name) >= 2 else []
    return min(prefixed) if prefixed else None
