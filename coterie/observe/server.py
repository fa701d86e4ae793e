"""The observer's HTTP server: h11 on Trio, in the caller's own event loop.

:func:`serve_observer` listens on 127.0.0.1, checks every request with
:class:`~coterie.observe.guard.Guard` and serves the page and its assets,
the runs (``api/runs``: the workspace's, or every run a server backend
knows), one run's server-sent events
(``api/runs/ID/events``: a snapshot, then deltas, from the run's one shared
:class:`~coterie.observe.feed.RunFeed`) and the fault buttons
(``api/runs/ID/fault``), which call the *injector* it was given (in
coterie: :func:`coterie.control.inject`), with ``by="observe"``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import secrets
import sys
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import h11
import trio

from coterie.backends import Backend, ReadError
from coterie.errors import CoterieError
from coterie.h11io import read_request, send_response
from coterie.observe.feed import INTERVAL, RunFeed
from coterie.observe.guard import ASSETS, PAGE, Guard, Refusal, Route, parse_fault
from coterie.runs import UnknownRun

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.backends import RunAddress

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
IDLE_TIMEOUT = 60.0
#: Seconds between two keep-alive comments on an idle event stream.
HEARTBEAT = 15.0
_SECURITY = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # the token is in the URL
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
    ),
]


class Injector(Protocol):
    """What the fault buttons call: :func:`coterie.control.inject`'s signature."""

    async def __call__(
        self,
        run_dir: Path | RunAddress,
        fault: Any,
        actor: str | None = None,
        *,
        reason: str | None,
        by: str,
    ) -> dict[str, Any]: ...


def _asset(name: str) -> bytes:
    return files("coterie").joinpath("assets", "observe", name).read_bytes()


