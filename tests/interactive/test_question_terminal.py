"""AskUserQuestion, ExitPlanMode and EnterPlanMode at a real terminal: the person
picks options, approves or keeps a plan (issue 27). The real CLI runs on a
pseudo-terminal with a scripted model; ``expect`` checks what the model read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.agent.conftest import home, workspace
from tests.agent.test_resume_cli import write_scenario
from tests.tools.questions import EXTRAS, QUESTION
from tests.ui.terminal import plain, run_in_pty

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

TRUST = ("trust this folder? [y/N]", "n\n")
PICK = "or type an answer"
QUESTIONS: list[dict[str, Any]] = [QUESTION, EXTRAS]


def run(workspace: Path, home: Path, turns: list[dict[str, Any]],
        answers: list[tuple[str, str]], *args: str) -> str:  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", {"lead": turns})
    code, raw = run_in_pty(
        ["run", "go", "--scenario", str(scenario), *args], workspace, home, [TRUST, *answers]
    )
    assert code == 0, plain(raw)
    return plain(raw)


def test_the_person_picks_options_and_the_model_reads_the_answers(
    workspace: Path, home: Path
) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "AskUserQuestion", "input": {"questions": QUESTIONS}}]},
        {"expect": '"Which database should we use?"="SQLite", "Which extras?"="Docs, Tests"',
         "text": "Over."},
    ]  # fmt: skip
    shown = run(workspace, home, turns, [(PICK, "2\n"), (PICK, "1,2\n")])
    assert "[Database] Which database should we use?" in shown
    assert "1. Postgres - relational" in shown
    assert "3. Other (type your own answer)" in shown
    assert "Over." in shown


def test_other_takes_the_persons_own_words(workspace: Path, home: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "AskUserQuestion", "input": {"questions": QUESTIONS[:1]}}]},
        {"expect": '"Which database should we use?"="DuckDB"', "text": "Over."},
    ]
    shown = run(workspace, home, turns, [(PICK, "3\n"), ("your answer >", "DuckDB\n")])
    assert "Over." in shown


def test_an_approved_plan_leaves_plan_mode_for_the_mode_chosen(workspace: Path, home: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. write a.txt"}}]},
        {"expect": "approved your plan",
         "tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
        {"text": "Over."},
    ]  # fmt: skip
    shown = run(workspace, home, turns, [("choose 1-3", "1\n")], "--permission-mode", "plan")
    assert "1. write a.txt" in shown
    assert "1. Yes, and accept edits automatically" in shown
    assert (workspace / "a.txt").read_text() == "x"  # acceptEdits: not asked, not refused


def test_keep_planning_gives_the_model_the_persons_feedback(workspace: Path, home: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. write a.txt"}}]},
        {"expect": "split it in two",
         "tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
        {"expect": "Plan mode", "text": "Over."},
    ]  # fmt: skip
    answers = [("choose 1-3", "3\n"), ("what should change?", "split it in two\n")]
    shown = run(workspace, home, turns, answers, "--permission-mode", "plan")
    assert "Over." in shown
    assert not (workspace / "a.txt").exists()  # still in plan mode


def test_yes_to_plan_mode_makes_the_run_read_only(workspace: Path, home: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "EnterPlanMode", "input": {}}]},
        {"expect": "Plan mode is on",
         "tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
        {"expect": "Plan mode is on: only read-only tools", "text": "Over."},
    ]  # fmt: skip
    shown = run(workspace, home, turns, [("choose 1-2", "1\n")], "--permission-mode",
                "acceptEdits")  # fmt: skip
    assert "wants to enter plan mode" in shown
    assert "Over." in shown
    assert not (workspace / "a.txt").exists()


def test_no_to_plan_mode_goes_on_without_it(workspace: Path, home: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "EnterPlanMode", "input": {}}]},
        {"expect": "does not want plan mode",
         "tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
        {"text": "Over."},
    ]  # fmt: skip
    run(workspace, home, turns, [("choose 1-2", "2\n")], "--permission-mode", "acceptEdits")
    assert (workspace / "a.txt").read_text() == "x"
