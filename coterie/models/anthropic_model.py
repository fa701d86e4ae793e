"""The real model client: the Messages API, streamed, under Trio (docs/engine.md).

Requests go through a :class:`~coterie.models.transport.Transport`: the thin
client of :mod:`coterie.models.messagesapi` by default (no SDK to import: a
model call costs a process no second of start-up), or an
``anthropic.AsyncAnthropic`` passed as *client* (or built when
``COTERIE_MODEL_CLIENT=sdk``). Either way, what is above the transport is
ours: retries (our loop sleeps with ``trio.sleep``, so tests drive it with a
fake clock, recognises the mock server's scripted crashes, and sees errors
that arrive mid-stream as SSE ``error`` events), idle timeouts, and the reply
assembled from the raw events (:mod:`coterie.models.assembly`).
"""

from __future__ import annotations

import email.utils
import os
import random
import time
from typing import TYPE_CHECKING, Any

import trio

from coterie.models._base import (
    DEFAULT_MODEL,
    STREAM_EVENT_TYPES,
    ModelError,
    ModelReply,
    Retrying,
    ScenarioError,
    ScriptedCrash,
    Usage,
    api_error,
    raw_events_of,
)
from coterie.models._wire import CRASH_ERROR_TYPE, SCENARIO_ERROR_TYPE
from coterie.models.aliases import resolve_model
from coterie.models.assembly import MessageAssembly, StreamProtocolError
from coterie.models.messagesapi import MessagesClient
from coterie.models.thinking import Reasoning
from coterie.models.transport import APIStatus, TransportFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

    import anthropic

    from coterie.models._base import Model, ModelRequest, RetrySink, TextSink
    from coterie.models.pricing import UsageLedger
    from coterie.models.transport import Transport

#: Statuses worth another try: rate limits, server errors, overload.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 529})
#: Statuses of errors that arrive as SSE ``error`` events in a 200 stream.
_STATUS_BY_TYPE = {
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
    "invalid_request_error": 400,
}
_EPHEMERAL = {"type": "ephemeral"}
#: The most blocks of one request that may carry ``cache_control`` (the API's limit).
MAX_BREAKPOINTS = 4
#: Sent as the key to a local server (``ANTHROPIC_BASE_URL``) when no key is set,
#: so the request carries a key as the API expects, without asking the user for one
#: a local server does not need.
LOCAL_SERVER_KEY = "coterie-local-server"
#: ``sdk``: the CLI's model calls go through the ``anthropic`` SDK instead of the
#: thin client (an escape hatch: a SOCKS proxy, the SDK's own HTTP settings).
CLIENT_ENV = "COTERIE_MODEL_CLIENT"


def _transport_for(
    client: anthropic.AsyncAnthropic | None,
    *,
    api_key: str | None,
    auth_token: str | None,
    base_url: str | None,
    kind: str | None,
    timeout: float,
) -> Transport:
    """The SDK around *client* if one is given; else the thin client, or the SDK
    when *kind* is ``sdk`` (:data:`CLIENT_ENV`)."""
    if client is not None:
        from coterie.models.sdktransport import SDKTransport  # imports the SDK

        return SDKTransport(client)
    if api_key is None and base_url and auth_token is None:
        api_key = LOCAL_SERVER_KEY
    if (kind or "").strip().lower() == "sdk":
        from coterie.models.sdktransport import SDKTransport

        return SDKTransport.build(
            api_key=api_key, auth_token=auth_token, base_url=base_url, timeout=timeout
        )
    return MessagesClient(api_key=api_key, auth_token=auth_token, base_url=base_url)


#: The beta Claude Code 2.1.332 sends with deferred tools (``defer_loading``,
#: ToolSearch's ``tool_reference`` results: coterie.tools.toolsearch).
TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"


class StreamFault(ModelError):
    """A reply stream that cannot be trusted: it ended before ``message_stop`` (the
    connection was cut), it has no stop reason, or it went silent for longer than
    the idle timeout. Retried like a connection error; nothing of it is used (a
    tool from an unfinished message never runs)."""


