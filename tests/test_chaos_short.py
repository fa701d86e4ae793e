"""A short run of the chaos harness (bench/chaos.py): a few faulted team rounds, no violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]


@pytest.mark.slow
def test_a_short_chaos_run_finds_no_violation() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "chaos.py"), "--rounds", "3", "--seed", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 round(s) with a violation" in done.stdout, done.stdout