@attrs.define
class Observer:
    """A running observer: its URL, and the feeds of the runs pages have opened."""

    workdir: Path
    guard: Guard
    nursery: trio.Nursery
    #: Where the runs are (files: the workspace's; a server: every run it knows).
    backend: Backend = attrs.field(factory=Backend)
    injector: Injector | None = None
    interval: float | None = None
    feeds: dict[str, RunFeed] = attrs.field(factory=dict)
    _opening: trio.Lock = attrs.field(factory=trio.Lock)

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://{HOST}:{self.guard.port}/{self.guard.token}/"

    async def feed(self, run_id: str) -> RunFeed:
        """The shared feed of run *run_id* (started on first use); :class:`UnknownRun`
        if there is no such run, :class:`ReadError` (saying why, in one line) if
        its backend cannot be read now."""
        async with self._opening:
            feed = self.feeds.get(run_id)
            if feed is None:
                try:
                    feed = await self.nursery.start(self._follow, run_id)
                except (UnknownRun, ReadError):
                    raise
                except self.backend.errors() as exc:
                    raise ReadError(f"cannot read {self.backend.name}: {exc}") from None
                self.feeds[run_id] = feed
        return feed

    def _absent(self) -> tuple[type[BaseException], ...]:
        """What says a run cannot be shown now: no such run, or a backend away."""
        return (UnknownRun, ReadError, *self.backend.errors())

    async def _follow(self, run_id: str, *, task_status: trio.TaskStatus[RunFeed]) -> None:
        async with self.backend.open_source(self.workdir, run_id) as source:
            if source.run_id != run_id:  # a prefix: the page names runs by their ids
                raise UnknownRun(f"no run {run_id}")
            feed = RunFeed.following(
                source,
                self.interval or INTERVAL,
                address=lambda: self.backend.address(self.workdir, run_id),
                errors=self.backend.errors(),
            )
            task_status.started(feed)
            await feed.run()

    async def answer(
        self, route: Route, body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The response to a checked request other than an event stream."""
        match route.kind:
            case "redirect":
                return 308, [(b"location", f"/{self.guard.token}/".encode())], b""
            case "page":
                return _ok(b"text/html; charset=utf-8", _asset(PAGE))
            case "asset":
                assert route.asset is not None
                return _ok(ASSETS[route.asset], _asset(route.asset))
            case "runs":
                reader = self.backend.reader(self.workdir)
                try:
                    runs = await trio.to_thread.run_sync(reader.runs)
                except ReadError as exc:
                    return _json(503, {"error": str(exc)})
                listed = [{k: v for k, v in r.to_dict().items() if k != "path"} for r in runs]
                where = str(self.workdir) if self.backend.on_files else self.backend.name
                return _json(200, {"workdir": where, "runs": listed[::-1]})
            case "fault":
                return await self._fault(route, body)
        return _json(404, {"error": "not found"})  # pragma: no cover - every kind is matched

    async def _fault(
        self, route: Route, body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        try:
            asked = parse_fault(json.loads(body))
        except ValueError:
            asked = Refusal(400, "the body is not JSON")
        if isinstance(asked, Refusal):
            return _json(asked.status, {"error": asked.reason})
        try:
            address = await self.backend.address(self.workdir, str(route.run_id))
        except self._absent():
            address = None
        if address is None or address.run_id != route.run_id:
            return _json(404, {"error": f"no run {route.run_id} in this workspace"})
        if self.injector is None:
            return _json(501, {"error": "this observer cannot inject faults"})
        try:
            reply = await self.injector(
                address, asked.fault, asked.actor, reason=asked.reason, by="observe"
            )
        except (CoterieError, ValueError) as exc:  # refused: the run, the actor, the request
            return _json(409, {"error": str(exc)})
        return _json(200, {"ok": True, "reply": reply})


def _ok(kind: bytes, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return 200, [(b"content-type", kind)], body


def _json(status: int, data: object) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return status, [(b"content-type", b"application/json")], json.dumps(data).encode()


def _headers(extra: list[tuple[bytes, bytes]], body: bytes | None) -> list[tuple[bytes, bytes]]:
    length = [] if body is None else [(b"content-length", str(len(body)).encode())]
    return [*extra, *length, *_SECURITY, (b"server", b"coterie-observe")]


async def serve_observer(
    workdir: Path,
    *,
    backend: Backend | None = None,
    port: int = 0,
    injector: Injector | None = None,
    token: str | None = None,
    interval: float | None = None,
    task_status: trio.TaskStatus[Observer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the observer of *workdir*'s runs (of *backend*'s, when that is a server)
    until cancelled; ``nursery.start``
    returns the :class:`Observer` (its :attr:`~Observer.url` holds a fresh token
    unless *token* is given). *interval*: seconds between reads of a followed log."""
    listeners = await trio.open_tcp_listeners(port, host=HOST)
    bound = listeners[0].socket.getsockname()[1]
    guard = Guard(token or secrets.token_urlsafe(24), bound)
    async with trio.open_nursery() as nursery:
        observer = Observer(workdir, guard, nursery, backend or Backend(), injector, interval)
        handler = functools.partial(_serve_connection, observer)
        await nursery.start(trio.serve_listeners, handler, listeners)
        task_status.started(observer)


async def _serve_connection(observer: Observer, stream: trio.SocketStream) -> None:
    """One connection's requests, one at a time; an event stream ends it."""
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            with trio.move_on_after(IDLE_TIMEOUT):
                got = await read_request(stream, conn, MAX_BODY)
            if got is None:
                return
            request, body = got
            if body is None:
                await _send(stream, conn, *_json(413, {"error": "request too large"}))
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
            method, target = request.method.decode(), request.target.decode("latin-1")
            route = observer.guard.check(method, target, headers)
            if isinstance(route, Refusal):
                await _send(stream, conn, route.status, [(b"content-type", b"text/plain")],
                            route.reason.encode())  # fmt: skip
            elif route.kind == "events":
                await _stream_events(observer, stream, conn, str(route.run_id))
                return
            else:
                await _send(stream, conn, *await observer.answer(route, body))
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()
    except h11.RemoteProtocolError:
        with contextlib.suppress(trio.BrokenResourceError, h11.LocalProtocolError):
            await _send(stream, conn, 400, [(b"content-type", b"text/plain")], b"bad request")
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the page went away
    except Exception as exc:  # one connection's bug must never take the observer down
        print(f"coterie observe: connection dropped: {exc!r}", file=sys.stderr)
    finally:
        await stream.aclose()


async def _send(
    stream: trio.SocketStream,
    conn: h11.Connection,
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes,
) -> None:
    await send_response(stream, conn, status, _headers(headers, body), body)


async def _stream_events(
    observer: Observer, stream: trio.SocketStream, conn: h11.Connection, run_id: str
) -> None:
    """The run's frames until the page goes away (a chunked response never ended)."""
    try:
        feed = await observer.feed(run_id)
    except UnknownRun:
        await _send(stream, conn, *_json(404, {"error": f"no run {run_id} in this workspace"}))
        return
    except ReadError as exc:  # the backend away: the page says why, and tries again
        await _send(stream, conn, *_json(503, {"error": str(exc)}))
        return
    head = [(b"content-type", b"text/event-stream"), (b"x-accel-buffering", b"no")]
    await stream.send_all(conn.send(h11.Response(status_code=200, headers=_headers(head, None))))
    async with feed.subscribe() as frames:
        while True:
            with trio.move_on_after(HEARTBEAT) as idle:
                try:
                    frame = await frames.receive()
                except trio.EndOfChannel:
                    return  # the page fell behind and was dropped: it reconnects
            data = b": keep-alive\n\n" if idle.cancelled_caught else frame
            await stream.send_all(conn.send(h11.Data(data=data)))
