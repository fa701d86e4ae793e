"""Finding 8 of issue 11 through the real CLI: special and huge files in a workspace.

Each scenario's second turn ``expect``s the tool's message, so a run that
finishes with exit status 0 has shown the model the refusal. The old code
hung on the FIFO (Read and Grep, Ctrl-C ignored), read ``/dev/zero`` until
memory ran out and read a 3 GiB sparse file whole (3.1 GB resident).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import write_scenario

pytestmark = pytest.mark.slow

# A run takes a few seconds; the old code never finished these at all.
TIMEOUT = 90


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so the developer's settings never leak in."""
    h = tmp_path / "home"
    h.mkdir()
    return h


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": name, "input": input}]}


def run(
    workspace: Path, home: Path, tracks: list[dict[str, Any]], *extra: str
) -> subprocess.CompletedProcess[str]:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": tracks})
    return coterie(
        "run", "-p", *extra, "--scenario", str(scenario), "look",
        cwd=workspace, home=home, timeout=TIMEOUT,
    )  # fmt: skip


def test_read_of_a_fifo_is_refused_and_the_run_ends(workspace: Path, home: Path) -> None:
    os.mkfifo(workspace / "pipe")
    done = run(workspace, home, [call("Read", file_path="pipe"), {"text": "ok", "expect": "FIFO"}])
    assert done.returncode == 0, done.stderr


def test_grep_over_a_workspace_holding_a_fifo_finishes(workspace: Path, home: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("needle\n")
    done = run(workspace, home, [call("Grep", pattern="needle"), {"text": "ok", "expect": "a.txt"}])
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not Path("/dev/zero").is_char_device(), reason="no /dev/zero")
def test_read_of_a_character_device_is_refused(workspace: Path, home: Path) -> None:
    tracks = [call("Read", file_path="/dev/zero"), {"text": "ok", "expect": "character device"}]
    done = run(workspace, home, tracks, "--add-dir", "/dev")
    assert done.returncode == 0, done.stderr


def test_a_sparse_3_gib_file_is_refused_without_reading_it(workspace: Path, home: Path) -> None:
    with (workspace / "disk.img").open("wb") as f:
        f.truncate(3 << 30)
    scenario = write_scenario(
        workspace.parent / "s.json",
        {"lead": [call("Read", file_path="disk.img"), {"text": "ok", "expect": "binary file"}]},
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "-p", "--scenario", str(scenario), "look"],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        proc.returncode = 0  # reaped by wait4 above; keep Popen from waiting again
    assert os.waitstatus_to_exitcode(status) == 0
    # wait4 measures this child alone; ru_maxrss is in KiB on Linux (bytes on macOS).
    peak_kib = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)
    assert peak_kib < 512 * 1024  # a whole read would be over 3 GiB
