"""The sync and async boards match (the names: tests/test_public_surface.py)."""

from __future__ import annotations

import coterie.board


def test_the_sync_and_async_boards_offer_the_same_operations() -> None:
    ops = {
        "create", "get", "list", "update", "claim", "renew", "complete", "fail",
        "release", "expire_leases", "statistics",
    }  # fmt: skip
    for op in ops:
        assert getattr(coterie.board.Board, op).__doc__
        assert getattr(coterie.board.AsyncBoard, op).__doc__
