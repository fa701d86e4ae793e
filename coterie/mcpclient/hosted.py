"""An MCP server that lives in the host program: its transport is the control channel.

An Agent SDK host serves its in-process servers (``create_sdk_mcp_server``,
configured as ``{"type": "sdk"}``) over Claude Code's control protocol: each
JSON-RPC message of the client is one ``mcp_message`` request to the host,
``{"server_name": NAME, "message": MESSAGE}``, and the host answers a
request's with ``{"mcp_response": RESPONSE}``. Notifications go the same way
(``notifications/initialized``, ``notifications/cancelled``: the host acks
them). :func:`hosted_client` is that transport as the pair of streams every
``mcp`` transport yields, so a ``ClientSession`` runs over it as over stdio:
the server's actor, its supervision and its tools are the same for every
transport. :func:`answer_of` reads the host's answer (pure).

Requests go out concurrently (a long tool call holds up nothing), each with
no deadline of its own: the caller's bounds it (``MCP_TOOL_TIMEOUT``, the
start-up and ping timeouts); notifications go in order, each acked (or given
up on) before the next message is sent, so ``notifications/initialized``
reaches the host before the requests that follow it. A host that is gone
ends the connection (the session sees its end, as a dead process's); an
error answer, or an answer that is not a JSON-RPC response to that request,
is a JSON-RPC error for that request alone.
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from coterie.hostlink import Response

__all__ = ["NOTIFY_SECONDS", "McpHost", "answer_of", "hosted_client"]

#: How long a notification waits for the host's ack before the next message goes.
NOTIFY_SECONDS = 10.0


class McpHost(Protocol):
    """The control channel to the host (:class:`~coterie.hostlink.HostLink`)."""

    async def ask(
        self, subtype: str, body: dict[str, Any], *, answer_within: float
    ) -> Response | None: ...


def answer_of(response: Response, request_id: Any, server: str) -> SessionMessage:
    """The JSON-RPC message the session reads for the host's *response* to request
    *request_id* of *server*: the host's own, or an error for that request."""
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCError, JSONRPCResponse, jsonrpc_message_adapter

    if response.outcome == "error":
        return _error(request_id, f"the host could not deliver it to {server!r}: {response.error}")
    raw = response.body.get("mcp_response")
    try:
        message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValueError:
        message = None
    if not isinstance(message, JSONRPCResponse | JSONRPCError) or message.id != request_id:
        return _error(
            request_id,
            f"the host answered for {server!r} in a shape coterie cannot read ({str(raw)[:120]})",
        )
    return SessionMessage(message)


def _error(request_id: Any, text: str) -> SessionMessage:
    from mcp.shared.message import SessionMessage
    from mcp.types import INTERNAL_ERROR, ErrorData, JSONRPCError

    error = ErrorData(code=INTERNAL_ERROR, message=text)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@contextlib.asynccontextmanager
async def hosted_client(
    host: McpHost, server: str
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]]:
    """The streams of a connection to the host's server *server*, while the block runs."""
    from mcp.shared.message import SessionMessage

    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    def body(payload: dict[str, Any]) -> dict[str, Any]:
        return {"server_name": server, "message": payload}

    async def deliver(message: SessionMessage) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(message)

    async def request(
        payload: dict[str, Any], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        # Started before the frame is written: the host reads the requests in order.
        task_status.started()
        response = await host.ask("mcp_message", body(payload), answer_within=math.inf)
        if response is None:  # the host is gone: so is the connection
            await to_session.aclose()
            return
        await deliver(answer_of(response, payload["id"], server))

    async def forward(nursery: trio.Nursery) -> None:
        async with from_session:
            async for item in from_session:
                payload = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                if "method" in payload and "id" in payload:
                    await nursery.start(request, payload)
                else:  # a notification (or an answer): acked in order, nothing to read
                    await host.ask("mcp_message", body(payload), answer_within=NOTIFY_SECONDS)

    async with trio.open_nursery() as nursery, to_session, read_stream, write_stream:
        nursery.start_soon(forward, nursery)
        try:
            yield read_stream, write_stream
        finally:
            nursery.cancel_scope.cancel()
