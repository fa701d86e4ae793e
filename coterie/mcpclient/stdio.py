"""The stdio transport to an MCP server: a child process coterie starts and ends.

The server runs through :func:`coterie.processes.open_group`, the owner of
every child process's lifetime: in a process group of its own, recorded in
the run's ``procgroups/`` before it runs (a start after a kill -9 of coterie
kills it, even in the middle of a call), and the whole group ended when the
connection closes -- the server and whatever helpers it started.
:func:`stdio_client` is that process as the pair of streams every ``mcp``
transport yields: newline-delimited JSON-RPC on the server's standard input
and output, its standard error in the log file given. The ``mcp`` package's
own ``stdio_client`` starts the process itself, out of coterie's reach; this
one uses only the package's public message types.

Closing follows MCP's shutdown: the server's standard input is closed, the
server has a short grace to exit by itself; then its group is ended
(SIGTERM, a short grace, SIGKILL), so a helper that outlives a server
exiting on end-of-file goes too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from typing import IO, TYPE_CHECKING, Any

import anyio
import trio

from coterie.processes import open_group

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from coterie.mcpclient.config import StdioServer

__all__ = ["EXIT_GRACE", "KILL_GRACE", "stdio_client"]

#: Seconds a server has to exit by itself once its standard input is closed.
EXIT_GRACE = 2.0
#: Seconds its group has between SIGTERM and SIGKILL (short: both graces fit in a
#: worker's shutdown time, so a stop of the run never abandons the clean-up).
KILL_GRACE = 1.0


def _message(line: bytes) -> SessionMessage | Exception:
    """One line of the server's output as the session reads it (an error as a value)."""
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


def _found(command: str, cwd: Path, path: str | None) -> None:
    """FileNotFoundError unless *command* names a program that can run (the gate would
    only say so on the server's standard error)."""
    where = command if "/" not in command else str(cwd / command)
    if shutil.which(where, path=path if "/" not in command else None) is None:
        raise FileNotFoundError(f"no program {command!r} to run")


@contextlib.asynccontextmanager
async def stdio_client(
    config: StdioServer, *, cwd: Path, errlog: IO[str], records: Path | None
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]]:
    """The streams of a connection to *config*'s server, started in *cwd* (its group
    recorded in *records*), while the block runs."""
    from mcp.shared.message import SessionMessage

    # The user's environment, then the server's own `env` over it, as Claude Code
    # passes them (the mcp package's client passes a few default variables only).
    env = dict(os.environ) | dict(config.env)
    _found(config.command, cwd, env.get("PATH", os.defpath))
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    async with (
        open_group(
            [config.command, *config.args],
            cwd=cwd,
            records=records,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            grace=KILL_GRACE,
        ) as proc,
        to_session,
        read_stream,
        write_stream,
        from_session,
    ):
        assert proc.stdin is not None
        assert proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        async def read() -> None:
            # The server's output is read to its end, even once the session is gone,
            # so that a server flushing on its way out never blocks on a full pipe.
            buffer, delivering = b"", True
            with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                while chunk := await stdout.receive_some(65536):
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for line in lines:
                        if delivering and line.strip():
                            try:
                                await to_session.send(_message(line))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                delivering = False
            await to_session.aclose()  # end of output: the session sees the connection end

        async def write() -> None:
            try:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send_all(data.encode() + b"\n")
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                await to_session.aclose()  # the server stopped reading: the connection is over

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            nursery.start_soon(write)
            try:
                yield read_stream, write_stream
            finally:
                with trio.CancelScope(shield=True):
                    await read_stream.aclose()
                    await write_stream.aclose()
                    await stdin.aclose()
                    with trio.move_on_after(EXIT_GRACE):
                        await proc.wait()
                nursery.cancel_scope.cancel()
        # Leaving open_group ends the whole group: the helpers of a server that exited.
