"""A run whose workspace was moved goes on where it was resumed from (issue 12, finding 7).

A run interrupted in ``A``, with ``A`` renamed to ``B`` and resumed from ``B``,
used to run its tools in ``A``. Runs are kept under their workspace's path, so
from ``B`` the run must be found by its id, adopted by ``B`` (said in one
line) and found there afterwards; when that is ambiguous it is refused.
"""

from __future__ import annotations

import shutil
import signal
import time
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import BYPASS, only_run, start, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

WAIT = "touch started; sleep 300"


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def interrupted_in(workspace: Path, home: Path, tmp_path: Path) -> str:
    """A run stopped by Ctrl-C in *workspace* during a long command; its id."""
    scenario = write_scenario(
        tmp_path / "s.json", {"lead": [bash(WAIT), bash("pwd > where.txt"), {"text": "done"}]}
    )
    proc = start(["run", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    deadline = time.monotonic() + 60
    while not (workspace / "started").exists():
        assert time.monotonic() < deadline, "the command never started"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    return only_run(workspace)


def says(text: str, phrase: str) -> bool:
    """Whether *text* holds *phrase*, wherever the console wrapped its lines."""
    return "".join(phrase.split()) in "".join(text.split())


def test_a_run_resumed_from_its_moved_workspace_runs_its_tools_there(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_id = interrupted_in(workspace, home, tmp_path)
    moved = workspace.rename(tmp_path / "moved")
    resumed = coterie("resume", run_id, "-p", cwd=moved, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "done\n"), resumed.stderr
    assert says(resumed.stderr, f"it goes on in {moved}")
    assert (moved / "where.txt").read_text().strip() == str(moved)
    assert not workspace.exists()
    # Found under the new workspace from now on, and its config still verifies.
    assert (runs_root(moved) / run_id / "config.json").is_file()
    assert not (runs_root(workspace) / run_id).exists()
    listed = coterie("runs", cwd=moved, home=home)
    assert run_id in listed.stdout
    again = coterie("resume", run_id, "-p", cwd=moved, home=home)
    assert again.returncode == 0, again.stderr
    assert "no longer exists" not in again.stderr


def test_a_run_whose_workspace_still_exists_is_not_taken_by_another(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_id = interrupted_in(workspace, home, tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    resumed = coterie("resume", run_id, "-p", cwd=copy, home=home)
    assert resumed.returncode == 2, resumed.stderr
    assert says(resumed.stderr, f"which still exists; resume it from there (cd {workspace})")
    assert not (copy / "where.txt").exists()
    assert (runs_root(workspace) / run_id / "config.json").is_file()


def test_a_run_id_found_in_several_projects_is_refused(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_id = interrupted_in(workspace, home, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(runs_root(workspace) / run_id, runs_root(other) / run_id)
    shutil.rmtree(other)
    moved = workspace.rename(tmp_path / "moved")
    resumed = coterie("resume", run_id, "-p", cwd=moved, home=home)
    assert resumed.returncode == 2, resumed.stderr
    assert says(resumed.stderr, "matches runs of several projects")
    assert not (moved / "where.txt").exists()
