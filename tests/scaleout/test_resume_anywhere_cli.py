"""Resume on any host: a team run on Redis killed with -9, resumed from another home."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from coterie.backends.redis import read_redis_log
from coterie.backends.redis.client import parse_backend
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import transcript_messages, write_scenario
from tests.scaleout.test_inspect_cli import elsewhere
from tests.team.test_team_cli import BYPASS
from tests.team.test_team_recovery import slow_team

if TYPE_CHECKING:
    from pathlib import Path


async def assert_each_task_completed_once(redis_url: str, run_id: str, tasks: int) -> None:
    """On the board every host shares: *tasks* created, each completed exactly once."""
    log = await read_redis_log(parse_backend(redis_url), run_id)
    created = [e.task_id for e in log if e.op == "create"]
    assert len(created) == tasks
    completions = Counter(e.task_id for e in log if e.fields.get("status") == "completed")
    assert completions == dict.fromkeys(created, 1)


def assert_no_step_ran_twice(steps_log: Path, tasks: int) -> None:
    """Every step of a :func:`slow_team` task ran once at most, and all but one of
    each task's at least (the kill interrupted at most one step of each)."""
    steps = Counter(steps_log.read_text().split())
    assert max(steps.values()) == 1, f"a tool ran twice: {steps.most_common(3)}"
    assert len(steps) >= 3 * tasks - 2


def steps_done(workspace: Path) -> int:
    log = workspace / "steps.log"
    return len(log.read_text().split()) if log.exists() else 0


async def test_a_run_killed_on_one_host_is_resumed_from_another_home_and_completes(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any
) -> None:
    """The model is `coterie mock-server` (the real SDK path), which both hosts
    reach, as they would reach the API: it answers a request sent again the same."""
    tasks = 4
    model = {
        "ANTHROPIC_BASE_URL": mock_server(write_scenario(tmp_path / "s.json", slow_team(tasks))),
        "ANTHROPIC_API_KEY": "k",
    }
    first = subprocess.Popen(
        [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, "--backend", redis_url, "go"],
        cwd=workspace, env=clean_env(HOME=str(home), **model), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while steps_done(workspace) < 4:  # mid-run: some steps of each teammate done
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.02)
    os.kill(first.pid, signal.SIGKILL)
    first.communicate()
    (run_id,) = [p.name for p in runs_root(workspace).iterdir()]
    time.sleep(0.3)  # the killed run's own tool processes finish their step
    ws, env = elsewhere(tmp_path)
    env.update(model)
    shutil.rmtree(ws)
    shutil.copytree(workspace, ws)  # the workspace, as a clone on the other host has it
    listed = coterie("runs", "--json", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert json.loads(listed.stdout)["state"] == "interrupted"
    resumed = coterie("resume", run_id[:15], "-p", "--backend", redis_url, cwd=ws, home=home,
                      env=env)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert resumed.stdout == "noted\n", resumed.stderr
    assert f"run {run_id} was fetched from" in resumed.stderr
    await assert_each_task_completed_once(redis_url, run_id, tasks)
    # No tool ran twice (the original's steps, then the other host's, in its copy).
    assert_no_step_ran_twice(ws / "steps.log", tasks)
    log = await read_redis_log(parse_backend(redis_url), run_id)
    created = [e.task_id for e in log if e.op == "create"]
    # No message lost: every teammate's result reached the lead.
    local = next((tmp_path / "other-host" / "coterie-home").glob(f"projects/*/runs/{run_id}"))
    told = "\n".join(
        block.get("text", "")
        for message in transcript_messages(local, "lead")
        if message["role"] == "user"
        for block in message["content"]
    )
    for task_id in created:
        assert f"Task {task_id} completed" in told
    config = json.loads((local / "config.json").read_text())
    assert config["workdir"] == str(ws.resolve())
    after = coterie("runs", "--json", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert json.loads(after.stdout)["state"] == "completed"


def test_resume_of_a_run_the_server_does_not_know_is_exit_2(
    workspace: Path, home: Path, redis_url: str
) -> None:
    done = coterie("resume", "nope", "-p", "--backend", redis_url, cwd=workspace, home=home)
    assert done.returncode == 2
    assert "not found on" in done.stderr
