"""Search benchmark: Glob and Grep with ripgrep finding the files, without, and ripgrep alone.

    python bench/search.py [--megabytes 100] [--files 10000] [--repeat 5] [--dir DIR]

Generates (once, in ``--dir``, default a folder under the system temp
directory keyed by the size) a tree of ``--files`` source-like text files
adding up to ``--megabytes``, in nested folders, then times, in the same run
and alternating, the median of ``--repeat`` runs of each search:

  * ``rg``: the ripgrep binary alone, as Claude Code's Grep runs it (the
    baseline: ``rg -l`` / ``rg -n`` / ``rg --files``, output discarded);
  * ``coterie+rg``: coterie's GrepTool/GlobTool with ripgrep finding files
    (coterie still reads and renders every file it shows, safely);
  * ``coterie``: the same tools with ``COTERIE_RG=off`` (the pure-Python walk).

Searches: a rare word (``files_with_matches``: few files match), a common word
(``files_with_matches``: most files match), a rare word in ``content`` mode,
and Glob ``**/*.py``. The ratio printed is coterie+rg's time over rg's (the
target: at most 1.5) and the walk's over rg's.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from coterie.tools import GlobTool, GrepTool, ToolContext  # noqa: E402
from coterie.tools._ripgrep import RG_ENV, find_rg  # noqa: E402

WORDS = [
    "def",
    "class",
    "return",
    "import",
    "from",
    "self",
    "value",
    "result",
    "error",
    "config",
    "path",
    "list",
    "dict",
    "print",
    "range",
    "len",
    "open",
    "read",
    "write",
    "data",
    "item",
    "index",
    "key",
    "name",
    "type",
    "none",
    "true",
    "false",
]


def generate(root: Path, megabytes: int, files: int, seed: int = 1) -> None:
    """A tree of *files* text files totalling about *megabytes* MB (kept if present)."""
    marker = root / ".generated"
    if marker.exists():
        return
    rng = random.Random(seed)
    per_file = megabytes * 1024 * 1024 // files
    for i in range(files):
        folder = root / f"pkg{i % 37}" / f"mod{i % 11}" / f"sub{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        lines, size = [], 0
        while size < per_file:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            if rng.random() < 0.00005:
                line += " needle_rare"
            lines.append(line)
            size += len(line) + 1
        ext = (".py", ".ts", ".md", ".txt")[i % 4]
        (folder / f"file{i}{ext}").write_text("\n".join(lines) + "\n")
    marker.write_text("")


def timed(work: Any) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args(argv)
    rg = find_rg()
    if rg is None:
        print("no rg binary: pip install ripgrep (or set COTERIE_RG)", file=sys.stderr)
        return 2
    root = (
        args.dir
        or Path(tempfile.gettempdir()) / f"coterie-bench-search-{args.megabytes}-{args.files}"
    )
    root.mkdir(parents=True, exist_ok=True)
    print(
        f"tree: {root} ({args.files} files, ~{args.megabytes} MB); generating if needed…",
        flush=True,
    )
    generate(root, args.megabytes, args.files)
    root = root.resolve()
    ctx = ToolContext(workspace=root)

    def tool(t: Any, inp: dict[str, Any], finder: str) -> Any:
        def run() -> None:
            os.environ[RG_ENV] = rg if finder == "rg" else "off"
            try:
                trio.run(t.run, inp, ctx)
            finally:
                del os.environ[RG_ENV]

        return run

    def raw(*rg_args: str) -> Any:
        def run() -> None:
            subprocess.run(
                [rg, "--no-config", *rg_args, str(root)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )

        return run

    searches = [
        ("Grep rare word, files", GrepTool(), {"pattern": "needle_rare"}, ("-l", "needle_rare")),
        ("Grep common word, files", GrepTool(), {"pattern": "config"}, ("-l", "config")),
        (
            "Grep rare word, content",
            GrepTool(),
            {"pattern": "needle_rare", "output_mode": "content"},
            ("-n", "needle_rare"),
        ),
        ("Glob **/*.py", GlobTool(), {"pattern": "**/*.py"}, ("--files",)),
    ]
    print(f"{'search':28} {'rg':>8} {'coterie+rg':>11} {'coterie':>9} {'ratio+rg':>9} {'ratio':>7}")
    for label, t, inp, rg_args in searches:
        times: dict[str, list[float]] = {"raw": [], "rg": [], "walk": []}
        for _ in range(args.repeat):  # alternating, so drift hits all three alike
            times["raw"].append(timed(raw(*rg_args)))
            times["rg"].append(timed(tool(t, inp, "rg")))
            times["walk"].append(timed(tool(t, inp, "walk")))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"{label:28} {med['raw']:7.3f}s {med['rg']:10.3f}s {med['walk']:8.3f}s "
            f"{med['rg'] / med['raw']:8.2f}x {med['walk'] / med['raw']:6.2f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
