"""bench/backends.py --mailbox runs and prints its figures (printed, never asserted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.benches import run_bench
from tests.redis_server import server_binary

if TYPE_CHECKING:
    from pathlib import Path


def test_the_backends_bench_prints_file_and_redis_figures(tmp_path: Path) -> None:
    server_binary()  # skips (fails under CI=true) without redis-server
    out = run_bench("backends.py", "--mailbox", "--quick", home=tmp_path)
    for label in ("file, batch", "file, always", "redis, aof everysec", "redis, aof always"):
        (row,) = [line for line in out.splitlines() if line.startswith(label + " ")]
        assert len(row.split()) == len(label.split()) + 3, row  # p50, p99, msgs/s
