"""AskUserQuestion and ExitPlanMode through the real CLI: headless (nobody can
answer: denied, and the model reads why) and with an Agent SDK host answering
``can_use_tool`` (its ``updatedInput`` answers become the result), issue 27."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import (
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)

from tests.agent.conftest import coterie, home, mock_server, workspace
from tests.sdk.test_python_sdk import ask_once, options, scenario
from tests.tools.questions import QUESTION

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["home", "mock_server", "workspace"]  # the fixtures, used by name below

UNCLOSED = (
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)

ASK = {"tool_uses": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]}
PLAN = {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. write a.txt"}}]}


def tool_results(stdout: str) -> list[dict[str, Any]]:
    return [b for line in stdout.splitlines() if '"tool_result"' in line
            for b in json.loads(line)["message"]["content"]]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "plan", "bypassPermissions"])
def test_headless_the_questions_are_denied_and_the_model_reads_why(
    tmp_path: Path, workspace: Path, home: Path, mode: str
) -> None:
    turns = [ASK, PLAN, {"text": "done"}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tracks": {"lead": turns}}))
    done = coterie("-p", "go", "--scenario", str(path), "--output-format", "stream-json",
                   "--verbose", "--permission-mode", mode, cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    asked, planned = tool_results(done.stdout)
    assert asked["is_error"] is True
    assert "only the user can answer" in asked["content"]
    assert "non-interactive" in asked["content"]
    assert planned["is_error"] is True
    expected = "non-interactive" if mode == "plan" else "is for permission mode plan"
    assert expected in planned["content"]


@pytest.mark.filterwarnings(UNCLOSED)
async def test_the_hosts_answers_become_the_result(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [ASK, {"text": "done"}]))
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append((tool, input))
        answers = {QUESTION["question"]: "SQLite"}
        return PermissionResultAllow(updated_input={**input, "answers": answers})

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    [block], [result] = await ask_once(opts, "go")
    assert asked == [("AskUserQuestion", {"questions": [QUESTION]})], stderr
    assert block.is_error is not True
    assert '"Which database should we use?"="SQLite"' in str(block.content)
    assert result.result == "done"


@pytest.mark.filterwarnings(UNCLOSED)
async def test_the_hosts_no_to_a_plan_keeps_planning_with_its_words(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    url = mock_server(scenario(tmp_path, [PLAN, {"text": "done"}]))
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        asked.append((tool, input))
        return PermissionResultDeny(message="split step 1 in two")

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "plan"
    opts.can_use_tool = can_use_tool
    [block], _ = await ask_once(opts, "go")
    assert asked == [("ExitPlanMode", {"plan": "1. write a.txt"})], stderr
    assert block.is_error is True
    assert "split step 1 in two" in str(block.content)


@pytest.mark.filterwarnings(UNCLOSED)
async def test_the_hosts_yes_to_a_plan_leaves_plan_mode_for_the_mode_it_sets(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    write = {"tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]}
    url = mock_server(scenario(tmp_path, [PLAN, write, {"text": "done"}]))
    asked: list[str] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(tool)
        accept = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")
        return PermissionResultAllow(updated_permissions=[accept])

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "plan"
    opts.can_use_tool = can_use_tool
    blocks, _ = await ask_once(opts, "go")
    assert asked == ["ExitPlanMode"], stderr  # the Write is not asked about: acceptEdits
    assert [b.is_error for b in blocks] == [False, False]
    assert (workspace / "a.txt").read_text() == "x"
