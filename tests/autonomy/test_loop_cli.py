"""``coterie run --loop SPEC``: the real CLI on scenarios, every wait scaled down.

``COTERIE_TIME_SCALE=0.001`` turns the 60 s minimum of ``ScheduleWakeup`` into
60 ms and a 5-minute interval into 0.3 s, so a loop of a few ticks takes
about a second while its schedule keeps its real (wall-clock) values.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie, home, workspace
from tests.agent.test_resume_cli import only_run, write_scenario
from tests.team.test_team_cli import events_of

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent

FAST = {"COTERIE_TIME_SCALE": "0.001"}


def wakeup(delay: object, prompt: str, reason: str = "CI is still running") -> dict[str, Any]:
    """A lead turn calling ``ScheduleWakeup``."""
    data = {"delaySeconds": delay, "reason": reason, "prompt": prompt}
    return {"tool_uses": [{"name": "ScheduleWakeup", "input": data}]}


def watch_ci() -> list[dict[str, Any]]:
    """Tick 1 schedules a second look (delay 5, clamped to 60); tick 2 converges."""
    return [
        wakeup(5, "look at CI again"),
        {"text": "CI is running; I will look again."},
        {"expect": "look at CI again", "text": "CI is green; nothing left to watch."},
    ]


def loop(
    workspace: Path, home: Path, scenario: Path, spec: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``coterie run -p --output-format json --loop SPEC`` on *scenario*, waits scaled."""
    return coterie(
        "run", "-p", "--output-format", "json", "--scenario", str(scenario), "--loop", spec,
        *extra, cwd=workspace, home=home, env=FAST, timeout=60,
    )  # fmt: skip


def loop_events(workspace: Path, kind: str) -> list[dict[str, Any]]:
    """The data of the run's ``loop.<kind>`` events, in order."""
    return [e.data for e in events_of(workspace) if e.type == f"loop.{kind}"]


def run_file(workspace: Path, name: str) -> dict[str, Any]:
    """A JSON file of the run directory."""
    run_dir = runs_root(workspace) / only_run(workspace)
    data: dict[str, Any] = json.loads((run_dir / name).read_text())
    return data


def test_a_dynamic_loop_runs_while_the_agent_schedules_wakeups_and_ends_converged(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": watch_ci()})
    done = loop(workspace, home, scenario, "watch the CI")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == (
        "CI is green; nothing left to watch.\n\n"
        "Loop ended after 2 tick(s): converged (no wake-up was scheduled)."
    )
    assert result["num_turns"] == 3
    assert [(t["tick"], t["prompt"]) for t in loop_events(workspace, "tick")] == [
        (1, "watch the CI"),
        (2, "look at CI again"),
    ]
    (waiting,) = loop_events(workspace, "waiting")
    assert 59 < waiting["seconds"] <= 60  # the delay of 5 s was clamped to 60
    assert [e["reason"] for e in loop_events(workspace, "ended")] == [
        "converged (no wake-up was scheduled)"
    ]


def test_a_fixed_loop_runs_the_same_prompt_every_interval_until_its_tick_cap(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    turns = [{"expect": "check the build", "text": f"build ok ({i})"} for i in (1, 2, 3)]
    scenario = write_scenario(tmp_path / "s.json", {"lead": turns})
    done = loop(workspace, home, scenario, "5m check the build", "--max-ticks", "3")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == (
        "build ok (3)\n\nLoop ended after 3 tick(s): the tick cap (3) was reached."
    )
    ticks = loop_events(workspace, "tick")
    assert [(t["tick"], t["prompt"]) for t in ticks] == [(n, "check the build") for n in (1, 2, 3)]
    waits = loop_events(workspace, "waiting")
    assert [w["tick"] for w in waits] == [2, 3]
    assert all(299 < w["seconds"] <= 300 for w in waits)
    assert run_file(workspace, "schedule.json")["ticks"] == 3


def test_a_loop_reports_what_its_ticks_cost_once(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    turns = [{"text": f"build ok ({i})"} for i in (1, 2, 3)]
    scenario = write_scenario(tmp_path / "s.json", {"lead": turns})
    done = loop(workspace, home, scenario, "5m check the build", "--max-ticks", "3")
    assert done.returncode == 0, done.stderr
    lead_totals = [
        e.data["total_cost_usd"]
        for e in events_of(workspace)
        if e.type == "agent.result" and e.data["actor"] == "lead"
    ]
    assert json.loads(done.stdout)["total_cost_usd"] == pytest.approx(lead_totals[-1])


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--loop", ""), id="empty spec"),
        pytest.param(("--loop", "   "), id="blank spec"),
        pytest.param(("--loop", "5m"), id="interval without a prompt"),
        pytest.param(("--loop", "0m check the build"), id="zero leading interval"),
        pytest.param(("--loop", "check the build every 0 minutes"), id="zero trailing interval"),
        pytest.param(("--loop", "5m check the build", "check it now"), id="PROMPT and --loop"),
        pytest.param((), id="neither PROMPT nor --loop"),
    ],
)
def test_loop_usage_errors_exit_2_before_any_run_starts(
    workspace: Path, home: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "never asked"}]})
    done = coterie(
        "run", "-p", "--scenario", str(scenario), *args, cwd=workspace, home=home, env=FAST
    )
    assert done.returncode == 2, done.stdout
    assert "error:" in done.stderr
    assert not (runs_root(workspace)).exists()


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param("2h check the build", id="hourly interval"),
        pytest.param("run the smoke tests every morning", id="daily wording"),
    ],
)
def test_long_or_daily_loops_print_a_hint_and_carry_on(
    workspace: Path, home: Path, tmp_path: Path, spec: str
) -> None:
    # One tick: the loop ends before any wait (2 h, even scaled, is too long for a test).
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "checked"}]})
    done = loop(workspace, home, scenario, spec, "--max-ticks", "1")
    assert done.returncode == 0, done.stderr
    assert "hint:" in done.stderr
    assert "external scheduler" in " ".join(done.stderr.split())
    assert json.loads(done.stdout)["result"].startswith("checked\n\nLoop ended after 1 tick(s)")


