"""bench/team_cost.py runs and prices one agent against a team (a smoke run)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.benches import run_bench

if TYPE_CHECKING:
    from pathlib import Path


def test_the_team_cost_bench_prices_both_with_cache_figures(tmp_path: Path) -> None:
    out = run_bench("team_cost.py", "--quick", home=tmp_path / "home")
    rows = {
        m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
        for m in re.finditer(
            r"^  (one agent|team of 2) .*? ([\d,]+) write +([\d,]+) read", out, re.M
        )
    }
    assert set(rows) == {"one agent", "team of 2"}
    # The mock server's cache: each run writes its prefix once and reads it after.
    assert all(write > 1000 and read > write for write, read in rows.values())
    assert "team / one agent: cost" in out
