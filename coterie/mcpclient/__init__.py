"""MCP servers: their configuration, their supervised connections, their tools.

This package owns the client side of the Model Context Protocol, on the
``mcp`` package (AnyIO, so it runs under Trio): reading servers from Claude
Code's configuration files (``config``), each server's connection and the
tools it offers as ``mcp__<server>__<tool>`` (``connection``, ``results``),
the supervised actor that connects, lists and watches one server
(``server``) and the run's set of them (``servers``); the transport to a
server run as a child process (``stdio``, its lifetime owned by
:mod:`coterie.processes`) and to one that lives in the host program driving
the run (``hosted``, over the control channel it is given). It gives the
runtime tools and child specs; it must not know of agents, mailboxes or
the permission policy (its tools go through the gate like any other).
"""

from coterie.mcpclient.config import (
    HttpServer,
    McpConfigError,
    ServerConfig,
    StdioServer,
    expand,
    load_servers,
    parse_servers,
)
from coterie.mcpclient.connection import Connection, McpTool, Status
from coterie.mcpclient.results import cap_output, render_content, tool_name
from coterie.mcpclient.server import McpServerDown, Timing, server_spec
from coterie.mcpclient.servers import McpServers, seconds_from_env

__all__ = [
    "Connection",
    "HttpServer",
    "McpConfigError",
    "McpServerDown",
    "McpServers",
    "McpTool",
    "ServerConfig",
    "Status",
    "StdioServer",
    "Timing",
    "cap_output",
    "expand",
    "load_servers",
    "parse_servers",
    "render_content",
    "seconds_from_env",
    "server_spec",
    "tool_name",
]
