"""HTTP/1.1 as coterie's clients speak it: h11 over Trio, TLS, keep-alive, proxies.

Used by the thin Messages API client (:mod:`coterie.models.messagesapi`) and
by WebFetch (:mod:`coterie.tools.web.fetch`). Only what such clients need,
and nothing heavier than
the standard library, Trio and h11 (already the project's own servers'
parser, :mod:`coterie.h11io`): a request with a body, a response read as it
streams, connections kept alive and reused per origin, TLS verified against
the system's certificates (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured), and
the proxy variables curl and the SDK honour (``HTTPS_PROXY``, ``HTTP_PROXY``,
``ALL_PROXY``, ``NO_PROXY``, either case; ``https://`` targets go through a
``CONNECT`` tunnel). Every failure to talk is a :class:`TransportFailure`,
which says whether the connection was refused (nothing listens there).
"""

from __future__ import annotations

import base64
import os
import ssl
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import attrs
import h11
import trio

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Connections", "Origin", "Proxy", "Response", "TransportFailure", "proxy_for"]

RECEIVE_BYTES = 65536
#: Seconds to open a connection (TCP, the proxy's tunnel and TLS) before it counts as failed.
CONNECT_TIMEOUT = 10.0
#: Idle connections kept per origin.
KEEP_IDLE = 4


class TransportFailure(Exception):
    """The request could not be sent or its response not read (a refused or
    reset connection, a TLS failure, a protocol error, a connect timeout)."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@attrs.frozen
class Origin:
    """Where a connection goes: ``scheme://host:port``."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port)

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


@attrs.frozen
class Proxy:
    """An HTTP proxy: its origin and the ``Proxy-Authorization`` its URL's user
    and password make, if any."""

    origin: Origin
    authorization: str | None = None


def proxy_for(origin: Origin, environ: Mapping[str, str]) -> Proxy | None:
    """The proxy a request to *origin* goes through under *environ* (None: direct).

    ``NO_PROXY`` lists hosts (``example.com`` also covers its subdomains; a
    leading dot or ``*.`` too), optionally with a port; ``*`` covers all.
    """

    def var(name: str) -> str:
        return (environ.get(name.lower()) or environ.get(name.upper()) or "").strip()

    url = var(f"{origin.scheme}_proxy") or var("all_proxy")
    if not url or _bypassed(origin, var("no_proxy")):
        return None
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(
            f"unsupported proxy {parts.scheme}://{parts.hostname or ''} (coterie's client"
            " speaks to http:// proxies; set COTERIE_MODEL_CLIENT=sdk for others)"
        )
    authorization = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode("ascii")
    return Proxy(Origin("http", parts.hostname, parts.port or 80), authorization)


def _bypassed(origin: Origin, no_proxy: str) -> bool:
    host = origin.host.lower().rstrip(".")
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        name, _, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if port and (not port.isdigit() or int(port) != origin.port):
            continue
        name = (name or entry).removeprefix("*").removeprefix(".").rstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


def _all_refused(exc: BaseException) -> bool:
    """Whether every attempt behind *exc* was refused (trio raises one OSError
    from a group of each address's error)."""
    if isinstance(exc, ConnectionRefusedError):
        return True
    cause = exc.__cause__
    if isinstance(cause, BaseExceptionGroup):
        return all(_all_refused(e) for e in cause.exceptions)
    return False


_FAILURES = (OSError, trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError)


class _Connection:
    """One connection: a Trio stream and the h11 state of the exchange on it."""

    def __init__(self, stream: trio.abc.Stream, key: tuple[Origin, Proxy | None]) -> None:
        self.stream = stream
        #: The pool's key for it: its origin, and the proxy it goes through.
        self.key = key
        self.h11 = h11.Connection(h11.CLIENT)

    async def send(self, event: h11.Event) -> None:
        data = self.h11.send(event)
        if data:
            await self.stream.send_all(data)

    async def next_event(self) -> h11.Event | type[h11.PAUSED] | type[h11.NEED_DATA]:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            data = bytes(await self.stream.receive_some(RECEIVE_BYTES))
            if not data and self.h11.their_state is h11.SEND_RESPONSE:
                # h11 would call this a protocol error, in its own words
                raise ConnectionResetError("the server closed the connection without answering")
            self.h11.receive_data(data)

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self.stream.aclose()


