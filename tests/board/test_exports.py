"""The public surface of coterie.board: exactly these names, each documented."""

from __future__ import annotations

import coterie.board

PUBLIC = {
    "UNSET",
    "AsyncBoard",
    "Board",
    "BoardCorruption",
    "BoardError",
    "BoardRefusal",
    "BoardStatistics",
    "InvalidOwnerName",
    "InvalidTaskField",
    "InvalidTaskId",
    "InvalidTransition",
    "Lease",
    "LogEntry",
    "NotTaskOwner",
    "Task",
    "TaskCycle",
    "TaskStatus",
    "UnknownTask",
    "Unset",
    "check_task_id",
    "open_board",
    "read_log",
}


def test_the_public_names_are_exactly_these() -> None:
    assert set(coterie.board.__all__) == PUBLIC
    for name in PUBLIC:
        assert hasattr(coterie.board, name)


def test_every_public_class_and_function_has_a_docstring() -> None:
    for name in PUBLIC - {"UNSET"}:
        assert getattr(coterie.board, name).__doc__, name


def test_the_sync_and_async_boards_offer_the_same_operations() -> None:
    ops = {
        "create", "get", "list", "update", "claim", "renew", "complete", "fail",
        "release", "expire_leases", "statistics",
    }  # fmt: skip
    for op in ops:
        assert getattr(coterie.board.Board, op).__doc__
        assert getattr(coterie.board.AsyncBoard, op).__doc__
