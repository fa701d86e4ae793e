"""The MCP servers of one run: their connections, their tools, their actors.

:class:`McpServers` is built by the composition root from the servers the
preparation found. It is the :class:`~coterie.tools.ToolSource` every
agent's registry is joined with (each agent sees, on every request, the
tools of the servers as they are now) and gives the ``services``
supervisor one child per server (:func:`~coterie.mcpclient.server.server_spec`).
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import attrs

from coterie.mcpclient.connection import Connection
from coterie.mcpclient.results import output_limit
from coterie.mcpclient.server import Timing, server_spec

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.mcpclient.config import ServerConfig
    from coterie.mcpclient.connection import McpTool
    from coterie.supervisors import ChildSpec

__all__ = ["McpServers", "seconds_from_env"]


def seconds_from_env(env: Mapping[str, str], key: str, default: float) -> float:
    """*key* in *env* as milliseconds (Claude Code's unit), in seconds; else *default*."""
    try:
        value = float(env[key]) / 1000
    except (KeyError, ValueError):
        return default
    return value if value > 0 and math.isfinite(value) else default


@attrs.define(eq=False)
class McpServers:
    """The run's MCP connections, in configuration order."""

    connections: tuple[Connection, ...]
    timing: Timing = attrs.field(factory=Timing)

    @classmethod
    def of(
        cls, configs: Sequence[ServerConfig], env: Mapping[str, str] | None = None
    ) -> McpServers:
        """Connections for *configs*, with the timeouts and output cap *env* sets
        (``MCP_TIMEOUT``, ``MCP_TOOL_TIMEOUT`` in milliseconds, ``MAX_MCP_OUTPUT_TOKENS``)."""
        env = os.environ if env is None else env
        call_timeout = seconds_from_env(env, "MCP_TOOL_TIMEOUT", 600.0)
        limit = output_limit(env)
        timing = Timing(startup=seconds_from_env(env, "MCP_TIMEOUT", 30.0))
        connections = tuple(
            Connection(config, call_timeout=call_timeout, output_limit=limit) for config in configs
        )
        return cls(connections, timing)

    def tools(self) -> list[McpTool]:
        """Every server's tools as they are now (a restarting server's too: they say so)."""
        return [tool for connection in self.connections for tool in connection.tools()]

    def specs(self, *, workdir: Path, logs: Path, events: EventLog | None) -> list[ChildSpec]:
        """One supervised child per server, for the ``services`` supervisor."""
        return [
            server_spec(c, workdir=workdir, logs=logs, events=events, timing=self.timing)
            for c in self.connections
        ]
