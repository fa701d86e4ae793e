"""Hooks that read ``transcript_path`` through the real CLI, on scenarios.

The hook scripts read the file the way hooks written for Claude Code do (the
last line with ``"role":"assistant"``, ``tail -1``, parsed with Python in
place of jq), so they work on coterie's view only if it has Claude Code's shape.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.hooks.test_hooks_cli import on, settings
from tests.team.test_team_cli import BYPASS

if TYPE_CHECKING:
    from pathlib import Path

#: The hook's transcript_path, from its input on stdin.
TRANSCRIPT = (
    "path=$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"transcript_path\"])')"
)
#: The text of the last assistant message of "$path", on stdout.
LAST_TEXT = (
    'grep \'"role":"assistant"\' "$path" | tail -1 | python3 -c \'import json,sys;'
    ' m=json.loads(sys.stdin.read())["message"];'
    ' print("".join(b.get("text", "") for b in m["content"] if b.get("type") == "text"))\''
)


def test_a_stop_hook_reads_the_last_assistant_text_from_the_transcript(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    said = workspace.parent / "said.txt"
    settings(home, on("Stop", f'{TRANSCRIPT}; {LAST_TEXT} > "{said}"'))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]},
                {"text": "the final answer"},
            ]
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    assert said.read_text().strip() == "the final answer"


def test_a_loop_style_stop_hook_blocks_until_the_transcript_says_done(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Block once with a reason (the model gets it), then allow once the promise is kept."""
    runs = workspace.parent / "runs.log"
    answer = json.dumps({"decision": "block", "reason": "Keep going: the work is not done"})
    script = (
        f'{TRANSCRIPT}; echo run >> "{runs}"; last=$({LAST_TEXT});'
        f' case "$last" in *"<promise>DONE</promise>"*) exit 0;; esac;'
        f" printf '%s' '{answer}'"
    )
    settings(home, on("Stop", script))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"text": "still working"},
                {"expect": "Keep going: the work is not done", "text": "<promise>DONE</promise>"},
            ]
        },
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "<promise>DONE</promise>"
    assert runs.read_text().split() == ["run", "run"]


def test_every_line_of_the_transcript_has_claude_codes_fields(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    copy = workspace.parent / "copy.jsonl"
    settings(home, on("Stop", f'{TRANSCRIPT}; cp "$path" "{copy}"'))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]},
                {"text": "done"},
            ]
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in copy.read_text().splitlines()]
    assert [r["type"] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in rows[1:]] == [r["uuid"] for r in rows[:-1]]
    assert {r["sessionId"] for r in rows} == {rows[0]["sessionId"]}
    assert rows[1]["message"]["content"][0]["type"] == "tool_use"
    assert rows[2]["message"]["content"][0]["type"] == "tool_result"
    assert all(r["timestamp"].endswith("Z") and r["cwd"] == str(workspace) for r in rows)