_RETRYABLE_TRANSPORT = (TransportFailure, StreamFault)
#: Attempts at an address that refuses the connection and never answered before.
REFUSED_ATTEMPTS = 2


#: Seconds a reply stream may stay silent (no event at all; the API sends
#: ``ping`` events while it works) before it is cut and retried.
STREAM_IDLE_TIMEOUT = 90.0


class AnthropicModel:
    """A :class:`~coterie.models.Model` backed by the Messages API, streaming.

    ``api_key`` and ``base_url`` default to ``ANTHROPIC_API_KEY`` and
    ``ANTHROPIC_BASE_URL``. Calls are retried ``max_retries`` times on 429,
    500, 502, 503, 529 and connection errors, waiting
    ``min(backoff_max, backoff_base * 2**n)`` seconds with its upper half
    jittered, or what a ``retry-after`` header asks (capped at
    ``backoff_max``). A stream that ends without ``message_stop`` or a stop
    reason, or that sends nothing for ``stream_idle_timeout`` seconds (the
    wait for the response's headers included), is a :class:`StreamFault`,
    retried the same way; only a complete reply is ever returned. Text
    streamed by a failed attempt is not taken back: a retried call may repeat
    some ``on_text`` deltas; the reply is always that of the attempt that
    succeeded. With *reasoning* the agents' calls ask for extended thinking
    or an effort level (:mod:`coterie.models.thinking`).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 8,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 600.0,
        stream_idle_timeout: float = STREAM_IDLE_TIMEOUT,
        cache_conversation: bool = True,
        ledger: UsageLedger | None = None,
        rng: random.Random | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        reasoning: Reasoning | None = None,
        transport: Transport | None = None,
        auth_token: str | None = None,
        client_kind: str | None = None,
        betas: tuple[str, ...] = (),
    ) -> None:
        self.name = model
        self.reasoning = reasoning
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.stream_idle_timeout = stream_idle_timeout
        self.cache_conversation = cache_conversation
        self.ledger = ledger
        self.betas = tuple(betas)
        self._rng = rng if rng is not None else random.Random()
        #: Whether the server has answered this client once (a refused connection
        #: then is a server restarting, retried; before, nothing listens there).
        self._reached = False
        if transport is None:
            transport = _transport_for(
                client,
                api_key=api_key or os.environ.get("ANTHROPIC_API_KEY") or None,
                auth_token=auth_token or os.environ.get("ANTHROPIC_AUTH_TOKEN") or None,
                base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                kind=client_kind or os.environ.get(CLIENT_ENV) or None,
                timeout=timeout,
            )
        self._transport = transport

    @property
    def base_url(self) -> str:
        """Where requests go."""
        return self._transport.base_url

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._transport.aclose()

    async def __aenter__(self) -> AnthropicModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        """Stream one reply, retrying transient failures (each told to *on_retry*).

        Raises :class:`~coterie.models.PromptTooLong`,
        :class:`~coterie.models.ModelAPIError` (a refusal, or retries used
        up), :class:`~coterie.models.ModelError` (unreachable),
        :class:`~coterie.models.ScenarioError` or
        :class:`~coterie.models.ScriptedCrash` (from the mock server).
        """
        params, headers = self._params(request)
        attempt = 0
        while True:
            try:
                message = await self._stream_once(params, headers, on_text)
                self._reached = True
                break
            except APIStatus as exc:
                self._reached = True
                status: int | None = exc.status
                error, retryable = _classify(exc)
                if not retryable or attempt >= self.max_retries:
                    raise error from exc
                delay = self._delay(attempt, _retry_after(exc.headers))
                reason = str(error)
            except _RETRYABLE_TRANSPORT as exc:
                refused = isinstance(exc, TransportFailure) and exc.refused
                if not self._reached and attempt >= REFUSED_ATTEMPTS - 1 and refused:
                    # Nothing has ever answered at this address: waiting minutes of
                    # backoff for it would only look hung.
                    raise ModelError(
                        f"cannot reach the Messages API at {self.base_url}: the connection"
                        " was refused (nothing listens there; check ANTHROPIC_BASE_URL)"
                    ) from exc
                if attempt >= self.max_retries:
                    what = (
                        "no complete reply from" if isinstance(exc, StreamFault) else "cannot reach"
                    )
                    raise ModelError(
                        f"{what} the Messages API at {self.base_url} "
                        f"({attempt + 1} attempts): {exc}"
                    ) from exc
                delay = self._delay(attempt, None)
                reason, status = str(exc) or type(exc).__name__, None
            if on_retry is not None:
                on_retry(Retrying(attempt + 1, self.max_retries + 1, delay, reason, status=status))
            attempt += 1
            await trio.sleep(delay)
        return self._reply(request, message)

    def _params(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, str]]:
        """The request's body and the headers that go with it."""
        model = resolve_model(request.model) if request.model else self.name
        headers = {"x-coterie-actor": request.actor, "x-coterie-role": request.role}
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "messages": _with_conversation_breakpoint(request.messages)
            if self.cache_conversation
            else request.messages,
        }
        betas = list(self.betas)  # --betas
        if self.reasoning is not None:  # --max-thinking-tokens, --thinking, --effort
            fields = self.reasoning.fields(model, request.role, request.max_tokens)
            params.update(fields)
            betas += Reasoning.betas(fields)
        # Deferred tools (defer_loading, ToolSearch's tool_reference results) go with
        # the beta Claude Code 2.1.332 sends with them.
        if any(tool.get("defer_loading") for tool in request.tools):
            betas.append(TOOL_SEARCH_BETA)
        if betas:
            headers["anthropic-beta"] = ",".join(dict.fromkeys(betas))
        # Breakpoints on the stable prefix: tools, then the system prompt
        # (the API caches in that order), so every turn of an agent re-reads
        # them from the cache instead of paying for them again; with a part
        # every agent of the run shares, one after it too, so that the first
        # agent's cache write is every other agent's read (four in all, with
        # the conversation's: the API's limit).
        if request.system:
            params["system"] = system_blocks(request.system, request.shared_system)
        if request.tools:
            tools = [dict(tool) for tool in request.tools]
            tools[-1]["cache_control"] = _EPHEMERAL
            params["tools"] = tools
        if self.cache_conversation and request.shared_opening:
            # The end of what every agent of the run sends alike in its first
            # message, when the API's limit leaves a breakpoint for it.
            used = len(params.get("system", ())) + bool(request.tools)
            params["messages"] = _with_opening_breakpoint(
                params["messages"], request.shared_opening, MAX_BREAKPOINTS - used
            )
        return params, headers

    async def _stream_once(
        self, params: dict[str, Any], headers: dict[str, str], on_text: TextSink | None
    ) -> dict[str, Any]:
        idle = self.stream_idle_timeout
        with trio.move_on_after(idle) as waiting:
            stream = await self._transport.open(params, headers)
        if waiting.cancelled_caught:
            raise StreamFault(f"no response within {idle:g} s")
        raw = raw_events_of(on_text)
        assembly = MessageAssembly()
        try:
            while True:
                with trio.move_on_after(idle) as silent:
                    event = await stream.next_event()
                if silent.cancelled_caught:
                    raise StreamFault(f"the reply stream was silent for {idle:g} s")
                if event is None:
                    break
                try:
                    text = assembly.feed(event)
                except StreamProtocolError as exc:
                    raise StreamFault(f"a malformed reply stream: {exc}") from None
                if text and on_text is not None:
                    on_text(text)
                if raw is not None and event.get("type") in STREAM_EVENT_TYPES:
                    raw(event)
            if not assembly.stopped:
                raise StreamFault("the reply stream ended before message_stop (cut off)")
            message = assembly.message()
            if message.get("stop_reason") is None:
                raise StreamFault("the reply has no stop_reason")
            return message
        finally:
            with trio.CancelScope(shield=True):
                await stream.aclose()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        # The exponent is capped only to keep the float finite.
        ceiling = min(self.backoff_max, self.backoff_base * 2.0 ** min(attempt, 64))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _reply(self, request: ModelRequest, message: dict[str, Any]) -> ModelReply:
        content: list[dict[str, Any]] = []
        for block in message.get("content") or []:
            if block.get("type") == "text":
                text = {"type": "text", "text": block.get("text", "")}
                if block.get("citations"):  # a server tool's sources, kept with the words
                    text["citations"] = block["citations"]
                content.append(text)
            elif block.get("type") == "tool_use":
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.get("id"),
                        "name": block.get("name"),
                        "input": block.get("input") or {},
                    }
                )
            else:  # thinking and server-tool blocks go back to the API unchanged
                content.append(block)
        usage = Usage.from_api(message.get("usage"))
        model = str(message.get("model") or self.name)
        if self.ledger is not None:
            self.ledger.record(request.actor, model, usage)
        return ModelReply(
            content=content,
            stop_reason=str(message["stop_reason"]),
            usage=usage,
            model=model,
        )


