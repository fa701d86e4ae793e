"""The Trio face: same rules, inline when the locks are free, shared fsyncs, cancellation.

The first tests run against both backends (``open_async_board``: the file
board and the Redis board); the rest are about the file board's machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.board import AsyncBoard, Board, NotTaskOwner, TaskStatus, open_board
from coterie.journal import DISK

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.redis import RedisBoard

    Opener = Callable[[], AbstractAsyncContextManager[AsyncBoard | RedisBoard]]


async def test_the_async_board_follows_the_same_rules(open_async_board: Opener) -> None:
    async with open_async_board() as board:
        await board.create("a", "d")
        await board.create("b", "d", blocked_by=["task_1"])
        task = await board.claim("alice", lease_seconds=10, now=0.0)
        assert task is not None
        assert task.id == "task_1"
        assert await board.claim("bob", lease_seconds=10, now=0.0) is None
        with pytest.raises(NotTaskOwner):
            await board.complete("task_1", "bob", "no")
        await board.complete("task_1", "alice", "ok")
        renewed = await board.claim("bob", lease_seconds=10, now=0.0)
        assert renewed is not None
        await board.renew("task_2", "bob", lease_seconds=10, now=5.0)
        await board.release("task_2", "bob")
        await board.update("task_2", owner="carol")
        assert (await board.get("task_2")).owner == "carol"
        await board.claim("carol", lease_seconds=1, now=0.0)
        [expired] = await board.expire_leases(now=2.0)
        assert expired.owner == "carol"
        await board.claim("carol", lease_seconds=1, now=3.0)
        await board.fail("task_2", "carol", "no luck")
        assert [t.status for t in await board.list()] == [TaskStatus.COMPLETED, TaskStatus.FAILED]


async def test_trio_tasks_racing_never_double_claim_and_share_fsyncs(
    open_async_board: Opener, board_backend: str
) -> None:
    async with open_async_board() as board:
        for n in range(300):
            await board.create(f"t{n}", "d", blocked_by=[f"task_{n}"] if n % 3 else ())
        before = await board.statistics()
        claims: list[str] = []

        async def worker(name: str) -> None:
            while (await board.statistics()).completed < 300:
                task = await board.claim(name, lease_seconds=60)
                if task is None:
                    await trio.sleep(0)
                    continue
                claims.append(task.id)
                await board.complete(task.id, name, "ok")

        async with trio.open_nursery() as nursery:
            for k in range(16):
                nursery.start_soon(worker, f"w{k}")
        assert sorted(claims) == sorted(f"task_{n}" for n in range(1, 301))
        after = await board.statistics()
        writes = after.writes - before.writes
        flushes = after.flushes - before.flushes
        assert writes == 600
        if board_backend == "file":
            assert flushes < writes / 2  # group commit at work


async def test_a_cancelled_caller_changes_nothing(open_async_board: Opener) -> None:
    async with open_async_board() as board:
        await board.create("a", "d")
        with trio.CancelScope() as scope:
            scope.cancel()
            await board.claim("alice", lease_seconds=5)
        assert scope.cancelled_caught
        assert (await board.get("task_1")).status is TaskStatus.PENDING


async def test_a_lock_held_elsewhere_does_not_block_the_event_loop(board_dir: Path) -> None:
    """The operation waits for the lock in a worker thread while other tasks run."""
    async with open_board(board_dir) as board:
        await board.create("a", "d")
        other = Board(board_dir)
        other._log.lock(exclusive=True, blocking=True)  # another process, mid-operation
        result: list[object] = []
        ticks = 0

        async def claimer() -> None:
            result.append(await board.claim("alice", lease_seconds=5))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(claimer)
            while ticks < 5:
                await trio.sleep(0.001)
                ticks += 1
            assert result == []
            other._log.unlock()
        other.close()
        [task] = result
        assert task is not None


async def test_a_slow_disk_moves_fsyncs_to_a_thread(
    board_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board's fsyncs go through the journal's shared runner."""
    async with open_board(board_dir) as board:
        monkeypatch.setattr(DISK, "inline_below", 0.0)  # every fsync counts as slow
        threaded = DISK.threaded_runs
        await board.create("a", "d")
        assert DISK.threaded_runs == threaded + 1
        assert (await board.statistics()).flushes == 1


async def test_wait_for_change_wakes_at_once_on_a_local_change(
    board_dir: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_board(board_dir) as board:
        seq = (await board.statistics()).seq
        woke: list[float] = []

        async def waiter() -> None:
            await board.wait_for_change(seq, poll_interval=100)
            woke.append(trio.current_time())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            await board.create("a", "d")
        assert woke == [start]


async def test_wait_for_change_notices_other_processes_by_polling(
    board_dir: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_board(board_dir) as board:
        other = Board(board_dir)
        start = trio.current_time()

        async def other_process() -> None:
            await trio.sleep(1.0)
            other.create("a", "d")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(other_process)
            seq = await board.wait_for_change(0, poll_interval=0.25)
        other.close()
        assert seq == 1
        assert 1.0 <= trio.current_time() - start <= 1.25


async def test_wrapping_an_existing_board(board_dir: Path) -> None:
    with Board(board_dir) as sync_board:
        board = AsyncBoard(sync_board)
        await board.create("a", "d")
        assert sync_board.get("task_1").subject == "a"
        await board.aclose()
