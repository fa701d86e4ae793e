"""Task board claims per second: coterie's board against the design common in tutorials.

    python bench/board.py [--quick] [--tasks N] [--seconds S] [--repeat R]

Every run starts from a board of N tasks (default 1000) in chains of five
(task n is blocked by task n-1 unless n % 5 == 1), so readiness matters and
200 tasks are ready at a time at most. Each worker loops "claim the next
ready task, complete it" until the board is drained or S seconds (default 3)
have passed; a claim counts once its task is completed. Reported:
claims per second = claims / wall time, the median of R runs (default 3,
interleaved with the baseline's), with 1, 8 and 32 workers,

  * as Trio tasks in one process: coterie shares one ``AsyncBoard`` between
    them; the baseline runs its blocking calls via ``trio.to_thread``;
  * as OS processes (forked), each opening the board itself.

The baseline, written below, is the tutorial design: one JSON file per task,
one global file lock (``flock`` on ``board.lock``, opened per call), a full
directory scan (read and parse every task file) per claim, and each change
written durably (temp file, fsync, rename) like coterie's, which fsyncs every
change before returning (sharing fsyncs between concurrent callers).

--quick: 200 tasks, 1.5 s cap, one run per cell (a smoke test, about 15 s).
A full run takes about 90 s.
"""

from __future__ import annotations

import argparse
import fcntl
import json
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

from coterie.board import Board, open_board

WORKER_COUNTS = (1, 8, 32)
LEASE = 600.0


def blockers_of(n: int) -> list[int]:
    return [n - 1] if n % 5 != 1 else []


# -- the baseline: one JSON file per task, one global lock, a scan per claim ---------


class JsonBoard:
    """The tutorial task board. Blocking; safe across threads and processes."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.lock_path = directory / "board.lock"

    def _write(self, task: dict[str, Any], sync: bool = True) -> None:
        path = self.dir / f"task_{task['n']}.json"
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(task, f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)

    def create(self, n: int, blocked_by: list[int]) -> None:
        task = {"n": n, "subject": f"task {n}", "status": "pending", "owner": None}
        self._write({**task, "blocked_by": blocked_by, "result": None}, sync=False)

    def _scan(self) -> dict[int, dict[str, Any]]:
        tasks = {}
        for name in os.listdir(self.dir):
            if name.endswith(".json"):
                with open(self.dir / name) as f:
                    task = json.load(f)
                tasks[task["n"]] = task
        return tasks

    def claim(self, worker: str) -> int | str | None:
        """The claimed task's number, None if none is ready, "done" if all are finished."""
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            tasks = self._scan()
            if all(t["status"] == "completed" for t in tasks.values()):
                return "done"
            for n in sorted(tasks):
                t = tasks[n]
                if (
                    t["status"] == "pending"
                    and t["owner"] in (None, worker)
                    and all(tasks[b]["status"] == "completed" for b in t["blocked_by"])
                ):
                    t.update(status="in_progress", owner=worker)
                    self._write(t)
                    return n
            return None

    def complete(self, n: int, worker: str) -> None:
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with open(self.dir / f"task_{n}.json") as f:
                task = json.load(f)
            assert task["owner"] == worker
            assert task["status"] == "in_progress"
            task.update(status="completed", result="ok")
            self._write(task)


# -- setting up ----------------------------------------------------------------------


def setup(kind: str, directory: Path, tasks: int) -> None:
    if kind == "coterie":
        with Board(directory, fsync=False) as board:  # setup is not measured
            for n in range(1, tasks + 1):
                board.create(f"task {n}", "bench", blocked_by=[f"task_{b}" for b in blockers_of(n)])
    else:
        jboard = JsonBoard(directory)
        for n in range(1, tasks + 1):
            jboard.create(n, blockers_of(n))


# -- workers -----------------------------------------------------------------------


def coterie_loop(board: Board, worker: str, deadline: float) -> int:
    claims = 0
    while time.perf_counter() < deadline:
        task = board.claim(worker, lease_seconds=LEASE)
        if task is None:
            stats = board.statistics()
            if stats.completed == stats.tasks:
                break
            time.sleep(0.0002)
            continue
        board.complete(task.id, worker, "ok")
        claims += 1
    return claims


def baseline_loop(board: JsonBoard, worker: str, deadline: float) -> int:
    claims = 0
    while time.perf_counter() < deadline:
        n = board.claim(worker)
        if n == "done":
            break
        if n is None:
            time.sleep(0.0002)
            continue
        assert isinstance(n, int)
        board.complete(n, worker)
        claims += 1
    return claims


