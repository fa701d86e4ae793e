"""bench/faults.py runs and prints its figures (timings are printed, never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]


def test_the_faults_bench_prints_the_round_trip(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "faults.py"), "--count", "5"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("crash round trip over the control channel, 5 faults: median")
