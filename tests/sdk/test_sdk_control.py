"""The host's requests about the run and its setup: subagents defined by the host
(``agents=`` in ``initialize``), ``get_context_usage``, ``stop_task`` and
``rewind_files``, through the official SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import AgentDefinition, ClaudeSDKClient, ResultMessage, SystemMessage

from tests.sdk.test_python_sdk import options, scenario

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

UNCLOSED = (
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)


@pytest.mark.filterwarnings(UNCLOSED)
async def test_the_hosts_subagents_are_the_runs(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    greet = {"description": "greet", "prompt": "say hello", "subagent_type": "greeter"}
    tracks: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Task", "input": greet}]},
        {"expect": "hello from the greeter", "text": "it greeted"},
    ]
    path = scenario(tmp_path, tracks)
    data = path.read_text().replace(
        '"tracks": {', '"tracks": {"subagent": [{"text": "hello from the greeter"}], ', 1
    )
    path.write_text(data)
    url = mock_server(path)
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.agents = {"greeter": AgentDefinition(description="Greets", prompt="You greet.")}
    messages: list[Any] = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("go")
        messages += [m async for m in client.receive_response()]
        usage = await client.get_context_usage()
        with pytest.raises(Exception, match="no task"):
            await client.stop_task("nobody")
        with pytest.raises(Exception, match="checkpoints"):
            await client.rewind_files("some-message")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "greeter" in init.data["agents"], stderr
    assert init.data["output_style"] == "default"
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "it greeted", stderr
    assert usage["totalTokens"] > 0
    assert usage["rawMaxTokens"] >= usage["maxTokens"] > usage["totalTokens"]
    assert [c["name"] for c in usage["categories"]][1:] == [
        "Messages", "Free space", "Autocompact buffer"
    ]  # fmt: skip
