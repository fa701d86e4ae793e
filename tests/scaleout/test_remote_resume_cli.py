"""A ``team --remote`` run whose lead is killed with -9, then resumed: its teammates on a
worker are wanted again, every task is completed once and no tool runs twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import write_scenario
from tests.scaleout.test_resume_anywhere_cli import (
    assert_each_task_completed_once,
    assert_no_step_ran_twice,
    steps_done,
)
from tests.scaleout.test_workers_cli import start_worker, stop, workers
from tests.team.test_team_cli import BYPASS
from tests.team.test_team_recovery import slow_team

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["workers"]


async def test_a_remote_run_killed_mid_run_is_resumed_and_its_teammates_hosted_again(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    tasks = 4
    api = {
        "ANTHROPIC_BASE_URL": mock_server(write_scenario(tmp_path / "s.json", slow_team(tasks))),
        "ANTHROPIC_API_KEY": "k",
    }
    workers.append(start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS, env=api))
    argv = ["team", "-p", *BYPASS, "--backend", redis_url, "--remote", "--teammate", "alice",
            "--teammate", "bob", "go"]  # fmt: skip
    lead = subprocess.Popen(
        [sys.executable, "-m", "coterie", *argv],
        cwd=workspace, env=clean_env(HOME=str(home), **api), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while steps_done(workspace) < 2:  # the teammates, on the worker, are at work
        assert lead.poll() is None, lead.communicate()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.02)
    os.kill(lead.pid, signal.SIGKILL)
    lead.communicate()
    (run_id,) = [p.name for p in runs_root(workspace).iterdir()]
    resumed = coterie("resume", run_id, "-p", "--backend", redis_url, cwd=workspace, home=home,
                      env=api, timeout=120)  # fmt: skip
    out, err = stop(workers[0])
    assert resumed.returncode == 0, (resumed.stderr[-3000:], out, err[-2000:])
    assert resumed.stdout == "noted\n", resumed.stderr
    await assert_each_task_completed_once(redis_url, run_id, tasks)
    assert_no_step_ran_twice(workspace / "steps.log", tasks)
    # The worker hosted the teammates of the run, and of its resume.
    hosted = [line for line in out.splitlines() if line.startswith("hosting")]
    assert {line.split("/")[1] for line in hosted} == {"alice", "bob"}, out
    after = coterie("runs", "--json", "--backend", redis_url, cwd=workspace, home=home)
    assert json.loads(after.stdout)["state"] == "completed"
