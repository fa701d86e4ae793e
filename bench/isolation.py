"""What a workspace per teammate costs: git's part of ``--isolation worktree``.

    python bench/isolation.py [--files 200] [--tasks 10]

In a temporary repository of FILES files, one teammate's worktree is made,
then TASKS tasks run in a row: the checkout is put on the task's branch, a
file is written, the runtime commits it (``add -A``, commit, detach), and
``MergeTask``'s merge brings it into the lead's checkout (a fast-forward).
Printed: the time to make the worktree, and per task the median time of each
step, in milliseconds (wall time: git's processes, not coterie's CPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import trio

from coterie.workspaces import WORKSPACES_ENV, Checkouts, check_repository, merge_task

IDENTITY = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")


def _repository(path: Path, files: int) -> None:
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    for n in range(files):
        (path / f"f{n}.txt").write_text(f"{n}\n")
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", *IDENTITY, "commit", "-q", "-m", "start"], cwd=path, check=True)


async def _measure(root: Path, tasks: int) -> dict[str, list[float]]:
    repo = check_repository(root / "ws")
    alice = Checkouts(repo, "bench-run").teammate("alice")
    took: dict[str, list[float]] = {"open": [], "begin": [], "finish": [], "merge": []}
    start = time.perf_counter()
    await alice.open()
    took["open"].append(time.perf_counter() - start)
    for n in range(1, tasks + 1):
        task = f"task_{n}"
        start = time.perf_counter()
        await alice.begin(task)
        took["begin"].append(time.perf_counter() - start)
        (alice.path / f"new{n}.txt").write_text("x\n")
        start = time.perf_counter()
        await alice.finish(task, "bench", "completed")
        took["finish"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await merge_task(repo, "bench-run", task, "bench", None)
        took["merge"].append(time.perf_counter() - start)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _repository(root / "ws", args.files)
        os.environ[WORKSPACES_ENV] = str(root / "checkouts")
        took = trio.run(_measure, root, args.tasks)
    ms = {step: statistics.median(times) * 1000 for step, times in took.items()}
    print(
        f"worktree made in {ms['open']:.0f} ms ({args.files} files); per task, median of"
        f" {args.tasks}: branch {ms['begin']:.0f} ms, commit {ms['finish']:.0f} ms,"
        f" MergeTask {ms['merge']:.0f} ms"
    )


if __name__ == "__main__":
    main()
