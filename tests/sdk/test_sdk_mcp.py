"""In-process SDK MCP servers (``@tool`` + ``create_sdk_mcp_server``) served by the
official Python SDK to coterie over the control channel (``mcp_message``), and the
client's requests about them (``get_mcp_status``, ``reconnect_mcp_server``,
``toggle_mcp_server``), against ``coterie mock-server``: no key, no network."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

from tests.agent.conftest import coterie
from tests.sdk.test_python_sdk import options, scenario

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

# The SDK's receive_response leaves its inner generators to the collector under
# Trio (its own code, not coterie's): that warning alone is set aside here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)

ADD = {"tool_uses": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]}


def calculator(calls: list[dict[str, Any]]) -> Any:
    """The SDK's in-process server ``calc``, whose ``add`` records its calls."""

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    return create_sdk_mcp_server("calc", "1.0.0", [add])


def with_calc(opts: ClaudeAgentOptions, calls: list[dict[str, Any]], **more: Any) -> None:
    opts.mcp_servers = {"calc": calculator(calls)}
    for key, value in more.items():
        setattr(opts, key, value)


async def one_prompt(opts: ClaudeAgentOptions, prompt: str) -> list[Any]:
    messages: list[Any] = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query(prompt)
        messages += [message async for message in client.receive_response()]
    return messages


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_the_model_calls_an_sdk_tool_and_reads_its_result(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ADD, {"expect": "5", "text": "The sum is 5."}]))
    stderr: list[str] = []
    calls: list[dict[str, Any]] = []
    opts = options(workspace, home, url, stderr)
    with_calc(opts, calls, allowed_tools=["mcp__calc__add"])  # an allow rule, as any tool's
    messages = await one_prompt(opts, "add 2 and 3")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["mcp_servers"] == [{"name": "calc", "status": "connected", "source": "sdk"}]
    assert "mcp__calc__add" in init.data["tools"]
    assert calls == [{"a": 2, "b": 3}], stderr
    [result] = tool_results(messages)
    assert (result.content, result.is_error) == ("5", False)
    assert messages[-1].result == "The sum is 5."


def test_an_sdk_tool_is_served_under_asyncio_too(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ADD, {"expect": "5", "text": "The sum is 5."}]))
    stderr: list[str] = []
    calls: list[dict[str, Any]] = []
    opts = options(workspace, home, url, stderr)
    with_calc(opts, calls, allowed_tools=["mcp__calc__add"])
    messages = anyio.run(one_prompt, opts, "add 2 and 3", backend="asyncio")
    assert calls == [{"a": 2, "b": 3}], stderr
    assert messages[-1].result == "The sum is 5."


async def test_an_sdk_tool_goes_through_the_permission_gate(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ADD, {"expect": "not now", "text": "Denied."}]))
    stderr: list[str] = []
    calls: list[dict[str, Any]] = []
    asked: list[str] = []

    async def can_use_tool(
        name: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        asked.append(name)
        return PermissionResultDeny(message="not now")

    opts = options(workspace, home, url, stderr)
    with_calc(opts, calls, can_use_tool=can_use_tool)
    messages = await one_prompt(opts, "add 2 and 3")
    assert asked == ["mcp__calc__add"], stderr
    assert calls == []
    [result] = tool_results(messages)
    assert result.is_error
    assert isinstance(messages[-1], ResultMessage)


async def test_the_client_reads_reconnects_and_toggles_the_servers(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"text": "unused"}]))
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    with_calc(opts, [])

    def states(status: Any) -> list[tuple[str, str]]:
        return [(s["name"], s["status"]) for s in status["mcpServers"]]

    async with ClaudeSDKClient(options=opts) as client:
        status = await client.get_mcp_status()
        assert states(status) == [("calc", "connected")], stderr
        assert status["mcpServers"][0]["serverInfo"] == {"name": "calc", "version": "1.0.0"}
        await client.reconnect_mcp_server("calc")
        await client.toggle_mcp_server("calc", enabled=False)
        assert states(await client.get_mcp_status()) == [("calc", "disabled")]
        await client.toggle_mcp_server("calc", enabled=True)
        assert states(await client.get_mcp_status()) == [("calc", "connected")]
        with pytest.raises(Exception, match="nope"):
            await client.reconnect_mcp_server("nope")


def test_without_a_host_an_sdk_server_is_skipped_with_one_notice(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, [{"text": "Hello."}])
    config = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    done = coterie(
        "-p", "hi", "--scenario", str(path), "--mcp-config", config,
        "--output-format", "stream-json", "--verbose", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("calc of type 'sdk' skipped") == 1
    init = json.loads(done.stdout.splitlines()[0])
    assert init["mcp_servers"] == []
