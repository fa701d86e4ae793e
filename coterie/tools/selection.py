"""Lists of tools and rules as Claude Code's command line takes them, and ``--tools``.

:func:`split_list` reads ``--allowedTools``, ``--disallowedTools`` and
``--tools`` values: items separated by spaces or commas, except inside a
rule's parentheses (``Bash(git log *)`` is one item). :func:`tool_choice`
turns a ``--tools`` value into the predicate choosing which built-in tools a
run's agents get; the names it knows are those the built-in tools declare
(their ``name`` and ``aliases``), so no list of names is kept here.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from coterie.tools._registry import UnknownTool
from coterie.tools.catalogue import builtin_tools

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from coterie.tools._base import Tool

__all__ = ["ListError", "split_list", "tool_choice", "tool_names"]


class ListError(ValueError):
    """A tool or rule list is malformed (an unclosed or stray parenthesis)."""


def split_list(text: str) -> list[str]:
    """The items of *text*, split at spaces and commas outside parentheses.

    ``"Bash(git log *),Edit Read"`` is ``["Bash(git log *)", "Edit", "Read"]``;
    empty items are dropped (``""`` is no item). An unbalanced parenthesis is a
    :class:`ListError`.
    """
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                raise ListError(f"unbalanced ')' in {text!r}")
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                items.append("".join(current))
            current = []
            continue
        current.append(char)
    if depth:
        raise ListError(f"unclosed '(' in {text!r}")
    if current:
        items.append("".join(current))
    return items


def tool_names(tools: Iterable[Tool] | None = None) -> dict[str, str]:
    """Every name a built-in tool answers to (its name and aliases), to its name."""
    known: dict[str, str] = {}
    for tool in builtin_tools() if tools is None else tools:
        for name in (tool.name, *getattr(tool, "aliases", ())):
            known[name] = tool.name
    return known


def tool_choice(names: Iterable[str] | None) -> Callable[[Tool], bool]:
    """The predicate of ``--tools``: None (or ``["default"]``) every tool, else only
    the built-in tools named (by name or alias; ``[]``: none). Tools that are not
    built in (an MCP server's, Skill), the team's own tools (``team_only``: a
    team run's means of working together) and a loop's (``needs="loop"``:
    ScheduleWakeup, how a dynamic ``--loop`` goes on) are never taken away. An unknown
    name is an :class:`UnknownTool` naming the closest."""
    if names is None:
        return lambda _tool: True
    chosen = list(names)
    if chosen == ["default"]:
        return lambda _tool: True
    known = tool_names()
    for name in chosen:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownTool(
                f"--tools: no built-in tool is called {name!r}{hint}"
                f" (the tools: {', '.join(sorted(set(known.values())))})"
            )
    wanted = frozenset(known[name] for name in chosen)
    builtin = frozenset(known.values())
    return lambda tool: (
        tool.name in wanted
        or tool.name not in builtin
        or tool.capabilities.team_only
        or tool.capabilities.needs == "loop"
    )
