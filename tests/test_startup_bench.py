"""bench/startup.py runs and prints its figures (timings are printed, never asserted;
the bench itself checks that every run exits 0 and a ``-p`` run prints its result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.benches import run_bench

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def _figures(out: str, label: str) -> list[str]:
    """The cells after *label* on its line of the table."""
    line = next(line for line in out.splitlines() if line.startswith(label))
    return line.removeprefix(label).split()


def test_the_startup_bench_prints_each_phase_and_where_the_time_goes(tmp_path: Path) -> None:
    out = run_bench(
        "startup.py",
        "--rounds",
        "1",
        "--turn-rounds",
        "1",
        "--no-claude",
        "--profile",
        home=tmp_path,
    )
    for command in ("python -c pass", "coterie --version", "coterie --help", "coterie runs"):
        assert min(float(cell) for cell in _figures(out, command)[:2]) > 0, out  # CPU, wall
    assert "coterie --version / python -c pass, CPU: " in out
    assert "(target <= 3x: " in out
    for phase in ("whole run, CPU s", "to 1st request, CPU s", "result -> exit, wall s"):
        assert float(_figures(out, phase)[0]) >= 0, out  # coterie's; claude's is "-"
    assert _figures(out, "requests per run")[0] == "1.000", out
    assert "claude: not measured" in out
    assert "one-turn `coterie -p hi`: " in out
    assert "self time by package: " in out
    assert "coterie/" in out.split("(top 15 by cumulative)")[1], out  # the run's own functions


def test_the_first_prompt_bench_times_both_models_to_the_prompt_and_the_answer(
    tmp_path: Path,
) -> None:
    out = run_bench("firstprompt.py", "--rounds", "1", home=tmp_path)
    for case in ("real API configured", "--scenario (baseline)"):
        ready, cpu, answered = (float(cell) for cell in _figures(out, case))
        assert 0 < ready <= answered, out
        assert cpu > 0, out
    assert "to the prompt with a real API configured: " in out
