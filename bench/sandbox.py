"""Added latency of running a Bash call inside the bubblewrap OS sandbox.

    python bench/sandbox.py [--calls N] [--command CMD] [--quick]

Runs the same Bash tool call (default ``true``) N times (default 200)
unsandboxed and N times inside the sandbox, interleaved pair by pair in the
same run so that the machine's load affects both alike, after a few warm-up
calls. Reports the median and p90 of each, and of the added latency per pair
(sandboxed - unsandboxed). Target (issue 11): under 15 ms at the median.
The sandbox is the one a run gets by default: a workspace, a home with
credential folders to hide, a Read deny rule (so the workspace is looked
through for denied files on every call), network off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.tools import BashTool, Bubblewrap, SandboxSettings, ToolContext, probe_sandbox

TARGET_MS = 15.0


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def setup(root: Path) -> tuple[ToolContext, ToolContext]:
    workspace = root / "ws"
    home = root / "home"
    for d in ("src/pkg", "tests", "secrets"):
        (workspace / d).mkdir(parents=True)
    for i in range(200):  # a small project for the Read-deny walk to look through
        (workspace / "src" / "pkg" / f"m{i}.py").write_text("x = 1\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    denied = workspace / "secrets"
    sandbox = Bubblewrap.from_settings(SandboxSettings(enabled=True), workspace, home=home)
    plain = ToolContext(workspace=workspace)
    boxed = ToolContext(workspace=workspace, sandbox=sandbox, read_denied=lambda p: p == denied)
    return plain, boxed


async def timed(tool: BashTool, command: str, ctx: ToolContext) -> float:
    started = time.perf_counter()
    result = await tool.run({"command": command}, ctx)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"the benchmark's command failed: {result.content}")
    return elapsed * 1e3


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--command", default="true")
    parser.add_argument("--quick", action="store_true", help="30 calls")
    args = parser.parse_args()
    calls = 30 if args.quick else args.calls
    why = probe_sandbox()
    if why is not None:
        raise SystemExit(f"no sandbox to measure: {why}")
    tool = BashTool()
    with tempfile.TemporaryDirectory() as tmp:
        plain, boxed = setup(Path(tmp))
        for _ in range(5):
            await timed(tool, args.command, plain)
            await timed(tool, args.command, boxed)
        bare: list[float] = []
        sandboxed: list[float] = []
        for i in range(calls):
            # Alternate which goes first, so neither always follows the other.
            first, second = (plain, boxed) if i % 2 == 0 else (boxed, plain)
            a = await timed(tool, args.command, first)
            b = await timed(tool, args.command, second)
            bare.append(a if first is plain else b)
            sandboxed.append(b if first is plain else a)
    added = [s - b for s, b in zip(sandboxed, bare, strict=True)]
    print(f"command: {args.command!r}, {calls} calls each, interleaved")
    for name, values in (("unsandboxed", bare), ("sandboxed", sandboxed), ("added", added)):
        median = statistics.median(values)
        print(f"{name:12} median {median:7.2f} ms   p90 {quantile(values, 0.9):7.2f} ms")
    verdict = "met" if statistics.median(added) < TARGET_MS else "NOT met"
    print(f"target: added median < {TARGET_MS:.0f} ms: {verdict}")


if __name__ == "__main__":
    trio.run(main)
