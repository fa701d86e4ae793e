"""The MCP servers of one run: their connections, their tools, their actors.

:class:`McpServers` is built by the composition root from the servers the
preparation found. It is the :class:`~coterie.tools.ToolSource` every
agent's registry is joined with (each agent sees, on every request, the
tools of the servers as they are now) and gives the ``services``
supervisor one child per server (:func:`~coterie.mcpclient.server.server_spec`).
An ``sdk`` server is reached through the host it is built with; without one
(no program drives the run over ``--input-format stream-json``) it is
skipped, and :attr:`McpServers.notices` says so once. :meth:`McpServers.status`
describes the servers as Claude Code's ``mcp_status`` answer does.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import attrs

from coterie.mcpclient.config import SdkServer, config_type
from coterie.mcpclient.connection import WIRE_STATUS, Connection
from coterie.mcpclient.results import output_limit
from coterie.mcpclient.server import Timing, server_spec

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.mcpclient.config import ServerConfig
    from coterie.mcpclient.connection import McpTool
    from coterie.mcpclient.hosted import McpHost
    from coterie.supervisors import ChildSpec

__all__ = ["McpServers", "UnknownServer", "seconds_from_env"]


class UnknownServer(LookupError):
    """A host named an MCP server the run does not have."""


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
    #: The program driving the run, which serves its ``sdk`` servers.
    host: McpHost | None = None
    #: What the user is told once (``sdk`` servers skipped for want of a host).
    notices: tuple[str, ...] = ()
    #: Where the stdio servers' process groups are recorded (the run's ``procgroups/``),
    #: so that a start after a kill -9 kills them; None: not recorded.
    process_groups: Path | None = None

    @classmethod
    def of(
        cls,
        configs: Sequence[ServerConfig],
        env: Mapping[str, str] | None = None,
        *,
        host: McpHost | None = None,
        process_groups: Path | None = None,
    ) -> McpServers:
        """Connections for *configs*, with the timeouts and output cap *env* sets
        (``MCP_TIMEOUT``, ``MCP_TOOL_TIMEOUT`` in milliseconds, ``MAX_MCP_OUTPUT_TOKENS``);
        the ``sdk`` ones through *host* (skipped without one); the stdio servers' process
        groups recorded in *process_groups*."""
        env = os.environ if env is None else env
        call_timeout = seconds_from_env(env, "MCP_TOOL_TIMEOUT", 600.0)
        limit = output_limit(env)
        timing = Timing(startup=seconds_from_env(env, "MCP_TIMEOUT", 30.0))
        hostless = [c.name for c in configs if isinstance(c, SdkServer) and host is None]
        connections = tuple(
            Connection(config, call_timeout=call_timeout, output_limit=limit)
            for config in configs
            if config.name not in hostless
        )
        notices: tuple[str, ...] = ()
        if hostless:
            notices = (
                f"MCP server{'s' if len(hostless) > 1 else ''} {', '.join(hostless)} of type"
                " 'sdk' skipped: such a server lives in the program driving the run, and no"
                " program drives this one (--input-format stream-json)",
            )
        return cls(connections, timing, host, notices, process_groups)

    def tools(self) -> list[McpTool]:
        """Every server's tools as they are now (a restarting server's too: they say so)."""
        return [tool for connection in self.connections for tool in connection.tools()]

    def specs(self, *, workdir: Path, logs: Path, events: EventLog | None) -> list[ChildSpec]:
        """One supervised child per server, for the ``services`` supervisor."""
        return [
            server_spec(
                c,
                workdir=workdir,
                logs=logs,
                events=events,
                timing=self.timing,
                host=self.host,
                records=self.process_groups,
            )
            for c in self.connections
        ]

    def find(self, name: str) -> Connection:
        """The connection of server *name* (:class:`UnknownServer` if there is none)."""
        for connection in self.connections:
            if connection.name == name:
                return connection
        known = ", ".join(c.name for c in self.connections) or "none"
        raise UnknownServer(f"no MCP server named {name!r} in this run (servers: {known})")

    def status(self) -> list[dict[str, Any]]:
        """Each server as Claude Code describes it (``mcp_status``, ``system/init``)."""
        return [_described(c) for c in self.connections]


def _described(connection: Connection) -> dict[str, Any]:
    kind = config_type(connection.config)
    status = WIRE_STATUS[connection.status]
    entry: dict[str, Any] = {"name": connection.name, "status": status}
    if status == "connected" and connection.server_info:
        entry["serverInfo"] = dict(connection.server_info)
    if status == "failed" and connection.reason:
        entry["error"] = connection.reason
    entry["transport"] = kind
    if kind == "sdk":  # given by the host for this process alone, as Claude Code says
        entry["scope"], entry["source"] = "dynamic", "sdk"
    if status == "connected":
        entry["tools"] = [{"name": t.remote} for t in connection.tools()]
    return entry