class Response:
    """A response whose body is read as it streams; :meth:`aclose` hands a
    connection read to its end back for reuse, and closes any other."""

    def __init__(
        self, status: int, headers: dict[str, str], conn: _Connection, pool: Connections
    ) -> None:
        self.status = status
        #: Header names lower-cased; the last of a repeated header wins.
        self.headers = headers
        self._conn: _Connection | None = conn
        self._pool = pool

    async def receive(self) -> bytes | None:
        """The next piece of the body, or None at its end."""
        conn = self._conn
        if conn is None:
            return None
        try:
            while True:
                event = await conn.next_event()
                if isinstance(event, h11.Data):
                    return bytes(event.data)
                if isinstance(event, h11.EndOfMessage):
                    self._conn = None
                    self._pool.give_back(conn)
                    return None
                if isinstance(event, h11.ConnectionClosed):
                    raise TransportFailure("the server closed the connection mid-response")
        except _FAILURES as exc:
            self._conn = None
            await conn.aclose()
            raise TransportFailure(_describe(exc)) from exc

    async def read(self, limit: int) -> bytes:
        """The rest of the body, at most *limit* bytes of it."""
        body = bytearray()
        while (piece := await self.receive()) is not None:
            body += piece[: max(0, limit - len(body))]
        return bytes(body)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.aclose()  # not read to its end: nobody else may use it


