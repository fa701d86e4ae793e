"""bench/hooks.py runs and prints its figures (timings are printed, never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]


def test_the_hooks_bench_prints_the_added_latency_and_ratio(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "hooks.py"), "--calls", "3", "--rounds", "1"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any("PreToolUse" in line and line.split()[0] == "3" for line in lines), done.stdout
    assert "fire alone" in done.stdout
