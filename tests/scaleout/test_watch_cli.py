"""``coterie watch --backend``: a run on Redis followed or replayed from another home."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from tests.agent.conftest import clean_env, coterie, wait_for
from tests.agent.test_resume_cli import write_scenario
from tests.scaleout.test_inspect_cli import elsewhere, team_on
from tests.team.test_team_cli import BYPASS
from tests.team.test_team_recovery import slow_team

if TYPE_CHECKING:
    from pathlib import Path


def test_watch_replays_a_finished_run_on_the_server_at_once(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    run_id = team_on(redis_url, workspace, home, tmp_path)
    ws, env = elsewhere(tmp_path)
    done = coterie("watch", run_id[:15], "--speed", "0", "--backend", redis_url, cwd=ws,
                   home=home, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "coterie watch · team · replay at once" in out
    for actor in ("lead", "alice", "bob"):
        assert actor in out
    assert "one" in out  # the board, from the server's log
    assert "two" in out
    assert out.rstrip().endswith(f"run {run_id} completed: both done")


def test_watch_follows_a_live_run_on_the_server_to_its_end(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    team = slow_team(6)
    for track in ("alice", "bob"):  # slower steps: the run outlasts the watcher's start
        for turn in team[track]:
            for use in turn.get("tool_uses", ()):
                use["input"]["command"] = use["input"]["command"].replace("0.1", "0.5")
    scenario = write_scenario(tmp_path / "s.json", team)
    run = subprocess.Popen(
        [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, "--scenario", str(scenario),
         "--backend", redis_url, "go"],
        cwd=workspace, env=clean_env(HOME=str(home)), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for(workspace / "steps.log", run, "the run never got going", settle=0)
    ws, env = elsewhere(tmp_path)
    watched = coterie("watch", "2", "--backend", redis_url, cwd=ws, home=home, env=env)
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert watched.returncode == 0, watched.stderr
    assert " · live on " in watched.stdout
    assert "job 5" in watched.stdout
    assert watched.stdout.rstrip().endswith("completed: noted")


def test_watch_of_a_run_the_server_does_not_know_is_exit_2(
    workspace: Path, home: Path, redis_url: str
) -> None:
    done = coterie("watch", "nope", "--backend", redis_url, cwd=workspace, home=home)
    assert done.returncode == 2
    assert "not found on" in done.stderr
