"""The SDK transport: ``AnthropicModel(client=anthropic.AsyncAnthropic(...))`` and
``COTERIE_MODEL_CLIENT=sdk`` give what the thin client gives, against the mock server."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import anthropic
import pytest
import trio

from coterie.models import ModelAPIError, ModelError, ModelReply, ModelRequest
from coterie.models.anthropic_model import AnthropicModel
from tests.agent.conftest import coterie, home, workspace
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

__all__ = ["home", "workspace"]  # the fixtures

TOOLS = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
ASK = ModelRequest(system="terse", messages=[{"role": "user", "content": "go"}], tools=TOOLS)
TEXT = [{"text": "Plain words, ünïcode and a newline\nhere."}]
TOOL_USE = [
    {
        "text": "Reading.",
        "tool_uses": [
            {"name": "Read", "input": {"file_path": "a/ü.txt", "limit": 3, "x": [1, None]}},
            {"name": "Read", "input": {}},
        ],
    }
]
ERROR = [{"error": {"status": 400, "type": "invalid_request_error", "message": "bad field"}}]

PROXY_VARS = [f"{name}_proxy" for name in ("http", "https", "all", "no")]


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mock server is on 127.0.0.1: no proxy of the developer's shell in between."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)


async def through(client: str, serve: Serve, turns: list[dict[str, Any]]) -> tuple[Any, str]:
    """The reply (or the error) of one call through *client*, and the user-agent sent."""
    server = await serve(scenario({"lead": turns}))
    if client == "sdk":
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
        model = AnthropicModel("claude-sonnet-4-5", client=sdk, backoff_base=0.001)
    else:
        model = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.url)
    chunks: list[str] = []
    async with model:
        try:
            outcome: Any = await model.complete(ASK, on_text=chunks.append)
        except ModelError as exc:
            outcome = exc
    if isinstance(outcome, ModelReply):
        assert "".join(chunks) == outcome.text
    return outcome, server.requests[0].headers["user-agent"]


def same_reply(a: ModelReply, b: ModelReply) -> None:
    assert (a.content, a.stop_reason, a.usage, a.model) == (
        b.content,
        b.stop_reason,
        b.usage,
        b.model,
    )


@pytest.mark.parametrize("turns", [TEXT, TOOL_USE], ids=["text", "tool_use"])
async def test_a_reply_is_the_same_through_the_sdk(
    serve: Serve, turns: list[dict[str, Any]]
) -> None:
    thin, thin_agent = await through("thin", serve, turns)
    sdk, sdk_agent = await through("sdk", serve, turns)
    assert thin_agent.startswith("coterie/")
    assert sdk_agent.startswith("AsyncAnthropic/")  # the SDK really carried it
    same_reply(thin, sdk)
    if turns is TOOL_USE:
        assert [u["input"] for u in sdk.tool_uses] == [
            {"file_path": "a/ü.txt", "limit": 3, "x": [1, None]},
            {},
        ]


async def test_an_error_status_is_the_same_model_api_error(serve: Serve) -> None:
    thin, _ = await through("thin", serve, ERROR)
    sdk, _ = await through("sdk", serve, ERROR)
    assert type(thin) is type(sdk) is ModelAPIError
    assert (thin.status, thin.type, str(thin)) == (sdk.status, sdk.type, str(sdk))
    assert "bad field" in str(sdk)


async def test_a_refused_address_fails_fast_through_the_sdk(autojump_clock: object) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    sdk = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0)
    retries: list[object] = []
    async with AnthropicModel("claude-sonnet-4-5", client=sdk, max_retries=8) as model:
        with pytest.raises(ModelError, match="refused"):
            await model.complete(ASK, on_retry=retries.append)
    assert len(retries) == 1  # the refusal is recognised through httpx's error


@pytest.mark.slow
@pytest.mark.parametrize("client", ["sdk", ""])
async def test_the_cli_runs_p_through_the_sdk(
    serve: Serve, workspace: Path, home: Path, client: str
) -> None:
    (workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Read", "input": {"file_path": str(workspace / "notes.txt")}}]},
        {"text": "Read them.", "expect": "the notes"},
    ]
    server = await serve(scenario({"lead": turns}))
    env = {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "test-key",
        "COTERIE_MODEL_CLIENT": client,
    }
    run = functools.partial(coterie, "-p", "read notes.txt", cwd=workspace, home=home, env=env)
    done = await trio.to_thread.run_sync(run)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Read them."
    agents = {r.headers["user-agent"].split("/")[0] for r in server.requests}
    assert agents == ({"AsyncAnthropic"} if client == "sdk" else {"coterie"})
    assert len(server.requests) == 2
