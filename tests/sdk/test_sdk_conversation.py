"""A host's conversation as the official Python Agent SDK holds it with coterie:
``/clear`` (a ConversationResetMessage, then a new session), ``origin`` on results,
an API error raised as the SDK's ResultError, and ``forward_subagent_text``.

As in ``test_python_sdk.py``: the SDK from PyPI drives the ``coterie`` console
script, whose model is ``coterie mock-server`` playing a scenario over the
Messages API (the real ``anthropic`` path), with no key and no network.
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
    ClaudeSDKClient,
    ConversationResetMessage,
    ResultError,
    ResultMessage,
    TextBlock,
    query,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")

# The SDK's reader task may outlive the client by a moment at teardown (as in
# test_python_sdk.py's multi-turn test).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)


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
    path.write_text(json.dumps({"name": "sdk-conversation", "tracks": {"lead": lead, **tracks}}))
    return path


async def test_clear_resets_the_conversation_into_a_new_session(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    turns = [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]
    url = mock_server(scenario(tmp_path, turns))
    seen: list[Any] = []
    async with ClaudeSDKClient(options=options(workspace, home, url)) as client:
        for prompt in ("first", "/clear", "second"):
            await client.query(prompt)
            seen += [m async for m in client.receive_response()]
    [reset] = [m for m in seen if isinstance(m, ConversationResetMessage)]
    first, cleared, second = [m for m in seen if isinstance(m, ResultMessage)]
    assert reset.session_id == first.session_id
    assert reset.new_conversation_id
    assert (cleared.num_turns, cleared.result, cleared.is_error) == (0, "", False)
    assert cleared.session_id != first.session_id
    assert second.session_id == cleared.session_id
    assert (first.result, second.result) == ("one", "two")


async def test_a_host_stamped_origin_is_echoed_on_its_result(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"text": "one"}, {"text": "two"}]))

    async def line(text: str, **extra: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": text},
               "parent_tool_use_id": None, **extra}  # fmt: skip

    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options=options(workspace, home, url)) as client:
        for stream in (line("a", origin={"kind": "human"}), line("b")):
            await client.query(stream)
            results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    assert [r.origin for r in results] == [{"kind": "human"}, None]


async def test_an_api_error_is_the_sdks_result_error_with_the_status(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    error = {"status": 404, "type": "not_found_error", "message": "model: nope"}
    url = mock_server(scenario(tmp_path, [{"error": error}]))
    seen: list[Any] = []

    async def collect() -> None:
        async for message in query(prompt="hi", options=options(workspace, home, url)):
            seen.append(message)

    with pytest.raises(ResultError) as caught:
        await collect()
    [said] = [m for m in seen if isinstance(m, AssistantMessage)]
    [result] = [m for m in seen if isinstance(m, ResultMessage)]
    # Claude Code's word for a model the API does not know (newer than the SDK's Literal).
    assert str(said.error) == "model_not_found"
    assert (result.subtype, result.is_error, result.terminal_reason) == (
        "success", True, "api_error"
    )  # fmt: skip
    assert (caught.value.api_error_status, caught.value.exit_code) == (404, 1)
    assert result.result is not None
    assert result.result in str(caught.value)


def greeting_scenario(tmp_path: Path) -> Path:
    call = {"name": "Agent", "input": {"description": "Greet", "prompt": "say hi",
                                       "run_in_background": False}}  # fmt: skip
    return scenario(
        tmp_path, [{"tool_uses": [call]}, {"text": "DONE"}], subagent=[{"text": "Hi there!"}]
    )


@pytest.mark.parametrize("forward", [False, True])
async def test_a_subagents_text_is_forwarded_only_when_asked(
    forward: bool,
    tmp_path: Path,
    workspace: Path,
    home: Path,
    mock_server: Callable[[Path], str],
) -> None:
    url = mock_server(greeting_scenario(tmp_path))
    opts = options(workspace, home, url, forward_subagent_text=forward)
    messages = [m async for m in query(prompt="greet", options=opts)]
    said = [
        b.text
        for m in messages
        if isinstance(m, AssistantMessage) and m.parent_tool_use_id is not None
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert said == (["Hi there!"] if forward else [])
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "DONE"
