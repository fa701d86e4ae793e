"""bench/mcp_calls.py runs and prints its figures (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys

from tests.agent.conftest import REPO, clean_env


def test_the_mcp_bench_prints_both_latencies_and_their_ratio() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "mcp_calls.py"), "--quick"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "mcp__bench__echo (stdio)" in done.stdout
    assert "Read (built-in)" in done.stdout
    assert "MCP call / built-in call (medians):" in done.stdout
