"""AnthropicModel with the real SDK, against the in-process mock server over loopback HTTP."""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any

import pytest

from coterie.models import (
    ModelAPIError,
    ModelError,
    ModelRequest,
    PromptTooLong,
    ScenarioError,
    ScriptedCrash,
    Usage,
    UsageLedger,
    cost_usd,
)
from coterie.models.anthropic_model import AnthropicModel
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

TOOLS = [
    {"name": "Read", "description": "read", "input_schema": {"type": "object"}},
    {"name": "Write", "description": "write", "input_schema": {"type": "object"}},
]


def ask(text: str = "go", **kw: Any) -> ModelRequest:
    fields = {"system": "You are terse.", "messages": [{"role": "user", "content": text}], **kw}
    return ModelRequest(**fields)


@pytest.fixture
async def connect(
    serve: Serve,
) -> AsyncIterator[Callable[..., Awaitable[tuple[AnthropicModel, MockServer]]]]:
    """Serve a scenario and point an AnthropicModel at it (tiny backoff, real clock)."""
    models: list[AnthropicModel] = []

    async def start(scen: Scenario, **kw: Any) -> tuple[AnthropicModel, MockServer]:
        server = await serve(scen)
        kw.setdefault("backoff_base", 0.001)
        model = AnthropicModel("claude-sonnet-5", api_key="test-key", base_url=server.url, **kw)
        models.append(model)
        return model, server

    yield start
    for model in models:
        await model.aclose()


async def test_streamed_text_reaches_on_text_in_deltas(connect: Any) -> None:
    model, _ = await connect(scenario({"lead": [{"text": "Streaming works under Trio."}]}))
    chunks: list[str] = []
    reply = await model.complete(ask(), on_text=chunks.append)
    assert reply.text == "Streaming works under Trio."
    assert len(chunks) > 1
    assert "".join(chunks) == reply.text
    assert reply.stop_reason == "end_turn"


async def test_tool_use_input_is_assembled_from_json_deltas(connect: Any) -> None:
    payload = {
        "file_path": "dir/ü.txt",
        "content": "line 1\nline 2\n",
        "nested": {"n": [1, 2.5, None]},
    }
    uses = [{"name": "Write", "input": payload}, {"name": "Read", "input": {}}]
    model, _ = await connect(scenario({"lead": [{"text": "Writing.", "tool_uses": uses}]}))
    reply = await model.complete(ask(tools=TOOLS))
    assert reply.stop_reason == "tool_use"
    assert [(u["id"], u["name"], u["input"]) for u in reply.tool_uses] == [
        ("toolu_lead_0_0", "Write", payload),
        ("toolu_lead_0_1", "Read", {}),
    ]


async def test_coterie_headers_reach_the_server_and_choose_the_track(connect: Any) -> None:
    model, server = await connect(scenario({"lead": [{"text": "L"}], "alice": [{"text": "A"}]}))
    reply = await model.complete(ask(actor="alice", role="teammate"))
    assert reply.text == "A"
    headers = server.requests[-1].headers
    assert (headers["x-coterie-actor"], headers["x-coterie-role"]) == ("alice", "teammate")
    # The SDK names the async library it found; it must be running on Trio.
    assert headers.get("x-stainless-async", "async:trio") == "async:trio"


