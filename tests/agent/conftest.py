"""Helpers for running the real ``coterie`` CLI on scenarios in temporary workspaces."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

SCENARIOS = Path(__file__).parent / "scenarios"
REPO = Path(__file__).parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a user without credentials would have, plus *extra*."""
    # CLAUDE_CONFIG_DIR too: a developer's own Claude folder must not leak in; and
    # no proxy: the tests' servers are on 127.0.0.1, which no proxy reaches.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ANTHROPIC_")
        and k != "CLAUDE_CONFIG_DIR"
        and not k.lower().endswith("_proxy")
    }
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so the developer's ~/.claude/settings.json never leaks in."""
    h = tmp_path / "home"
    h.mkdir()
    return h


def coterie(
    *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m coterie ARGS`` in *cwd*; no standard input, as in CI."""
    return subprocess.run(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env={**clean_env(HOME=str(home)), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def mock_server(home: Path) -> Iterator[object]:
    """Start ``coterie mock-server`` for a scenario; yields a starter function."""
    procs: list[subprocess.Popen[str]] = []

    def start(scenario: Path, *extra: str) -> str:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "coterie",
                "mock-server",
                "--scenario",
                str(scenario),
                "--port",
                "0",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(HOME=str(home)),
        )
        procs.append(proc)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        return url

    yield start
    for proc in procs:
        proc.terminate()
        proc.communicate(timeout=10)  # reaps it and closes its pipes


def wait_for(path: Path, proc: subprocess.Popen[str], what: str, *, settle: float = 0.2) -> None:
    """Until *path* exists (a CLI under test reached a point), failing if *proc* ends
    first or a minute passes; then *settle* seconds more."""
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, what
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    time.sleep(settle)
