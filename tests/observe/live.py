"""Live processes for the observer's CLI and browser tests: a slow team run, the observer."""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import clean_env, wait_for
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]{32,})/$")


def slow_team(tmp_path: Path, seconds: float) -> Path:
    """A team scenario: task_2 (bob) is blocked by task_1 (alice), whose Bash step
    takes *seconds*, long enough for a person (or a browser test) to act on her."""
    tracks: dict[str, list[dict[str, Any]]] = {
        "lead": [
            {
                "tool_uses": [
                    create("slow part", "alice"),
                    create("after it", "bob", blocked_by=["task_1"]),
                ]
            },
            {"text": "planned"},
            {"text": "both done"},
        ],
        "alice": [
            {
                "tool_uses": [
                    {"name": "Bash", "input": {"command": f"touch alice.started; sleep {seconds}"}}
                ]
            },
            {"text": "slow part done"},
        ],
        "bob": [{"text": "after it done"}],
    }
    return write_scenario(tmp_path / "slow.json", tracks)


@contextlib.contextmanager
def running(
    args: list[str], cwd: Path, home: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """``python -m coterie ARGS`` in the background, stopped (SIGINT, then killed) after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd, env=clean_env(HOME=str(home), **(env or {})), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.communicate()


def observer_url(proc: subprocess.Popen[str]) -> str:
    """The first line the observer printed: its URL."""
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    why = proc.stderr.read() if proc.stderr is not None and proc.poll() is not None else ""
    assert URL.match(line), (line, why)
    return line


def team_run(
    scenario: Path, workspace: Path, home: Path, backend: str | None = None
) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """The slow team run, started in the background (on *backend*'s server if given)."""
    on = ["--backend", backend] if backend else []
    return running(["team", "-p", *BYPASS, "--teammates", "2", "--scenario", str(scenario),
                    *on, "go"], workspace, home)  # fmt: skip


def started(proc: subprocess.Popen[str], workspace: Path) -> None:
    """Until alice has begun her slow step."""
    wait_for(workspace / "alice.started", proc, "alice never started")
