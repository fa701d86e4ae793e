"""bench/sdk_roundtrip.py runs and prints its figures (timings are printed, never
asserted; the bench itself checks that the host was asked on every call)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.benches import run_bench

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def test_the_sdk_bench_prints_the_round_trips_and_the_ratio_per_turn(tmp_path: Path) -> None:
    out = run_bench(
        "sdk_roundtrip.py", "--calls", "4", "--rounds", "1", "--turns", "3",
        "--turn-rounds", "1", home=tmp_path, timeout=240,
    )  # fmt: skip
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for variant in ("gate", "can_use_tool", "hook_callback", "both"):
        assert float(rows[variant].split()[1]) > 0, out  # the median span, in ms
    for variant in ("can_use_tool", "hook_callback"):
        assert "<= 2 ms: " in rows[variant], out
    assert "SDK session / coterie -p, harness per turn: " in out
