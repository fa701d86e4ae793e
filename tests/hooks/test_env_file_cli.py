"""SessionStart hooks through the real CLI: ``CLAUDE_ENV_FILE``, ``CLAUDE_PROJECT_DIR``,
their context, and their ``transcript_path``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.hooks.test_hooks_cli import LOG, logged, on, settings
from tests.team.test_team_cli import BYPASS

if TYPE_CHECKING:
    from pathlib import Path


def bash(command: str) -> dict[str, object]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def test_what_a_session_start_hook_exports_reaches_every_later_bash_call(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(
        home,
        on(
            "SessionStart",
            f'{LOG}; echo "export FOO=bar" >> "$CLAUDE_ENV_FILE";'
            ' echo "export DIR_SEEN=$CLAUDE_PROJECT_DIR" >> "$CLAUDE_ENV_FILE"',
        ),
    )
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                bash('echo "foo=$FOO"'),
                {"expect": "foo=bar", **bash('echo "dir=$DIR_SEEN"')},
                {"expect": f"dir={workspace}", "text": "ok"},
            ]
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stdout + done.stderr
    (seen,) = logged(workspace)
    assert seen["transcript_path"].endswith("/transcripts/lead.jsonl")


def test_session_start_additional_context_reaches_the_model(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """In the system prompt, as Claude Code puts it (and its stdout: test_hooks_cli):
    a turn that forbids the text fails saying the request holds it."""
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "branch: feature-y",
        }
    }
    settings(home, on("SessionStart", f"printf '%s' '{json.dumps(answer)}'"))
    scenario = write_scenario(
        tmp_path / "s.json", {"lead": [{"expect_not": "branch: feature-y", "text": "ok"}]}
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 1
    assert "the request contains 'branch: feature-y'" in done.stdout + done.stderr
