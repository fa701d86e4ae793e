"""``coterie team --lead-turns``: the lead off the critical path, through the real CLI.

Work flows without the lead (teammates take their next task themselves, a
task whose blocker completes is ready by the board's rules), so a team whose
tasks all succeed costs the lead its plan and its answer; what needs its
decision wakes it; a kill -9 with results kept for its next turn loses none.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from coterie.mailbox import peek_mailbox
from coterie.runs import runs_root
from tests.agent.conftest import coterie, wait_for
from tests.agent.test_resume_cli import only_run, start, transcript_messages, write_scenario
from tests.team.test_team_cli import BYPASS, create, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

NAMES = ("alice", "bob", "carol", "dave")


def eight_tasks(lead_tail: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """4 teammates, 8 tasks (2 each); the second task of each is blocked by the
    first task of the next teammate, so work flows across teammates."""
    creates = [create(f"job {i}", NAMES[i % 4]) for i in range(4)]
    creates += [
        create(f"job {i}", NAMES[i % 4], blocked_by=[f"task_{(i + 1) % 4 + 1}"])
        for i in range(4, 8)
    ]
    tracks: dict[str, list[dict[str, Any]]] = {
        "lead": [{"tool_uses": creates}, {"text": "planned"}, *lead_tail]
    }
    for n, name in enumerate(NAMES):
        tracks[name] = [
            turn
            for i in (n, n + 4)
            for turn in (write(f"job{i}.txt", str(i)), {"text": f"job {i} written"})
        ]
    return tracks


def team(
    scenario: Path, workspace: Path, home: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--teammates", "4", *extra,
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip


def prompts(run_dir: Path) -> list[str]:
    """The texts the lead's model was given as prompts (its request, then each batch)."""
    return [
        b["text"]
        for m in transcript_messages(run_dir, "lead")
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "text" and not b["text"].startswith("<system-reminder>")
    ]


def test_a_team_whose_tasks_all_succeed_costs_the_lead_its_plan_and_its_answer(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        eight_tasks([{"text": "all eight done", "expect": "Task task_8 completed"}]),
    )
    done = team(scenario, workspace, home)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"] == "all eight done"
    assert [t["status"] for t in summary["tasks"]] == ["completed"] * 8
    # The plan (its TaskCreate calls, then its text) and the final answer: no turn
    # was needed for a teammate to take its next task or for a blocked one to start.
    assert summary["actors"]["lead"]["turns"] == 3
    run_dir = runs_root(workspace) / only_run(workspace)
    request, final = prompts(run_dir)
    assert request == "go"
    for i in range(1, 9):
        assert f"Task task_{i} completed" in final
    assert final.count('<agent-message from="') >= 8
    config = json.loads((run_dir / "config.json").read_text())
    assert config["lead_turns"] == "batched"


def test_with_lead_turns_each_every_result_is_a_turn_and_resume_keeps_it(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json", eight_tasks([{"text": f"noted {i}"} for i in range(8)])
    )
    done = team(scenario, workspace, home, "--lead-turns", "each")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"] == "noted 7"
    assert summary["actors"]["lead"]["turns"] == 2 + 8
    run_dir = runs_root(workspace) / only_run(workspace)
    assert len(prompts(run_dir)) == 1 + 8
    assert json.loads((run_dir / "config.json").read_text())["lead_turns"] == "each"


def test_a_failed_task_wakes_the_lead_and_the_rest_wait_for_the_final_turn(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    failure = {"error": {"status": 400, "type": "invalid_request_error", "message": "no"}}
    tracks = {
        "lead": [
            {"tool_uses": [create("one", "alice"), create("two", "bob")]},
            {"text": "planned"},
            {"text": "bob failed: noted", "expect": "Task task_2 failed"},
            {"text": "final", "expect": "Task task_1 completed"},
        ],
        "alice": [
            {"tool_uses": [{"name": "Bash", "input": {"command": "sleep 1.5"}}]},
            {"text": "one done"},
        ],
        "bob": [failure],
    }
    scenario = write_scenario(tmp_path / "s.json", tracks)
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"].startswith("final")
    run_dir = runs_root(workspace) / only_run(workspace)
    _request, woken, final = prompts(run_dir)
    assert "Task task_2 failed" in woken
    assert "task_1" not in woken.replace("task_2", "")
    assert "Task task_1 completed" in final


def test_kill9_with_results_kept_for_the_next_turn_then_resume_loses_none(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """bob, carol and dave have reported; alice still works: their results wait,
    unacknowledged, for the lead's final turn. A kill -9 now, then resume: the
    final answer carries every result."""
    slow = "echo $$ > alice.pid; sleep 60"
    tracks: dict[str, list[dict[str, Any]]] = {
        "lead": [
            {"tool_uses": [create(f"job {i}", name) for i, name in enumerate(NAMES)]},
            {"text": "planned"},
            {"text": "all four done", "expect": "Task task_1 completed"},
        ],
        "alice": [
            {"tool_uses": [{"name": "Bash", "input": {"command": slow}}]},
            {"text": "job 0 done after the resume"},
        ],
    }
    for i, name in enumerate(NAMES[1:], 1):
        tracks[name] = [write(f"job{i}.txt", str(i)), {"text": f"job {i} written"}]
    scenario = write_scenario(tmp_path / "s.json", tracks)
    args = ["team", "-p", *BYPASS, "--teammates", "4", "--scenario", str(scenario), "go"]
    proc = start(args, workspace, home)
    wait_for(workspace / "alice.pid", proc, "alice never started")
    run_dir = runs_root(workspace) / only_run(workspace)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        kept = [m for m in peek_mailbox(run_dir / "mailboxes" / "lead") if m.kind == "result"]
        if len(kept) == 3:
            break
        time.sleep(0.05)
    assert len(kept) == 3, "the three results never waited in the lead's mailbox"
    assert prompts(run_dir) == ["go"]  # no turn taken on them
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    resumed = coterie("resume", only_run(workspace), "-p", cwd=workspace, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "all four done\n"), resumed.stderr
    _request, final = prompts(run_dir)
    for i in range(1, 5):
        assert f"Task task_{i} completed" in final
    assert peek_mailbox(run_dir / "mailboxes" / "lead") == []


def test_kill9_in_the_final_turn_then_resume_continues_that_turn(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The batch's work id is fixed by its messages: the restarted lead finds it in
    its transcript and goes on with the same turn instead of taking another."""
    slow = "echo $$ > lead.pid; sleep 60"
    tracks: dict[str, list[dict[str, Any]]] = {
        "lead": [
            {"tool_uses": [create("one", "alice"), create("two", "bob")]},
            {"text": "planned"},
            {"tool_uses": [{"name": "Bash", "input": {"command": slow}}]},
            {"text": "the same final turn", "expect": "interrupted"},
        ],
        "alice": [write("one.txt", "1"), {"text": "one written"}],
        "bob": [write("two.txt", "2"), {"text": "two written"}],
    }
    scenario = write_scenario(tmp_path / "s.json", tracks)
    proc = start(["team", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    wait_for(workspace / "lead.pid", proc, "the final turn never started")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    resumed = coterie("resume", only_run(workspace), "-p", cwd=workspace, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "the same final turn\n"), resumed.stderr
    run_dir = runs_root(workspace) / only_run(workspace)
    _request, final = prompts(run_dir)
    assert "Task task_1 completed" in final
    assert "Task task_2 completed" in final
    assert peek_mailbox(run_dir / "mailboxes" / "lead") == []
