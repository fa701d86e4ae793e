"""``coterie mock-server``: a scenario served over the Messages API (docs/engine.md).

A small HTTP/1.1 server on Trio and h11 answering ``POST /v1/messages`` (JSON
and SSE streaming) and ``POST /v1/messages/count_tokens`` from a scenario,
with the same track and cursor logic as :class:`ScriptedModel` (both use
:class:`~coterie.models._player.ScenarioPlayer`). It checks requests the way
the real API does and answers what it would refuse with ``400
invalid_request_error``, so the real SDK path is exercised end to end,
offline.

Scenario outcomes on the wire:

- an ``error`` turn: its status with ``{"type": "error", "error": {...}}``;
- a ``crash`` turn: ``418`` with error type ``coterie_scripted_crash``
  (coterie's client raises :class:`~coterie.models.ScriptedCrash`);
- an ``expect`` mismatch or an exhausted track: ``400`` with error type
  ``coterie_scenario_error`` (coterie's client raises ``ScenarioError``);
- a reply turn's ``thinking``: a ``thinking`` block (with a stand-in
  ``signature``) first, only when the request enables thinking;
- a reply turn's ``content``: server-tool blocks (``server_tool_use``,
  ``web_search_tool_result``, ``text`` with ``citations``), served as the
  API streams them (:mod:`coterie.models.serverblocks` says their shapes)
  after any thinking and before the turn's ``text`` and ``tool_uses``; its
  ``web_search`` calls are counted in the reply's
  ``usage.server_tool_use.web_search_requests`` unless the turn gives
  ``usage`` (whose ``web_search_requests`` says how many);
- a reply turn with a ``fault``, the first time it is served: ``cut`` sends
  the ``200`` headers and the first ``after`` SSE events (a JSON reply: half
  its body), then closes the connection mid-response; ``silent`` sends the
  headers, then nothing until the client closes the connection (or the idle
  timeout passes). Served again (the client's retry) the turn is whole.

With a :class:`~coterie.models.latency.Latency` (``--latency``,
``--tokens-per-second``, ``--seed``) each reply waits before its first byte
and streams at the given rate, so tests and benchmarks see a real model's
timing; connections are served concurrently, as the API serves them.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import signal
import sys
from typing import TYPE_CHECKING, Any

import attrs
import h11
import trio

from coterie.h11io import read_request
from coterie.models._base import ScenarioError, Usage
from coterie.models._player import (
    ScenarioPlayer,
    ScriptedCrashTurn,
    ScriptedFailure,
    estimate_usage,
    last_user_text,
    request_key,
)
from coterie.models._validate import RequestInvalid, validate_request
from coterie.models._wire import (
    CRASH_ERROR_TYPE,
    SCENARIO_ERROR_TYPE,
    error_json,
    message_json,
    sse_events,
)
from coterie.models.latency import Latency, Pacer
from coterie.models.promptcache import PromptCache
from coterie.models.scenario import CRASH_STATUS, Scenario, load_scenario
from coterie.models.thinking import thinking_enabled

if TYPE_CHECKING:
    from pathlib import Path

#: The API's request size limit.
MAX_BODY_BYTES = 32 * 1024 * 1024
#: How many requests :attr:`MockServer.requests` keeps (newest last).
KEEP_REQUESTS = 100
#: Seconds a connection may sit without sending a whole request before it is closed.
IDLE_TIMEOUT = 60.0
_SERVER = b"coterie-mock-server"


@attrs.frozen
class RecordedRequest:
    """A request the server received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


@attrs.frozen
class _Response:
    status: int
    headers: list[tuple[bytes, bytes]]
    chunks: list[bytes]
    #: A wire fault: ``"cut"`` (the chunks, then the connection closed without
    #: ending the response) or ``"silent"`` (the headers, then nothing).
    fault: str | None = None
    #: A model's reply (held and paced under a latency), not an error or a count.
    reply: bool = False


