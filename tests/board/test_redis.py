"""What is particular to the board on Redis: its keys, its log, decisions on the
whole log, waiting without polling, a lapsed turn, and a server restart (AOF)."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
import trio

from coterie.backends.redis import RedisBoard, open_redis_board, read_redis_log
from coterie.backends.redis import board as board_module
from coterie.backends.redis.board import TURN_MS
from coterie.backends.redis.boardlog import log_key
from coterie.backends.redis.client import connect, parse_backend
from coterie.board import (
    AsyncBoard,
    Board,
    BoardError,
    BoardLost,
    NotTaskOwner,
    TaskBoard,
    TaskStatus,
    UnknownTask,
    read_log,
)
from tests.board.conftest import RUN_ID
from tests.redis_server import blocked_reads, redis_server


async def play(board: AsyncBoard | RedisBoard) -> None:
    """The same story on any board."""
    await board.create("a", "d")
    await board.create("b", "d", blocked_by=["task_1"], owner="bob")
    await board.claim("alice", lease_seconds=5, now=100.0)
    await board.complete("task_1", "alice", "ok")
    await board.claim("bob", lease_seconds=5, now=100.0)
    await board.expire_leases(now=200.0)
    await board.update("task_2", owner="carol")


async def test_the_log_holds_the_same_records_as_the_file_log(
    redis_url: str, tmp_path: Path
) -> None:
    from coterie.board import open_board

    async with open_board(tmp_path / "board", fsync=False) as file_board:
        await play(file_board)
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as redis_board:
        await play(redis_board)
    on_file = [(e.seq, e.op, e.task_id, e.fields) for e in read_log(tmp_path / "board")]
    on_redis = [(e.seq, e.op, e.task_id, e.fields) for e in await read_redis_log(target, RUN_ID)]
    assert on_redis == on_file
    with Board(tmp_path / "board") as board:
        async with open_redis_board(target, RUN_ID) as redis_board:
            assert await redis_board.list() == board.list()


async def test_runs_are_namespaced_under_the_prefix(redis_url: str) -> None:
    target = parse_backend(redis_url + "?prefix=team7")
    async with open_redis_board(target, "run-a") as a, open_redis_board(target, "run-b") as b:
        await a.create("only in a", "d")
        assert await b.list() == []
        async with connect(target) as client:
            keys = {k.decode() for k in await client.keys("*")}
    assert keys == {log_key(target, "run-a")}
    assert keys == {"team7:run:run-a:board:log"}


async def test_a_decision_is_taken_on_the_whole_log(redis_url: str) -> None:
    """A board that has not seen another host's change still decides with it."""
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        await a.create("a", "d")
        await b.get("task_1")
        await a.claim("alice", lease_seconds=60)  # b has not seen this claim
        with pytest.raises(NotTaskOwner):
            await b.complete("task_1", "bob", "mine?")
        await a.create("c", "d")  # nor this task: b's update finds it anyway
        assert (await b.update("task_2", owner="bob")).owner == "bob"
        with pytest.raises(UnknownTask):
            await b.get("task_3")
        assert b.conflicts >= 2
        assert [e.op for e in await read_redis_log(target, RUN_ID)] == [
            "create",
            "claim",
            "create",
            "update",
        ]


