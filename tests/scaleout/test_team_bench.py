"""bench/backends.py --team runs a team on files and on workers, and prints its figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benches import run_bench
from tests.redis_server import server_binary

REPO = Path(__file__).parents[2]

pytestmark = pytest.mark.slow


def test_the_team_bench_prints_both_runs(tmp_path: Path) -> None:
    server_binary()  # skips (fails under CI=true) without redis-server
    out = run_bench("backends.py", "--team", "--quick", home=tmp_path)
    (files,) = [line for line in out.splitlines() if line.startswith("file, one process")]
    (redis,) = [line for line in out.splitlines() if line.startswith("redis, lead + 2")]
    assert len(files.split()) >= 3 + 3  # wall, CPU per task, one RSS, then CPU s each
    assert len(redis.split()) >= 5 + 2 + 3  # wall, CPU per task, 3 RSS, then CPU s each
    (ratio,) = [line for line in out.splitlines() if line.startswith("CPU per task, workers")]
    assert "(target ≤ 1.5x: " in ratio
