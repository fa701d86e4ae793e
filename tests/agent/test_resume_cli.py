"""``coterie runs``, ``coterie resume`` and ``coterie compact`` on real CLI runs."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie

if TYPE_CHECKING:
    from pathlib import Path

BYPASS = ("--permission-mode", "bypassPermissions")


def write_scenario(path: Path, tracks: dict[str, list[dict[str, Any]]]) -> Path:
    path.write_text(json.dumps({"name": path.stem, "tracks": tracks}))
    return path


def steps(count: int, pause: float = 0) -> list[dict[str, Any]]:
    """*count* Bash calls, each appending its own line to steps.log, then a final answer."""
    wait = f"; sleep {pause}" if pause else ""
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Bash", "input": {"command": f"echo step-{i} >> steps.log{wait}"}}]}
        for i in range(count)
    ]
    return [*turns, {"text": "all done"}]


def only_run(workspace: Path) -> str:
    (run,) = list((runs_root(workspace)).iterdir())
    return run.name


def again(first: list[str], workspace: Path, home: Path) -> subprocess.Popen[str]:
    """After a kill: ``coterie resume`` the run, or start *first* over if the kill
    came before the run was recorded (a fresh workspace again)."""
    runs = runs_root(workspace)
    recorded = [p for p in runs.iterdir() if (p / "config.json").exists()] if runs.exists() else []
    if not recorded:
        shutil.rmtree(runs_root(workspace), ignore_errors=True)
        return start(first, workspace, home)
    return start(["resume", only_run(workspace), "-p"], workspace, home)


def test_runs_lists_each_run_with_its_state(workspace: Path, home: Path, tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": steps(1)})
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    listed = coterie("runs", "--json", cwd=workspace, home=home)
    (info,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (info["state"], info["command"], info["request"], info["result"]) == (
        "completed",
        "run",
        "go",
        "all done",
    )


def test_an_empty_workspace_has_no_runs(workspace: Path, home: Path) -> None:
    listed = coterie("runs", cwd=workspace, home=home)
    assert listed.returncode == 0
    assert "no runs" in listed.stdout


def test_resuming_an_unknown_run_is_a_usage_error(workspace: Path, home: Path) -> None:
    resumed = coterie("resume", "20990101-000000-abcdef", cwd=workspace, home=home)
    assert resumed.returncode == 2
    assert "not found" in resumed.stderr


def test_resuming_a_finished_run_reprints_its_result(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": steps(1)})
    coterie("run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home)
    resumed = coterie("resume", only_run(workspace), "-p", cwd=workspace, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "all done\n")
    assert "already finished" in resumed.stderr


def test_resume_with_a_prompt_goes_on_with_the_same_conversation(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {"lead": [{"text": "first answer"}, {"expect": "and now?", "text": "second answer"}]},
    )
    coterie("run", "-p", "--scenario", str(scenario), "hello", cwd=workspace, home=home)
    run_id = only_run(workspace)
    resumed = coterie(
        "resume", run_id[:12], "and now?", "-p", "--output-format", "json", cwd=workspace, home=home
    )
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert (result["result"], result["run_id"]) == ("second answer", run_id)
    history = transcript_messages(runs_root(workspace) / run_id)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


def transcript_messages(run_dir: Path, actor: str = "lead") -> list[dict[str, Any]]:
    from coterie.context import TranscriptLog

    with TranscriptLog.open(run_dir / "transcripts" / f"{actor}.log", "none") as log:
        return log.load()


def start(args: list[str], cwd: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_at_random(proc: subprocess.Popen[str], rng: random.Random) -> bool:
    """SIGKILL *proc* at a random moment of its run; False if it finished first."""
    deadline = time.monotonic() + rng.uniform(0.3, 1.4)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    return True


def kill_and_resume(
    first: list[str], workspace: Path, home: Path, rng: random.Random, most: int
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run *first*, SIGKILL it at random moments (at most *most* times), resuming
    after each kill; the last process, run to its end, and the number of kills."""
    proc = start(first, workspace, home)
    kills = 0
    while kills < most and kill_at_random(proc, rng):
        kills += 1
        proc = again(first, workspace, home)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), kills


ROUNDS = int(os.environ.get("COTERIE_RESUME_ROUNDS", "3"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(ROUNDS))
def test_kill9_at_random_points_then_resume_finishes_without_repeating_a_tool(
    seed: int, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Each kill may interrupt one tool (its effect unknown); no tool ever runs twice."""
    rng = random.Random(seed)
    count = 40
    scenario = write_scenario(tmp_path / "s.json", {"lead": steps(count, pause=0.02)})
    first = ["run", "-p", *BYPASS, "--scenario", str(scenario), "go"]
    done, kills = kill_and_resume(first, workspace, home, rng, most=6)
    assert (done.returncode, done.stdout) == (0, "all done\n"), done.stderr
    lines = Counter((workspace / "steps.log").read_text().split())
    assert max(lines.values()) == 1, f"a tool ran twice: {lines.most_common(3)}"
    assert count - kills <= len(lines) <= count
    listed = json.loads(coterie("runs", "--json", cwd=workspace, home=home).stdout)
    assert listed["state"] == "completed"
    print(f"seed {seed}: {kills} kills, {count - len(lines)} tools interrupted")
