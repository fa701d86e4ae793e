"""The model interface every client implements, in the Messages API's terms.

Transcripts are kept in the Anthropic Messages format (``{"role", "content":
[blocks]}``, blocks ``text`` / ``tool_use`` / ``tool_result``) because it is
JSON, it is what the real API takes, and the scripted model and the mock
server can serve it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import attrs

from coterie.errors import CoterieError

ROLES = ("lead", "teammate", "subagent", "evaluator", "classifier", "summarizer")

#: The model used when neither ``--model`` nor ``ANTHROPIC_MODEL`` names one.
DEFAULT_MODEL = "claude-sonnet-5-5"


@attrs.frozen
class ModelRequest:
    """One call to a model. ``actor`` and ``role`` choose a scenario track and
    travel as the ``x-coterie-actor`` / ``x-coterie-role`` headers."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = attrs.field(factory=list)
    max_tokens: int = 8192
    actor: str = "lead"
    role: str = "lead"
    #: The model this call asks for (a custom subagent's); None: the client's own.
    model: str | None = None
    #: How many leading characters of ``system`` every agent of the run sends alike
    #: (coterie's own prompt, before the agent's role and name): a client with
    #: prompt caching makes them a block of their own with a breakpoint, so that
    #: what one agent's first call writes to the cache every other agent reads.
    #: 0: none (the whole prompt is one block).
    shared_system: int = 0
    #: How many leading blocks of the first message every agent of the run sends
    #: alike (the context reminder, the deferred tools' announcement), before the
    #: agent's own role and prompt: a client with prompt caching puts a breakpoint
    #: after them when it has one to spare (:mod:`coterie.context.opening`). 0: none.
    shared_opening: int = 0


@attrs.frozen
class Usage:
    """Token counts of one call (or a sum of calls), as the API reports them, and
    the searches Anthropic's server-side web search made in it (the API's
    ``usage.server_tool_use.web_search_requests``, priced per search)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    web_search_requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.web_search_requests + other.web_search_requests,
        )

    @property
    def tokens(self) -> int:
        """All tokens counted (the searches are not tokens)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    def to_dict(self) -> dict[str, int]:
        """The flat JSON form (``Usage(**d)`` reads it back); ``web_search_requests``
        only when there were searches, so a run without any records what it always did."""
        data = attrs.asdict(self)
        if not self.web_search_requests:
            del data["web_search_requests"]
        return data

    def to_api(self) -> dict[str, Any]:
        """The API's form: the four token counts, and ``server_tool_use`` when searched."""
        data: dict[str, Any] = self.to_dict()
        if searches := data.pop("web_search_requests", 0):
            data["server_tool_use"] = {"web_search_requests": searches}
        return data

    @classmethod
    def from_api(cls, raw: object) -> Usage:
        """The usage of an API reply's ``usage`` object (anything missing or not a
        count is 0; searches from ``server_tool_use.web_search_requests``, or from
        :meth:`to_dict`'s flat ``web_search_requests``)."""
        if not isinstance(raw, dict):
            return cls()
        server = raw.get("server_tool_use")
        searches = server.get("web_search_requests") if isinstance(server, dict) else None
        searches = raw.get("web_search_requests") if searches is None else searches
        return cls(
            _count(raw.get("input_tokens")),
            _count(raw.get("output_tokens")),
            _count(raw.get("cache_creation_input_tokens")),
            _count(raw.get("cache_read_input_tokens")),
            _count(searches),
        )


def _count(value: object) -> int:
    """A count as the API gives it (anything else, or nothing, counts 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@attrs.frozen
class ModelReply:
    """The assistant's turn: content blocks (``text``, ``tool_use``) and why it stopped."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage
    model: str

    @property
    def text(self) -> str:
        """All text blocks joined."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The ``tool_use`` blocks, in order."""
        return [b for b in self.content if b.get("type") == "tool_use"]


TextSink = Callable[[str], None]

#: A raw event of the Messages API's stream (``message_start``,
#: ``content_block_delta``...), as the API sent it, JSON-able.
StreamEventSink = Callable[[dict[str, Any]], None]

#: The streaming events a :class:`StreamSink` hears (not ``ping`` or ``error``).
STREAM_EVENT_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


@attrs.frozen
class StreamSink:
    """An ``on_text`` that also hears each raw streaming event of the reply
    (:data:`STREAM_EVENT_TYPES`), for a consumer that forwards the stream as
    it came (stream-json's ``stream_event`` lines).

    It is a :data:`TextSink`, so a model (or a wrapper) that knows only text
    passes it along unchanged; a model that streams reads its raw sink with
    :func:`raw_events_of`.
    """

    text: TextSink
    raw: StreamEventSink

    def __call__(self, text: str) -> None:
        self.text(text)


def raw_events_of(on_text: TextSink | None) -> StreamEventSink | None:
    """The sink of raw streaming events *on_text* carries, if it is a :class:`StreamSink`."""
    return on_text.raw if isinstance(on_text, StreamSink) else None


@attrs.frozen
class Retrying:
    """A model call failed in a way worth trying again, and will be tried again."""

    #: The attempt that failed (1 for the first).
    attempt: int
    #: How many attempts there are at most.
    attempts: int
    #: Seconds until the next attempt.
    delay: float
    #: Why the attempt failed, in one line (``529 overloaded_error: ...``, ``cut off``).
    reason: str
    #: The model the call goes on with instead (``--fallback-model``), if any.
    fallback: str | None = None
    #: The HTTP status of the failed attempt (None: the connection failed).
    status: int | None = None


RetrySink = Callable[[Retrying], None]


class Model(Protocol):
    """A chat model. ``on_text`` receives streamed text as it arrives, ``on_retry``
    each failed attempt that will be tried again (a model without retries never
    calls it)."""

    @property
    def name(self) -> str:
        """The model's name (what its costs are priced by)."""
        ...

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply: ...


class ModelError(CoterieError, RuntimeError):
    """A model call failed for good (after any retries)."""


class ModelAPIError(ModelError):
    """The API (or the mock server, or a scenario ``error`` turn) answered with an error."""

    def __init__(self, status: int, type: str, message: str) -> None:
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message


class PromptTooLong(ModelAPIError):
    """The request did not fit the model's context window (HTTP 400 ``prompt is too long``)."""


class ScenarioError(ModelError):
    """A scenario file is malformed, a turn's ``expect`` did not match, or a track ran out."""


class ScriptedCrash(Exception):
    """Raised in the calling actor by a scenario ``crash`` turn: a deliberate bug.

    Deliberately *not* a :class:`CoterieError`: it must look like any
    unexpected exception, so that supervision treats it as a crash.
    """


def api_error(status: int, type: str, message: str) -> ModelAPIError:
    """The exception for an API error answer: :class:`PromptTooLong` when it is
    one (HTTP 400 ``invalid_request_error`` saying "prompt is too long"), else
    :class:`ModelAPIError`. Shared by every client so they classify alike."""
    if type == "invalid_request_error" and "prompt is too long" in message.lower():
        return PromptTooLong(status, type, message)
    return ModelAPIError(status, type, message)
