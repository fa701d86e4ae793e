"""One MCP server's connection as the agents see it: its state, its tools, its calls.

A :class:`Connection` is shared between the server's supervised actor
(:mod:`coterie.mcpclient.server`), which opens the session, lists the tools
and watches the server, and the agents, whose :class:`McpTool` calls go
through :meth:`Connection.call`. Its status is one of:

- ``starting``: the first connection is being made (no tools yet);
- ``connected``: calls go to the live session;
- ``restarting``: the server stopped or could not be reached; its supervisor
  starts it again after a backoff; its tools (as last listed) answer at once
  that it is unavailable, never hang;
- ``failed``: its supervisor gave up; the tools say so until the host asks
  for a reconnection;
- ``disabled``: the host turned it off (``mcp_toggle``): no session, no tools.

The host (``mcp_reconnect``, ``mcp_toggle``) starts a server over through
:meth:`Connection.restart` and :meth:`Connection.disable`: each is an order
the server's actor takes (:mod:`coterie.mcpclient.server`: it stops the
server's supervisor and starts a fresh one, or none), and each returns once
the actor has acted on it: connected or not, or stopped.

A call in flight when the server dies is an error result saying so: it is
never sent again, since it may have had its effect.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import attrs
import trio

from coterie.mcpclient.results import cap_output, render_content, tool_name
from coterie.tools import Capabilities, Effect, ToolResult

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from mcp.client.session import ClientSession

    from coterie.mcpclient.config import ServerConfig
    from coterie.tools import ToolContext

__all__ = ["WIRE_STATUS", "Connection", "McpTool", "Status"]

Status = Literal["starting", "connected", "restarting", "failed", "disabled"]

#: Each state as Claude Code names a server's (``system/init``, ``mcp_status``): a
#: server being restarted is not working now, as one that failed.
WIRE_STATUS: dict[Status, str] = {
    "starting": "pending",
    "connected": "connected",
    "restarting": "failed",
    "failed": "failed",
    "disabled": "disabled",
}


@attrs.define(eq=False)
class McpTool:
    """One tool of an MCP server, offered as ``mcp__<server>__<tool>``.

    Its effect is :attr:`Effect.EXECUTION` whatever the server's annotations
    say: ``readOnlyHint`` is the server's own claim, so the permission gate
    fails closed and asks (or follows a rule) as for any command.
    """

    capabilities = Capabilities(effect=Effect.EXECUTION)

    connection: Connection
    #: The tool's own name on its server.
    remote: str
    description: str
    input_schema: dict[str, Any]
    name: str = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.name = tool_name(self.connection.name, self.remote)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server (see :meth:`Connection.call`)."""
        return await self.connection.call(self.remote, input)