async def test_cache_breakpoints_mark_system_tools_and_transcript_end(connect: Any) -> None:
    model, server = await connect(scenario({"lead": [{"text": "ok"}]}))
    request = ask(tools=TOOLS)
    await model.complete(request)
    body = server.requests[-1].json()
    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": ephemeral}
    ]
    assert [t.get("cache_control") for t in body["tools"]] == [None, ephemeral]
    assert body["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in request.tools[-1], "the caller's request is not modified"
    assert request.messages[-1]["content"] == "go"


async def test_the_shared_opening_gets_a_breakpoint_within_the_apis_four(connect: Any) -> None:
    """The first message's run-wide blocks end with a breakpoint of their own when
    the limit of four leaves one: never with a system prompt in two blocks."""
    model, server = await connect(scenario({"lead": [{"text": "ok"}] * 3}))
    opening = [{"type": "text", "text": t} for t in ("<context>", "<tools named>", "role", "go")]
    messages = [{"role": "user", "content": opening}]
    ephemeral = {"type": "ephemeral"}

    def marks(body: dict[str, Any]) -> list[int]:
        return [i for i, b in enumerate(body["messages"][0]["content"]) if "cache_control" in b]

    def count(body: dict[str, Any]) -> int:
        return json.dumps(body).count('"cache_control"')

    await model.complete(ask(tools=TOOLS, messages=messages, shared_opening=2))
    body = server.requests[-1].json()
    assert marks(body) == [1, 3]
    assert body["messages"][0]["content"][1]["cache_control"] == ephemeral
    assert count(body) == 4
    assert "cache_control" not in opening[1], "the caller's request is not modified"
    # A system prompt in two blocks (a subagent's type prompt) leaves no room.
    await model.complete(
        ask(tools=TOOLS, messages=messages, shared_opening=2, system="shared own", shared_system=7)
    )
    body = server.requests[-1].json()
    assert marks(body) == [3]
    assert count(body) == 4
    # Nothing of the agent's own after it: the conversation's breakpoint covers it.
    alone = [{"role": "user", "content": opening[:2]}]
    await model.complete(ask(tools=TOOLS, messages=alone, shared_opening=2))
    assert marks(server.requests[-1].json()) == [1]


async def test_an_overloaded_answer_is_retried(connect: Any) -> None:
    overloaded = {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}
    model, server = await connect(scenario({"lead": [overloaded, {"text": "made it"}]}))
    reply = await model.complete(ask())
    assert reply.text == "made it"
    assert len(server.requests) == 2


async def test_retries_give_up_after_max_retries(connect: Any) -> None:
    unavailable = {"error": {"status": 503, "type": "api_error", "message": "down"}}
    model, server = await connect(scenario({"lead": [unavailable] * 5}), max_retries=2)
    with pytest.raises(ModelAPIError) as info:
        await model.complete(ask())
    assert info.value.status == 503
    assert len(server.requests) == 3


async def test_prompt_too_long_is_not_retried(connect: Any) -> None:
    too_long = {
        "status": 400,
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    }
    model, server = await connect(scenario({"lead": [{"error": too_long}, {"text": "unused"}]}))
    with pytest.raises(PromptTooLong):
        await model.complete(ask())
    assert len(server.requests) == 1


async def test_other_client_errors_are_api_errors_not_retried(connect: Any) -> None:
    model, server = await connect(scenario({"lead": [{"text": "unused"}]}))
    bad = ModelRequest(system="", messages=[{"role": "assistant", "content": "me first"}])
    with pytest.raises(ModelAPIError) as info:
        await model.complete(bad)
    assert (info.value.status, info.value.type) == (400, "invalid_request_error")
    assert len(server.requests) == 1


async def test_a_scripted_crash_comes_back_as_scripted_crash(connect: Any) -> None:
    model, server = await connect(scenario({"lead": [{"crash": "bug in the lead"}]}))
    with pytest.raises(ScriptedCrash, match="bug in the lead"):
        await model.complete(ask())
    assert len(server.requests) == 1


async def test_an_exhausted_track_is_a_scenario_error(connect: Any) -> None:
    model, _ = await connect(scenario({"lead": []}))
    with pytest.raises(ScenarioError, match="no more turns"):
        await model.complete(ask())


async def test_usage_is_taken_from_the_final_message_and_recorded(connect: Any) -> None:
    usage = {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 5000,
    }
    model, _ = await connect(
        scenario({"lead": [{"text": "x", "usage": usage}]}), ledger=UsageLedger()
    )
    reply = await model.complete(ask())
    assert reply.usage == Usage(**usage)
    assert model.ledger.usage("lead") == Usage(**usage)
    assert model.ledger.cost_usd("lead") == pytest.approx(
        cost_usd("claude-sonnet-5", Usage(**usage))
    )


async def test_an_unreachable_server_is_a_model_error_after_retries() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = AnthropicModel(
        "m", api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=1, backoff_base=0.001
    )
    async with model:
        with pytest.raises(ModelError, match=r"cannot reach .* refused"):
            await model.complete(ask())


async def test_env_supplies_key_and_base_url(monkeypatch: pytest.MonkeyPatch, serve: Serve) -> None:
    server = await serve(scenario({"lead": [{"text": "via env"}]}))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    async with AnthropicModel("m") as model:
        assert (await model.complete(ask())).text == "via env"
    headers = server.requests[-1].headers
    # The SDK sends the key as x-api-key or, from 2.x, as a bearer token.
    assert "sk-from-env" in headers.get("x-api-key", headers.get("authorization", ""))