@attrs.define
class MockServer:
    """A running mock server: its base URL and the requests it has seen."""

    url: str
    player: ScenarioPlayer
    #: Refuse prompts over this many (estimated) tokens as the API does.
    context_window: int | None = None
    #: The waits of a model's timing (None: answer at once).
    pacer: Pacer | None = None
    #: The largest prompt served, in estimated input tokens.
    max_prompt_tokens: int = 0
    requests: collections.deque[RecordedRequest] = attrs.field(
        factory=lambda: collections.deque(maxlen=KEEP_REQUESTS)
    )
    #: What the server has cached: replies whose turn gives no ``usage`` report
    #: their prompt split into cache reads, cache writes and input.
    cache: PromptCache = attrs.field(factory=PromptCache)
    _served: int = 0

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> _Response:
        """Answer one request (sans-io: bytes in, response out)."""
        path = target.split("?", 1)[0]
        self.requests.append(RecordedRequest(method, path, headers, body))
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return _error(404, "not_found_error", f"Not found: {method} {path}")
        if method != "POST":
            return _error(405, "invalid_request_error", f"Method {method} not allowed")
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return _error(400, "invalid_request_error", "request body is not valid JSON")
        if path.endswith("/count_tokens"):
            return self._count_tokens(data)
        betas = tuple(b for b in headers.get("anthropic-beta", "").split(",") if b.strip())
        try:
            validate_request(data, betas=betas)
        except RequestInvalid as exc:
            return _error(400, "invalid_request_error", str(exc))
        sent = data  # as the client sent it: its cache breakpoints decide what is cached
        data = {**data, "messages": _conversation(data["messages"])}
        prompt = estimate_usage(data.get("system"), data["messages"], data.get("tools"), [])
        if self.context_window is not None and prompt.input_tokens > self.context_window:
            return _error(
                400,
                "invalid_request_error",
                f"prompt is too long: {prompt.input_tokens} tokens > {self.context_window} maximum",
            )
        self.max_prompt_tokens = max(self.max_prompt_tokens, prompt.input_tokens)
        role = headers.get("x-coterie-role") or "lead"
        actor = headers.get("x-coterie-actor") or role
        try:
            messages = data["messages"]
            outcome = self.player.next_turn(
                actor,
                role,
                last_user_text(messages),
                request_key(data.get("system"), messages),
                lambda: json.dumps([data.get("system"), messages], ensure_ascii=False),
            )
        except ScenarioError as exc:
            return _error(400, SCENARIO_ERROR_TYPE, str(exc))
        if isinstance(outcome, ScriptedCrashTurn):
            return _error(CRASH_STATUS, CRASH_ERROR_TYPE, outcome.message)
        if isinstance(outcome, ScriptedFailure):
            return _error(outcome.error.status, outcome.error.type, outcome.error.message)
        content = outcome.content
        if not thinking_enabled(data.get("thinking")):  # the API thinks only when asked to
            content = [block for block in content if block["type"] != "thinking"]
        usage = outcome.usage or self._cached(
            sent, estimate_usage(data.get("system"), data["messages"], data.get("tools"), content)
        )
        self._served += 1
        message_id = f"msg_mock_{self._served:06d}"
        args = (message_id, data["model"], content, outcome.stop_reason, usage)
        request_id = [(b"request-id", f"req_mock_{self._served:06d}".encode())]
        fault = outcome.fault
        if data.get("stream"):
            events = sse_events(*args)
            sse = [(b"content-type", b"text/event-stream"), *request_id]
            if fault is not None:
                return _Response(200, sse, events[: fault.after], fault.kind, reply=True)
            return _Response(200, sse, events, reply=True)
        response = attrs.evolve(_json(200, message_json(*args), request_id), reply=True)
        if fault is not None:
            body = response.chunks[0]
            return attrs.evolve(response, chunks=[body[: len(body) // 2]], fault=fault.kind)
        return response

    def _cached(self, sent: dict[str, Any], usage: Usage) -> Usage:
        """*usage* (an estimate) with its prompt split as the API's cache would
        split it: what *sent* reads from the server's cache, what it writes, and
        the rest (:class:`~coterie.models.promptcache.PromptCache`)."""
        split = self.cache.usage(sent)
        cached = split.cache_read_input_tokens + split.cache_creation_input_tokens
        return attrs.evolve(
            usage,
            input_tokens=max(0, usage.input_tokens - cached),
            cache_read_input_tokens=split.cache_read_input_tokens,
            cache_creation_input_tokens=split.cache_creation_input_tokens,
        )

    def _count_tokens(self, data: object) -> _Response:
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            return _error(400, "invalid_request_error", "messages: Field required")
        usage = estimate_usage(data.get("system"), data["messages"], data.get("tools"), [])
        return _json(200, {"input_tokens": usage.input_tokens})


def _conversation(messages: list[Any]) -> list[Any]:
    """The user/assistant turns (``system`` messages, accepted under a beta, are
    not turns: tracks and expectations see the conversation without them)."""
    return [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]


def _json(status: int, data: object, extra: list[tuple[bytes, bytes]] | None = None) -> _Response:
    body = json.dumps(data, ensure_ascii=False).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    return _Response(status, headers, [body])


def _error(status: int, error_type: str, message: str) -> _Response:
    return _json(status, error_json(error_type, message))


async def serve_scenario(
    scenario: Scenario,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    state_path: Path | None = None,
    context_window: int | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
    latency: Latency | None = None,
    task_status: trio.TaskStatus[MockServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve *scenario* until cancelled; ``nursery.start`` returns the :class:`MockServer`.

    With *context_window*, a prompt estimated over that many tokens is refused
    with the API's ``prompt is too long`` error. A connection that sends no
    whole request for *idle_timeout* seconds is closed. With *latency*, each
    reply is held and paced as a real model's would be.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    await _serve(
        scenario, listeners, host, state_path, context_window, idle_timeout, latency,
        task_status=task_status,
    )  # fmt: skip


async def _serve(
    scenario: Scenario,
    listeners: list[trio.SocketListener],
    host: str,
    state_path: Path | None,
    context_window: int | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
    latency: Latency | None = None,
    *,
    task_status: trio.TaskStatus[MockServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    bound_port = listeners[0].socket.getsockname()[1]
    # Print an address a client can connect to, not the wildcard bound to.
    url_host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "localhost": "127.0.0.1", "::": "::1"}.get(
        host, host
    )
    if ":" in url_host:
        url_host = f"[{url_host}]"
    server = MockServer(
        url=f"http://{url_host}:{bound_port}",
        player=ScenarioPlayer(scenario, state_path),
        context_window=context_window,
        pacer=None if latency is None else Pacer(latency),
    )
    handler = functools.partial(_serve_connection, server, idle_timeout)
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, handler, listeners)
        task_status.started(server)


async def _serve_connection(
    server: MockServer, idle_timeout: float, stream: trio.SocketStream
) -> None:
    """One connection's requests, one at a time. Nothing a client sends (bad bytes,
    an unknown method or path, a HEAD, silence) takes the server down: the worst
    it costs is this connection."""
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            with trio.move_on_after(idle_timeout):
                got = await read_request(stream, conn, MAX_BODY_BYTES)
            if got is None:
                return  # idle, or the client went away
            request, body = got
            if body is None:
                await _send(stream, conn, _error(413, "request_too_large", "Request too large"))
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
            method, target = request.method.decode(), request.target.decode("latin-1")
            try:
                response = server.handle(method, target, headers, body)
            except Exception as exc:  # a bug here must cost one request, not the server
                response = _error(500, "api_error", f"mock server error: {exc!r}")
            pacer = server.pacer if response.status == 200 and response.reply else None
            if pacer is not None:
                await trio.sleep(pacer.first_byte())
            await _send(stream, conn, response, head=method == "HEAD", pacer=pacer)
            if response.fault is not None:
                if response.fault == "silent":
                    with trio.move_on_after(idle_timeout):
                        while await stream.receive_some(65536):
                            pass  # until the client gives up and closes
                return  # closed in the middle of the response
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()
    except h11.RemoteProtocolError as exc:
        if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            error = _error(exc.error_status_hint, "invalid_request_error", str(exc))
            with contextlib.suppress(trio.BrokenResourceError, h11.LocalProtocolError):
                await _send(stream, conn, error)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the client went away; nothing to answer
    except Exception as exc:  # never the whole server for one connection
        print(f"coterie mock-server: connection dropped: {exc!r}", file=sys.stderr)
    finally:
        await stream.aclose()


async def _send(
    stream: trio.SocketStream,
    conn: h11.Connection,
    response: _Response,
    *,
    head: bool = False,
    pacer: Pacer | None = None,
) -> None:
    """Send *response*; for a HEAD request its headers only (HTTP forbids a body);
    with a fault, never the end of the response (the caller closes the connection);
    with *pacer*, each chunk when a model streaming at its rate would send it."""
    headers = [*response.headers, (b"server", _SERVER)]
    await stream.send_all(conn.send(h11.Response(status_code=response.status, headers=headers)))
    for chunk in () if head or response.fault == "silent" else response.chunks:
        if pacer is not None:
            await trio.sleep(pacer.chunk(chunk))
        # One write per event, so a streaming client sees the deltas arrive.
        await stream.send_all(conn.send(h11.Data(data=chunk)))
    if response.fault is None:
        await stream.send_all(conn.send(h11.EndOfMessage()))


def main(
    scenario_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    context_window: int | None = None,
    latency: Latency | None = None,
) -> int:
    """Run the server for ``coterie mock-server``; returns the exit code.

    The base URL is the first line of standard output. SIGINT stops it with
    130, SIGTERM with 0; a missing or malformed scenario exits 2, an address
    that cannot be bound 1.
    """
    try:
        scenario = load_scenario(scenario_path)
    except ScenarioError as exc:
        print(f"coterie mock-server: {exc}", file=sys.stderr)
        return 2
    return trio.run(_main, scenario, host, port, context_window, latency)


async def _main(
    scenario: Scenario, host: str, port: int, context_window: int | None, latency: Latency | None
) -> int:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        try:
            listeners = await trio.open_tcp_listeners(port, host=host)
        except OSError as exc:
            print(f"coterie mock-server: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
            return 1
        async with trio.open_nursery() as nursery:
            server: MockServer = await nursery.start(
                _serve, scenario, listeners, host, None, context_window, IDLE_TIMEOUT, latency
            )
            print(server.url, flush=True)
            async for signum in signals:
                nursery.cancel_scope.cancel()
                return 130 if signum == signal.SIGINT else 0
    return 0  # pragma: no cover - the signal iterator never ends
