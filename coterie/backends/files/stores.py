"""A run's stores in its run directory: ``mailboxes/`` and ``board/``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import trio

from coterie.backends.protocol import RunStores
from coterie.board import open_board
from coterie.mailbox import PostOffice

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = ["open_stores"]


@contextlib.asynccontextmanager
async def open_stores(
    run_dir: Path,
    events: EventLog,
    *,
    team: bool,
    on_change: Callable[[object], None] | None = None,
    on_corruption: Callable[[BoardCorruption], None] | None = None,
) -> AsyncIterator[RunStores]:
    """The post office of the run in *run_dir* and, for a *team*, its board (the
    run's lock, held by the caller, makes it the only process running it)."""
    post = PostOffice(run_dir / "mailboxes", events=events)
    try:
        if not team:
            yield RunStores(post)
            return
        opened = open_board(run_dir / "board", on_change=on_change, on_corruption=on_corruption)
        async with opened as board:
            yield RunStores(post, board)
    finally:
        with trio.CancelScope(shield=True):
            await post.aclose()
