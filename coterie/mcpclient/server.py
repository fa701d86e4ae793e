"""The supervised actor of one MCP server: connect, list its tools, watch it.

:func:`server_spec` is the child the run's ``services`` supervisor starts
for a server: a supervisor of its own (so its crashes are counted apart
from every other service's) restarting, with exponential backoff, a worker
that opens the transport (a child process over stdio, recorded and ended
as every child process of the run: :mod:`coterie.mcpclient.stdio`, its
stderr kept in the run's ``mcp/<server>.log``; or streamable HTTP; or, for
an ``sdk`` server, the host's control channel:
:mod:`coterie.mcpclient.hosted`), initialises the session, lists the tools
and hands them to the :class:`~coterie.mcpclient.connection.Connection`.
It reports started once that first attempt is over, connected or not, so
the agents start with the tools of the servers that came up (as Claude Code
waits for its servers).
The worker then watches the session: a ping after each interval, at once
when a call saw the connection break; a failed ping is a crash, and the
supervisor starts the server again after its backoff. When the supervisor
gives up, the connection says so. The host's orders (``mcp_reconnect``,
``mcp_toggle``: :meth:`~coterie.mcpclient.connection.Connection.restart`)
stop that supervisor and start a fresh one (its restart count anew), or none
while the server is disabled.
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import CoterieError
from coterie.mcpclient.config import HttpServer, SdkServer, StdioServer, config_type
from coterie.mcpclient.hosted import hosted_client
from coterie.mcpclient.stdio import stdio_client
from coterie.supervisors import (
    AutoShutdown,
    Backoff,
    ChildSpec,
    Restart,
    Strategy,
    Supervisor,
    SupervisorGaveUp,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.mcpclient.connection import Connection
    from coterie.mcpclient.hosted import McpHost

__all__ = ["McpServerDown", "Timing", "server_spec"]


class McpServerDown(CoterieError, ConnectionError):
    """An MCP server could not be reached, or stopped answering (a crash of its actor)."""


@attrs.frozen
class Timing:
    """How long a server is waited for, and how its restarts are paced."""

    #: Seconds to connect and list the tools (``MCP_TIMEOUT``).
    startup: float = 30.0
    #: Seconds between pings of an idle connection.
    ping_every: float = 5.0
    #: Seconds a ping may take.
    ping_timeout: float = 10.0
    backoff: Backoff = attrs.field(factory=lambda: Backoff(initial=0.5, factor=2.0, max=30.0))
    #: The supervisor gives up after this many restarts within ``period`` seconds.
    max_restarts: int = 5
    period: float = 60.0


def server_spec(
    connection: Connection,
    *,
    workdir: Path,
    logs: Path,
    events: EventLog | None,
    timing: Timing | None = None,
    host: McpHost | None = None,
    records: Path | None = None,
) -> ChildSpec:
    """The child running *connection*'s server under a restarting supervisor of its own
    (a stdio server's stderr goes to ``logs/<server>.log`` and its process group is
    recorded in *records*, the run's ``procgroups/``; an ``sdk`` server is reached
    through *host*)."""
    name, timing = connection.name, timing or Timing()
    if isinstance(connection.config, StdioServer):
        logs.mkdir(parents=True, exist_ok=True)

    async def worker(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        where = _Where(workdir, logs, host, records)
        await _serve(connection, where, events, timing, task_status)

    def incarnation() -> Supervisor:
        child = ChildSpec(
            f"mcp-{name}", worker, restart=Restart.TRANSIENT, significant=True,
            reports_started=True,
        )  # fmt: skip
        return Supervisor(
            f"mcp-{name}-sup",
            [child],
            strategy=Strategy.ONE_FOR_ONE,
            max_restarts=timing.max_restarts,
            period=timing.period,
            backoff=timing.backoff,
            auto_shutdown=AutoShutdown.ANY_SIGNIFICANT,
            events=events,
        )

    async def supervise(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await incarnation().run(task_status=task_status)
        except SupervisorGaveUp as exc:
            connection.gave_up(connection.reason or str(exc))
            if events is not None:
                events.emit("mcp.failed", server=name, reason=connection.reason, final=True)

    async def start(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        # One incarnation of the server at a time, a fresh one at each of the host's
        # orders (its restart count starts over): none while it is disabled.
        while True:
            order = connection.next_order()
            async with trio.open_nursery() as nursery:
                if connection.enabled:
                    await nursery.start(supervise)
                task_status.started()
                task_status = trio.TASK_STATUS_IGNORED
                await order.wait()
                nursery.cancel_scope.cancel()

    return ChildSpec(
        f"mcp-{name}-sup", start, restart=Restart.TRANSIENT, kind="supervisor", reports_started=True
    )


@attrs.frozen
class _Where:
    """Where a server's transport is opened: its working directory, its log folder,
    the host (for an ``sdk`` server), where its process group is recorded (stdio)."""

    workdir: Path
    logs: Path
    host: McpHost | None
    records: Path | None


async def _serve(
    connection: Connection,
    where: _Where,
    events: EventLog | None,
    timing: Timing,
    task_status: trio.TaskStatus[None],
) -> None:
    from mcp.client.session import ClientSession

    started = False
    try:
        async with (
            _transport(connection, where) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            with trio.fail_after(timing.startup):
                started_with = await session.initialize()
                listed = await session.list_tools()
            info = getattr(started_with, "server_info", None)
            about = {"name": info.name, "version": info.version} if info else None
            connection.connected(session, listed.tools, about)
            if events is not None:
                events.emit(
                    "mcp.connected",
                    server=connection.name,
                    transport=_kind(connection),
                    tools=[t.name for t in connection.tools()],
                )
            task_status.started()
            started = True
            await _watch(connection, session, timing)
    except (Exception, trio.TooSlowError) as exc:
        reason = _reason(exc)
        connection.lost(reason)
        if events is not None:
            events.emit("mcp.failed", server=connection.name, reason=reason, final=False)
        if not started:
            task_status.started()
        raise McpServerDown(f"MCP server {connection.name!r}: {reason}") from exc


async def _watch(connection: Connection, session: Any, timing: Timing) -> None:
    """Return never; raise once the server stops answering pings (a host's server is
    pinged only when a call saw it break: it lives as long as its host)."""
    every = math.inf if isinstance(connection.config, SdkServer) else timing.ping_every
    while True:
        with trio.move_on_after(every):
            await connection.suspected()
        with trio.fail_after(timing.ping_timeout):
            await session.send_ping()
        connection.cleared()


@contextlib.asynccontextmanager
async def _transport(connection: Connection, where: _Where) -> AsyncIterator[Any]:
    config, workdir, logs = connection.config, where.workdir, where.logs
    if isinstance(config, SdkServer):
        if where.host is None:  # McpServers keeps no sdk server without a host
            raise McpServerDown(f"MCP server {config.name!r} lives in a host, and none is here")
        async with hosted_client(where.host, config.name) as streams:
            yield streams
        return
    if isinstance(config, StdioServer):
        with (logs / f"{config.name}.log").open("a", encoding="utf-8") as errlog:
            async with stdio_client(
                config, cwd=workdir, errlog=errlog, records=where.records
            ) as streams:
                yield streams
        return
    assert isinstance(config, HttpServer)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # The MCP transports' own defaults: a server may hold a response stream open.
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as client,
        streamable_http_client(config.url, http_client=client) as streams,
    ):
        yield streams


def _kind(connection: Connection) -> str:
    return config_type(connection.config)


def _reason(exc: BaseException) -> str:
    """The first leaf of *exc* (an exception group's), in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, trio.TooSlowError):
        return "it did not answer in time"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
