"""A resume refused because the run's files are damaged still kills what the
kill -9'd run left running (found by bench/chaos.py: a flipped byte in
``state.json`` made ``resume`` exit 2 before the leftover groups were reaped,
so a tool's background processes outlived the run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.test_signals_cli import _group_alive, _scenario, _start

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below


def test_a_resume_refused_for_a_damaged_state_file_kills_the_groups_left_behind(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc = _start(workspace, home, _scenario(tmp_path, 60))
    proc.kill()
    proc.communicate(timeout=30)
    pgid = int((workspace / "shell.pid").read_text())
    assert _group_alive(pgid), "kill -9 of coterie kills its tool's group by itself?"
    (run_dir,) = runs_root(workspace).iterdir()
    (run_dir / "state.json").write_bytes(b"{not json")
    result = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home)
    assert result.returncode == 2, result.stderr
    assert "state.json" in result.stderr.replace("\n", "")  # the console wraps it
    assert "Traceback" not in result.stderr
    assert "killed" in result.stderr
    assert not _group_alive(pgid)
