"""The Messages API through the ``anthropic`` SDK, for callers who bring its client.

A program that embeds coterie may already hold an ``anthropic.AsyncAnthropic``
(its own base URL, proxies, HTTP client, retries off or on): passed as
``AnthropicModel(client=...)`` it carries every call, and
``COTERIE_MODEL_CLIENT=sdk`` makes the CLI build one instead of using the thin
client (:mod:`coterie.models.messagesapi`). This module is the only one that
imports the SDK, and only when it is used. It turns the SDK's stream back into
the raw events the API sent, and the SDK's and its HTTP library's exceptions
into the transport's two (:mod:`coterie.models.transport`), so the model's
loop above cannot tell the transports apart.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

import anthropic

from coterie.models._base import STREAM_EVENT_TYPES
from coterie.models.transport import APIStatus, TransportFailure

__all__ = ["SDKTransport"]


def _transport_errors() -> tuple[type[BaseException], ...]:
    # A connection dropped mid-stream surfaces as the HTTP library's own
    # error, not the SDK's; the SDK uses httpx2 from 2.x and httpx before.
    errors: list[type[BaseException]] = [anthropic.APIConnectionError]
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


_TRANSPORT_ERRORS = _transport_errors()


def _refused(exc: BaseException) -> bool:
    """Whether *exc* (or what caused it) is a refused connection."""
    seen: BaseException | None = exc
    for _ in range(8):  # the SDK wraps httpx's error, which wraps the OS's
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or "Connection refused" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _translated(exc: BaseException) -> BaseException:
    if isinstance(exc, anthropic.APIStatusError):
        return APIStatus(
            exc.status_code,
            str(exc.type or "api_error"),
            str(exc.api_message or exc.message),
            dict(exc.response.headers),
        )
    if isinstance(exc, _TRANSPORT_ERRORS):
        return TransportFailure(str(exc) or type(exc).__name__, refused=_refused(exc))
    return exc


class SDKTransport:
    """A :class:`~coterie.models.transport.Transport` on an ``anthropic.AsyncAnthropic``."""

    def __init__(self, client: anthropic.AsyncAnthropic) -> None:
        self._client = client

    @classmethod
    def build(
        cls,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str | None,
        timeout: float,
    ) -> SDKTransport:
        """A transport on a new client (the SDK's own retries off: ours run above)."""
        return cls(
            anthropic.AsyncAnthropic(
                api_key=api_key,
                auth_token=auth_token,
                base_url=base_url,
                max_retries=0,
                timeout=timeout,
            )
        )

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    async def open(self, body: dict[str, Any], headers: dict[str, str]) -> _SDKEvents:
        manager = self._client.messages.stream(**body, extra_headers=headers)
        try:
            stream = await manager.__aenter__()
        except BaseException as exc:
            raise _translated(exc) from exc
        return _SDKEvents(manager, stream)

    async def aclose(self) -> None:
        await self._client.close()


class _SDKEvents:
    def __init__(self, manager: Any, stream: Any) -> None:
        self._manager = manager
        self._events = stream.__aiter__()

    async def next_event(self) -> dict[str, Any] | None:
        while True:
            try:
                event = await self._events.__anext__()
            except StopAsyncIteration:
                return None
            except BaseException as exc:
                raise _translated(exc) from exc
            if event.type in STREAM_EVENT_TYPES:
                return _raw_event(event)
            # the SDK's own derived events (text, input_json...): the raw ones carry them

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):  # what failed has failed already
            await self._manager.__aexit__(None, None, None)


def _raw_event(event: Any) -> dict[str, Any]:
    """A streaming event as the API sent it: the SDK's stream adds the block or
    the message it accumulated to ``content_block_stop`` and ``message_stop``."""
    if event.type == "content_block_stop":
        return {"type": "content_block_stop", "index": event.index}
    if event.type == "message_stop":
        return {"type": "message_stop"}
    data: dict[str, Any] = event.to_dict(mode="json")
    return data
