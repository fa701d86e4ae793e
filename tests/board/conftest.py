"""Fixtures for the task board tests.

``board_backend`` runs a test against the file board and the Redis board
(a real server, see tests/redis_server.py); ``open_async_board`` opens the
backend's Trio face, as often as the test likes, on the same board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.backends.redis import open_redis_board
from coterie.backends.redis.client import parse_backend
from coterie.board import Board, open_board

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.redis import RedisBoard
    from coterie.board import AsyncBoard

BACKENDS = ["file", "redis"]
#: The run id of the Redis boards of the tests (the server is flushed per test).
RUN_ID = "board-test"


@pytest.fixture
def board_dir(tmp_path: Path) -> Path:
    """Where the test's board lives (reopen it there to test durability)."""
    return tmp_path / "board"


@pytest.fixture
def board(board_dir: Path) -> Iterator[Board]:
    """A fresh board, fsyncing as in production, closed after the test."""
    with Board(board_dir) as b:
        yield b


@pytest.fixture(params=BACKENDS)
def board_backend(request: pytest.FixtureRequest) -> str:
    """``"file"`` or ``"redis"``: the test runs once with each."""
    return str(request.param)


@pytest.fixture
def board_location(board_backend: str, board_dir: Path, request: pytest.FixtureRequest) -> str:
    """The board's directory, or its server's URL (the Redis fixture only when needed)."""
    if board_backend == "file":
        return str(board_dir)
    return str(request.getfixturevalue("redis_url"))


@pytest.fixture
def open_async_board(
    board_backend: str, board_location: str
) -> Callable[[], AbstractAsyncContextManager[AsyncBoard | RedisBoard]]:
    """Opens the test's board (the same one every call) through the backend's Trio face."""

    def opener() -> AbstractAsyncContextManager[AsyncBoard | RedisBoard]:
        if board_backend == "file":
            return open_board(board_location)
        return open_redis_board(parse_backend(board_location), RUN_ID)

    return opener