async def test_wait_for_change_blocks_on_the_server_until_another_host_writes(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        woke: list[float] = []

        async def waiter() -> None:
            # poll_interval only bounds each blocking read: no wake-up before the change
            woke.append(float(await a.wait_for_change(0, poll_interval=30)))
            woke.append(time.monotonic())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.sleep(0.3)
            assert woke == []
            wrote = time.monotonic()
            await b.create("a", "d")
        assert woke[0] == 1
        assert woke[1] - wrote < 0.25
        # a cancelled wait leaves the board usable
        with trio.move_on_after(0.1):
            await a.wait_for_change(1)
        assert (await a.get("task_1")).subject == "a"


async def test_a_follower_reads_what_waiting_brought_without_a_round_trip(
    redis_url: str,
) -> None:
    """``known`` is the board as this process last read it (no read of its own);
    ``wait_for_change`` finds a change made while nobody waited through the
    follower's one read; ``list`` reads the server."""
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        await b.create("a", "d")
        assert await a.known() == []  # not read yet
        with trio.fail_after(5):
            assert await a.wait_for_change(0) == 1
        assert [t.subject for t in await a.known()] == ["a"]
        await b.create("b", "d")
        assert len(await a.known()) == 1
        assert len(await a.list()) == 2
        assert len(await a.known()) == 2


async def test_the_changes_of_a_busy_spell_are_read_together(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follower reads a change at once, then lingers: the changes made
    meanwhile come in its next read, not one blocking read each."""
    monkeypatch.setattr(board_module, "FOLLOW_LINGER", 0.5)
    target = parse_backend(redis_url)

    async def reads(client: Any) -> int:
        stats = await client.info("commandstats")
        return int(stats.get("cmdstat_xread", {}).get("calls", 0))

    async with (
        connect(target) as client,
        open_redis_board(target, RUN_ID) as a,
        open_redis_board(target, RUN_ID) as b,
    ):
        before = await reads(client)
        seen: list[int] = []

        async def follow() -> None:
            seq = 0
            while seq < 6:
                seq = await a.wait_for_change(seq)
                seen.append(seq)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            await b.create("first", "d")
            with trio.fail_after(5):
                while not seen:
                    await trio.sleep(0.01)
            for n in range(5):
                await b.create(f"t{n}", "d")
        assert seen == [1, 6]
        assert await reads(client) - before <= 3  # the last may still block


async def test_a_lapsed_turn_does_not_stop_the_board(redis_url: str) -> None:
    """A writer that died holding the turn delays others by at most TURN_MS."""
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as board:
        async with connect(target) as client:
            await client.set(board.key + ":turn", "a-dead-host", px=TURN_MS)
        start = time.monotonic()
        await board.create("a", "d")
        assert time.monotonic() - start < TURN_MS / 1000 + 0.5


async def test_a_closed_board_raises(redis_url: str) -> None:
    async with open_redis_board(parse_backend(redis_url), RUN_ID) as board:
        pass
    with pytest.raises(BoardError, match="closed"):
        await board.create("a", "d")


@pytest.mark.slow
async def test_the_board_survives_a_server_restart_with_aof(tmp_path: Path) -> None:
    with redis_server(tmp_path, appendonly=True) as server:
        target = parse_backend(server.url)
        async with open_redis_board(target, RUN_ID) as board:
            for n in range(20):
                await board.create(f"t{n}", "d")
            held = await board.claim("alice", lease_seconds=600)
            assert held is not None
            server.restart()  # kill -9, then start on the same AOF
            # the same client reconnects; the claim is still alice's
            with pytest.raises(NotTaskOwner):
                await board.complete(held.id, "bob", "no")
            await board.complete(held.id, "alice", "ok")
            before = await board.list()
        async with open_redis_board(target, RUN_ID) as again:
            after = await again.list()
        assert after == before
        assert after[0].status is TaskStatus.COMPLETED
        assert len(after) == 20


async def test_waiters_ride_out_server_restarts(tmp_path: Path) -> None:
    """The follower's connection is lost with the server; it makes another (its
    client had one connection, which coredis would never have given back)."""
    with redis_server(tmp_path, appendonly=True, appendfsync="always") as server:
        target = parse_backend(server.url)
        async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
            woke: list[int] = []

            async def waiter(after: int) -> None:
                woke.append(await a.wait_for_change(after))

            for n in range(3):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(waiter, n)
                    assert await blocked_reads(target) == 1  # the follower waits on it
                    await trio.to_thread.run_sync(server.restart)
                    assert woke == list(range(1, n + 1))
                    with trio.fail_after(15):
                        await b.create(f"t{n}", "d")
                assert woke == list(range(1, n + 2))


async def test_a_call_retried_after_a_lost_reply_is_applied_once(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call whose connection broke once it was sent is sent again: the retry finds
    its own records (by their nonce) and returns them as done, instead of deciding
    again. One that breaks every time is an error after LOST_REPLIES sends."""
    from coredis.exceptions import ConnectionError as ClientConnectionError

    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as board:
        real = board._append
        sent: list[int] = []

        async def reply_lost(**kwargs: object) -> object:
            reply = await real(**kwargs)  # applied on the server
            sent.append(1)
            if len(sent) % 2:  # every other reply lost with its connection
                raise ClientConnectionError("Connection lost while receiving response")
            return reply

        monkeypatch.setattr(board, "_append", reply_lost)
        task = await board.create("a", "d")
        claimed = await board.claim("alice", lease_seconds=60)
        monkeypatch.undo()
        assert len(sent) == 4
        assert task.id == "task_1"
        assert claimed is not None
        assert claimed.id == "task_1"
        assert [e.op for e in await read_redis_log(target, RUN_ID)] == ["create", "claim"]
        assert await board.claim("bob", lease_seconds=60) is None
        async with connect(target) as client:
            assert await client.get(board.key + ":turn") is None  # not left holding it

        async def always_lost(**kwargs: object) -> object:
            sent.append(1)
            raise ClientConnectionError("Connection lost while receiving response")

        monkeypatch.setattr(board, "_append", always_lost)
        sent.clear()
        with pytest.raises(BoardError, match="may have been made"):
            await board.create("b", "d")
        assert len(sent) == board_module.LOST_REPLIES


async def test_a_deleted_log_is_an_error_not_a_fresh_board(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as board:
        await board.create("a", "d")
        async with connect(target) as client:
            await client.delete([board.key])
        with pytest.raises(BoardLost, match="no longer holds the task board"):
            await board.create("b", "d")


def test_the_documented_example_runs(redis_url: str, tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "scale-out.md").read_text()
    section = doc.split("## The task board on Redis", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    script = tmp_path / "example.py"
    script.write_text(example.replace("redis://127.0.0.1:6379/0", redis_url))
    root = str(Path(__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[('task_1', 'completed'), ('task_2', 'pending')]\n"


def test_it_has_the_async_board_s_face() -> None:
    """Every public method of AsyncBoard, with the same parameters, so that the
    team runtime and tools can be handed either."""
    from coterie.backends.redis import RedisBoard
    from coterie.board import AsyncBoard

    public = [n for n in vars(AsyncBoard) if not n.startswith("_") and n != "board"]
    assert public
    for name in public:
        ours, theirs = getattr(RedisBoard, name), getattr(AsyncBoard, name)
        assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(theirs), name
        shape = [(p.name, p.kind) for p in inspect.signature(theirs).parameters.values()]
        assert [(p.name, p.kind) for p in inspect.signature(ours).parameters.values()] == shape
    board = RedisBoard.__init__
    assert "on_change" in inspect.signature(board).parameters


async def test_a_cancelled_wait_never_answers_a_later_call(redis_url: str) -> None:
    """A blocking read cut short must not leave its reply to a later command."""
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        await a.create("x", "d")
        for n in range(10):
            with trio.move_on_after(0.02):
                await a.wait_for_change(a.seq, poll_interval=5)
            await b.create(f"t{n}", "d")  # what the cut-short read was waiting for
            assert (await a.get("task_1")).subject == "x"
            assert len(await a.list()) == n + 2


def test_both_trio_faces_are_task_boards() -> None:
    def is_a_task_board(board: TaskBoard) -> None:  # checked by mypy, run for the names
        del board

    for face in (AsyncBoard, RedisBoard):
        missing = [
            name
            for name in dir(TaskBoard)
            if not name.startswith("_") and not callable(getattr(face, name, None))
        ]
        assert missing == [], face
    if TYPE_CHECKING:
        is_a_task_board(cast("AsyncBoard", None))
        is_a_task_board(cast("RedisBoard", None))


async def test_cut_short_waits_never_use_up_the_client(redis_url: str) -> None:
    """coredis 6.9 gives back no pool slot for a blocking command that was
    cancelled (the connection is dropped, its slot lost): a board whose waits
    ran a blocking read each ran out of its 64 connections after 64 cut-short
    waits, and the next call waited forever (a lead woken by mail hung so)."""
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        await a.create("x", "d")
        for _ in range(80):
            with trio.move_on_after(0.02):
                await a.wait_for_change(a.seq)
        with trio.fail_after(10):
            await b.create("y", "d")
            assert await a.wait_for_change(1) == 2
            assert len(await a.list()) == 2


async def test_many_waiters_share_one_blocking_read(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with open_redis_board(target, RUN_ID) as a, open_redis_board(target, RUN_ID) as b:
        woke: list[int] = []

        async def waiter() -> None:
            woke.append(await a.wait_for_change(0))

        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(waiter)
            assert await blocked_reads(target) == 1
            await b.create("a", "d")
        assert woke == [1] * 100
