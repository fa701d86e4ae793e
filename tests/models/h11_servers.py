"""Small HTTP/1.1 servers on Trio and h11 for the thin client's tests.

:func:`start_origin` serves answers a test scripts per request (and can close a
kept-alive connection behind the client's back, or drop one unanswered);
:func:`start_proxy` is a forward proxy that records what it is asked: an
absolute-form request it answers itself, a ``CONNECT`` it refuses with 403 or
turns into a real tunnel to 127.0.0.1. Both count the TCP connections they
accepted. Real sockets on 127.0.0.1, no sleeps.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Literal

import attrs
import h11
import trio

if TYPE_CHECKING:
    import ssl
    from collections.abc import Awaitable, Callable

__all__ = ["Answer", "Origin", "Proxy", "Seen", "start_origin", "start_proxy"]


@attrs.frozen
class Seen:
    """A request as a server read it, and which of its connections (1-based) carried it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int


@attrs.frozen
class Answer:
    """What the origin answers. *then*: ``keep`` the connection alive, ``close`` it
    right after the response (without saying so: a client that keeps it finds it
    dead), or ``drop`` it without answering at all."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b"ok"
    then: Literal["keep", "close", "drop"] = "keep"


@attrs.define
class _Server:
    port: int
    requests: list[Seen] = attrs.Factory(list)
    connections: int = 0
    #: Set each time the server has closed a connection itself (``close``/``drop``).
    closed: trio.Event = attrs.Factory(trio.Event)


@attrs.define
class Origin(_Server):
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"


@attrs.define
class Proxy(_Server):
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def _read_request(
    stream: trio.abc.Stream, conn: h11.Connection
) -> tuple[h11.Request, bytes] | None:
    """The next request and its body, or None when the client is gone."""
    request: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            conn.receive_data(bytes(data))
            continue
        if isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, body
        elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None


def _seen(request: h11.Request, body: bytes, connection: int) -> Seen:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
    return Seen(request.method.decode(), request.target.decode(), headers, body, connection)


async def _send(conn: h11.Connection, stream: trio.abc.Stream, answer: Answer) -> None:
    headers = [*answer.headers, ("content-length", str(len(answer.body)))]
    out = conn.send(h11.Response(status_code=answer.status, headers=headers)) or b""
    out += conn.send(h11.Data(data=answer.body)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(out)


async def _origin_connection(
    server: Origin,
    handler: Callable[[Seen], Answer],
    tls: ssl.SSLContext | None,
    raw: trio.SocketStream,
) -> None:
    server.connections += 1
    number = server.connections
    stream: trio.abc.Stream = raw
    if tls is not None:
        stream = trio.SSLStream(raw, tls, server_side=True, https_compatible=True)
    conn = h11.Connection(h11.SERVER)
    try:
        while (got := await _read_request(stream, conn)) is not None:
            seen = _seen(*got, number)
            server.requests.append(seen)
            answer = handler(seen)
            if answer.then == "drop":
                break
            await _send(conn, stream, answer)
            if answer.then == "close" or conn.our_state is h11.MUST_CLOSE:
                break
            conn.start_next_cycle()
    except (trio.BrokenResourceError, h11.ProtocolError):
        pass
    finally:
        raw.socket.close()  # at once, no TLS goodbye: the client must notice by itself
        server.closed.set()
        server.closed = trio.Event()


async def _serve(
    nursery: trio.Nursery, connection: Callable[[trio.SocketStream], Awaitable[None]]
) -> int:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    nursery.start_soon(functools.partial(trio.serve_listeners, connection, [listener]))
    port: int = listener.socket.getsockname()[1]
    return port


async def start_origin(
    nursery: trio.Nursery,
    handler: Callable[[Seen], Answer] = lambda _: Answer(),
    *,
    tls: ssl.SSLContext | None = None,
) -> Origin:
    """An origin on 127.0.0.1 answering each request with ``handler(request)``
    (https when *tls*, a server-side context, is given)."""
    server = Origin(0, scheme="https" if tls is not None else "http")
    server.port = await _serve(nursery, functools.partial(_origin_connection, server, handler, tls))
    return server


async def _pipe(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
    try:
        while data := await source.receive_some(65536):
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await sink.aclose()


async def _proxy_connection(
    server: Proxy, tunnels: bool, answer: Answer, raw: trio.SocketStream
) -> None:
    server.connections += 1
    conn = h11.Connection(h11.SERVER)
    got = await _read_request(raw, conn)
    if got is None:
        await raw.aclose()
        return
    seen = _seen(*got, server.connections)
    server.requests.append(seen)
    if seen.method != "CONNECT":
        await _send(conn, raw, answer)  # answered here: what matters is how it was asked
        await raw.aclose()
        return
    if not tunnels:
        await _send(conn, raw, Answer(403, body=b"no tunnels here"))
        await raw.aclose()
        return
    _, _, port = seen.target.rpartition(":")
    upstream = await trio.open_tcp_stream("127.0.0.1", int(port))
    await raw.send_all(conn.send(h11.Response(status_code=200, headers=[])) or b"")
    early, _ = conn.trailing_data
    if early:
        await upstream.send_all(early)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_pipe, raw, upstream)
        nursery.start_soon(_pipe, upstream, raw)


async def start_proxy(
    nursery: trio.Nursery, *, tunnels: bool = False, answer: Answer | None = None
) -> Proxy:
    """A forward proxy on 127.0.0.1: absolute-form requests get *answer* from the
    proxy itself; ``CONNECT`` gets 403, or with *tunnels* a tunnel to 127.0.0.1 at
    the port asked for (whatever the host)."""
    server = Proxy(0)
    reply = answer if answer is not None else Answer(body=b"from the proxy")
    server.port = await _serve(
        nursery, functools.partial(_proxy_connection, server, tunnels, reply)
    )
    return server
