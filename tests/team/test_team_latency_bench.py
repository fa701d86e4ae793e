"""bench/team_latency.py runs and prints its figures (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys

from tests.agent.conftest import REPO, clean_env


def test_the_team_latency_bench_prints_its_runs_and_targets() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "team_latency.py"), "--quick", "--latencies", "0.05"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "one agent" in out
    assert "team of 2" in out
    assert "load average at the end" in out
    assert "team of N on N*k tasks within 1.3x the critical path" in out
