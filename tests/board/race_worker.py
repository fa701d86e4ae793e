"""Child process for the race tests: claim and complete until the board is done.

    python race_worker.py BOARD WORKER LEASE_SECONDS [DIE_AFTER]

BOARD is a board directory, or a Redis URL (``redis://...``; the run is
``tests.board.conftest.RUN_ID``), worked through the Trio face there.
Prints ``ready`` once the board is open, waits for a line on stdin (so that
every worker starts at once), then works, printing each task id it
completed. With DIE_AFTER, it SIGKILLs itself right after its DIE_AFTER-th
claim, holding that task, as a crashed teammate would.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from coterie.backends.redis import open_redis_board
from coterie.backends.redis.client import parse_backend
from coterie.board import Board
from tests.board.conftest import RUN_ID


def main(directory: str, worker: str, lease_seconds: float, die_after: int | None) -> None:
    board = Board(directory)
    print("ready", flush=True)
    sys.stdin.readline()
    claims = 0
    while True:
        task = board.claim(worker, lease_seconds=lease_seconds)
        if task is None:
            stats = board.statistics()
            if stats.completed + stats.failed == stats.tasks:
                break
            time.sleep(0.0005)  # blocked on someone else's task: let it finish
            continue
        claims += 1
        if die_after is not None and claims >= die_after:
            os.kill(os.getpid(), signal.SIGKILL)
        board.complete(task.id, worker, f"done by {worker}")
        print(task.id, flush=True)
    board.close()


async def main_redis(url: str, worker: str, lease_seconds: float, die_after: int | None) -> None:
    async with open_redis_board(parse_backend(url), RUN_ID) as board:
        print("ready", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        claims = 0
        while True:
            task = await board.claim(worker, lease_seconds=lease_seconds)
            if task is None:
                seen = board.seq  # what the claim was decided on
                stats = await board.statistics()
                if stats.completed + stats.failed == stats.tasks:
                    break
                # Blocked on someone else's task: sleep until the board changes
                # (bounded, so that a lapsed lease is noticed by a later claim).
                with trio.move_on_after(lease_seconds):
                    await board.wait_for_change(seen)
                continue
            claims += 1
            if die_after is not None and claims >= die_after:
                os.kill(os.getpid(), signal.SIGKILL)
            await board.complete(task.id, worker, f"done by {worker}")
            print(task.id, flush=True)


if __name__ == "__main__":
    args = (
        sys.argv[1],
        sys.argv[2],
        float(sys.argv[3]),
        int(sys.argv[4]) if len(sys.argv) > 4 else None,
    )
    if args[0].startswith("redis://"):
        trio.run(main_redis, *args)
    else:
        main(*args)
