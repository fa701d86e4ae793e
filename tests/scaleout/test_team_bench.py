"""bench/backends.py --team runs a team on files and on workers, and prints its figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.redis_server import server_binary

REPO = Path(__file__).parents[2]

pytestmark = pytest.mark.slow


def test_the_team_bench_prints_both_runs(tmp_path: Path) -> None:
    server_binary()  # skips (fails under CI=true) without redis-server
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "backends.py"), "--team", "--quick"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (files,) = [line for line in done.stdout.splitlines() if line.startswith("file, one process")]
    (redis,) = [line for line in done.stdout.splitlines() if line.startswith("redis, lead + 2")]
    assert len(files.split()) >= 3 + 3  # wall, CPU per task, one RSS, then CPU s each
    assert len(redis.split()) >= 5 + 2 + 3  # wall, CPU per task, 3 RSS, then CPU s each
