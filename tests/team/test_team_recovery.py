"""Teams surviving crashes: a teammate that keeps crashing, kill -9 and resume, Ctrl-C."""

from __future__ import annotations

import json
import os
import random
import signal
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from coterie.board import read_log
from coterie.runs import runs_root
from tests.agent.conftest import coterie, wait_for
from tests.agent.test_resume_cli import (
    kill_and_resume,
    only_run,
    start,
    transcript_messages,
    write_scenario,
)
from tests.agent.test_run_cli import pid_alive
from tests.team.test_team_cli import BYPASS, create, events_of, write

if TYPE_CHECKING:
    from pathlib import Path


def test_a_teammate_that_keeps_crashing_is_stopped_and_its_task_goes_to_another(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("the job", "bob")]},
                {"text": "planned"},
                {"text": "noted"},
                {"text": "noted"},
            ],
            "bob": [{"crash": f"bug {i}"} for i in range(4)],
            "alice": [write("job.txt", "done"), {"text": "did the job bob could not"}],
        },
    )
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    (task,) = summary["tasks"]
    assert (task["status"], task["owner"]) == ("completed", "alice")
    assert summary["actors"]["bob"]["restarts"] == 3
    events = events_of(workspace)
    assert any(e.type == "supervisor.gave_up" and e.data["supervisor"] == "bob-sup" for e in events)
    told = [e for e in events if e.type == "team.message" and e.data["kind"] == "teammate_stopped"]
    assert [e.data["recipient"] for e in told] == ["lead"]
    run_dir = runs_root(workspace) / only_run(workspace)
    lead_log = (run_dir / "transcripts" / "lead.log").read_bytes()
    assert b"was stopped after repeated crashes" in lead_log


def slow_team(tasks: int) -> dict[str, list[dict[str, Any]]]:
    """The lead assigns *tasks* tasks alternately to alice and bob; each is 3 slow steps."""
    names = ["alice", "bob"]
    creates = [create(f"job {i}", names[i % 2]) for i in range(tasks)]
    tracks: dict[str, list[dict[str, Any]]] = {
        "lead": [{"tool_uses": creates}, {"text": "planned"}]
        + [{"text": "noted"} for _ in range(tasks)],
    }
    for who, name in enumerate(names):
        turns: list[dict[str, Any]] = []
        for i in range(who, tasks, 2):
            for step in range(3):
                command = f"echo {name}-{i}-{step} >> steps.log; sleep 0.1"
                turns.append({"tool_uses": [{"name": "Bash", "input": {"command": command}}]})
            turns.append({"text": f"job {i} done"})
        tracks[name] = turns
    return tracks


ROUNDS = int(os.environ.get("COTERIE_TEAM_RESUME_ROUNDS", "3"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(ROUNDS))
def test_kill9_of_a_team_run_then_resume_completes_every_task_exactly_once(
    seed: int, workspace: Path, home: Path, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    tasks = 6
    scenario = write_scenario(tmp_path / "s.json", slow_team(tasks))
    first = ["team", "-p", *BYPASS, "--scenario", str(scenario), "go"]
    done, kills = kill_and_resume(first, workspace, home, rng, most=5)
    assert done.returncode == 0, done.stderr
    run_dir = runs_root(workspace) / only_run(workspace)
    log = read_log(run_dir / "board")
    created = [e.task_id for e in log if e.op == "create"]
    # The lead's last answer follows its last results; a kill that cut short every
    # TaskCreate (none run again on the resume) leaves it with its plan's answer.
    assert done.stdout == ("noted\n" if created else "planned\n"), done.stderr
    completions = Counter(e.task_id for e in log if e.fields.get("status") == "completed")
    assert completions == dict.fromkeys(created, 1)
    # A kill during the lead's TaskCreate calls leaves the rest of them unrun
    # (reported to the lead as interrupted or not run), never run twice.
    lead = transcript_messages(run_dir, "lead")
    results = [b for m in lead if m["role"] == "user" for b in m["content"]]
    cut_short = [b for b in results if b.get("type") == "tool_result" and b.get("is_error")]
    # (an interrupted TaskCreate may or may not have created its task).
    assert tasks <= len(created) + len(cut_short) <= tasks + kills
    # Every teammate's result reached the lead.
    told = "\n".join(b.get("text", "") for b in results)
    for task_id in created:
        assert f"Task {task_id} completed" in told
    log_file = workspace / "steps.log"
    steps = Counter(log_file.read_text().split() if log_file.exists() else [])
    assert max(steps.values(), default=1) == 1, f"a tool ran twice: {steps.most_common(3)}"
    # Each kill interrupts at most one step of each teammate.
    assert len(steps) >= 3 * len(created) - kills * 2
    print(f"seed {seed}: {kills} kills, {3 * len(created) - len(steps)} steps interrupted")


@pytest.mark.slow
def test_ctrl_c_stops_every_actor_and_child_and_the_run_resumes(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    long = "sleep 300 & echo $! > grandchild.pid; echo $$ > shell.pid; sleep 300"
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("wait", "alice"), create("write", "bob")]},
                {"text": "planned"},
                {"text": "all done after the resume"},
            ],
            "alice": [
                {"tool_uses": [{"name": "Bash", "input": {"command": long}}]},
                {"text": "the wait was interrupted"},
            ],
            "bob": [write("bob.txt", "b"), {"text": "wrote bob.txt"}],
        },
    )
    proc = start(["team", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    wait_for(workspace / "shell.pid", proc, "the command never started", settle=0.3)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    for name in ("shell.pid", "grandchild.pid"):
        assert not pid_alive(int((workspace / name).read_text())), f"{name} survived"
    listed = json.loads(coterie("runs", "--json", cwd=workspace, home=home).stdout)
    assert listed["state"] == "interrupted"
    resumed = coterie("resume", only_run(workspace), "-p", cwd=workspace, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "all done after the resume\n"), (
        resumed.stderr
    )
