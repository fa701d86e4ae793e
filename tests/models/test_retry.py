"""AnthropicModel's retry loop on a fake transport and Trio's fake clock: which errors, how long."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest
import trio

from coterie.models import ModelAPIError, ModelRequest
from coterie.models.anthropic_model import AnthropicModel, _classify, _retry_after
from coterie.models.transport import APIStatus, TransportFailure

ASK = ModelRequest(system="", messages=[{"role": "user", "content": "go"}])
#: The events of a complete one-text reply.
REPLY = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 0},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]  # fmt: skip


def status_error(status: int, error_type: str, headers: dict[str, str] | None = None) -> APIStatus:
    return APIStatus(status, error_type, error_type, headers or {})


class FakeStream:
    def __init__(self) -> None:
        self.events = deque(REPLY)

    async def next_event(self) -> dict[str, Any] | None:
        return self.events.popleft() if self.events else None

    async def aclose(self) -> None:
        pass


class FakeTransport:
    """Stands in for the HTTP client: each call takes the next scripted outcome."""

    base_url = "http://fake"

    def __init__(self, *outcomes: BaseException | None) -> None:
        self.outcomes = deque(outcomes)
        self.calls = 0

    async def open(self, body: dict[str, Any], headers: dict[str, str]) -> FakeStream:
        self.calls += 1
        outcome = self.outcomes.popleft() if self.outcomes else None
        if outcome is not None:
            raise outcome
        return FakeStream()

    async def aclose(self) -> None:
        pass


def model_on(client: FakeTransport, **kw: Any) -> AnthropicModel:
    return AnthropicModel("m", transport=client, **kw)


async def test_backoff_is_exponential_with_jitter(autojump_clock: trio.abc.Clock) -> None:
    client = FakeTransport(*(status_error(529, "overloaded_error") for _ in range(4)))
    model = model_on(client, backoff_base=1.0, backoff_max=60.0, rng=random.Random(7))
    start = trio.current_time()
    reply = await model.complete(ASK)
    replay = random.Random(7)
    expected = sum(2**n / 2 + replay.uniform(0, 2**n / 2) for n in range(4))
    assert reply.text == "done"
    assert client.calls == 5
    assert trio.current_time() - start == pytest.approx(expected)


async def test_each_delay_stays_within_its_window() -> None:
    model = model_on(FakeTransport(), backoff_base=0.5, backoff_max=8.0)
    for attempt in range(10):
        ceiling = min(8.0, 0.5 * 2**attempt)
        assert ceiling / 2 <= model._delay(attempt, None) <= ceiling


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "999"}, 10.0),
    ],
)
async def test_retry_after_is_honoured_up_to_backoff_max(
    autojump_clock: trio.abc.Clock, headers: dict[str, str], wait: float
) -> None:
    client = FakeTransport(status_error(429, "rate_limit_error", headers))
    model = model_on(client, backoff_base=100.0, backoff_max=10.0)
    start = trio.current_time()
    await model.complete(ASK)
    assert trio.current_time() - start == pytest.approx(wait)


async def test_connection_errors_are_retried(autojump_clock: trio.abc.Clock) -> None:
    client = FakeTransport(TransportFailure("connection reset"), TransportFailure("read error"))
    reply = await model_on(client).complete(ASK)
    assert reply.text == "done"
    assert client.calls == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
async def test_client_errors_are_not_retried(status: int) -> None:
    client = FakeTransport(status_error(status, "invalid_request_error"))
    with pytest.raises(ModelAPIError) as info:
        await model_on(client).complete(ASK)
    assert info.value.status == status
    assert client.calls == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503, 529])
async def test_transient_statuses_are_retried(autojump_clock: trio.abc.Clock, status: int) -> None:
    client = FakeTransport(status_error(status, "api_error"))
    await model_on(client).complete(ASK)
    assert client.calls == 2


def test_an_sse_error_event_is_classified_by_its_type() -> None:
    """Errors inside a 200 stream carry only a type; overloaded ones are worth a retry."""
    overloaded, retry = _classify(status_error(200, "overloaded_error"))
    refused, no_retry = _classify(status_error(200, "invalid_request_error"))
    assert isinstance(overloaded, ModelAPIError)
    assert isinstance(refused, ModelAPIError)
    assert (overloaded.status, retry) == (529, True)
    assert (refused.status, no_retry) == (400, False)


async def test_cancellation_interrupts_the_backoff(autojump_clock: trio.abc.Clock) -> None:
    client = FakeTransport(*(status_error(529, "overloaded_error") for _ in range(100)))
    model = model_on(client, max_retries=100, backoff_base=10.0, backoff_max=10.0)
    with trio.move_on_after(30) as scope:
        await model.complete(ASK)
    assert scope.cancelled_caught
    # Each wait is jittered between half the ceiling (5 s) and all of it: at most one
    # call every 5 s of the 30, never the 100 the retries would allow.
    assert client.calls <= 1 + 30 // 5


def test_retry_after_parsing() -> None:
    assert _retry_after({"retry-after": "2.5"}) == 2.5
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert _retry_after({"retry-after": "soon"}) is None
    assert _retry_after({}) is None
