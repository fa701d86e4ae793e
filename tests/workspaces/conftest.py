"""Git repositories in temporary folders, for the workspaces tests."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

IDENTITY = ("-c", "user.name=tester", "-c", "user.email=tester@example.invalid")


def run_git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in *cwd* as a user would run it; its standard output."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at *path* with one commit of *files* (a README by default)."""
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "hello\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    run_git(path, "add", "-A")
    run_git(path, "commit", "-q", "-m", "start")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws")


@pytest.fixture(autouse=True)
def own_workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The teammates' checkouts in this test's folder."""
    where = tmp_path / "checkouts"
    monkeypatch.setenv("COTERIE_WORKSPACES", str(where))
    return where


from tests.agent.conftest import home, mock_server, workspace  # noqa: E402  (the CLI's fixtures)

__all__ = ["home", "make_repo", "mock_server", "run_git", "workspace"]
