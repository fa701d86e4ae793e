"""bench/hooks.py runs and prints its figures (timings are printed, never asserted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.benches import run_bench

if TYPE_CHECKING:
    from pathlib import Path


def test_the_hooks_bench_prints_the_added_latency_and_ratio(tmp_path: Path) -> None:
    out = run_bench("hooks.py", "--calls", "3", "--rounds", "1", home=tmp_path, timeout=120)
    lines = out.splitlines()
    assert any("PreToolUse" in line and line.split()[0] == "3" for line in lines), out
    assert "fire alone" in out
