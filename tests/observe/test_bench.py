"""bench/observe.py runs and prints its figures (timings are printed, never asserted)."""

from __future__ import annotations

import importlib.util
import re
from typing import TYPE_CHECKING

from tests.benches import REPO, run_bench

if TYPE_CHECKING:
    from pathlib import Path


def _bench() -> object:
    """bench/observe.py as a module, loaded by path (bench/ is no package, and on
    sys.path its mailbox.py would stand in for the standard library's)."""
    spec = importlib.util.spec_from_file_location("observe_bench", REPO / "bench" / "observe.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bootstrap_interval = _bench().bootstrap_interval  # type: ignore[attr-defined]


def test_the_bootstrap_interval_holds_the_median_and_narrows_with_agreement() -> None:
    noisy = [0.8, 1.2, 0.95, 1.4, 0.9, 1.1, 0.85]
    low, high = bootstrap_interval(noisy)
    assert low <= 0.95 <= high
    assert bootstrap_interval(noisy) == (low, high)  # seeded
    assert bootstrap_interval([1.01] * 7) == (1.01, 1.01)
    assert high - low > 0.1


def test_the_observe_bench_prints_both_runs_the_pages_and_the_interval(tmp_path: Path) -> None:
    out = run_bench("observe.py", "--quick", home=tmp_path, timeout=180)
    assert re.search(r"round 1 baseline: [\d.]+ s", out), out
    pages = re.search(r"round 1 observed: .* (\d+) pages got (\d+) frames", out)
    assert pages is not None, out
    assert int(pages[1]) == 10  # every page held the run's stream
    assert int(pages[2]) >= 10  # a snapshot each, at least
    assert "90 % bootstrap interval" in out
