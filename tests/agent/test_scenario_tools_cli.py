"""A scenario calling a tool no run has is refused before the run starts (the real CLI)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path

TYPO = {"name": "Bsh", "input": {"command": "touch ran.txt"}}
HINT = (
    "s.json: tracks.{track}[0].tool_uses[0]: no tool is called 'Bsh'; did you mean 'Bash'?"
    ' (a call of a missing tool on purpose is listed in "unknown_tools")'
)


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "track"), [("run", "lead"), ("team", "teammate")], ids=["run", "team"]
)
def test_a_misspelt_tool_is_a_usage_error_naming_the_closest(
    workspace: Path, home: Path, command: str, track: str
) -> None:
    tracks = {"lead": [{"text": "ok"}], track: [{"tool_uses": [TYPO]}, {"text": "done"}]}
    scenario = write(workspace.parent / "s.json", {"tracks": tracks})
    done = coterie(
        command, "go", "-p", "--scenario", str(scenario), "--permission-mode", "bypassPermissions",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"error: {HINT.format(track=track)}"]
    assert done.stdout == ""
    assert not (workspace / "ran.txt").exists()
    root = runs_root(workspace)
    assert not root.exists() or not any(root.iterdir()), "no run is left behind"


def test_a_tool_declared_unknown_is_called_and_answered_no_such_tool(
    workspace: Path, home: Path
) -> None:
    lead = [
        {"tool_uses": [{"name": "Frobnicate", "input": {}}]},
        {"expect": "No such tool: 'Frobnicate'", "text": "There is no such tool."},
    ]
    data = {"unknown_tools": ["Frobnicate"], "tracks": {"lead": lead}}
    scenario = write(workspace.parent / "s.json", data)
    done = coterie("run", "go", "-p", "--scenario", str(scenario), cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "There is no such tool.\n"
