"""Fixtures for the tool tests: a workspace, a directory outside it, a context."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from coterie.tools import ToolContext

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory (resolved, so paths compare equal)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, which no file tool may touch."""
    out = tmp_path / "outside"
    out.mkdir()
    return out.resolve()


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    """A fresh agent context in the workspace."""
    return ToolContext(workspace=workspace)


@pytest.fixture(scope="module")
def tree() -> Iterator[tuple[Path, Path, Path]]:
    """base/{ws, outside, home} with symlinks in ws that lead out, and HOME=base/home."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        base = Path(tmp).resolve()
        ws, outside, home = base / "ws", base / "outside", base / "home"
        for d in (ws / "sub", outside, home):
            d.mkdir(parents=True)
        (outside / "existing.txt").write_text("keep")
        (ws / "link_out").symlink_to(outside)
        (ws / "link_in").symlink_to(ws / "sub")
        (ws / "link_up").symlink_to(base)
        (ws / "dangling_out").symlink_to(outside / "newfile")
        (ws / "link_file").symlink_to(outside / "existing.txt")
        mp.setenv("HOME", str(home))
        yield base, ws, outside
