"""What a started run tells its caller about itself (stream-json's ``system/init``).

:func:`run_info` reads it off the run's parts once its tree has started:
the lead's tools (as its loop is given them, MCP tools included), the MCP
servers and their state (as Claude Code's ``system/init`` lists them:
``name``, ``status``, and ``source`` ``sdk`` for a server the host serves),
the slash commands (the command files' and the skills' the user may
invoke as ``/name``), the skills (``skills``: as Claude Code 2.1 lists them,
those with a description of their own that the user may invoke), the
subagent types and the output style.

``output_style`` is the name the settings' ``outputStyle`` gave, as written
(Claude Code echoes it so, and SDK hosts check it), ``default`` when none
did; a name no style has was a notice, and the run answers in ``default``
(:mod:`coterie.agent.outputstyles`). ``available_output_styles`` (which
Claude Code gives in its answer to ``initialize``) lists the styles the run
knows: the built-ins, then the user's and the trusted workspace's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.agent.outputstyles import DEFAULT_STYLE
from coterie.extensions.commands import invocable
from coterie.runtime.tree import lead_registry
from coterie.tools import SUBAGENT_TYPES

if TYPE_CHECKING:
    from coterie.runtime.agents import Agents
    from coterie.team import Team

__all__ = ["run_info"]

#: What ``system/init`` says of each MCP server (``mcp_status`` says more).
_INIT_FIELDS = ("name", "status", "source")


def run_info(agents: Agents, team: Team | None) -> dict[str, Any]:
    """``tools``, ``mcp_servers`` (``name`` and ``status``), ``slash_commands``,
    ``skills``, ``agents`` (the subagent types, built-in then custom) and the output
    styles (``output_style``, ``available_output_styles``) of the run, now."""
    extensions = agents.prepared.extensions
    return {
        "tools": agents.tools(lead_registry(agents, team), "lead").offered(),
        "mcp_servers": [
            {k: v for k, v in server.items() if k in _INIT_FIELDS} for server in agents.mcp.status()
        ],
        "slash_commands": sorted(invocable(extensions.commands, extensions.skills)),
        "skills": sorted(
            name
            for name, skill in extensions.skills.items()
            if skill.described and skill.user_invocable
        ),
        "agents": [*SUBAGENT_TYPES, *(n for n in extensions.agents if n not in SUBAGENT_TYPES)],
        "plugins": [plugin.to_json() for plugin in extensions.plugins],
        "output_style": agents.prepared.settings.output_style or DEFAULT_STYLE,
        "available_output_styles": list(extensions.output_styles or (DEFAULT_STYLE,)),
    }
