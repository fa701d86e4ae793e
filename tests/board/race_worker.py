"""Child process for the race tests: claim and complete until the board is done.

    python race_worker.py BOARD_DIR WORKER LEASE_SECONDS [DIE_AFTER]

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

from coterie.board import Board


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


if __name__ == "__main__":
    main(
        sys.argv[1],
        sys.argv[2],
        float(sys.argv[3]),
        int(sys.argv[4]) if len(sys.argv) > 4 else None,
    )
