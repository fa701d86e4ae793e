"""A short run of the chaos harness (bench/chaos.py): a few faulted team rounds, no violation.

Two rounds: a cut stream through the real SDK against ``coterie mock-server``,
and a full disk (a small tmpfs) on the scripted model, resumed once there is
space again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]


@pytest.mark.slow
def test_a_short_chaos_run_finds_no_violation() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "chaos.py"),
            "--rounds",
            "2",
            "--seed",
            "1",
            "--faults",
            "cut,enospc",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=170,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 round(s) with a violation" in done.stdout, done.stdout
    assert " cut      sdk " in done.stdout, done.stdout
    assert " enospc   scripted " in done.stdout, done.stdout
