"""A demo's run record: live while the demo plays, then completed or failed as it ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.demos.record import demo_run
from coterie.runs import is_live, read_config, read_state, run_info

if TYPE_CHECKING:
    from pathlib import Path


def test_a_demo_that_ends_well_is_recorded_completed(tmp_path: Path) -> None:
    with demo_run(tmp_path, "runtime", pace=0.5) as run:
        assert is_live(run.run_dir)
        assert run_info(run.run_dir).state == "running"
        run.ended(0)
    assert not is_live(run.run_dir)
    assert read_state(run.run_dir)["result"] == {
        "result": "demo runtime finished",
        "is_error": False,
    }
    assert run_info(run.run_dir).state == "completed"
    assert read_config(run.run_dir)["pace"] == 0.5


def test_a_demo_whose_check_fails_is_recorded_failed(tmp_path: Path) -> None:
    with demo_run(tmp_path, "kill9") as run:
        assert run.ended(1) == 1
    assert run_info(run.run_dir).state == "failed"
    assert read_state(run.run_dir)["result"]["is_error"] is True


def test_a_demo_that_never_says_how_it_ended_is_recorded_failed(tmp_path: Path) -> None:
    with demo_run(tmp_path, "storm") as run:
        pass
    assert run_info(run.run_dir).state == "failed"


def test_a_demo_that_raises_is_recorded_failed_even_after_saying_it_ended_well(
    tmp_path: Path,
) -> None:
    """Ctrl-C during the demo's last words: not interrupted (a demo cannot be resumed)."""
    made: list[Path] = []

    def demo() -> None:
        with demo_run(tmp_path, "shielded") as run:
            made.append(run.run_dir)
            run.ended(0)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        demo()
    assert run_info(made[0]).state == "failed"
