"""The thin Messages API client: what it sends, and what it makes of each kind of
answer (against the mock server, or a small h11 server scripting the answer)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.models import ModelRequest
from coterie.models.anthropic_model import AnthropicModel
from coterie.models.messagesapi import ANTHROPIC_VERSION, MessagesClient
from coterie.models.transport import APIStatus, TransportFailure
from tests.models.conftest import scenario
from tests.models.h11_servers import Answer, start_origin

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    import trio

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

ASK = ModelRequest(system="terse", messages=[{"role": "user", "content": "hi"}])
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": ASK.messages}
SSE = (("content-type", "text/event-stream; charset=utf-8"),)


def sse(*events: tuple[str, object]) -> bytes:
    return b"".join(f"event: {k}\ndata: {json.dumps(v)}\n\n".encode() for k, v in events)


START = ("message_start", {"type": "message_start", "message": {"id": "m", "content": []}})
PING = ("ping", {"type": "ping"})

PROXY_VARS = [f"{name}_proxy" for name in ("http", "https", "all", "no")]


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mock server is on 127.0.0.1: no proxy of the developer's shell in between."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)


@pytest.fixture
async def clients() -> AsyncIterator[Callable[..., MessagesClient]]:
    """MessagesClient(...) with no proxy from the environment, closed at the end."""
    made: list[MessagesClient] = []

    def make(base_url: str, **kw: Any) -> MessagesClient:
        kw.setdefault("api_key", "sk-test")
        made.append(MessagesClient(base_url=base_url, environ={}, **kw))
        return made[-1]

    yield make
    for client in made:
        await client.aclose()


async def answered(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient], answer: Answer
) -> MessagesClient:
    origin = await start_origin(nursery, lambda _: answer)
    return clients(origin.url)


# -- what is sent -----------------------------------------------------------------


async def test_an_api_key_goes_as_x_api_key(serve: Serve) -> None:
    server = await serve(scenario({"lead": [{"text": "hello"}]}))
    async with AnthropicModel(
        "claude-sonnet-4-5", api_key="sk-key", base_url=server.url, max_retries=0
    ) as m:
        reply = await m.complete(ASK)
    assert reply.text == "hello"
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "sk-key"
    assert "authorization" not in request.headers
    assert request.headers["anthropic-version"] == ANTHROPIC_VERSION == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert request.json()["stream"] is True
    assert request.json()["model"] == "claude-sonnet-4-5"


async def test_an_auth_token_goes_as_a_bearer(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await serve(scenario({"lead": [{"text": "hello"}]}))
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    async with AnthropicModel("claude-sonnet-4-5", max_retries=0) as model:
        assert (await model.complete(ASK)).text == "hello"
    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer tok-123"
    assert "x-api-key" not in request.headers  # no key invented next to a token
    assert request.headers["anthropic-version"] == ANTHROPIC_VERSION


async def test_extra_headers_and_the_body_as_given(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    seen: list[Any] = []

    def record(request: Any) -> Answer:
        seen.append(request)
        return Answer(headers=SSE, body=sse(START))

    origin = await start_origin(nursery, record)
    client = clients(origin.url)
    events = await client.open({**BODY, "stream": False}, {"X-Coterie-Actor": "alice"})
    await events.aclose()
    (request,) = seen
    assert request.headers["x-coterie-actor"] == "alice"
    assert request.headers["accept"] == "text/event-stream"
    assert json.loads(request.body) == {**BODY, "stream": True}


async def test_a_base_url_with_a_path_prefix(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    targets: list[str] = []

    def record(request: Any) -> Answer:
        targets.append(request.target)
        return Answer(headers=SSE, body=sse(START))

    origin = await start_origin(nursery, record)
    for base in (f"{origin.url}/prefix", f"{origin.url}/prefix/"):
        events = await clients(base).open(BODY, {})
        await events.aclose()
    assert targets == ["/prefix/v1/messages", "/prefix/v1/messages"]


# -- what is made of the answer ---------------------------------------------------


async def test_a_stream_is_read_event_by_event(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    stop = ("message_stop", {"type": "message_stop"})
    client = await answered(nursery, clients, Answer(headers=SSE, body=sse(START, PING, stop)))
    events = await client.open(BODY, {})
    got = [await events.next_event() for _ in range(4)]
    await events.aclose()
    assert got == [START[1], PING[1], stop[1], None]


async def test_a_429_with_retry_after(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    answer = Answer(
        429,
        (("content-type", "application/json"), ("retry-after", "7"), ("Request-Id", "req_1")),
        json.dumps(error).encode(),
    )
    client = await answered(nursery, clients, answer)
    with pytest.raises(APIStatus) as raised:
        await client.open(BODY, {})
    status = raised.value
    assert (status.status, status.error_type, status.message) == (
        429,
        "rate_limit_error",
        "slow down",
    )
    assert status.headers["retry-after"] == "7"
    assert status.headers["request-id"] == "req_1"  # names lower-cased


async def test_a_502_that_is_not_json(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    page = b"<html><body>502 Bad Gateway</body></html>\n"
    client = await answered(nursery, clients, Answer(502, (("content-type", "text/html"),), page))
    with pytest.raises(APIStatus) as raised:
        await client.open(BODY, {})
    assert (raised.value.status, raised.value.error_type) == (502, "api_error")
    assert raised.value.message == page.decode().strip()


async def test_an_error_event_inside_a_200_stream(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = sse(START, PING, ("error", error))
    client = await answered(nursery, clients, Answer(headers=SSE, body=body))
    events = await client.open(BODY, {})
    assert await events.next_event() == START[1]
    assert await events.next_event() == PING[1]
    with pytest.raises(APIStatus) as raised:
        await events.next_event()
    await events.aclose()
    status = raised.value
    assert (status.status, status.error_type, status.message) == (
        200,
        "overloaded_error",
        "Overloaded",
    )


async def test_a_200_that_is_not_a_stream_is_a_transport_failure(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    message = {"id": "m", "type": "message", "content": [], "stop_reason": "end_turn"}
    answer = Answer(
        headers=(("content-type", "application/json"),), body=json.dumps(message).encode()
    )
    client = await answered(nursery, clients, answer)
    with pytest.raises(TransportFailure, match="application/json"):
        await client.open(BODY, {})


async def test_an_event_that_is_not_json_is_a_transport_failure(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    body = sse(START) + b"event: content_block_delta\ndata: {not json\n\n"
    client = await answered(nursery, clients, Answer(headers=SSE, body=body))
    events = await client.open(BODY, {})
    assert await events.next_event() == START[1]
    with pytest.raises(TransportFailure, match="not JSON"):
        await events.next_event()
    await events.aclose()


async def test_errors_through_the_model(serve: Serve) -> None:
    """A 429 error turn of a scenario reaches AnthropicModel as a retry, then its reply."""
    retries: list[Any] = []
    server = await serve(
        scenario(
            {
                "lead": [
                    {"error": {"status": 429, "type": "rate_limit_error", "message": "slow"}},
                    {"text": "after"},
                ]
            }
        )
    )
    async with AnthropicModel(
        "claude-sonnet-4-5", api_key="k", base_url=server.url, backoff_base=0.001
    ) as model:
        reply = await model.complete(ASK, on_retry=retries.append)
    assert reply.text == "after"
    assert [(r.attempt, r.status) for r in retries] == [(1, 429)]


async def test_replies_read_to_their_end_share_a_connection(
    nursery: trio.Nursery, clients: Callable[..., MessagesClient]
) -> None:
    stop = ("message_stop", {"type": "message_stop"})
    origin = await start_origin(nursery, lambda _: Answer(headers=SSE, body=sse(START, stop)))
    client = clients(origin.url)
    for _ in range(2):
        events = await client.open(BODY, {})
        while await events.next_event() is not None:
            pass
        await events.aclose()
    left = await client.open(BODY, {})  # let go before its end: that connection is closed
    await left.aclose()
    events = await client.open(BODY, {})
    await events.aclose()
    assert [r.connection for r in origin.requests] == [1, 1, 1, 2]
