"""HTTP/1.1 on a Trio stream with h11: read one request whole, send a response.

The small I/O half shared by coterie's two local servers, ``coterie
mock-server`` (:mod:`coterie.models.mock_server`) and ``coterie observe``
(:mod:`coterie.observe`): what a request or a response *means* stays with
each server; this module only moves h11 events over a stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import h11

if TYPE_CHECKING:
    import trio

__all__ = ["next_event", "read_request", "send_response"]

RECEIVE_BYTES = 65536


async def next_event(stream: trio.SocketStream, conn: h11.Connection) -> Any:
    """The connection's next h11 event, reading from *stream* as it needs bytes."""
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await stream.receive_some(RECEIVE_BYTES))


async def read_request(
    stream: trio.SocketStream, conn: h11.Connection, max_body: int
) -> tuple[h11.Request, bytes | None] | None:
    """The next request and its body (None for a body over *max_body* bytes), or
    None if the connection ended first."""
    request = await next_event(stream, conn)
    if not isinstance(request, h11.Request):
        return None
    body = bytearray()
    while isinstance(event := await next_event(stream, conn), h11.Data):
        body += event.data
        if len(body) > max_body:
            return request, None
    if not isinstance(event, h11.EndOfMessage):
        return None
    return request, bytes(body)


async def send_response(
    stream: trio.SocketStream,
    conn: h11.Connection,
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes = b"",
) -> None:
    """Send a whole response: its head, *body* (if any) and its end."""
    await stream.send_all(conn.send(h11.Response(status_code=status, headers=headers)))
    if body:
        await stream.send_all(conn.send(h11.Data(data=body)))
    await stream.send_all(conn.send(h11.EndOfMessage()))
