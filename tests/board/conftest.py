"""Fixtures for the task board tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.board import Board

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def board_dir(tmp_path: Path) -> Path:
    """Where the test's board lives (reopen it there to test durability)."""
    return tmp_path / "board"


@pytest.fixture
def board(board_dir: Path) -> Iterator[Board]:
    """A fresh board, fsyncing as in production, closed after the test."""
    with Board(board_dir) as b:
        yield b