@attrs.define(eq=False)
class Connection:
    """The state of one server's connection (see the module docstring)."""

    config: ServerConfig
    #: Seconds a call may take (``MCP_TOOL_TIMEOUT``).
    call_timeout: float = math.inf
    #: The most characters of a result the model gets.
    output_limit: int = 100_000
    status: Status = "starting"
    #: The server's ``serverInfo`` of its last handshake (``name``, ``version``).
    server_info: dict[str, Any] = attrs.field(factory=dict)
    #: Why the server is not connected (the last failure), for the model.
    reason: str = ""
    _tools: tuple[McpTool, ...] = ()
    _session: ClientSession | None = None
    #: Set when a call saw the connection break, so the watcher checks at once.
    _suspect: trio.Event = attrs.field(factory=trio.Event)
    #: Whether the host wants the server on (``mcp_toggle``).
    enabled: bool = True
    #: Orders given (:meth:`restart`, :meth:`disable`), and the last one the
    #: server's actor acted on.
    _asked: int = 0
    _served: int = 0
    _order: trio.Event = attrs.field(factory=trio.Event)
    #: Set (and replaced) at every change of state, for those waiting on one.
    _changed: trio.Event = attrs.field(factory=trio.Event)

    @property
    def name(self) -> str:
        return self.config.name

    def tools(self) -> Sequence[McpTool]:
        """The server's tools as last listed (kept while it restarts: they say it is down;
        none while it is disabled)."""
        return () if self.status == "disabled" else self._tools

    def _now(self, status: Status, reason: str = "", session: ClientSession | None = None) -> None:
        self._session, self.status, self.reason = session, status, reason
        self._changed.set()
        self._changed = trio.Event()

    def connected(
        self, session: ClientSession, listed: Sequence[Any], info: Mapping[str, Any] | None = None
    ) -> None:
        """The session is up, *listed* (``mcp.types.Tool``) are its tools and *info* is
        the server's ``serverInfo``."""
        self._suspect = trio.Event()
        self.server_info = dict(info or {})
        self._tools = tuple(
            McpTool(self, t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
            for t in listed
        )
        self._now("connected", session=session)

    def lost(self, reason: str) -> None:
        """The session ended or could not start; the supervisor will start it again."""
        self._now("restarting", reason)

    def gave_up(self, reason: str) -> None:
        """The supervisor will not start the server again, unless the host asks."""
        self._now("failed", reason)

    # -- the host's orders, and the actor's side of them -------------------------------

    async def restart(self) -> Status:
        """Start the server over (``mcp_reconnect``, ``mcp_toggle`` on); the status once
        the actor's first attempt at it is over."""
        self.enabled = True
        return await self._give_order()

    async def disable(self) -> None:
        """Stop the server and hide its tools (``mcp_toggle`` off); return once stopped."""
        self.enabled = False
        await self._give_order()

    async def _give_order(self) -> Status:
        self._asked += 1
        mine = self._asked
        self._order.set()
        while self._served < mine or self.status == "starting":
            await self._changed.wait()
        return self.status

    def next_order(self) -> trio.Event:
        """The actor starts an incarnation of the server (or none, if disabled); the
        event the next order sets."""
        self._order = trio.Event()
        self._served = self._asked
        self._now("starting" if self.enabled else "disabled")
        return self._order

    async def suspected(self) -> None:
        """Wait until a call saw the connection break."""
        await self._suspect.wait()

    def cleared(self) -> None:
        """The watcher found the connection alive (after a suspicion, calls go on)."""
        if self._session is not None and self.status == "restarting":
            self._now("connected", session=self._session)
        if self._suspect.is_set():
            self._suspect = trio.Event()

    def unavailable(self) -> str:
        """What a call is answered while the server is not connected."""
        why = f" ({self.reason})" if self.reason else ""
        if self.status == "failed":
            return (
                f"MCP server {self.name!r} is unavailable{why}: it kept failing and will not"
                " be restarted in this run. Carry on without its tools."
            )
        if self.status == "starting":
            return f"MCP server {self.name!r} is still starting. Try again shortly."
        if self.status == "disabled":
            return f"MCP server {self.name!r} was turned off by the program driving this run."
        return (
            f"MCP server {self.name!r} is unavailable{why}; it is being restarted."
            " Try again shortly, or carry on without it."
        )

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call *tool* once; every failure is an error result, never a retry."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        session = self._session
        if session is None or self.status != "connected":
            return ToolResult(self.unavailable(), is_error=True)
        try:
            with trio.fail_after(self.call_timeout):
                result = await session.call_tool(tool, arguments)
        except trio.TooSlowError:
            return ToolResult(
                f"MCP tool {tool!r} of server {self.name!r} did not answer within"
                f" {self.call_timeout:g} s (MCP_TOOL_TIMEOUT); it may still have had its effect.",
                is_error=True,
            )
        except MCPError as exc:
            if self._session is session and exc.error.code != CONNECTION_CLOSED:
                # A JSON-RPC error from a live server (unknown tool, bad params).
                return ToolResult(f"MCP server {self.name!r}: {exc}", is_error=True)
            return self._broken(tool, str(exc), session)
        except Exception as exc:  # the transport broke (a process gone, a refused socket)
            return self._broken(tool, f"{type(exc).__name__}: {exc}", session)
        content = render_content(
            list(getattr(result, "content", []) or []), getattr(result, "structured_content", None)
        )
        text = cap_output(content, self.output_limit)
        return ToolResult(text or "(no output)", is_error=bool(getattr(result, "is_error", False)))

    def _broken(self, tool: str, why: str, session: ClientSession) -> ToolResult:
        # Unavailable from now on, until the watcher finds it alive or it is restarted
        # (unless the session was already let go of: turned off, or started anew).
        if self._session is session and self.status == "connected":
            self.status, self.reason = "restarting", why
            self._suspect.set()
        return ToolResult(
            f"MCP server {self.name!r} stopped during the call of {tool!r} ({why}). The call"
            " may or may not have had its effect and was not retried; the server is being"
            " restarted.",
            is_error=True,
        )
