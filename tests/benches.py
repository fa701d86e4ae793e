"""Running a bench script (``bench/NAME.py``) the way its smoke test does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[1]


def run_bench(script: str, *args: str, home: Path, timeout: float = 300) -> str:
    """Run ``bench/SCRIPT`` with *args* from the repository, with a coterie home of
    the test's own and no standard input; its standard output (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
