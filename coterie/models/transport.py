"""What :class:`~coterie.models.anthropic_model.AnthropicModel` needs of a way to
reach the Messages API: open one streamed reply, read its events, close.

Two transports implement it: the thin client of :mod:`coterie.models.messagesapi`
(the default: h11 on Trio, nothing to import but what a run already has) and
:mod:`coterie.models.sdktransport` around an ``anthropic.AsyncAnthropic`` a caller
passes in (or ``COTERIE_MODEL_CLIENT=sdk``). The model's retry loop, idle
timeouts and the assembly of the reply sit above it, the same for both: a
transport only says what the server sent, or why nothing could be read
(:class:`APIStatus`, :class:`~coterie.httpconn.TransportFailure`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from coterie.httpconn import TransportFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["APIStatus", "ReplyStream", "Transport", "TransportFailure"]


class APIStatus(Exception):
    """The API answered with an error: an HTTP status other than 200, or an
    ``error`` event inside a 200 stream (``status`` then 200)."""

    def __init__(
        self, status: int, error_type: str, message: str, headers: Mapping[str, str]
    ) -> None:
        super().__init__(f"{status} {error_type}: {message}")
        self.status = status
        self.error_type = error_type
        self.message = message
        #: The response's headers, names lower-cased (``retry-after`` is read from them).
        self.headers = headers


class ReplyStream(Protocol):
    """One streamed reply: its raw events as JSON-able dicts, ``ping`` included."""

    async def next_event(self) -> dict[str, Any] | None:
        """The next event, or None once the body ended."""
        ...

    async def aclose(self) -> None:
        """Let the reply go (read or not); never raises."""
        ...


class Transport(Protocol):
    """A way to the Messages API."""

    @property
    def base_url(self) -> str:
        """Where requests go (for messages to the user)."""
        ...

    async def open(self, body: dict[str, Any], headers: dict[str, str]) -> ReplyStream:
        """Send a streaming ``POST /v1/messages`` of *body* with *headers* added;
        returns once the response's head says a stream follows. Raises
        :class:`APIStatus` or :class:`TransportFailure`, having closed what it
        opened (also when cancelled)."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...
