"""Task board claims per second with 8 worker processes: the file board against Redis.

    python bench/backends_board.py [--quick] [--tasks N] [--workers W] [--repeat R]

(also the ``--board`` section of bench/backends.py)

Every run starts from a board of N tasks (default 1000) in chains of five
(task n is blocked by task n-1 unless n % 5 == 1), as bench/board.py. Each
of W worker processes (default 8) opens the board itself and loops "claim
the next ready task, complete it" until the board is drained; when nothing
is ready it waits for a change (``wait_for_change``: XREAD BLOCK on Redis, a
short sleep on files, as bench/board.py). Claims per second = tasks / wall
time, the median of R runs (default 3), interleaved:

  * ``file``: the file board, every change fsynced before it returns;
  * ``redis``: a redis-server started here on 127.0.0.1 (``appendonly no``);
  * ``redis-aof``: the same with ``appendonly yes``, ``appendfsync always``
    (every change on the server's disk before the call returns: the file
    board's guarantee).

Also reported for Redis: conflicts per claim (attempts that lost the race
to another process and were decided again; each costs a round trip).
Needs ``redis-server`` on PATH (``.ci/setup`` installs it).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.backends.redis import open_redis_board
from coterie.backends.redis.client import parse_backend
from coterie.board import Board
from tests.redis_server import RedisServer

LEASE = 600.0
RUN = "bench"
KINDS = ("file", "redis", "redis-aof")


def blockers_of(n: int) -> list[str]:
    return [f"task_{n - 1}"] if n % 5 != 1 else []


# -- setting up ----------------------------------------------------------------------


def setup(location: str, tasks: int) -> None:
    if location.startswith("redis://"):
        trio.run(setup_redis, location, tasks)
        return
    with Board(location, fsync=False) as board:  # setup is not measured
        for n in range(1, tasks + 1):
            board.create(f"task {n}", "bench", blocked_by=blockers_of(n))


async def setup_redis(url: str, tasks: int) -> None:
    async with open_redis_board(parse_backend(url), RUN) as board:
        for n in range(1, tasks + 1):
            await board.create(f"task {n}", "bench", blocked_by=blockers_of(n))


# -- workers -----------------------------------------------------------------------


def file_worker(directory: str, worker: str) -> tuple[int, int]:
    board = Board(directory)
    claims = 0
    while True:
        task = board.claim(worker, lease_seconds=LEASE)
        if task is None:
            stats = board.statistics()
            if stats.completed == stats.tasks:
                break
            time.sleep(0.0002)
            continue
        board.complete(task.id, worker, "ok")
        claims += 1
    board.close()
    return claims, 0


async def redis_worker(url: str, worker: str) -> tuple[int, int]:
    async with open_redis_board(parse_backend(url), RUN) as board:
        claims = 0
        while True:
            task = await board.claim(worker, lease_seconds=LEASE)
            if task is None:
                seen = board.seq
                stats = await board.statistics()
                if stats.completed == stats.tasks:
                    break
                await board.wait_for_change(seen)
                continue
            await board.complete(task.id, worker, "ok")
            claims += 1
        return claims, board.conflicts


def process_worker(location: str, worker: str, ready: Any, go: Any, out: Any) -> None:
    ready.release()
    go.wait()
    if location.startswith("redis://"):
        result = trio.run(redis_worker, location, worker)
    else:
        result = file_worker(location, worker)
    out.put((*result, time.perf_counter()))


def run(location: str, workers: int, tasks: int) -> tuple[float, float]:
    """Claims per second and conflicts per claim of one race to drain the board."""
    setup(location, tasks)
    ctx = mp.get_context("fork")
    ready, go, out = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=process_worker, args=(location, f"w{k}", ready, go, out))
        for k in range(workers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    start = time.perf_counter()  # CLOCK_MONOTONIC: the same clock in every process
    go.set()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    claims = sum(r[0] for r in results)
    assert claims == tasks, f"{claims} claims for {tasks} tasks"
    conflicts = sum(r[1] for r in results)
    return claims / (max(r[2] for r in results) - start), conflicts / claims


def board_section(quick: bool, workers: int = 8, tasks: int | None = None,
                  repeat: int | None = None) -> None:  # fmt: skip
    """Print the board's claims per second, file against Redis (the module docstring)."""
    tasks = tasks or (200 if quick else 1000)
    repeat = repeat or (1 if quick else 3)
    with tempfile.TemporaryDirectory(prefix="coterie-bench-backends-board-") as tmp:
        root = Path(tmp)
        (root / "plain").mkdir()
        (root / "aof").mkdir()
        plain = RedisServer(root / "plain").start()
        aof = RedisServer(root / "aof", appendonly=True, appendfsync="always").start()
        try:
            results: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
            for r in range(repeat):
                for kind in KINDS:  # interleaved: a burst of load elsewhere hits all
                    if kind == "file":
                        location = str(root / f"board-{r}")
                    else:
                        server = plain if kind == "redis" else aof
                        server.command("FLUSHALL")
                        location = server.url
                    results[kind].append(run(location, workers, tasks))
        finally:
            plain.stop()
            aof.stop()
    print(
        f"## board: {workers} worker processes draining {tasks} tasks in chains of 5; "
        f"median of {repeat}; {os.cpu_count()} CPUs"
    )
    header = f"{'backend':<10} {'claims/s':>9} {'conflicts/claim':>16}"
    print(header)
    print("-" * len(header))
    for kind in KINDS:
        rate = statistics.median(x[0] for x in results[kind])
        conflicts = statistics.median(x[1] for x in results[kind])
        shown = "-" if kind == "file" else f"{conflicts:.2f}"
        print(f"{kind:<10} {rate:>9,.0f} {shown:>16}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="200 tasks, one run each")
    parser.add_argument("--tasks", type=int, default=None, help="tasks on the board (1000)")
    parser.add_argument("--workers", type=int, default=8, help="worker processes (8)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per backend (3)")
    args = parser.parse_args()
    board_section(args.quick, args.workers, args.tasks, args.repeat)


if __name__ == "__main__":
    main()
