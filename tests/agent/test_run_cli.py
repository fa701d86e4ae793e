"""``coterie run``: the real CLI on scenarios, in temporary workspaces, offline."""

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
from tests.agent.conftest import SCENARIOS, clean_env, coterie, wait_for

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(params=["scripted", "sdk"])
def run_scenario(request: pytest.FixtureRequest, workspace: Path, home: Path, mock_server):  # type: ignore[no-untyped-def]
    """Run ``coterie run`` on a scenario offline (--scenario) or through the real
    SDK against ``coterie mock-server`` (ANTHROPIC_BASE_URL): same results expected."""

    def run(scenario: Path, *args: str) -> subprocess.CompletedProcess[str]:
        if request.param == "scripted":
            return coterie(
                "run", "go", "--scenario", str(scenario), *args, cwd=workspace, home=home
            )
        url = mock_server(scenario)
        env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"}
        return coterie("run", "go", *args, cwd=workspace, home=home, env=env)

    return run


def edit_cycle(workspace: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The edit-cycle scenario, offline, allowed to do everything, headless."""
    return coterie(
        "run",
        "make hello.txt",
        "--scenario",
        str(SCENARIOS / "edit_cycle.json"),
        "--permission-mode",
        "bypassPermissions",
        "-p",
        *extra,
        cwd=workspace,
        home=home,
    )


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_write_read_edit_and_bash(workspace: Path, run_scenario) -> None:  # type: ignore[no-untyped-def]
    result = run_scenario(
        SCENARIOS / "edit_cycle.json", "--permission-mode", "bypassPermissions", "-p"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The file now says hello coterie."
    assert (workspace / "hello.txt").read_text() == "hello coterie\n"


def test_json_output_has_the_result_fields(workspace: Path, home: Path) -> None:
    result = edit_cycle(workspace, home, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["result"] == "The file now says hello coterie."
    assert out["num_turns"] == 5
    assert out["is_error"] is False
    assert out["usage"]["input_tokens"] > 0
    assert out["total_cost_usd"] > 0
    assert (runs_root(workspace) / out["run_id"]).is_dir()


def test_stream_json_prints_events_then_the_result(workspace: Path, home: Path) -> None:
    result = edit_cycle(workspace, home, "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "system"
    assert lines[-1]["type"] == "result"
    assert lines[-1]["result"] == "The file now says hello coterie."
    kinds = [line["type"] for line in lines]
    assert kinds.count("assistant") == 5
    assert kinds.count("user") == 4


def test_a_denial_goes_back_to_the_model_and_the_loop_goes_on(
    workspace: Path, run_scenario
) -> None:  # type: ignore[no-untyped-def]
    """Headless, default mode: Bash needs approval, nobody can give it."""
    result = run_scenario(SCENARIOS / "denied.json", "-p")
    assert result.returncode == 0, result.stderr
    assert "denied" in result.stdout
    assert not (workspace / "made-by-bash.txt").exists()


def test_a_deny_rule_beats_bypass_permissions(workspace: Path, run_scenario) -> None:  # type: ignore[no-untyped-def]
    (workspace / "precious.txt").write_text("keep me\n")
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(rm *)"]}})
    )
    result = run_scenario(
        SCENARIOS / "deny_rule.json", "--permission-mode", "bypassPermissions", "-p"
    )
    assert result.returncode == 0, result.stderr
    assert (workspace / "precious.txt").read_text() == "keep me\n"
    assert (workspace / "other.txt").read_text() == "allowed-anyway\n"


def test_overwriting_needs_an_earlier_read(workspace: Path, run_scenario) -> None:  # type: ignore[no-untyped-def]
    (workspace / "notes.md").write_text("original\n")
    result = run_scenario(
        SCENARIOS / "read_before_write.json", "--permission-mode", "acceptEdits", "-p"
    )
    assert result.returncode == 0, result.stderr
    assert (workspace / "notes.md").read_text() == "rewritten\n"


def test_writes_outside_the_workspace_are_refused(
    workspace: Path,
    tmp_path: Path,
    run_scenario,  # type: ignore[no-untyped-def]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "link").symlink_to(outside)
    scenario = json.loads((SCENARIOS / "escape.json").read_text())
    text = json.dumps(scenario).replace("OUTSIDE_ABS", str(outside / "absolute.txt"))
    (tmp_path / "escape.json").write_text(text)
    result = run_scenario(tmp_path / "escape.json", "--permission-mode", "bypassPermissions", "-p")
    assert result.returncode == 0, result.stderr
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "outside-relative.txt").exists()


def test_a_bash_timeout_kills_the_background_grandchild(workspace: Path, home: Path) -> None:
    result = coterie(
        "run",
        "wait",
        "--scenario",
        str(SCENARIOS / "bash_timeout.json"),
        "--permission-mode",
        "bypassPermissions",
        "-p",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    grandchild = int((workspace / "grandchild.pid").read_text())
    deadline = time.monotonic() + 5
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def test_ctrl_c_during_a_long_command_exits_130_and_leaves_no_child(
    workspace: Path, home: Path
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coterie",
            "run",
            "wait",
            "--scenario",
            str(SCENARIOS / "long_bash.json"),
            "--permission-mode",
            "bypassPermissions",
            "-p",
        ],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(workspace / "shell.pid", proc, "the command never started")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    for name in ("shell.pid", "grandchild.pid"):
        pid = int((workspace / name).read_text())
        assert not pid_alive(pid), f"{name} survived"


def test_without_a_key_or_a_scenario_the_error_says_what_to_do(workspace: Path, home: Path) -> None:
    result = coterie("run", "hello", "-p", cwd=workspace, home=home)
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "--scenario" in result.stderr


@pytest.mark.parametrize("args", [["--max-turns", "0"], ["--max-budget-usd", "-1"]])
def test_bad_limits_are_usage_errors(workspace: Path, home: Path, args: list[str]) -> None:
    result = coterie(
        "run", "x", "--scenario", str(SCENARIOS / "denied.json"), *args, cwd=workspace, home=home
    )
    assert result.returncode == 2


def test_max_turns_stops_the_run_with_exit_1(workspace: Path, home: Path) -> None:
    result = edit_cycle(workspace, home, "--max-turns", "2", "--output-format", "json")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["is_error"] is True
    assert out["subtype"] == "error_max_turns"
    assert out["num_turns"] == 2


# -- the same through the real SDK against `coterie mock-server` ---------------


def test_the_budget_stops_the_run_with_exit_1(workspace: Path, home: Path) -> None:
    result = edit_cycle(workspace, home, "--max-budget-usd", "0.000001", "--output-format", "json")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["subtype"] == "error_max_budget_usd"
    assert out["num_turns"] == 1
    assert out["total_cost_usd"] > 0.000001


def test_an_overloaded_answer_is_retried(workspace: Path, home: Path, mock_server) -> None:  # type: ignore[no-untyped-def]
    url = mock_server(SCENARIOS / "overloaded.json")
    result = coterie(
        "run",
        "hi",
        "-p",
        cwd=workspace,
        home=home,
        env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Answered after a retry."


def test_a_lead_that_crashes_once_is_restarted_and_finishes(workspace: Path, home: Path) -> None:
    result = coterie(
        "run",
        "x",
        "--scenario",
        str(SCENARIOS / "crash_once.json"),
        "-p",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "recovered"
    (run,) = (runs_root(workspace)).iterdir()
    events = (run / "events.jsonl").read_text()
    assert '"type":"actor.crashed"' in events
    assert "a deliberate bug" in events


def test_a_lead_that_keeps_crashing_ends_the_run_cleanly(workspace: Path, home: Path) -> None:
    result = coterie(
        "run",
        "x",
        "--scenario",
        str(SCENARIOS / "crash_always.json"),
        "-p",
        "--output-format",
        "json",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["is_error"] is True
    assert out["subtype"] == "error_during_execution"
    assert "gave up" in out["result"]
    assert out["run_id"]
    assert "Traceback" not in result.stderr


def test_a_restarted_lead_goes_on_from_its_transcript(workspace: Path, home: Path) -> None:
    """No tool call is run twice: the first command's line appears once."""
    result = coterie(
        "run",
        "write two lines",
        "--scenario",
        str(SCENARIOS / "crash_mid_run.json"),
        "--permission-mode",
        "bypassPermissions",
        "-p",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "Both lines written."
    assert (workspace / "log.txt").read_text() == "one\ntwo\n"
    (run,) = (runs_root(workspace)).iterdir()
    assert '"type":"agent.resumed"' in (run / "events.jsonl").read_text()
