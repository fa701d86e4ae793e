"""The thin Messages API client: a streaming ``POST /v1/messages`` on h11 over Trio.

Why not the ``anthropic`` SDK by default: importing it and building its
pydantic types costs about a second of CPU in every process that calls a
model, three times what the rest of a one-turn ``coterie -p`` costs (issue 26,
``bench/startup.py``). coterie sends plain JSON and reads raw events anyway,
so what it needs of the SDK is the HTTP exchange, and that is this module:
the headers (``x-api-key`` for ``ANTHROPIC_API_KEY``, ``Authorization: Bearer``
for ``ANTHROPIC_AUTH_TOKEN``, ``anthropic-version``), the body with
``"stream": true``, an error response read into :class:`APIStatus`, and the
event stream decoded (:mod:`coterie.models.sse`) into dicts, an SSE
``error`` event raised as :class:`APIStatus` with status 200. Connections are
kept alive and proxies honoured by :mod:`coterie.httpconn`. The SDK
stays available for callers who pass an ``anthropic.AsyncAnthropic``
(:mod:`coterie.models.sdktransport`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.httpconn import Connections, Response, TransportFailure
from coterie.models.sse import ServerSentEvent, SSEDecoder
from coterie.models.transport import APIStatus
from coterie.version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_BASE_URL", "MessagesClient"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: Bytes of an error response read (the rest is dropped).
MAX_ERROR_BODY = 1 << 20


class MessagesClient:
    """A :class:`~coterie.models.transport.Transport` to the Messages API at *base_url*."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._url = self._base + "/v1/messages"
        headers = [
            ("anthropic-version", ANTHROPIC_VERSION),
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
            ("accept-encoding", "identity"),
            ("user-agent", f"coterie/{__version__}"),
        ]
        if api_key:
            headers.append(("x-api-key", api_key))
        if auth_token:
            headers.append(("authorization", f"Bearer {auth_token}"))
        self._headers = tuple(headers)
        self._connections = Connections(environ)

    @property
    def base_url(self) -> str:
        return self._base

    async def open(self, body: dict[str, Any], headers: dict[str, str]) -> _Events:
        payload = json.dumps({**body, "stream": True}, ensure_ascii=False).encode()
        sent = [*self._headers, *((k.lower(), v) for k, v in headers.items())]
        response = await self._connections.request("POST", self._url, sent, payload)
        try:
            if response.status != 200:
                raise _status_error(
                    response.status, await response.read(MAX_ERROR_BODY), response.headers
                )
            kind = response.headers.get("content-type", "")
            if "text/event-stream" not in kind:
                raise TransportFailure(f"a streaming request was answered with {kind or 'no type'}")
        except BaseException:
            await response.aclose()
            raise
        return _Events(response)

    async def aclose(self) -> None:
        await self._connections.aclose()


class _Events:
    """A reply's events, decoded as they arrive."""

    def __init__(self, response: Response) -> None:
        self._response = response
        self._decoder = SSEDecoder()
        self._ready: list[ServerSentEvent] = []
        self._ended = False

    async def next_event(self) -> dict[str, Any] | None:
        while not self._ready:
            if self._ended:
                return None
            chunk = await self._response.receive()
            if chunk is None:
                self._ended = True
                self._ready.extend(self._decoder.close())
            else:
                self._ready.extend(self._decoder.feed(chunk))
        sse = self._ready.pop(0)
        try:
            event = json.loads(sse.data)
        except ValueError:
            raise TransportFailure(f"an event that is not JSON: {sse.data[:200]!r}") from None
        if not isinstance(event, dict):
            raise TransportFailure(f"an event that is not an object: {sse.data[:200]!r}")
        if event.get("type") == "error" or sse.event == "error":
            raise _error_of(200, event, self._response.headers)
        return event

    async def aclose(self) -> None:
        await self._response.aclose()


def _status_error(status: int, raw: bytes, headers: Mapping[str, str]) -> APIStatus:
    try:
        body = json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", "replace").strip()
        return APIStatus(status, "api_error", text[:500] or f"HTTP {status}", headers)
    return _error_of(status, body, headers)


def _error_of(status: int, body: object, headers: Mapping[str, str]) -> APIStatus:
    """The :class:`APIStatus` of an error body (``{"type": "error", "error": {...}}``)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return APIStatus(status, "api_error", json.dumps(body)[:500], headers)
    return APIStatus(
        status,
        str(error.get("type") or "api_error"),
        str(error.get("message") or f"HTTP {status}"),
        headers,
    )
