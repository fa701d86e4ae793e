"""``/goal COND`` and ``/loop SPEC`` in a conversation, through a pseudo-terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import clean_env, coterie, wait_for
from tests.agent.test_resume_cli import only_run
from tests.interactive.test_conversation_cli import Terminal, trusted
from tests.team.test_team_cli import BYPASS, events_of

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["trusted"]  # the fixture, shared

pytestmark = pytest.mark.slow

SLEEP = {"tool_uses": [{"name": "Bash", "input": {"command": "touch started; sleep 300"}}]}


def scenario(path: Path, **tracks: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"name": "conversation", "tracks": tracks}))
    return path


def verdict(ok: bool, reason: str) -> dict[str, Any]:
    """An evaluator turn answering the verdict JSON of docs/autonomy.md."""
    return {"text": json.dumps({"ok": ok, "reason": reason})}


def of_type(workspace: Path, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events_of(workspace) if e.type == kind]


def test_a_goal_is_met_after_one_not_met_verdict_then_a_normal_turn(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        lead=[
            {"text": "Looked around.", "expect": "done.txt exists"},  # the condition: the prompt
            {"text": "Wrote done.txt.", "expect": "The goal is not met yet: done.txt is missing"},
            {"text": "Just a turn.", "expect": "thanks"},
        ],
        evaluator=[verdict(False, "done.txt is missing"), verdict(True, "done.txt written")],
    )
    term = Terminal("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("/goal done.txt exists\r")
    term.wait_for("Goal met: done.txt written")
    term.prompt()
    term.type("thanks\r")
    term.wait_for("Just a turn.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    # Judged twice, for the /goal only: the normal turn after it has no goal.
    assert [c["status"] for c in of_type(trusted, "goal.checked")] == ["not_met", "met"]


def test_goal_without_a_condition_says_none_is_active(trusted: Path, home: Path) -> None:
    (trusted.parent / "none.json").write_text('{"tracks": {"lead": []}}')
    term = Terminal("--scenario", str(trusted.parent / "none.json"), cwd=trusted, home=home)
    term.prompt()
    term.type("/goal\r")
    term.wait_for("no goal is active")
    term.prompt()
    term.type("/goal clear\r")
    term.wait_for("no goal is active")
    term.prompt()
    term.type("/loop 5m\r")
    term.wait_for("has no prompt")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0


def test_a_loop_of_two_ticks_then_the_prompt_again(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        lead=[
            {"text": "Build green.", "expect": "check the build"},
            {"text": "Still green.", "expect": "check the build"},
            {"text": "After the loop.", "expect": "hello"},
        ],
    )
    term = Terminal(
        "--scenario", str(scen), "--max-ticks", "2", cwd=trusted, home=home,
        env={"COTERIE_TIME_SCALE": "0"},
    )  # fmt: skip
    term.prompt()
    term.type("/loop 5m check the build\r")
    term.wait_for("Build green.")
    seen = term.wait_for("Loop ended after 2 tick(s)")
    assert "Still green." in seen
    term.prompt()
    term.type("hello\r")
    term.wait_for("After the loop.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert [t["tick"] for t in of_type(trusted, "loop.tick")] == [1, 2]


def test_ctrl_c_during_a_loop_stops_the_tick_and_the_loop(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        lead=[SLEEP, {"text": "No more ticks.", "expect": "interrupted by user"}],
    )
    term = Terminal(
        "--scenario", str(scen), *BYPASS, cwd=trusted, home=home, env={"COTERIE_TIME_SCALE": "0"}
    )
    term.prompt()
    term.type("/loop 1m sleep a while\r")
    wait_for(trusted / "started", term.proc, "the tick's tool never started")
    os.killpg(term.proc.pid, signal.SIGINT)  # Ctrl-C, as the terminal sends it
    term.wait_for("interrupted by the user")
    term.prompt()
    term.type("what happened?\r")  # the tick's interruption is in the history
    term.wait_for("No more ticks.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert len(of_type(trusted, "loop.tick")) == 1  # no tick after the interrupted one
    (ended,) = of_type(trusted, "loop.ended")
    assert ended["reason"] == "interrupted by the user"
    (interrupted,) = of_type(trusted, "agent.interrupted")
    assert interrupted["prompt"].endswith(".tick.1")  # the tick's turn, stopped in the lead


def test_a_goal_killed_mid_pursuit_is_pursued_by_resume(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        lead=[SLEEP, {"text": "Done after the crash.", "expect": "interrupted"}],
        evaluator=[verdict(True, "done after the crash")],
    )
    term = Terminal("--scenario", str(scen), *BYPASS, cwd=trusted, home=home)
    term.prompt()
    term.type("/goal the work is done\r")
    wait_for(trusted / "started", term.proc, "the tool never started")
    os.killpg(term.proc.pid, signal.SIGKILL)
    term.close()
    run_id = only_run(trusted)
    resumed = subprocess.run(
        [sys.executable, "-m", "coterie", "resume", run_id, "-p", "--output-format", "json"],
        cwd=trusted,
        env=clean_env(HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["goal"]["status"] == "met", result
    assert result["result"].endswith("Goal met: done after the crash")
    assert coterie("runs", "--json", cwd=trusted, home=home).returncode == 0
