"""Findings 1-3 of issue 29: nothing coterie starts outlives its run. A hook's
command and an MCP stdio server are recorded in the run's ``procgroups/``
before they run, so a start after a kill -9 kills them (even mid-call); a
clean end ends an MCP server's whole group, helpers included."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie, home, wait_for, workspace

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

BYPASS = ("--permission-mode", "bypassPermissions")

#: An MCP server of the test's own, on the ``mcp`` package's server API. At start it
#: may leave a helper running (``helper.pid``); ``slow_write`` says it started
#: (``call.pid``), waits for ``release``, then writes ``side-effect``.
SERVER = '''
import os, subprocess, sys, time
from pathlib import Path
from mcp.server.mcpserver import MCPServer

app = MCPServer("lifetimes")


@app.tool()
def slow_write() -> str:
    """Wait for the release, then write the side effect (blocking: as a server busy
    with its work, it reads nothing meanwhile, not even the end of its input)."""
    Path("call.pid.tmp").write_text(str(os.getpid()))
    os.rename("call.pid.tmp", "call.pid")
    while not Path("release").exists():
        time.sleep(0.05)
    Path("side-effect").write_text("written")
    return "written"


if "--helper" in sys.argv:
    helper = subprocess.Popen(["sleep", "300"])  # same process group as the server
    Path("helper.pid.tmp").write_text(str(helper.pid))
    os.rename("helper.pid.tmp", "helper.pid")
app.run()
'''


def _alive(pid: int) -> bool:
    """Whether *pid* runs (a zombie does not: it only waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _group_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read()
    return int(raw[raw.rfind(b")") + 2 :].split()[2])


def _recorded(workspace: Path) -> list[int]:
    """The process groups the run has recorded now."""
    (run_dir,) = runs_root(workspace).iterdir()
    records = run_dir / "procgroups"
    return [int(p.name.partition("-")[0]) for p in records.iterdir()] if records.exists() else []


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@contextlib.contextmanager
def _no_strays(*pid_files: Path) -> Iterator[None]:
    """Kill what a failing test left running (the pids the files name)."""
    try:
        yield
    finally:
        for path in pid_files:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(path.read_text()), signal.SIGKILL)


def _scenario(tmp_path: Path, steps: list[Any]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "lifetimes", "tracks": {"lead": steps}}))
    return path


def _mcp_config(workspace: Path, tmp_path: Path, *args: str) -> Path:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    server = {"command": sys.executable, "args": [str(script), *args], "env": {"HOME": "${HOME}"}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"life": server}}))
    return path


def _start(workspace: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "go", "-p", *BYPASS, *args],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _resume(workspace: Path, home: Path) -> subprocess.CompletedProcess[str]:
    (run_dir,) = runs_root(workspace).iterdir()
    return coterie("resume", run_dir.name, "-p", cwd=workspace, home=home)


def _hook_settings(home: Path) -> None:
    """A PreToolUse hook that, the first time, starts ``sleep 300`` and waits for it."""
    command = (
        "[ -e hook.pid ] && exit 0; sleep 300 & echo $! > hook.pid.tmp;"
        " mv hook.pid.tmp hook.pid; wait"
    )
    hook = {"type": "command", "command": command, "timeout": 600}
    (home / ".claude").mkdir()
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))


def test_a_hook_running_at_kill_9_is_killed_by_the_resume(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    _hook_settings(home)
    steps = [{"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]}, {"text": "done"}]
    proc = _start(workspace, home, "--scenario", str(_scenario(tmp_path, steps)))
    with _no_strays(workspace / "hook.pid"):
        wait_for(workspace / "hook.pid", proc, "the hook never started")
        proc.kill()
        proc.communicate(timeout=30)
        sleeper = int((workspace / "hook.pid").read_text())
        assert _alive(sleeper), "kill -9 of coterie kills its hook by itself?"
        result = _resume(workspace, home)
        assert result.returncode == 0, result.stderr
        assert "killed" in result.stderr
        assert _gone_within(sleeper, 10), "the hook's process outlived the resume"


def test_an_mcp_server_mid_call_at_kill_9_is_killed_by_the_resume(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    config = _mcp_config(workspace, tmp_path)
    steps = [{"tool_uses": [{"name": "mcp__life__slow_write", "input": {}}]}, {"text": "done"}]
    scenario = _scenario(tmp_path, steps)
    proc = _start(workspace, home, "--scenario", str(scenario), "--mcp-config", str(config))
    with _no_strays(workspace / "call.pid"):
        wait_for(workspace / "call.pid", proc, "the MCP call never started")
        proc.kill()
        proc.communicate(timeout=30)
        server = int((workspace / "call.pid").read_text())
        assert _alive(server), "kill -9 of coterie kills its MCP server by itself?"
        result = _resume(workspace, home)
        assert result.returncode == 0, result.stderr
        assert "killed" in result.stderr
        assert _gone_within(server, 10), "the MCP server outlived the resume"
        # Nothing is left to finish the call: released now, it writes nothing.
        (workspace / "release").write_text("")
        assert not (workspace / "side-effect").exists()


def test_a_clean_end_ends_an_mcp_servers_helper(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    config = _mcp_config(workspace, tmp_path, "--helper")
    scenario = _scenario(tmp_path, [{"text": "done"}])
    with _no_strays(workspace / "helper.pid"):
        result = coterie(
            "run", "go", "-p", *BYPASS, "--scenario", str(scenario), "--mcp-config",
            str(config), cwd=workspace, home=home,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "done"
        helper = int((workspace / "helper.pid").read_text())
        assert _gone_within(helper, 10), "the MCP server's helper outlived the run"
        assert _recorded(workspace) == [], "an ended group is still recorded"


def test_sigterm_ends_a_running_hook(workspace: Path, home: Path, tmp_path: Path) -> None:
    _hook_settings(home)
    steps = [{"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]}, {"text": "done"}]
    proc = _start(workspace, home, "--scenario", str(_scenario(tmp_path, steps)))
    with _no_strays(workspace / "hook.pid"):
        wait_for(workspace / "hook.pid", proc, "the hook never started")
        sleeper = int((workspace / "hook.pid").read_text())
        assert _recorded(workspace) == [_group_of(sleeper)], "a running hook is not recorded"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 143, err
        assert _gone_within(sleeper, 10)
        assert _recorded(workspace) == [], "an ended group is still recorded"


def test_what_a_session_start_hook_leaves_running_lives_with_the_run_and_ends_with_it(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """As in Claude Code, a hook's ``server &`` outlives the hook (a Bash call sees it
    running); unlike Claude Code, not the run."""
    hook = {"type": "command", "command": "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid"}
    (home / ".claude").mkdir()
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    check = "kill -0 $(cat bg.pid) && echo still-running"
    steps = [{"tool_uses": [{"name": "Bash", "input": {"command": check}}]}, {"text": "done"}]
    with _no_strays(workspace / "bg.pid"):
        result = coterie(
            "run", "go", "-p", *BYPASS, "--verbose", "--scenario", str(_scenario(tmp_path, steps)),
            cwd=workspace, home=home,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "still-running" in result.stderr  # the Bash call's output, with --verbose
        assert _gone_within(int((workspace / "bg.pid").read_text()), 10)
        assert _recorded(workspace) == []
