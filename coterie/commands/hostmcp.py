"""The host's requests about the run's MCP servers: ``mcp_status``, ``mcp_reconnect``,
``mcp_toggle`` (an Agent SDK's ``get_mcp_status``, ``reconnect_mcp_server``,
``toggle_mcp_server``).

Each acts on the run's :class:`~coterie.mcpclient.McpServers` once the run is
open. ``mcp_status`` answers ``{"mcpServers": [...]}``, each server as Claude
Code describes it (``name``, ``status``, ``serverInfo``, ``error``,
``transport``, ``source``, ``tools``). ``mcp_reconnect`` (``serverName``)
starts a server over and answers once it is connected, or with an error
saying why not. ``mcp_toggle`` (``serverName``, ``enabled``) stops a server
and takes its tools from the agents, or starts it again. A server the run
does not have, or a request missing its fields, is an error answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.hostlink import Handler, Request
    from coterie.mcpclient import Connection, McpServers

__all__ = ["mcp_handlers"]


def mcp_handlers(servers: Callable[[], Awaitable[McpServers]]) -> dict[str, Handler]:
    """The handlers of the MCP requests, acting on the servers *servers* gives (it
    waits for the run to open)."""

    async def named(request: Request) -> Connection:
        name = request.body.get("serverName")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{request.subtype} needs serverName, the name of an MCP server")
        return (await servers()).find(name)  # UnknownServer: the host's error answer

    async def mcp_status(request: Request) -> dict[str, Any]:
        return {"mcpServers": (await servers()).status()}

    async def mcp_reconnect(request: Request) -> dict[str, Any]:
        connection = await named(request)
        if not connection.enabled:
            raise ValueError(
                f"MCP server {connection.name!r} is turned off; mcp_toggle turns it on again"
            )
        await _connect(connection)
        return {}

    async def mcp_toggle(request: Request) -> dict[str, Any]:
        enabled = request.body.get("enabled")
        if not isinstance(enabled, bool):
            raise ValueError(f"mcp_toggle needs enabled, true or false, not {enabled!r}")
        connection = await named(request)
        if not enabled:
            await connection.disable()
        elif not (connection.enabled and connection.status == "connected"):
            await _connect(connection)
        return {}

    return {"mcp_status": mcp_status, "mcp_reconnect": mcp_reconnect, "mcp_toggle": mcp_toggle}


async def _connect(connection: Connection) -> None:
    """Start *connection*'s server over; an error saying why if it did not connect."""
    if await connection.restart() != "connected":
        why = f": {connection.reason}" if connection.reason else ""
        raise RuntimeError(f"MCP server {connection.name!r} did not connect{why}")
