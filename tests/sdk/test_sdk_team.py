"""A team driven from the Agent SDK: ``extra_args={"team": None, ...}`` makes the
spawned ``coterie`` a team, each of the host's prompts a goal, and a teammate's
permission question reaches the host's ``can_use_tool`` with its ``agent_id``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import (
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

from tests.agent.conftest import coterie
from tests.sdk.test_python_sdk import ask_once, options
from tests.team.test_team_cli import create

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)
async def test_a_teammates_question_reaches_the_host_with_its_agent_id(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    touch = {"tool_uses": [{"name": "Bash", "input": {"command": "touch alice.txt"}}]}
    tracks = {
        "lead": [{"tool_uses": [create("work", "alice")]}, {"text": "planned"}, {"text": "ok"}],
        "alice": [touch, {"text": "alice done"}],
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "sdk-team", "tracks": tracks}))
    url = mock_server(path)
    asked: list[tuple[str, dict[str, Any], str | None]] = []

    async def can_use_tool(
        tool: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool, input, context.agent_id))
        return PermissionResultAllow()

    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.can_use_tool = can_use_tool
    opts.extra_args = {"team": None, "teammate": "alice"}
    _blocks, results = await ask_once(opts, "make alice.txt")
    assert asked == [("Bash", {"command": "touch alice.txt"}, "alice")], stderr
    assert (workspace / "alice.txt").exists()
    [result] = results
    assert isinstance(result, ResultMessage)
    assert not result.is_error, stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("team", "-p"), "no GOAL"),
        (("--team", "--input-format", "stream-json", "--output-format", "stream-json", "go"),
         "the goals come on standard input"),
    ],
)  # fmt: skip
def test_a_team_needs_its_goals_from_one_place(
    workspace: Path, home: Path, args: tuple[str, ...], says: str
) -> None:
    done = coterie(*args, cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