def start_loop(workspace: Path, home: Path, scenario: Path, spec: str) -> subprocess.Popen[str]:
    """``coterie run -p --loop SPEC`` in the background, waits at their real length."""
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "-p", "--output-format", "json",
         "--scenario", str(scenario), "--loop", spec],
        cwd=workspace, env=clean_env(HOME=str(home)), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_event(workspace: Path, kind: str, proc: subprocess.Popen[str]) -> None:
    """Poll the run's event log until an event of *kind* is recorded."""
    deadline = time.monotonic() + 30
    runs = runs_root(workspace)
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        logs = list(runs.glob("*/events.jsonl")) if runs.exists() else []
        if logs and any(e.type == kind for e in read_events(logs[0])):
            return
        time.sleep(0.01)
    raise AssertionError(f"no {kind} event within 30 s")


@pytest.mark.parametrize(
    ("how", "exit_code"),
    [
        pytest.param(signal.SIGKILL, -signal.SIGKILL, id="kill -9"),
        pytest.param(signal.SIGINT, 130, id="Ctrl-C"),
    ],
)
def test_a_loop_stopped_mid_wait_resumes_with_its_next_tick(
    workspace: Path, home: Path, tmp_path: Path, how: signal.Signals, exit_code: int
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": watch_ci()})
    proc = start_loop(workspace, home, scenario, "watch the CI")
    try:
        wait_for_event(workspace, "loop.waiting", proc)  # tick 1 done, 60 real seconds to go
        os.kill(proc.pid, how)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == exit_code
    saved = run_file(workspace, "schedule.json")
    assert (saved["ticks"], saved["prompt"]) == (1, "look at CI again")

    resumed = coterie(
        "resume", only_run(workspace), "-p", "--output-format", "json",
        cwd=workspace, home=home, env=FAST, timeout=60,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"].endswith(
        "Loop ended after 2 tick(s): converged (no wake-up was scheduled)."
    )
    # Tick 1 ran once; the resumed run waited out the rest of the same wake-up, then ran tick 2.
    assert [(t["tick"], t["prompt"]) for t in loop_events(workspace, "tick")] == [
        (1, "watch the CI"),
        (2, "look at CI again"),
    ]
    first_wait, resumed_wait = loop_events(workspace, "waiting")
    assert resumed_wait["tick"] == 2
    assert resumed_wait["seconds"] < first_wait["seconds"]
    assert run_file(workspace, "schedule.json")["ticks"] == 2
    assert run_file(workspace, "scenario-state.json")["cursors"] == {"lead": 3}


def test_tools_never_take_a_dynamic_loops_wakeup_away(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """``--tools Read`` leaves the loop its ScheduleWakeup: the second tick comes."""
    scenario = write_scenario(tmp_path / "s.json", {"lead": watch_ci()})
    done = loop(workspace, home, scenario, "watch the CI", "--tools", "Read")
    assert done.returncode == 0, done.stderr
    assert [t["tick"] for t in loop_events(workspace, "tick")] == [1, 2]
