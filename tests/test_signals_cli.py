"""Finding 5 of issue 12: SIGTERM and SIGHUP end a run as Ctrl-C does, and the
process groups a kill -9 left behind are killed by the next start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie, home, wait_for, workspace

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

#: A command whose group leaves a side effect a few seconds later unless it is killed.
COMMAND = "echo $$ > shell.pid; (sleep {delay}; touch side-effect) & sleep 300"


def _scenario(tmp_path: Path, delay: float) -> Path:
    path = tmp_path / "scenario.json"
    steps = [
        {"tool_uses": [{"name": "Bash", "input": {"command": COMMAND.format(delay=delay)}}]},
        {"text": "done"},
    ]
    path.write_text(json.dumps({"name": "signals", "tracks": {"lead": steps}}))
    return path


def _start(workspace: Path, home: Path, scenario: Path) -> subprocess.Popen[str]:
    args = ["run", "go", "--scenario", str(scenario), "--permission-mode", "bypassPermissions"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", *args, "-p"],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(workspace / "shell.pid", proc, "the command never started")
    return proc


def _group_alive(pgid: int) -> bool:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


@pytest.mark.parametrize(
    ("signum", "code"),
    [
        pytest.param(signal.SIGTERM, 143, id="SIGTERM"),
        pytest.param(signal.SIGHUP, 129, id="SIGHUP"),
    ],
)
def test_sigterm_and_sighup_clean_up_like_ctrl_c(
    workspace: Path, home: Path, tmp_path: Path, signum: int, code: int
) -> None:
    proc = _start(workspace, home, _scenario(tmp_path, 1.5))
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "interrupted" in out
    assert "Traceback" not in err
    assert not _group_alive(int((workspace / "shell.pid").read_text()))
    time.sleep(2)  # past the moment the command would have written its side effect
    assert not (workspace / "side-effect").exists()
    listed = coterie("runs", "--json", cwd=workspace, home=home)
    (run,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert run["state"] == "interrupted"
    (run_dir,) = runs_root(workspace).iterdir()
    assert not list((run_dir / "procgroups").iterdir()), "a killed group is still recorded"


def test_after_kill_9_the_next_resume_kills_the_groups_left_behind(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc = _start(workspace, home, _scenario(tmp_path, 6))
    proc.kill()
    proc.communicate(timeout=30)
    pgid = int((workspace / "shell.pid").read_text())
    assert _group_alive(pgid), "kill -9 of coterie kills its tool's group by itself?"
    (run_dir,) = runs_root(workspace).iterdir()
    result = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "killed" in result.stderr
    assert not _group_alive(pgid)
    time.sleep(6.5)  # past the moment the command would have written its side effect
    assert not (workspace / "side-effect").exists()


def test_any_start_in_the_workspace_kills_what_a_dead_run_left(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc = _start(workspace, home, _scenario(tmp_path, 60))
    proc.kill()
    proc.communicate(timeout=30)
    pgid = int((workspace / "shell.pid").read_text())
    (workspace / "shell.pid").unlink()
    again = _start(workspace, home, _scenario(tmp_path, 60))  # a new run, not a resume
    assert not _group_alive(pgid)
    again.send_signal(signal.SIGTERM)
    again.communicate(timeout=30)
