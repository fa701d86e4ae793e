"""bench/team_cost.py runs and prices one agent against a team (a smoke run)."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.agent.conftest import REPO, clean_env


def test_the_team_cost_bench_prices_both_with_cache_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "team_cost.py"), "--quick"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
        for m in re.finditer(
            r"^  (one agent|team of 2) .*? ([\d,]+) write +([\d,]+) read", done.stdout, re.M
        )
    }
    assert set(rows) == {"one agent", "team of 2"}
    # The mock server's cache: each run writes its prefix once and reads it after.
    assert all(write > 1000 and read > write for write, read in rows.values())
    assert "team / one agent: cost" in done.stdout