class Connections:
    """A keep-alive pool of connections, per origin (or per proxy), for one client."""

    def __init__(
        self, environ: Mapping[str, str] | None = None, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self._environ = os.environ if environ is None else environ
        self._connect_timeout = connect_timeout
        self._idle: dict[tuple[Origin, Proxy | None], list[_Connection]] = {}
        self._ssl: ssl.SSLContext | None = None

    async def request(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes
    ) -> Response:
        """Send one request and read its response's head; the body is the caller's
        to read (:class:`Response`). A kept-alive connection the server closed
        meanwhile is replaced once, transparently."""
        origin = Origin.of(url)
        try:
            proxy = proxy_for(origin, self._environ)
        except ValueError as exc:
            raise TransportFailure(str(exc)) from None
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        if proxy is not None and origin.scheme == "http":
            target = f"http://{origin.authority}{target}"  # a plain proxy takes the whole URL
        head = [("host", origin.authority), *headers, ("content-length", str(len(body)))]
        if proxy is not None and origin.scheme == "http" and proxy.authorization:
            head.append(("proxy-authorization", proxy.authorization))
        key = (origin, proxy)
        for reused in (True, False):
            conn = self._take(key) if reused else None
            if reused and conn is None:
                continue
            if conn is None:
                conn = await self._open(key)
            try:
                await conn.send(h11.Request(method=method, target=target, headers=head))
                await conn.send(h11.Data(data=body))
                await conn.send(h11.EndOfMessage())
                event = await conn.next_event()
            except _FAILURES as exc:
                await conn.aclose()
                if reused:
                    continue  # the server dropped it while it idled: once more, anew
                raise TransportFailure(f"{origin.authority}: {_describe(exc)}") from exc
            except BaseException:
                await conn.aclose()
                raise
            if not isinstance(event, h11.Response):
                await conn.aclose()
                if reused and isinstance(event, h11.ConnectionClosed):
                    continue
                raise TransportFailure(f"no response from {origin.authority}")
            return Response(
                event.status_code,
                {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in event.headers},
                conn,
                self,
            )
        raise AssertionError("unreachable")

    def give_back(self, conn: _Connection) -> None:
        """*conn* served its response to the end: keep it for the next request."""
        if not conn.reusable:
            self._close_later(conn)
            return
        conn.h11.start_next_cycle()
        idle = self._idle.setdefault(conn.key, [])
        if len(idle) >= KEEP_IDLE:
            self._close_later(conn)
            return
        idle.append(conn)

    async def aclose(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                await conn.aclose()

    def _take(self, key: tuple[Origin, Proxy | None]) -> _Connection | None:
        idle = self._idle.get(key)
        return idle.pop() if idle else None

    @staticmethod
    def _close_later(conn: _Connection) -> None:
        # Closed here and now, without a checkpoint: a TLS stream's socket is
        # closed under it (no close_notify: the peer sees the connection end).
        stream = conn.stream
        if isinstance(stream, trio.SSLStream):
            stream = stream.transport_stream
        if isinstance(stream, trio.SocketStream):
            stream.socket.close()

    async def _open(self, key: tuple[Origin, Proxy | None]) -> _Connection:
        origin, proxy = key
        where = proxy.origin if proxy is not None else origin
        try:
            with trio.fail_after(self._connect_timeout):
                stream: trio.abc.Stream = await trio.open_tcp_stream(where.host, where.port)
                try:
                    if proxy is not None and origin.scheme == "https":
                        await _tunnel(stream, origin, proxy)
                    if origin.scheme == "https":
                        stream = await self._tls(stream, origin.host)
                except BaseException:
                    with trio.CancelScope(shield=True):
                        await stream.aclose()
                    raise
        except trio.TooSlowError:
            raise TransportFailure(
                f"connecting to {where.authority} timed out after {self._connect_timeout:g} s"
            ) from None
        except (OSError, trio.BrokenResourceError, h11.ProtocolError) as exc:
            refused = _all_refused(exc)
            what = "the connection was refused" if refused else _describe(exc)
            raise TransportFailure(
                f"cannot connect to {where.authority}: {what}", refused=refused
            ) from exc
        return _Connection(stream, key)

    async def _tls(self, stream: trio.abc.Stream, host: str) -> trio.SSLStream[trio.abc.Stream]:
        if self._ssl is None:
            context = ssl.create_default_context()  # SSL_CERT_FILE / SSL_CERT_DIR honoured
            if extra := self._environ.get("NODE_EXTRA_CA_CERTS"):  # Claude Code users set it
                try:
                    context.load_verify_locations(cafile=extra)
                except (OSError, ssl.SSLError) as exc:
                    raise OSError(f"NODE_EXTRA_CA_CERTS={extra}: {exc}") from None
            context.set_alpn_protocols(["http/1.1"])
            self._ssl = context
        wrapped = trio.SSLStream(stream, self._ssl, server_hostname=host, https_compatible=True)
        await wrapped.do_handshake()
        return wrapped


async def _tunnel(stream: trio.abc.Stream, origin: Origin, proxy: Proxy) -> None:
    """Ask *proxy* on *stream* for a tunnel to *origin* (``CONNECT host:port``)."""
    conn = h11.Connection(h11.CLIENT)
    authority = f"{origin.host}:{origin.port}"
    headers = [("host", authority)]
    if proxy.authorization:
        headers.append(("proxy-authorization", proxy.authorization))
    request = h11.Request(method="CONNECT", target=authority, headers=headers)
    await stream.send_all(conn.send(request) or b"")
    await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(bytes(await stream.receive_some(RECEIVE_BYTES)))
            continue
        break
    if not isinstance(event, h11.Response) or not 200 <= event.status_code < 300:
        status = event.status_code if isinstance(event, h11.Response) else "no answer"
        raise OSError(f"the proxy {proxy.origin.authority} refused the tunnel ({status})")
    if conn.trailing_data[0]:
        raise OSError(f"the proxy {proxy.origin.authority} sent data before the tunnel opened")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    cause = exc.__cause__
    if (
        isinstance(exc, (OSError, trio.BrokenResourceError))
        and cause is not None
        and not isinstance(cause, BaseExceptionGroup)
    ):
        # trio's SSLStream says only BrokenResourceError; why is in its cause
        text = f"{text}: {cause}" if text else str(cause)
    return text or type(exc).__name__
