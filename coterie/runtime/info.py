"""What a started run tells its caller about itself (stream-json's ``system/init``).

:func:`run_info` reads it off the run's parts once its tree has started:
the lead's tools (as its loop is given them, MCP tools included), the MCP
servers and their state (as Claude Code's ``system/init`` lists them:
``name``, ``status``, and ``source`` ``sdk`` for a server the host serves),
the slash commands and the subagent types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.runtime.tree import lead_registry
from coterie.tools import SUBAGENT_TYPES

if TYPE_CHECKING:
    from coterie.runtime.agents import Agents
    from coterie.team import Team

__all__ = ["run_info"]

#: What ``system/init`` says of each MCP server (``mcp_status`` says more).
_INIT_FIELDS = ("name", "status", "source")


def run_info(agents: Agents, team: Team | None) -> dict[str, Any]:
    """``tools``, ``mcp_servers`` (``name`` and ``status``), ``slash_commands`` and
    ``agents`` (the subagent types, built-in then custom) of the run, now."""
    extensions = agents.prepared.extensions
    return {
        "tools": agents.tools(lead_registry(agents, team), "lead").names(),
        "mcp_servers": [
            {k: v for k, v in server.items() if k in _INIT_FIELDS} for server in agents.mcp.status()
        ],
        "slash_commands": sorted(extensions.commands),
        "agents": [*SUBAGENT_TYPES, *(n for n in extensions.agents if n not in SUBAGENT_TYPES)],
        # coterie has no output styles: replies are in its one default style.
        "output_style": "default",
    }
