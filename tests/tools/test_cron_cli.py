"""Cron jobs through the real CLI: a headless run says its job will not fire, and a
``--loop`` run's job survives a kill -9 and fires in the resumed run."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario
from tests.autonomy.test_loop_cli import FAST, start_loop, wait_for_event

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent


def create(cron: str, prompt: str, *, recurring: bool) -> dict[str, Any]:
    data = {"cron": cron, "prompt": prompt, "recurring": recurring}
    return {"tool_uses": [{"name": "CronCreate", "input": data}]}


def in_minutes(minutes: int) -> str:
    """A one-shot cron expression for the local minute *minutes* from now."""
    at = dt.datetime.now() + dt.timedelta(minutes=minutes)
    return f"{at.minute} {at.hour} {at.day} {at.month} *"


def jobs(workspace: Path) -> list[dict[str, Any]]:
    path = runs_root(workspace) / only_run(workspace) / "cron.json"
    found: list[dict[str, Any]] = json.loads(path.read_text())["jobs"]
    return found


def user_texts(workspace: Path) -> list[str]:
    run_dir = runs_root(workspace) / only_run(workspace)
    return [
        block["text"]
        for message in transcript_messages(run_dir)
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text"
    ]


def test_a_headless_run_keeps_the_job_and_says_it_will_not_fire(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    lead = [
        create("*/5 * * * *", "check CI", recurring=True),
        {"expect": "will not fire in it", "text": "Scheduled."},
    ]
    scenario = write_scenario(tmp_path / "s.json", {"lead": lead})
    done = coterie(
        "run", "-p", "--output-format", "json", "--scenario", str(scenario), "schedule it",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Scheduled."
    (job,) = jobs(workspace)
    assert (job["cron"], job["prompt"], job["recurring"]) == ("*/5 * * * *", "check CI", True)


def test_a_job_survives_a_kill_and_fires_in_the_resumed_run(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    wakeup = {"delaySeconds": 3600, "reason": "later", "prompt": "tick two"}
    lead = [
        create(in_minutes(3), "cron ping", recurring=False),
        {"tool_uses": [{"name": "ScheduleWakeup", "input": wakeup}]},
        {"text": "Waiting for tick two."},
        # The resumed run: the job fires (a prompt of its own) during the wait.
        {"expect": "cron ping", "tool_uses": [{"name": "CronList", "input": {}}]},
        {"expect": "(one-shot)", "text": "pong"},
        {"expect": "tick two", "text": "All done."},
    ]
    scenario = write_scenario(tmp_path / "s.json", {"lead": lead})
    proc = start_loop(workspace, home, scenario, "watch the jobs")
    try:
        wait_for_event(workspace, "loop.waiting", proc)  # the wait is an hour long
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL
    (job,) = jobs(workspace)
    assert (job["prompt"], job["fires"]) == ("cron ping", 0)

    resumed = coterie(
        "resume", only_run(workspace), "-p", "--output-format", "json",
        cwd=workspace, home=home, env=FAST, timeout=60,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"].startswith("All done.")
    assert user_texts(workspace).count("cron ping") == 1
    assert jobs(workspace) == []  # a one-shot job is gone once it fired
