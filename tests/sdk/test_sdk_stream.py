"""What the official Python Agent SDK reads of coterie's stream: partial messages,
structured tool results, the result's terminal reason and model usage, hook events
and subagents as tasks.

As in ``test_python_sdk.py``: the SDK from PyPI drives the ``coterie`` console
script, whose model is ``coterie mock-server`` playing a scenario over the
Messages API (the real ``anthropic`` streaming path), with no key and no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    HookEventMessage,
    ResultError,
    ResultMessage,
    StreamEvent,
    TaskNotificationMessage,
    TaskStartedMessage,
    ToolUseBlock,
    UserMessage,
    query,
)

if TYPE_CHECKING:
    from collections.abc import Callable

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")

ECHO: dict[str, Any] = {"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]}


def options(workspace: Path, home: Path, url: str, **more: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=COTERIE,
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        permission_mode="bypassPermissions",
        **more,
    )


def scenario(tmp_path: Path, lead: list[dict[str, Any]], **tracks: Any) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "sdk-stream", "tracks": {"lead": lead, **tracks}}))
    return path


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


async def test_partial_messages_stream_each_reply_as_the_api_sent_it(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"text": "Hello there."}]))
    messages = await collect("hi", options(workspace, home, url, include_partial_messages=True))
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    deltas = [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]
    assert "".join(deltas) == "Hello there."
    [reply] = [m for m in messages if isinstance(m, AssistantMessage)]
    assert reply.message_id == events[0]["message"]["id"]
    # The stream comes before the reply it makes.
    assert messages.index(reply) > max(
        i for i, m in enumerate(messages) if isinstance(m, StreamEvent)
    )


async def test_without_the_option_no_stream_event_is_sent(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"text": "Hello there."}]))
    messages = await collect("hi", options(workspace, home, url))
    assert not [m for m in messages if isinstance(m, StreamEvent)]


async def test_a_bash_result_and_the_result_say_what_claude_codes_do(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ECHO, {"text": "done"}]))
    messages = await collect("go", options(workspace, home, url))
    [tool] = [m for m in messages if isinstance(m, UserMessage)]
    assert tool.tool_use_result is not None
    assert tool.tool_use_result["stdout"] == "hi"
    assert tool.tool_use_result["interrupted"] is False
    assert tool.uuid
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.terminal_reason == "completed"
    assert result.model_usage is not None
    [(model, usage)] = result.model_usage.items()
    assert model == next(m for m in messages if isinstance(m, AssistantMessage)).model
    assert usage["inputTokens"] > 0
    assert usage["outputTokens"] > 0
    assert usage["costUSD"] > 0
    assert usage["contextWindow"] > 0


async def test_the_turn_limit_is_the_terminal_reason(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ECHO, {"text": "done"}]))
    messages: list[Any] = []

    async def gather() -> None:
        async for message in query(prompt="go", options=options(workspace, home, url, max_turns=1)):
            messages.append(message)

    # The SDK raises on an error result, after it handed the result over.
    with pytest.raises(ResultError, match="limit of 1 turns"):
        await gather()
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert (result.subtype, result.terminal_reason) == ("error_max_turns", "max_turns")


async def test_hook_events_come_around_each_hook(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    hook = {"type": "command", "command": "echo checked"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    url = mock_server(scenario(tmp_path, [ECHO, {"text": "done"}]))
    messages = await collect("go", options(workspace, home, url, include_hook_events=True))
    hooks = [m for m in messages if isinstance(m, HookEventMessage)]
    assert [(h.subtype, h.hook_event_name) for h in hooks] == [
        ("hook_started", "PreToolUse"),
        ("hook_response", "PreToolUse"),
    ]
    answered = hooks[1].data
    assert (answered["hook_name"], answered["stdout"], answered["exit_code"]) == (
        "PreToolUse:Bash",
        "checked\n",
        0,
    )
    assert answered["outcome"] == "success"
    assert hooks[0].data["hook_id"] == answered["hook_id"]


async def test_a_subagent_is_a_task_the_host_sees_start_and_end(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    look = {"description": "look around", "prompt": "Say hi.", "subagent_type": "general-purpose"}
    lead: list[dict[str, Any]] = [{"tool_uses": [{"name": "Agent", "input": look}]}]
    lead.append({"text": "It said hi."})
    url = mock_server(scenario(tmp_path, lead, subagent=[ECHO, {"text": "hi"}]))
    messages = await collect("go", options(workspace, home, url))
    [call] = [
        b
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock) and b.name == "Agent"
    ]
    [started] = [m for m in messages if isinstance(m, TaskStartedMessage)]
    [ended] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert (started.tool_use_id, started.description) == (call.id, "look around")
    assert (ended.task_id, ended.tool_use_id, ended.status) == (
        started.task_id,
        call.id,
        "completed",
    )
    assert ended.summary == "hi"
    assert ended.usage is not None
    assert ended.usage["tool_uses"] == 1
    agent_result = next(
        m for m in messages if isinstance(m, UserMessage) and m.parent_tool_use_id is None
    )
    assert agent_result.tool_use_result is not None
    assert agent_result.tool_use_result["agentId"] == started.task_id
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "It said hi."
