"""A file tool reaching outside the workspace asks the host (the Agent SDK's
``can_use_tool``), as Claude Code does; its yes lets that one call through, and
nothing else (issue 25). Headless with nobody to ask, it is denied."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext

from tests.agent.conftest import coterie
from tests.sdk.test_python_sdk import ask_once, options, scenario

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

UNCLOSED = (
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)


def write(path: Path, text: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Write", "input": {"file_path": str(path), "content": text}}]}


@pytest.mark.filterwarnings(UNCLOSED)
@pytest.mark.parametrize("allow", [True, False])
async def test_a_write_outside_asks_the_host_and_its_yes_is_for_that_call_only(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str], allow: bool
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first, second = elsewhere / "one.txt", elsewhere / "two.txt"
    url = mock_server(scenario(tmp_path, [write(first, "1"), write(second, "2"), {"text": "done"}]))
    asked: list[tuple[str, dict[str, Any], Any]] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool, input, context))
        if allow:  # "always allow" offered nothing: one call at a time
            return PermissionResultAllow(updated_permissions=context.suggestions)
        return PermissionResultDeny(message="not there")

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    blocks, [result] = await ask_once(opts, "go")
    assert [(tool, input["file_path"]) for tool, input, _ in asked] == [
        ("Write", str(first)), ("Write", str(second))
    ], stderr  # fmt: skip
    assert [context.suggestions for _, _, context in asked] == [[], []]
    assert first.exists() is allow
    assert second.exists() is allow
    assert [b.is_error for b in blocks] == [not allow, not allow]
    assert result.result == "done"


@pytest.mark.filterwarnings(UNCLOSED)
async def test_a_protected_place_outside_is_denied_whatever_the_host_says(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    target = home / ".bashrc"
    url = mock_server(scenario(tmp_path, [write(target, "evil"), {"text": "done"}]))
    asked: list[str] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(tool)
        return PermissionResultAllow()

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    [block], _ = await ask_once(opts, "go")
    assert asked == []
    assert block.is_error
    assert "protected" in str(block.content)
    assert not target.exists()


def test_headless_a_read_outside_is_denied_and_says_only_a_person_may_allow_it(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("outside\n")
    turns = [{"tool_uses": [{"name": "Read", "input": {"file_path": str(secret)}}]},
             {"text": "done"}]  # fmt: skip
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tracks": {"lead": turns}}))
    for mode in ("default", "bypassPermissions", "auto"):
        args = ("--auto",) if mode == "auto" else ("--permission-mode", mode)
        done = coterie("-p", "go", "--scenario", str(path), "--output-format", "stream-json",
                       "--verbose", *args, cwd=workspace, home=home)  # fmt: skip
        assert done.returncode == 0, done.stderr
        results = [b for line in done.stdout.splitlines() if '"tool_result"' in line
                   for b in json.loads(line)["message"]["content"]]  # fmt: skip
        (result,) = results
        assert result["is_error"] is True, mode
        assert "outside the workspace" in str(result["content"]), mode
        assert "outside\n" not in str(result["content"])


@pytest.mark.filterwarnings(UNCLOSED)
@pytest.mark.parametrize("allow", [True, False])
async def test_a_command_writing_outside_asks_the_host(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str], allow: bool
) -> None:
    """The SDK's own e2e test: ``touch /tmp/...`` reaches ``can_use_tool``."""
    target = tmp_path / "elsewhere" / "made.txt"
    target.parent.mkdir()
    touch = {"tool_uses": [{"name": "Bash", "input": {"command": f"touch {target}"}}]}
    url = mock_server(scenario(tmp_path, [touch, {"text": "done"}]))
    asked: list[str] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append(tool)
        return PermissionResultAllow() if allow else PermissionResultDeny(message="no")

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    [block], _ = await ask_once(opts, "go")
    assert asked == ["Bash"], stderr
    assert target.exists() is allow
    assert block.is_error is not allow
