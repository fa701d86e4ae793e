"""The real model client: ``anthropic.AsyncAnthropic`` under Trio (docs/engine.md).

The SDK's HTTP stack (httpx on anyio) detects Trio and runs on it, so no
asyncio loop is involved. Retries are ours, not the SDK's (it gets
``max_retries=0``): our loop sleeps with ``trio.sleep`` (so tests drive it
with a fake clock), recognises the mock server's scripted crashes, and sees
errors that arrive mid-stream as SSE ``error`` events, which the SDK's own
retries never do.
"""

from __future__ import annotations

import email.utils
import importlib
import os
import random
import time
from typing import TYPE_CHECKING, Any

import anthropic
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
from coterie.models.thinking import Reasoning

if TYPE_CHECKING:
    from collections.abc import Mapping

    from coterie.models._base import Model, ModelRequest, RetrySink, TextSink
    from coterie.models.pricing import UsageLedger

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
#: Sent as the key to a local server (``ANTHROPIC_BASE_URL``) when no key is set,
#: so the SDK does not go looking for credentials a local server does not need.
LOCAL_SERVER_KEY = "coterie-local-server"


def _transport_errors() -> tuple[type[BaseException], ...]:
    # A connection dropped mid-stream surfaces as the HTTP library's own
    # error, not the SDK's; the SDK uses httpx2 from 2.x and httpx before.
    errors: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


class StreamFault(ModelError):
    """A reply stream that cannot be trusted: it ended before ``message_stop`` (the
    connection was cut), it has no stop reason, or it went silent for longer than
    the idle timeout. Retried like a connection error; nothing of it is used (a
    tool from an unfinished message never runs)."""


_RETRYABLE_TRANSPORT: tuple[type[BaseException], ...] = (
    anthropic.APIConnectionError,
    StreamFault,
    *_transport_errors(),
)
#: Attempts at an address that refuses the connection and never answered before.
REFUSED_ATTEMPTS = 2


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
    ) -> None:
        self.name = model
        self.reasoning = reasoning
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.stream_idle_timeout = stream_idle_timeout
        self.cache_conversation = cache_conversation
        self.ledger = ledger
        self._rng = rng if rng is not None else random.Random()
        #: Whether the server has answered this client once (a refused connection
        #: then is a server restarting, retried; before, nothing listens there).
        self._reached = False
        if client is None:
            api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
            base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
            if api_key is None and base_url and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
                api_key = LOCAL_SERVER_KEY
            client = anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
            )
        self._client = client

    @property
    def base_url(self) -> str:
        """Where requests go."""
        return str(self._client.base_url)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()

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
        params = self._params(request)
        attempt = 0
        while True:
            try:
                message = await self._stream_once(params, on_text)
                self._reached = True
                break
            except anthropic.APIStatusError as exc:
                self._reached = True
                status: int | None = exc.status_code
                error, retryable = _classify(exc)
                if not retryable or attempt >= self.max_retries:
                    raise error from exc
                delay = self._delay(attempt, _retry_after(exc.response.headers))
                reason = str(error)
            except _RETRYABLE_TRANSPORT as exc:
                if not self._reached and attempt >= REFUSED_ATTEMPTS - 1 and _refused(exc):
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

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        model = resolve_model(request.model) if request.model else self.name
        headers = {"x-coterie-actor": request.actor, "x-coterie-role": request.role}
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "messages": _with_conversation_breakpoint(request.messages)
            if self.cache_conversation
            else request.messages,
            "extra_headers": headers,
        }
        if self.reasoning is not None:  # --max-thinking-tokens, --thinking, --effort
            fields = self.reasoning.fields(model, request.role, request.max_tokens)
            params.update(fields)
            if betas := Reasoning.betas(fields):
                headers["anthropic-beta"] = ",".join(betas)
        # Breakpoints on the stable prefix: tools, then the system prompt
        # (the API caches in that order), so every turn of an agent re-reads
        # them from the cache instead of paying for them again.
        if request.system:
            params["system"] = [
                {"type": "text", "text": request.system, "cache_control": _EPHEMERAL}
            ]
        if request.tools:
            tools = [dict(tool) for tool in request.tools]
            tools[-1]["cache_control"] = _EPHEMERAL
            params["tools"] = tools
        return params

    async def _stream_once(self, params: dict[str, Any], on_text: TextSink | None) -> Any:
        idle = self.stream_idle_timeout
        with trio.move_on_after(idle) as waiting:
            manager = self._client.messages.stream(**params)
            stream = await manager.__aenter__()
        if waiting.cancelled_caught:
            raise StreamFault(f"no response within {idle:g} s")
        raw = raw_events_of(on_text)
        try:
            events = stream.__aiter__()
            stopped = False
            while True:
                with trio.move_on_after(idle) as silent:
                    try:
                        event = await events.__anext__()
                    except StopAsyncIteration:
                        break
                if silent.cancelled_caught:
                    raise StreamFault(f"the reply stream was silent for {idle:g} s")
                if event.type == "text" and on_text is not None and event.text:
                    on_text(event.text)
                elif raw is not None and event.type in STREAM_EVENT_TYPES:
                    raw(_raw_event(event))
                stopped = stopped or event.type == "message_stop"
            if not stopped:
                raise StreamFault("the reply stream ended before message_stop (cut off)")
            message = await stream.get_final_message()
            if message.stop_reason is None:
                raise StreamFault("the reply has no stop_reason")
            return message
        finally:
            with trio.CancelScope(shield=True):
                await manager.__aexit__(None, None, None)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        # The exponent is capped only to keep the float finite.
        ceiling = min(self.backoff_max, self.backoff_base * 2.0 ** min(attempt, 64))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _reply(self, request: ModelRequest, message: Any) -> ModelReply:
        content: list[dict[str, Any]] = []
        for block in message.content:
            if block.type == "text":
                content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                content.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
                )
            else:  # thinking and server-tool blocks go back to the API unchanged
                content.append(block.to_dict())
        raw = message.usage
        usage = Usage(
            input_tokens=raw.input_tokens or 0,
            output_tokens=raw.output_tokens or 0,
            cache_creation_input_tokens=raw.cache_creation_input_tokens or 0,
            cache_read_input_tokens=raw.cache_read_input_tokens or 0,
        )
        model = str(message.model or self.name)
        if self.ledger is not None:
            self.ledger.record(request.actor, model, usage)
        return ModelReply(
            content=content,
            stop_reason=str(message.stop_reason),
            usage=usage,
            model=model,
        )


def _raw_event(event: Any) -> dict[str, Any]:
    """A streaming event as the API sent it: the SDK's stream adds the block or
    the message it accumulated to ``content_block_stop`` and ``message_stop``."""
    if event.type == "content_block_stop":
        return {"type": "content_block_stop", "index": event.index}
    if event.type == "message_stop":
        return {"type": "message_stop"}
    data: dict[str, Any] = event.to_dict(mode="json")
    return data


def _classify(exc: anthropic.APIStatusError) -> tuple[Exception, bool]:
    """The exception to raise for *exc*, and whether another attempt may help."""
    error_type = str(exc.type or "")
    message = str(exc.api_message or exc.message)
    status = exc.status_code
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
