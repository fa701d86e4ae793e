"""Permission prompts at a real terminal, answered as in Claude Code (issue 14).

The real CLI runs on a pseudo-terminal with a scripted model; the screen is
read back through a small terminal emulator (tests/ui/terminal.py), so what is
checked is what a person would see, erased frames gone.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import home, workspace
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import create
from tests.ui.terminal import plain, run_in_pty, screen

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

TRUST = ("trust this folder? [y/N]", "n\n")
CHOOSE = "choose 1-3"
PROCEED = "Do you want to proceed?"


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def run(
    workspace: Path, home: Path, turns: list[dict[str, Any]], answers: list[tuple[str, str]]
) -> str:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": turns})
    code, raw = run_in_pty(
        ["run", "go", "--scenario", str(scenario)], workspace, home, [TRUST, *answers]
    )
    assert code == 0, plain(raw)
    return plain(raw)


def test_yes_allows_once_and_the_next_call_is_asked_again(workspace: Path, home: Path) -> None:
    shown = run(
        workspace,
        home,
        [bash("touch a.txt"), bash("touch a.txt"), {"text": "Over."}],
        [(CHOOSE, "1\n"), (CHOOSE, "\n")],  # Enter takes the default: 1
    )
    assert shown.count(PROCEED) == 2
    assert "1. Yes\n  2. Yes, and don't ask again for `touch` commands in" in shown
    assert (workspace / "a.txt").exists()
    assert not (workspace / ".claude" / "settings.local.json").exists()


def test_dont_ask_again_saves_the_rule_and_the_run_is_not_asked_again(
    workspace: Path, home: Path
) -> None:
    (workspace / ".claude").mkdir()
    local = workspace / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"env": {"KEEP": "me"}, "permissions": {"deny": ["Bash(rm:*)"]}}))
    shown = run(
        workspace,
        home,
        [bash("touch a.txt"), bash("touch b.txt a.txt"), {"text": "Over."}],
        [(CHOOSE, "2\n")],
    )
    assert shown.count(PROCEED) == 1
    assert f"saved Bash(touch:*) to {local}" in shown
    assert json.loads(local.read_text()) == {
        "env": {"KEEP": "me"},
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(touch:*)"]},
    }
    assert (workspace / "a.txt").exists()
    assert (workspace / "b.txt").exists()


@pytest.mark.parametrize(
    "answers",
    [
        [(CHOOSE, "3\n"), ("do instead? (Enter to skip) >", "run pytest instead\n")],
        [(CHOOSE, "3 run pytest instead\n")],
    ],
    ids=["asked-after", "same-line"],
)
def test_no_with_an_instruction_reaches_the_model(
    workspace: Path, home: Path, answers: list[tuple[str, str]]
) -> None:
    turns = [bash("touch a.txt"), {"text": "Using pytest.", "expect": "run pytest instead"}]
    shown = run(workspace, home, turns, answers)
    assert "Using pytest." in shown  # the scripted model checked its request (`expect`)
    assert not (workspace / "a.txt").exists()


def test_esc_says_no_without_asking_what_instead(workspace: Path, home: Path) -> None:
    turns = [bash("touch a.txt"), {"text": "Fine.", "expect": "declined"}]
    shown = run(workspace, home, turns, [(CHOOSE, "\x1b\n")])
    assert "do instead?" not in shown
    assert not (workspace / "a.txt").exists()


def test_an_invalid_answer_asks_again(workspace: Path, home: Path) -> None:
    shown = run(
        workspace,
        home,
        [bash("touch a.txt"), {"text": "Over."}],
        [(CHOOSE, "7\n"), (CHOOSE, "1\n")],
    )
    assert "type a number from 1 to 3" in shown
    assert (workspace / "a.txt").exists()


def test_ctrl_c_at_the_prompt_ends_the_run_as_anywhere_else(workspace: Path, home: Path) -> None:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [bash("touch a.txt")]})
    code, raw = run_in_pty(
        ["run", "go", "--scenario", str(scenario)], workspace, home, [TRUST, (CHOOSE, "\x03")]
    )
    assert code == 130, plain(raw)
    assert "interrupted" in plain(raw)
    assert not (workspace / "a.txt").exists()


def test_a_team_prompt_names_its_agent_and_the_live_view_redraws_cleanly(
    workspace: Path, home: Path
) -> None:
    scenario = write_scenario(
        workspace.parent / "team.json",
        {
            "lead": [
                {"tool_uses": [create("make bob.txt", "bob")]},
                *[{"text": "Noted."}] * 4,
            ],
            "bob": [bash("touch bob.txt"), {"text": "bob.txt is made."}],
        },
    )
    code, raw = run_in_pty(
        ["team", "--teammate", "bob", "--scenario", str(scenario), "make bob.txt"],
        workspace,
        home,
        [TRUST, (CHOOSE, "1\n")],
    )
    lines = screen(raw)
    shown = "\n".join(lines)
    assert code == 0, shown
    assert "? bob wants to run a Bash command:" in shown
    assert "3. No, and tell bob what to do differently" in shown
    assert (workspace / "bob.txt").exists()
    # The display was erased for the question: only its final frame is left on screen.
    assert [line for line in lines if line.startswith("root  ")] == ["root  stopped"]


def test_the_demo_keeps_crashes_and_restarts_visible_and_shows_finished_supervisors(
    workspace: Path, home: Path
) -> None:
    code, raw = run_in_pty(["demo", "--workdir", str(workspace)], workspace, home, [TRUST])
    lines = screen(raw)
    shown = "\n".join(lines)
    assert code == 0, shown
    assert "✗ alice crashed: ScriptedCrash: simulated bug in alice" in shown
    assert "↻ alice restarting (attempt 1)" in shown
    top = lines.index("root  stopped")
    tree = lines[top : lines.index("", top)]
    assert "│   ├── alice-sup  exited" in tree
    assert not [line for line in tree if "running" in line or "working" in line]
    assert not [line for line in tree if line.rstrip().endswith(":")]  # no empty message
    assert any("→ lead: stopping" in line for line in tree)
