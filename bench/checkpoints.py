"""What a checkpoint costs: a snapshot of a large workspace when few files changed.

    python bench/checkpoints.py [--files 10000] [--mb 100] [--changed 5] [--repeat 5]

Builds a workspace of ``--files`` files holding ``--mb`` MB in all (spread over
folders of 100), takes the first snapshot (every file hashed and stored once),
then, ``--repeat`` times, changes ``--changed`` files and takes the next
snapshot (only the files whose size, time or inode moved are read). Reports
the first snapshot's time, the median and worst time of a later one, and the
store's growth per later snapshot against the bytes changed. Target (issue
31): a later snapshot adds ≤ 20 ms to the turn that takes it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from coterie.checkpoints import ObjectStore, scan  # noqa: E402


def disk(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000 / args.files)
    with tempfile.TemporaryDirectory(prefix="coterie-checkpoints-") as tmp:
        root, objects = Path(tmp) / "ws", Path(tmp) / "objects"
        for i in range(args.files):
            path = root / f"dir{i // 100:03d}" / f"file{i:05d}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(i.to_bytes(4, "big") * (size // 4))
        store = ObjectStore(objects)
        began = time.perf_counter()
        last = scan(root, store)
        first = time.perf_counter() - began
        times, growth = [], []
        for round_ in range(args.repeat):
            for k in range(args.changed):
                i = (round_ * 997 + k * 131) % args.files
                path = root / f"dir{i // 100:03d}" / f"file{i:05d}.txt"
                path.write_bytes(f"round {round_} change {k}\n".encode() * (size // 20))
            before = disk(objects)
            began = time.perf_counter()
            last = scan(root, store, last)
            times.append(time.perf_counter() - began)
            growth.append(disk(objects) - before)
        changed_bytes = args.changed * (size // 20) * len("round 0 change 0\n")
        print(f"workspace: {args.files:,} files, {args.mb:g} MB; {len(last.files):,} in a snapshot")
        print(f"first snapshot (every file hashed and stored): {first * 1000:.0f} ms")
        print(
            f"a later snapshot, {args.changed} files changed: median"
            f" {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms"
            f" (target ≤ 20 ms: {'met' if statistics.median(times) <= 0.020 else 'NOT met'})"
        )
        print(
            f"store growth per later snapshot: median {statistics.median(growth):,} bytes"
            f" for about {changed_bytes:,} bytes changed"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
