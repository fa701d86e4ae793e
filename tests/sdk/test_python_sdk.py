"""The official Python Agent SDK drives coterie unchanged, through ``cli_path``.

Each test runs the SDK from PyPI (pinned in the test extra) against the real
``coterie`` console script, whose model is ``coterie mock-server`` playing a
scenario over the Messages API (the real ``anthropic`` path): no key, no network.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
import trio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    query,
)

from coterie.runs import runs_root

if TYPE_CHECKING:
    from collections.abc import Callable

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")


def options(workspace: Path, home: Path, url: str, stderr: list[str]) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=COTERIE,
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        stderr=stderr.append,
    )


def scenario(tmp_path: Path, turns: list[dict[str, Any]]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "sdk", "tracks": {"lead": turns}}))
    return path


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


def check_one_turn(messages: list[Any]) -> None:
    init, reply, result = messages
    assert isinstance(init, SystemMessage)
    assert init.subtype == "init"
    assert isinstance(reply, AssistantMessage)
    assert reply.model
    assert [b.text for b in reply.content if isinstance(b, TextBlock)] == ["Hello from coterie."]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == (
        "success", False, "Hello from coterie."
    )  # fmt: skip
    assert result.session_id == init.data["session_id"]


def test_query_with_a_string_prompt_under_asyncio(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"expect": "hi", "text": "Hello from coterie."}]))
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    messages = anyio.run(collect, "hi", opts, backend="asyncio")
    check_one_turn(messages)


async def test_query_with_a_string_prompt_under_trio(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"expect": "hi", "text": "Hello from coterie."}]))
    stderr: list[str] = []
    check_one_turn(await collect("hi", options(workspace, home, url, stderr)))


# The SDK's receive_response leaves its inner generators to the collector under
# Trio (its own code, not coterie's): that warning alone is set aside here.
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_a_client_holds_one_conversation_over_several_turns(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    turns = [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options=options(workspace, home, url, stderr)) as client:
        for prompt in ("first", "second"):
            await client.query(prompt)
            results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["one", "two"], stderr
    assert len({r.session_id for r in results}) == 1


TOUCH = {"tool_uses": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}


async def ask_once(
    opts: ClaudeAgentOptions, prompt: str
) -> tuple[list[ToolResultBlock], list[ResultMessage]]:
    """One prompt through a client: the tool results and results it streams."""
    tool_results: list[ToolResultBlock] = []
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                tool_results += [b for b in message.content if isinstance(b, ToolResultBlock)]
            elif isinstance(message, ResultMessage):
                results.append(message)
    return tool_results, results


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
@pytest.mark.parametrize("allow", [True, False])
async def test_the_hosts_can_use_tool_answers_the_permission_question(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str], allow: bool
) -> None:
    """Default mode asks about `touch`: the SDK's callback is the person asked."""
    url = mock_server(scenario(tmp_path, [TOUCH, {"text": "done"}]))
    asked: list[tuple[str, dict[str, Any], Any]] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool, input, context))
        return PermissionResultAllow() if allow else PermissionResultDeny(message="not today")

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    [result_block], [result] = await ask_once(opts, "go")
    assert [(tool, input) for tool, input, _ in asked] == [("Bash", {"command": "touch made.txt"})]
    assert asked[0][2].tool_use_id  # the tool_use the question is about
    suggested = asked[0][2].suggestions
    assert [(r.tool_name, r.rule_content) for s in suggested for r in s.rules or []] == [
        ("Bash", "touch:*")
    ]
    assert (workspace / "made.txt").exists() is allow
    assert result_block.is_error is not allow
    if not allow:
        assert "not today" in str(result_block.content)
    assert result.result == "done"


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_an_allow_with_the_suggested_rule_is_not_asked_again(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """ "Yes, don't ask again": the host answers with the suggestion it was offered
    (``updated_permissions``), and the next `touch` of the run runs unasked."""
    other = {"tool_uses": [{"name": "Bash", "input": {"command": "touch other.txt"}}]}
    url = mock_server(scenario(tmp_path, [TOUCH, other, {"text": "done"}]))
    asked: list[str] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(input["command"])
        return PermissionResultAllow(updated_permissions=context.suggestions)

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    blocks, [result] = await ask_once(opts, "go")
    assert asked == ["touch made.txt"], stderr
    assert result.result == "done"
    assert [b.is_error for b in blocks] == [False, False]
    assert (workspace / "other.txt").exists()


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_interrupt_stops_a_long_bash_and_the_conversation_goes_on(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    slow = {"tool_uses": [{"name": "Bash", "input": {"command": "sleep 30; touch late.txt"}}]}
    url = mock_server(scenario(tmp_path, [slow, {"text": "stopped"}, {"text": "next"}]))
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "bypassPermissions"
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("go")
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                await client.interrupt()  # the Bash call is under way
            elif isinstance(message, ResultMessage):
                results.append(message)
        await client.query("and then")
        results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    assert (results[0].subtype, results[0].is_error) == ("error_interrupted", True), stderr
    assert results[-1].subtype == "success"
    assert not (workspace / "late.txt").exists()


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_set_permission_mode_changes_what_the_run_asks(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """A Write asks in default mode (denied headless); after the host switches the run
    to acceptEdits it passes. Entering bypassPermissions mid-run is refused."""
    write = {"tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]}
    url = mock_server(scenario(tmp_path, [write, {"text": "first"}, write, {"text": "second"}]))
    stderr: list[str] = []
    outcomes: list[bool] = []
    async with ClaudeSDKClient(options=options(workspace, home, url, stderr)) as client:
        for switch in (None, "acceptEdits"):
            if switch is not None:
                await client.set_permission_mode(switch)
            await client.query("write a.txt")
            async for message in client.receive_response():
                if isinstance(message, UserMessage) and isinstance(message.content, list):
                    outcomes += [not b.is_error for b in message.content
                                 if isinstance(b, ToolResultBlock)]  # fmt: skip
        with pytest.raises(Exception, match="bypassPermissions"):
            await client.set_permission_mode("bypassPermissions")
    assert outcomes == [False, True], stderr
    assert (workspace / "a.txt").read_text() == "x"


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_a_host_resumes_its_run_by_id_and_the_conversation_goes_on(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """The SDK's resume= (``--resume ID``): a second process goes on in the same run
    (one run in the workspace, the same session id) instead of starting another."""
    turns = [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    [first] = [m for m in await collect("first", options(workspace, home, url, stderr))
               if isinstance(m, ResultMessage)]  # fmt: skip
    again = options(workspace, home, url, stderr)
    again.resume = first.session_id
    [second] = [m for m in await collect("second", again) if isinstance(m, ResultMessage)]
    assert (first.result, second.result) == ("one", "two"), stderr
    assert second.session_id == first.session_id
    runs = list(runs_root(workspace).iterdir())
    assert [r.name for r in runs] == [first.session_id]


def kill_coterie_in(workspace: Path) -> int:
    """kill -9 the coterie process working in *workspace* (the SDK's child); its pid."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cwd == str(workspace) and any(b"--input-format" in part for part in cmdline):
            os.kill(int(entry.name), signal.SIGKILL)
            return int(entry.name)
    raise AssertionError("no coterie process in the workspace")


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_a_run_whose_host_was_killed_mid_tool_resumes_with_nothing_run_twice(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """kill -9 in the middle of a Bash call, then resume= from a new host: the call is
    reported as interrupted to the model, never run again, and the new prompt goes on."""
    slow = {
        "tool_uses": [{"name": "Bash", "input": {"command": "echo ran >> count.txt; sleep 30"}}]
    }
    url = mock_server(
        scenario(tmp_path, [slow, {"text": "after"}, {"expect": "next", "text": "on"}])
    )
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "bypassPermissions"
    run_id = ""
    with contextlib.suppress(Exception):  # the host loses its CLI: the SDK raises
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("go")
            async for message in client.receive_messages():
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    run_id = message.data["session_id"]
                if isinstance(message, AssistantMessage):
                    while not (workspace / "count.txt").exists():
                        await trio.sleep(0.05)  # the command has started
                    kill_coterie_in(workspace)
    assert run_id
    again = options(workspace, home, url, stderr)
    again.permission_mode = "bypassPermissions"
    again.resume = run_id
    [result] = [m for m in await collect("next", again) if isinstance(m, ResultMessage)]
    assert (result.result, result.session_id) == ("on", run_id), stderr
    assert (workspace / "count.txt").read_text() == "ran\n"


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_a_pre_tool_use_hook_callback_of_the_host_blocks_a_call(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """The SDK's hooks= (hook_callback): the host's Python hook denies the Bash call."""
    url = mock_server(scenario(tmp_path, [TOUCH, {"text": "done"}]))
    seen: list[dict[str, Any]] = []

    async def no_touching(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(data)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "the host says no",
            }
        }

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "bypassPermissions"
    opts.hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_touching])]}
    [result_block], [result] = await ask_once(opts, "go")
    assert [(d["tool_name"], d["tool_input"]) for d in seen] == [
        ("Bash", {"command": "touch made.txt"})
    ], stderr
    assert result_block.is_error
    assert "the host says no" in str(result_block.content)
    assert not (workspace / "made.txt").exists()
    assert result.result == "done"


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
@pytest.mark.parametrize(
    ("rewritten", "runs"), [("touch other.txt", True), ("rm -f keep.txt", False)]
)
async def test_an_updated_input_runs_instead_unless_a_deny_rule_forbids_it(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str],
    rewritten: str, runs: bool,
) -> None:  # fmt: skip
    """can_use_tool's updatedInput is what runs, judged again by the deny rules."""
    (workspace / "keep.txt").write_text("kept")
    url = mock_server(scenario(tmp_path, [TOUCH, {"text": "done"}]))

    async def rewrite(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={"command": rewritten})

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = rewrite
    opts.disallowed_tools = ["Bash(rm:*)"]
    [result_block], _ = await ask_once(opts, "go")
    assert not (workspace / "made.txt").exists()
    assert (workspace / "other.txt").exists() is (runs and "other" in rewritten)
    assert (workspace / "keep.txt").exists()
    assert result_block.is_error is not runs, result_block.content


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_set_model_changes_the_model_of_the_next_prompts(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [{"text": "one"}, {"text": "two"}]))
    stderr: list[str] = []
    models: list[str] = []
    async with ClaudeSDKClient(options=options(workspace, home, url, stderr)) as client:
        for chosen in (None, "claude-haiku-4-5"):
            if chosen is not None:
                await client.set_model(chosen)
            await client.query("go")
            models += [m.model async for m in client.receive_response()
                       if isinstance(m, AssistantMessage)]  # fmt: skip
    assert models[1] == "claude-haiku-4-5", (models, stderr)
    assert models[0] != models[1]
