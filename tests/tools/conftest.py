"""Fixtures for the tool tests: a workspace, a directory outside it, a context."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.tools import ToolContext

if TYPE_CHECKING:
    from pathlib import Path


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