def _classify(exc: APIStatus) -> tuple[Exception, bool]:
    """The exception to raise for *exc*, and whether another attempt may help."""
    error_type = exc.error_type
    message = exc.message
    status = exc.status
    if status == 200:  # an SSE ``error`` event inside a successful stream
        status = _STATUS_BY_TYPE.get(error_type, 500)
    if error_type == CRASH_ERROR_TYPE:
        return ScriptedCrash(message), False
    if error_type == SCENARIO_ERROR_TYPE:
        return ScenarioError(message), False
    return api_error(status, error_type or "api_error", message), status in RETRY_STATUSES


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a ``retry-after-ms`` or ``retry-after`` header asks to wait, if any."""
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None


def system_blocks(system: str, shared: int) -> list[dict[str, Any]]:
    """*system* as the request's blocks, each a cache breakpoint: the first *shared*
    characters (what every agent of the run sends alike) and the rest, or one
    block when nothing or everything is shared."""
    if not 0 < shared < len(system):
        return [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
    return [
        {"type": "text", "text": system[:shared], "cache_control": _EPHEMERAL},
        {"type": "text", "text": system[shared:], "cache_control": _EPHEMERAL},
    ]


def _with_opening_breakpoint(
    messages: list[dict[str, Any]], count: int, room: int
) -> list[dict[str, Any]]:
    """*messages* with a cache breakpoint on the first message's block *count* (the
    last of those every agent of the run sends alike), if the messages carry fewer
    than *room* breakpoints."""
    content = messages[0].get("content") if messages else None
    if not isinstance(content, list) or not 0 < count <= len(content):
        return messages
    marked = sum(
        isinstance(block, dict) and "cache_control" in block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )
    target = content[count - 1]
    if marked >= room or not isinstance(target, dict) or "cache_control" in target:
        return messages
    blocks = list(content)
    blocks[count - 1] = {**target, "cache_control": _EPHEMERAL}
    return [{**messages[0], "content": blocks}, *messages[1:]]


def _with_conversation_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """*messages* with a cache breakpoint on the last block, unless the caller placed some.

    An agent resends its whole transcript every turn; marking its end lets
    the next turn read all of it from the cache.
    """
    if not messages or any(
        isinstance(block, dict) and "cache_control" in block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
    ):
        return messages
    last = dict(messages[-1])
    content = last.get("content")
    if isinstance(content, str):
        if not content:
            return messages
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content:
        blocks = list(content)
    else:
        return messages
    final = blocks[-1]
    # Thinking blocks cannot carry a breakpoint; empty text is refused anyway.
    if not isinstance(final, dict) or final.get("type") in ("thinking", "redacted_thinking"):
        return messages
    blocks[-1] = {**final, "cache_control": _EPHEMERAL}
    last["content"] = blocks
    return [*messages[:-1], last]


if TYPE_CHECKING:

    def _conforms(model: AnthropicModel) -> Model:  # mypy proves AnthropicModel is a Model
        return model
