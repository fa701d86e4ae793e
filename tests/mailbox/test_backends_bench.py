"""bench/backends.py --mailbox runs and prints its figures (printed, never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.redis_server import server_binary

REPO = Path(__file__).parents[2]


def test_the_backends_bench_prints_file_and_redis_figures(tmp_path: Path) -> None:
    server_binary()  # skips (fails under CI=true) without redis-server
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "backends.py"), "--mailbox", "--quick"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for label in ("file, batch", "file, always", "redis, aof everysec", "redis, aof always"):
        (row,) = [line for line in done.stdout.splitlines() if line.startswith(label + " ")]
        assert len(row.split()) == len(label.split()) + 3, row  # p50, p99, msgs/s
