"""A scenario's tool names, checked against the tools a run can have.

A scripted turn that calls ``Bsh`` would otherwise run, and the agent would
answer it "No such tool": a typo testing nothing. So before a run replays a
scenario (``--scenario``, ``scenario=``), every ``tool_uses`` name must be
one a tool of some run answers to: a built-in tool's name or alias (the
team's tools and Agent/Task included, whichever agent gets them), Skill,
StructuredOutput, ToolSearch, or an MCP server's ``mcp__SERVER__TOOL``, which only the
connected server knows. A scenario that calls a missing tool on purpose says
so in its ``unknown_tools`` list (docs/scenarios.md).

The check itself (:func:`check_tool_names`) is given the names, so it is a
pure function of the scenario; :func:`run_tool_names` asks the tools what
they are called, so no list of names is kept here. The mock server checks
nothing: its client may be Claude Code, whose tools are not coterie's.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from coterie.models import ScenarioError
from coterie.tools import SkillTool, StructuredOutputTool, tool_names
from coterie.tools.toolsearch import TOOL_SEARCH

if TYPE_CHECKING:
    from collections.abc import Collection

    from coterie.models import Scenario

__all__ = ["MCP_PREFIX", "check_tool_names", "closest_tool", "run_tool_names"]

#: An MCP server's tools are called ``mcp__SERVER__TOOL``; which exist is known
#: only once the server is connected, so any such name passes.
MCP_PREFIX = "mcp__"


def run_tool_names() -> frozenset[str]:
    """Every name a tool of some run answers to, an MCP server's aside."""
    return frozenset({*tool_names(), SkillTool.name, StructuredOutputTool.name, TOOL_SEARCH})


def closest_tool(name: str, known: Collection[str]) -> str | None:
    """The known name *name* most likely misspells, if any is close enough.

    Case is ignored in the comparison (``bash`` and ``BASH`` are ``Bash``), as
    :func:`difflib.get_close_matches` would otherwise find nothing close in a
    name typed in capitals.
    """
    by_folded: dict[str, str] = {}
    for known_name in sorted(known):
        by_folded.setdefault(known_name.casefold(), known_name)
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1)
    return by_folded[close[0]] if close else None


def check_tool_names(scenario: Scenario, known: Collection[str]) -> None:
    """Refuse the first tool use of *scenario* naming no tool in *known*.

    A :class:`~coterie.models.ScenarioError` in one line, naming the file, the
    place and the closest known name. Passes: a known name, an ``mcp__`` one,
    and a name the scenario lists in ``unknown_tools``; a name listed there
    that is known is refused too, since calling it would not test a missing
    tool.
    """
    for name in scenario.unknown_tools:
        if name in known:
            raise ScenarioError(
                f"{scenario.source}: unknown_tools: {name!r} is a tool a run can have;"
                " list only names no tool answers to"
            )
    declared = frozenset(scenario.unknown_tools)
    for place, use in scenario.tool_uses():
        name = use.name
        if name in known or name in declared or name.startswith(MCP_PREFIX):
            continue
        close = closest_tool(name, known)
        hint = f"did you mean {close!r}?" if close else f"the tools: {', '.join(sorted(known))}"
        raise ScenarioError(
            f"{scenario.source}: {place}: no tool is called {name!r}; {hint}"
            ' (a call of a missing tool on purpose is listed in "unknown_tools")'
        )
