"""The mock Messages-API server over real loopback HTTP: wire format, tracks, refusals."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2
import pytest

from tests.models.conftest import scenario

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

HELLO = {"model": "claude-test", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=10) as client:
        yield client


async def post(
    http: httpx2.AsyncClient, server: MockServer, body: Any, **headers: str
) -> httpx2.Response:
    return await http.post(
        f"{server.url}/v1/messages",
        content=json.dumps(body),
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


def sse_names(raw: str) -> list[str]:
    return [line.removeprefix("event: ") for line in raw.splitlines() if line.startswith("event: ")]


async def test_json_reply_has_the_api_shape(serve: Serve, http: httpx2.AsyncClient) -> None:
    server = await serve(scenario({"lead": [{"text": "hello"}]}))
    response = await post(http, server, HELLO)
    assert response.status_code == 200
    data = response.json()
    assert (data["type"], data["role"]) == ("message", "assistant")
    assert data["model"] == "claude-test"
    assert data["content"] == [{"type": "text", "text": "hello"}]
    assert data["stop_reason"] == "end_turn"
    assert set(data["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }


async def test_sse_events_come_in_the_api_order(serve: Serve, http: httpx2.AsyncClient) -> None:
    uses = [{"name": "Write", "input": {"file_path": "a", "content": "b"}}]
    server = await serve(scenario({"lead": [{"text": "hey", "tool_uses": uses}]}))
    response = await post(http, server, {**HELLO, "stream": True})
    assert response.headers["content-type"] == "text/event-stream"
    names = sse_names(response.text)
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    assert "ping" in names
    deltas = [
        json.loads(line[6:]) for line in response.text.splitlines() if '"input_json_delta"' in line
    ]
    assert json.loads("".join(d["delta"]["partial_json"] for d in deltas)) == uses[0]["input"]


async def test_the_real_sdk_parses_json_replies(serve: Serve) -> None:
    server = await serve(scenario({"lead": [{"tool_uses": [{"name": "Read", "input": {"x": 1}}]}]}))
    async with anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0) as client:
        message = await client.messages.create(**HELLO)  # type: ignore[call-overload]
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "tool_use"
    assert message.content[0].input == {"x": 1}


async def test_count_tokens_answers_an_estimate(serve: Serve) -> None:
    server = await serve(scenario({"lead": []}))
    async with anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0) as client:
        count = await client.messages.count_tokens(
            model="m", messages=[{"role": "user", "content": "x" * 400}]
        )
    assert 100 <= count.input_tokens <= 120


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "lead"),
        ({"x_coterie_actor": "alice", "x_coterie_role": "teammate"}, "alice"),
        ({"x_coterie_actor": "bob", "x_coterie_role": "teammate"}, "teammate"),
        ({"x_coterie_role": "evaluator"}, "evaluator"),
    ],
)
async def test_track_comes_from_the_coterie_headers(
    serve: Serve, http: httpx2.AsyncClient, headers: dict[str, str], expected: str
) -> None:
    tracks = {name: [{"text": name}] for name in ("lead", "alice", "teammate", "evaluator")}
    server = await serve(scenario(tracks))
    response = await post(http, server, HELLO, **headers)
    assert response.json()["content"][0]["text"] == expected


async def test_a_tool_use_without_its_result_is_a_400(
    serve: Serve, http: httpx2.AsyncClient
) -> None:
    server = await serve(scenario({"lead": [{"text": "unused"}]}))
    body = {
        **HELLO,
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "X", "input": {}}],
            },
            {"role": "user", "content": "and?"},
        ],
    }
    response = await post(http, server, body)
    assert response.status_code == 400
    error = response.json()
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    assert "t1" in error["error"]["message"]
    assert server.player.cursors == {}, "a refused request consumes no turn"


@pytest.mark.parametrize(
    ("method", "path", "status", "error_type"),
    [
        ("GET", "/v1/messages", 405, "invalid_request_error"),
        ("POST", "/v1/complete", 404, "not_found_error"),
    ],
)
async def test_unknown_routes_get_api_errors(
    serve: Serve, http: httpx2.AsyncClient, method: str, path: str, status: int, error_type: str
) -> None:
    server = await serve(scenario({"lead": []}))
    response = await http.request(method, server.url + path)
    assert response.status_code == status
    assert response.json()["error"]["type"] == error_type


async def test_a_body_that_is_not_json_is_a_400(serve: Serve, http: httpx2.AsyncClient) -> None:
    server = await serve(scenario({"lead": []}))
    response = await http.post(server.url + "/v1/messages", content=b"{nope")
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]["message"]


async def test_error_and_crash_turns_answer_with_their_status(
    serve: Serve, http: httpx2.AsyncClient
) -> None:
    server = await serve(
        scenario(
            {
                "lead": [
                    {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}},
                    {"crash": "kaboom"},
                ]
            }
        )
    )
    overloaded = await post(http, server, HELLO)
    crashed = await post(http, server, HELLO)
    assert overloaded.status_code == 529
    assert overloaded.json()["error"] == {"type": "overloaded_error", "message": "busy"}
    assert crashed.status_code == 418
    assert crashed.json()["error"] == {"type": "coterie_scripted_crash", "message": "kaboom"}


async def test_an_exhausted_track_is_a_scenario_error(
    serve: Serve, http: httpx2.AsyncClient
) -> None:
    server = await serve(scenario({"lead": []}))
    response = await post(http, server, HELLO)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "coterie_scenario_error"
    assert "tracks.lead has no more turns" in response.json()["error"]["message"]


async def test_requests_are_recorded_with_their_headers(
    serve: Serve, http: httpx2.AsyncClient
) -> None:
    server = await serve(scenario({"lead": [{"text": "a"}, {"text": "b"}]}))
    await post(http, server, HELLO, x_coterie_actor="lead")
    await post(http, server, HELLO)
    assert len(server.requests) == 2
    assert server.requests[0].headers["x-coterie-actor"] == "lead"
    assert server.requests[1].json() == HELLO
