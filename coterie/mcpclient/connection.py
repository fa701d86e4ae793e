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
- ``failed``: its supervisor gave up; the tools say so for the rest of the run.

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
    from collections.abc import Sequence

    from mcp.client.session import ClientSession

    from coterie.mcpclient.config import ServerConfig
    from coterie.tools import ToolContext

__all__ = ["Connection", "McpTool", "Status"]

Status = Literal["starting", "connected", "restarting", "failed"]


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
    #: Why the server is not connected (the last failure), for the model.
    reason: str = ""
    _tools: tuple[McpTool, ...] = ()
    _session: ClientSession | None = None
    #: Set when a call saw the connection break, so the watcher checks at once.
    _suspect: trio.Event = attrs.field(factory=trio.Event)

    @property
    def name(self) -> str:
        return self.config.name

    def tools(self) -> Sequence[McpTool]:
        """The server's tools as last listed (kept while it restarts: they say it is down)."""
        return self._tools

    def connected(self, session: ClientSession, listed: Sequence[Any]) -> None:
        """The session is up and *listed* (``mcp.types.Tool``) are its tools."""
        self._session, self.status, self.reason = session, "connected", ""
        self._suspect = trio.Event()
        self._tools = tuple(
            McpTool(self, t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
            for t in listed
        )

    def lost(self, reason: str) -> None:
        """The session ended or could not start; the supervisor will start it again."""
        self._session, self.status, self.reason = None, "restarting", reason

    def gave_up(self, reason: str) -> None:
        """The supervisor will not start the server again in this run."""
        self._session, self.status, self.reason = None, "failed", reason

    async def suspected(self) -> None:
        """Wait until a call saw the connection break."""
        await self._suspect.wait()

    def cleared(self) -> None:
        """The watcher found the connection alive (after a suspicion, calls go on)."""
        if self._session is not None and self.status == "restarting":
            self.status, self.reason = "connected", ""
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
            return self._broken(tool, str(exc))
        except Exception as exc:  # the transport broke (a process gone, a refused socket)
            return self._broken(tool, f"{type(exc).__name__}: {exc}")
        content = render_content(
            list(getattr(result, "content", []) or []), getattr(result, "structured_content", None)
        )
        text = cap_output(content, self.output_limit)
        return ToolResult(text or "(no output)", is_error=bool(getattr(result, "is_error", False)))

    def _broken(self, tool: str, why: str) -> ToolResult:
        # Unavailable from now on, until the watcher finds it alive or it is restarted.
        self.status, self.reason = "restarting", why
        self._suspect.set()
        return ToolResult(
            f"MCP server {self.name!r} stopped during the call of {tool!r} ({why}). The call"
            " may or may not have had its effect and was not retried; the server is being"
            " restarted.",
            is_error=True,
        )