def process_worker(
    kind: str, directory: str, worker: str, go: Any, start_at: Any, seconds: float, out: Any
) -> None:
    if kind == "coterie":
        board = Board(directory)  # each process opens its own, as a teammate would
        go.wait()
        claims = coterie_loop(board, worker, start_at.value + seconds)
    else:
        jboard = JsonBoard(Path(directory))
        go.wait()
        claims = baseline_loop(jboard, worker, start_at.value + seconds)
    out.put((claims, time.perf_counter()))


def run_processes(kind: str, directory: Path, workers: int, seconds: float) -> tuple[int, float]:
    ctx = mp.get_context("fork")
    go, start_at, out = ctx.Event(), ctx.Value("d", 0.0), ctx.Queue()
    procs = [
        ctx.Process(
            target=process_worker,
            args=(kind, str(directory), f"w{k}", go, start_at, seconds, out),
        )
        for k in range(workers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.3 + 0.02 * workers)  # let every child open its board first
    start = time.perf_counter()  # CLOCK_MONOTONIC: the same clock in every process
    start_at.value = start
    go.set()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    return sum(c for c, _ in results), max(t for _, t in results) - start


async def run_trio_tasks(
    kind: str, directory: Path, workers: int, seconds: float
) -> tuple[int, float]:
    counts = [0] * workers
    start = time.perf_counter()
    deadline = start + seconds
    if kind == "coterie":
        async with open_board(directory) as board:

            async def worker(k: int) -> None:
                name = f"w{k}"
                while time.perf_counter() < deadline:
                    task = await board.claim(name, lease_seconds=LEASE)
                    if task is None:
                        stats = await board.statistics()
                        if stats.completed == stats.tasks:
                            return
                        await trio.sleep(0.0002)
                        continue
                    await board.complete(task.id, name, "ok")
                    counts[k] += 1

            start = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for k in range(workers):
                    nursery.start_soon(worker, k)
    else:
        jboard = JsonBoard(directory)

        async def worker(k: int) -> None:
            name = f"w{k}"
            while time.perf_counter() < deadline:
                n = await trio.to_thread.run_sync(jboard.claim, name)
                if n == "done":
                    return
                if n is None:
                    await trio.sleep(0.0002)
                    continue
                assert isinstance(n, int)
                await trio.to_thread.run_sync(jboard.complete, n, name)
                counts[k] += 1

        async with trio.open_nursery() as nursery:
            for k in range(workers):
                nursery.start_soon(worker, k)
    return sum(counts), time.perf_counter() - start


def measure(kind: str, mode: str, workers: int, tasks: int, seconds: float, root: Path) -> float:
    directory = Path(tempfile.mkdtemp(prefix=f"{kind}-{mode}-{workers}-", dir=root))
    setup(kind, directory, tasks)
    if mode == "trio":
        claims, elapsed = trio.run(run_trio_tasks, kind, directory, workers, seconds)
    else:
        claims, elapsed = run_processes(kind, directory, workers, seconds)
    if kind == "coterie":
        with Board(directory, fsync=False) as board:
            assert board.statistics().completed == claims, "lost or doubled claims"
    return claims / elapsed


def fsync_cost(root: Path) -> float:
    fd = os.open(root / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    start = time.perf_counter()
    for _ in range(200):
        os.write(fd, b"x" * 200)
        os.fdatasync(fd)
    os.close(fd)
    return (time.perf_counter() - start) / 200


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small board, short runs")
    parser.add_argument("--tasks", type=int, default=None, help="tasks on the board (1000)")
    parser.add_argument("--seconds", type=float, default=None, help="cap per run (3)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per cell, median shown (3)")
    args = parser.parse_args()
    tasks = args.tasks or (200 if args.quick else 1000)
    seconds = args.seconds or (1.5 if args.quick else 3.0)
    repeat = args.repeat or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(
        prefix="coterie-bench-board-", dir=os.environ.get("TMPDIR")
    ) as tmp:
        root = Path(tmp)
        print(
            f"board of {tasks} tasks in chains of 5; runs capped at {seconds:g} s, "
            f"median of {repeat}; "
            f"{os.cpu_count()} CPUs; fdatasync {fsync_cost(root) * 1e6:.0f} us"
        )
        print()
        header = f"{'workers':>7}  {'as':<9} {'coterie claims/s':>17} {'baseline claims/s':>18} {'ratio':>8}"
        print(header)
        print("-" * len(header))
        for mode in ("trio", "processes"):
            for workers in WORKER_COUNTS:
                # Interleaved, so that a burst of load elsewhere hits both designs.
                runs = [
                    (
                        measure("coterie", mode, workers, tasks, seconds, root),
                        measure("baseline", mode, workers, tasks, seconds, root),
                    )
                    for _ in range(repeat)
                ]
                ours = statistics.median(r[0] for r in runs)
                theirs = statistics.median(r[1] for r in runs)
                print(
                    f"{workers:>7}  {mode:<9} {ours:>17,.0f} {theirs:>18,.0f} {ours / theirs:>7.1f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
