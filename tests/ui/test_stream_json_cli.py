"""``coterie -p --output-format stream-json`` with the host's options, run for real."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie, home, workspace

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]


def run(workspace: Path, home: Path, turns: list[dict[str, Any]], *flags: str) -> list[Any]:
    scenario = workspace.parent / "scenario.json"
    scenario.write_text(json.dumps({"name": "stream", "tracks": {"lead": turns}}))
    done = coterie(
        "-p", "go", "--scenario", str(scenario), "--output-format", "stream-json",
        "--permission-mode", "bypassPermissions", *flags, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_partial_messages_with_the_scripted_model(workspace: Path, home: Path) -> None:
    lines = run(workspace, home, [{"text": "Hello there."}], "--include-partial-messages")
    streamed = [line["event"] for line in lines if line["type"] == "stream_event"]
    assert streamed[0]["type"] == "message_start"
    [reply] = [line for line in lines if line["type"] == "assistant"]
    assert reply["message"]["id"] == streamed[0]["message"]["id"]
    assert lines[-1]["terminal_reason"] == "completed"
    assert "stream_event" not in {line["type"] for line in run(workspace, home, [{"text": "x"}])}


def test_hook_lines_with_a_users_hook(workspace: Path, home: Path) -> None:
    hook = {"type": "command", "command": "echo seen"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Bash", "input": {"command": "true"}}]},
        {"text": "ok"},
    ]
    lines = run(workspace, home, turns, "--include-hook-events")
    hooks = [(line["subtype"], line["hook_name"]) for line in lines if "hook_id" in line]
    assert hooks == [("hook_started", "PreToolUse:Bash"), ("hook_response", "PreToolUse:Bash")]
