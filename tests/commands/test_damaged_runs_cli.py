"""Damaged run files give one clear line naming the file, never a traceback, and one
damaged run never hides the others (issue 12, finding 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import write_scenario

if TYPE_CHECKING:
    from pathlib import Path

DAMAGE = {
    "garbage": b"\x00\xffnot json",
    "truncated": b'{"state": "runn',
    "not an object": b"[1, 2]",
    "nested too deep": b"[" * 200_000,
}


def two_runs(workspace: Path, home: Path) -> list[Path]:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "hi"}] * 2})
    for _ in range(2):
        done = coterie("run", "-p", "--scenario", str(scenario), "hi", cwd=workspace, home=home)
        assert done.returncode == 0, done.stderr
    return sorted(runs_root(workspace).iterdir())


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("name", ["state.json", "config.json"])
def test_runs_lists_every_run_and_names_the_damaged_file(
    workspace: Path, home: Path, damage: str, name: str
) -> None:
    broken, fine = two_runs(workspace, home)
    (broken / name).write_bytes(DAMAGE[damage])
    listed = coterie("runs", cwd=workspace, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr + listed.stdout
    assert fine.name in listed.stdout
    assert broken.name in listed.stdout
    assert "damaged" in listed.stdout
    assert name in listed.stdout.replace("\n", "")


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("name", ["state.json", "config.json"])
def test_resume_of_a_damaged_run_is_one_error_naming_the_file(
    workspace: Path, home: Path, damage: str, name: str
) -> None:
    broken, _ = two_runs(workspace, home)
    (broken / name).write_bytes(DAMAGE[damage])
    again = coterie("resume", broken.name, "-p", cwd=workspace, home=home)
    assert again.returncode == 2
    assert "Traceback" not in again.stderr
    assert name in again.stderr.replace("\n", "")


__all__ = ["home", "workspace"]
