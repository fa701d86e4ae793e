"""Background commands through the real CLI: Bash's ``run_in_background`` returns at
once with an id and an output file, the lead is woken by the command's end (and by
a Monitor's lines), the stream-json task lines, and no process of a background
command outlives its run: a Ctrl-C, a SIGTERM, or a kill -9 and a resume (which
tells the lead its command was lost).

Each run is ``coterie run -p`` on a scenario in a temporary workspace; what the
model was sent is checked with the turns' ``expect``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from coterie.processes import group_alive
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario

pytestmark = pytest.mark.slow

BYPASS = ("--permission-mode", "bypassPermissions")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so the developer's settings never leak in."""
    h = tmp_path / "home"
    h.mkdir()
    return h


def background(command: str, description: str = "background job") -> dict[str, Any]:
    call = {"command": command, "run_in_background": True, "description": description}
    return {"tool_uses": [{"name": "Bash", "input": call}]}


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def run_dir(workspace: Path) -> Path:
    return runs_root(workspace) / only_run(workspace)


def start(workspace: Path, home: Path, scenario: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "go", "--scenario", str(scenario), "-p", *BYPASS],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_group(workspace: Path, proc: subprocess.Popen[str]) -> tuple[int, Path]:
    """The process group of the run's one background command, once it runs, and the
    command's output file."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        runs = runs_root(workspace)
        for run in runs.iterdir() if runs.exists() else ():
            groups = list((run / "procgroups").glob("*-*"))
            outputs = list((run / "background").glob("*.output"))
            if groups and outputs and "started" in outputs[0].read_text():
                return int(groups[0].name.partition("-")[0]), outputs[0]
        time.sleep(0.05)
    raise AssertionError("the background command never started")


def wait_for_state(workspace: Path, state: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if f'"{state}"' in (run_dir(workspace) / "state.json").read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"the run never got to {state}")


def gone_within(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return True
        time.sleep(0.05)
    return False


def test_a_background_command_returns_at_once_and_its_end_wakes_the_lead(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "wake.json",
        {
            "lead": [
                background("sleep 1; echo done", "short wait"),
                {"expect": "ID: b", "text": "it runs"},
                {"expect": "<status>completed</status>", "text": "it finished"},
            ]
        },
    )
    done = coterie(
        "run", "go", "--scenario", str(scenario), "-p", "--output-format", "stream-json",
        *BYPASS, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    results = [line for line in out if line["type"] == "result"]
    assert [r["result"] for r in results] == ["it runs", "it finished"]
    [started] = [x for x in out if x.get("subtype") == "task_started"]
    [updated] = [x for x in out if x.get("subtype") == "task_updated"]
    [told] = [x for x in out if x.get("subtype") == "task_notification"]
    call = next(x for x in out if x["type"] == "assistant")["message"]["content"][0]["id"]
    assert started["task_type"] == "local_bash"
    assert started["is_backgrounded"] is True
    assert started["tool_use_id"] == told["tool_use_id"] == call
    assert started["description"] == "short wait"
    assert updated["patch"]["status"] == told["status"] == "completed"
    assert told["summary"].endswith("(exit code 0)")
    # The tool result named the file; the file has what the command printed.
    result = next(x for x in out if x["type"] == "user")["message"]["content"][0]["content"]
    assert started["task_id"] in result
    assert told["output_file"] in result
    assert Path(told["output_file"]).read_text().startswith("done\n")
    # The call returned at once: the model's next turn came before the command ended.
    replies = [x for x in out if x["type"] == "assistant"]
    assert replies[1]["message"]["content"][0]["text"] == "it runs"
    assert out.index(replies[1]) < out.index(told)
    assert not list((run_dir(workspace) / "procgroups").glob("*"))


def test_a_monitor_wakes_the_lead_with_its_lines(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    watch = {"command": "sleep 1; echo ready", "description": "readiness", "timeout_ms": 30000}
    scenario = write_scenario(
        tmp_path / "monitor.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Monitor", "input": watch}]},
                {"expect": "Monitor started", "text": "watching"},
                # The line and the end of the stream come as one wake-up.
                {"expect": "<event>ready</event>", "text": "it is ready"},
            ]
        },
    )
    done = coterie(
        "run", "go", "--scenario", str(scenario), "-p", *BYPASS, cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    assert "it is ready" in done.stdout
    [woken] = [m for m in transcript_messages(run_dir(workspace)) if "<event>" in str(m)]
    assert "command exited" in str(woken)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_run_leaves_no_background_process(
    workspace: Path, home: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    scenario = write_scenario(
        tmp_path / "long.json",
        {"lead": [background("echo started; sleep 30; echo done"), {"text": "it runs"}]},
    )
    proc = start(workspace, home, scenario)
    try:
        pgid, _ = wait_for_group(workspace, proc)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert gone_within(pgid, 10)
    finally:
        proc.kill()
        proc.communicate()
    assert not list((run_dir(workspace) / "procgroups").glob("*"))


def test_after_a_kill_9_the_resume_kills_the_command_and_tells_the_lead(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "lost.json",
        {
            "lead": [
                background("echo started; sleep 30; echo done", "long job"),
                {"text": "it runs"},
                {"expect": "was lost", "text": "I will start it again"},
            ]
        },
    )
    proc = start(workspace, home, scenario)
    try:
        pgid, output = wait_for_group(workspace, proc)
        wait_for_state(workspace, "completed")  # the lead's turn ended; -p waits on the job
        proc.kill()
        proc.communicate(timeout=60)
        assert group_alive(pgid)  # nothing ended it: coterie was killed
        resumed = coterie(
            "resume", only_run(workspace), "how is the job?", cwd=workspace, home=home
        )
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "I will start it again" in resumed.stdout
        assert gone_within(pgid, 10)
    finally:
        proc.kill()
        proc.communicate()
    assert output.read_text().startswith("started\n")
    assert "done" not in output.read_text()
