"""What a checkpoint costs: taking one on a large workspace when few files changed.

    python bench/checkpoints.py [--files 10000] [--mb 100] [--changed 5] [--repeat 20]

Builds a workspace of ``--files`` files holding ``--mb`` MB in all (spread over
folders of 100) and takes its first checkpoint (every file hashed and
stored once). Then, ``--repeat`` times, changes ``--changed`` files (one of
them created in a new folder, one deleted) and takes the next checkpoint
as a session does (:meth:`CheckpointLog.begin`: the snapshot, its delta
written and synced, the log's line), twice over in the same run: once with
the session's watcher (:mod:`coterie.checkpoints.watch`: only what changed
is looked at) and once walking the whole workspace (the baseline). Reports
the median and worst time of each, their ratio, the time of the whole
snapshot written every ``FULL_EVERY`` checkpoints, and the disk a later
checkpoint adds against the bytes changed. Target (issue 31): a later
checkpoint adds ≤ 20 ms to the turn that takes it.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from coterie.checkpoints import CheckpointLog, record  # noqa: E402
from coterie.checkpoints.watch import open_watcher  # noqa: E402


def disk(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def build(root: Path, files: int, size: int) -> None:
    for i in range(files):
        path = root / f"dir{i // 100:03d}" / f"file{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(i.to_bytes(4, "big") * (size // 4))


def change(root: Path, files: int, size: int, round_: int, count: int, tag: str) -> int:
    """Change *count* files (one new in a new folder, one deleted); the bytes written."""
    written = 0
    for k in range(count - 2):
        i = (round_ * 997 + k * 131) % files
        data = f"{tag} round {round_} change {k}\n".encode() * (size // 20)
        (root / f"dir{i // 100:03d}" / f"file{i:05d}.txt").write_bytes(data)
        written += len(data)
    new = root / f"new-{tag}-{round_}" / "made.txt"
    new.parent.mkdir()
    new.write_text(f"{tag} {round_}\n")
    gone = (round_ * 7919 + 17) % files
    (root / f"dir{gone // 100:03d}" / f"file{gone:05d}.txt").unlink(missing_ok=True)
    return written + new.stat().st_size


@dataclasses.dataclass
class Series:
    """One series of checkpoints: the first one's time, the later ones' times, the disk
    each later one added and the bytes written before it, the files kept, and (watched)
    the time of writing a whole snapshot."""

    first: float
    times: list[float]
    growth: list[int]
    written: list[int]
    kept: int
    whole: float | None


def series(args: argparse.Namespace, size: int, watched: bool) -> Series:
    """Checkpoints of a workspace built anew, watched or walked (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="coterie-checkpoints-") as tmp:
        root, run = Path(tmp) / "ws", Path(tmp) / "run"
        build(root, args.files, size)
        log = CheckpointLog(run, watcher=open_watcher(root) if watched else None)
        try:
            began = time.perf_counter()
            log.begin(root, request="r0", text="first")
            first = time.perf_counter() - began
            times, growth, written = [], [], []
            tag = "w" if watched else "b"
            for round_ in range(args.repeat):
                written.append(change(root, args.files, size, round_, args.changed, tag))
                before = disk(run)
                began = time.perf_counter()
                log.begin(root, request=f"r{round_ + 1}", text="later")
                times.append(time.perf_counter() - began)
                growth.append(disk(run) - before)
            snapshot = log.snapshot_now(root)
            whole = None
            if watched:  # a whole snapshot, as one is written every FULL_EVERY checkpoints
                every, record.FULL_EVERY = record.FULL_EVERY, 0
                try:
                    began = time.perf_counter()
                    log.save(snapshot)
                    whole = time.perf_counter() - began
                finally:
                    record.FULL_EVERY = every
        finally:
            log.close()
    return Series(first, times, growth, written, len(snapshot.files), whole)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    if args.changed < 3:
        parser.error("--changed must be at least 3 (one new file, one deleted, one written)")
    size = int(args.mb * 1_000_000 / args.files)
    watched, walked = series(args, size, watched=True), series(args, size, watched=False)
    print(f"workspace: {args.files:,} files, {args.mb:g} MB; {watched.kept:,} in a snapshot")
    print(f"first checkpoint (every file hashed and stored): {watched.first * 1000:.0f} ms")
    for name, run in (("watched", watched), ("walked (baseline)", walked)):
        print(
            f"a later checkpoint, {args.changed} files changed, {name}: median"
            f" {statistics.median(run.times) * 1000:.1f} ms, worst {max(run.times) * 1000:.1f} ms"
        )
    assert watched.whole is not None
    print(
        f"a whole snapshot, written once every {record.FULL_EVERY} checkpoints (or when the"
        f" deltas since name more paths than it holds): {watched.whole * 1000:.1f} ms"
    )
    median = statistics.median(watched.times)
    ratio = statistics.median(walked.times) / median
    print(
        f"watched against walked: {ratio:.1f}x faster"
        f" (target ≤ 20 ms: {'met' if median <= 0.020 else 'NOT met'})"
    )
    print(
        f"disk per later checkpoint (objects, snapshot, log): median"
        f" {int(statistics.median(watched.growth)):,} bytes for"
        f" {int(statistics.median(watched.written)):,} bytes written"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
