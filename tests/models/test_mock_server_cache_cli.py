"""Through the real SDK path, the mock server reports what a real server's prompt
cache would: the first request writes the prefix, the next turn reads it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie, home, mock_server, workspace
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import events_of

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "mock_server", "workspace"]  # the fixtures of tests/agent


def test_the_second_turn_reads_what_the_first_wrote(
    workspace: Path, home: Path, mock_server: Any
) -> None:
    write = {"name": "Write", "input": {"file_path": "a.txt", "content": "a"}}
    tracks = {"lead": [{"tool_uses": [write]}, {"text": "done"}]}
    url = mock_server(write_scenario(workspace.parent / "s.json", tracks))
    done = coterie(
        "run", "-p", "--output-format", "json", "--permission-mode", "bypassPermissions", "go",
        cwd=workspace, home=home, env={"ANTHROPIC_BASE_URL": url},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)["usage"]
    first, second = [e.data["usage"] for e in _messages(workspace)]
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] > 1024  # the tools and the system prompt
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["input_tokens"] < first["cache_creation_input_tokens"] // 10
    assert usage["cache_read_input_tokens"] == second["cache_read_input_tokens"]


def _messages(workspace: Path) -> list[Any]:
    return [e for e in events_of(workspace) if e.type == "agent.message"]
