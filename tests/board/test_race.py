"""OS processes racing on one board, audited afterwards from the board's log.

The log numbers every operation in the order it took effect across all
processes, so the audit needs no clock: a task was started after its
blockers completed iff its ``claim`` record comes after their ``complete``
records. Each test runs against the file board and the Redis board (same
invariants, same audit: the Redis log holds the same records).
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import trio

from coterie.backends.redis import open_redis_board, read_redis_log
from coterie.backends.redis.client import parse_backend
from coterie.board import Board, LogEntry, read_log
from tests.board.conftest import RUN_ID

WORKER = Path(__file__).with_name("race_worker.py")


def task_blockers(count: int) -> list[list[str]]:
    """*count* tasks' blockers: chains of five, plus fan-ins."""
    rng = random.Random(5)
    out = []
    for n in range(1, count + 1):
        blockers = [f"task_{n - 1}"] if n % 5 != 1 else []
        if n > 50 and n % 50 == 0:
            blockers += [f"task_{k}" for k in rng.sample(range(1, n - 1), 3)]
        out.append(blockers)
    return out


def make_board(location: str, count: int) -> dict[str, tuple[str, ...]]:
    """A board of :func:`task_blockers` at *location*; returns every task's blockers."""
    if location.startswith("redis://"):
        return trio.run(make_redis_board, location, count)
    with Board(location, fsync=False) as board:
        for n, blockers in enumerate(task_blockers(count), 1):
            board.create(f"task {n}", "race", blocked_by=blockers)
        return {t.id: t.blocked_by for t in board.list()}


async def make_redis_board(url: str, count: int) -> dict[str, tuple[str, ...]]:
    async with open_redis_board(parse_backend(url), RUN_ID) as board:
        for n, blockers in enumerate(task_blockers(count), 1):
            await board.create(f"task {n}", "race", blocked_by=blockers)
        return {t.id: t.blocked_by for t in await board.list()}


def log_of(location: str) -> list[LogEntry]:
    if location.startswith("redis://"):
        return trio.run(read_redis_log, parse_backend(location), RUN_ID)
    return read_log(location)


def completed(location: str) -> int:
    if location.startswith("redis://"):

        async def count() -> int:
            async with open_redis_board(parse_backend(location), RUN_ID) as board:
                return (await board.statistics()).completed

        return trio.run(count)
    with Board(location) as board:
        return board.statistics().completed


def race(directory: str, workers: int, lease: float, die_after: dict[int, int]) -> list[str]:
    """Run *workers* processes to the end; returns the ids each survivor printed."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(directory), f"w{k}", str(lease)]
            + ([str(die_after[k])] if k in die_after else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(workers)
    ]
    for p in procs:
        assert p.stdout is not None
        assert p.stdout.readline() == "ready\n"
    for p in procs:  # everyone is open and waiting: start them together
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    done: list[str] = []
    for k, p in enumerate(procs):
        out, _ = p.communicate(timeout=60)
        if k in die_after:
            assert p.returncode == -9
        else:
            assert p.returncode == 0
        done += out.split()
    return done


def audit(entries: list[LogEntry], blockers: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Check the log's story; returns the ops recorded for each task."""
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    ops: dict[str, list[str]] = defaultdict(list)
    claimed_at: dict[str, int] = {}
    completed_at: dict[str, int] = {}
    holder: dict[str, str | None] = {}
    for e in entries:
        ops[e.task_id].append(e.op)
        if e.op == "claim":
            # Never two owners: a task is claimed only when nobody holds it.
            assert holder.get(e.task_id) is None, f"{e.task_id} claimed while held"
            holder[e.task_id] = e.fields["owner"]
            claimed_at[e.task_id] = e.seq
        elif e.op in ("complete", "expire", "release", "fail"):
            assert holder.get(e.task_id) is not None
            holder[e.task_id] = None
            if e.op == "complete":
                completed_at[e.task_id] = e.seq
    for task_id, deps in blockers.items():
        for b in deps:
            assert completed_at[b] < claimed_at[task_id], f"{task_id} started before {b} completed"
    return ops


@pytest.mark.slow
def test_eight_processes_claim_each_of_a_thousand_tasks_exactly_once(board_location: str) -> None:
    directory = board_location
    blockers = make_board(directory, 1000)
    done = race(directory, workers=8, lease=600.0, die_after={})
    assert sorted(done) == sorted(blockers)
    entries = log_of(directory)
    ops = audit(entries, blockers)
    for task_id in blockers:
        assert ops[task_id] == ["create", "claim", "complete"], task_id
    claimers = {e.fields["owner"] for e in entries if e.op == "claim"}
    assert len(claimers) >= 4, "the processes did not actually race"


@pytest.mark.slow
def test_a_killed_workers_task_is_taken_over_once_its_lease_expires(board_location: str) -> None:
    directory = board_location
    blockers = make_board(directory, 200)
    done = race(directory, workers=4, lease=0.3, die_after={0: 3})
    entries = log_of(directory)
    ops = audit(entries, blockers)
    assert sorted(done) == sorted(blockers)  # the survivors finished everything
    taken_over = [t for t, o in ops.items() if "expire" in o]
    assert len(taken_over) == 1
    assert ops[taken_over[0]] == ["create", "claim", "expire", "claim", "complete"]
    for task_id in blockers:
        assert ops[task_id].count("complete") == 1
    assert completed(directory) == 200
