"""The official Python Agent SDK's structured output (``output_format``) on coterie.

The SDK passes ``--json-schema`` to the CLI it spawns (here the ``coterie`` console
script, its model ``coterie mock-server`` playing a scenario over the Messages API)
and reads the answer from ``ResultMessage.structured_output``: no key, no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultError,
    ResultMessage,
    ToolUseBlock,
    query,
)

if TYPE_CHECKING:
    from collections.abc import Callable

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


def options(workspace: Path, home: Path, url: str, stderr: list[str]) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=COTERIE,
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        stderr=stderr.append,
        output_format={"type": "json_schema", "schema": SCHEMA},
    )


def scenario(tmp_path: Path, turns: list[dict[str, Any]]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "sdk-structured", "tracks": {"lead": turns}}))
    return path


def answer(value: dict[str, Any]) -> dict[str, Any]:
    return {"tool_uses": [{"name": "StructuredOutput", "input": value}]}


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


async def collect_into(messages: list[Any], prompt: str, opts: ClaudeAgentOptions) -> None:
    """Append the messages of *prompt* to *messages*, up to whatever the SDK raises."""
    async for message in query(prompt=prompt, options=opts):
        messages.append(message)


def test_output_format_gives_the_result_its_structured_output(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """The model is reminded once when it answers in prose, then answers through the
    tool; the SDK's result carries the answer."""
    turns = [
        {"text": "Paris, about two million people."},
        {"expect": "StructuredOutput", **answer({"city": "Paris", "population": 2102650})},
    ]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    messages = anyio.run(collect, "Biggest city of France?", options(workspace, home, url, stderr))
    result = messages[-1]
    assert isinstance(result, ResultMessage), stderr
    assert (result.subtype, result.is_error) == ("success", False), stderr
    assert result.structured_output == {"city": "Paris", "population": 2102650}
    calls = [
        b.name
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    assert calls == ["StructuredOutput"]


async def test_an_answer_that_never_fits_is_an_error_result_under_trio(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """Five refused answers end the prompt with Claude Code's error subtype; as after
    any error result, the CLI exits 1, which the SDK raises as a ResultError once it
    has given the result message."""
    turns = [answer({"city": "Paris", "population": "many"}) for _ in range(5)]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    messages: list[Any] = []
    opts = options(workspace, home, url, stderr)
    with pytest.raises(ResultError) as raised:
        await collect_into(messages, "Biggest city of France?", opts)
    result = messages[-1]
    assert isinstance(result, ResultMessage), stderr
    assert (result.subtype, result.is_error) == ("error_max_structured_output_retries", True)
    assert result.structured_output is None
    assert raised.value.exit_code == 1
