"""bench/faults.py runs and prints its figures (timings are printed, never asserted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.benches import run_bench

if TYPE_CHECKING:
    from pathlib import Path


def test_the_faults_bench_prints_the_round_trip(tmp_path: Path) -> None:
    out = run_bench("faults.py", "--count", "5", home=tmp_path, timeout=120)
    assert out.startswith("crash round trip over the control channel, 5 faults: median")
