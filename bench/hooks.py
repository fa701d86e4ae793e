"""What hooks cost: the added latency of a no-op command hook per tool call.

    python bench/hooks.py [--calls 20,100] [--rounds 5] [--quick]

Every run is in process (``coterie.open_agent`` in ``trio.run``), in a fresh
temporary workspace, on the scripted model, in ``bypassPermissions``, with
the user settings of the variant and nothing else. A query makes N tool
calls (each a ``Read`` of a small file), then answers. Only the query is
timed (wall clock), the variants of a size interleaved, each figure the
median of --rounds runs.

1. The added latency per tool call of a no-op command hook (``true``):
   none (the baseline), a PreToolUse hook matching every tool, and
   PreToolUse plus PostToolUse (two processes per call). "added" is the
   difference to the baseline per call; "ratio" is the variant's time per
   call over the baseline's. Then one hook fired alone (spawn, stdin, wait,
   read), which is what the added latency should be near. Nothing is
   asserted: the figures are printed.

2. The latency of an MCP tool call (a stdio server's no-op tool) against a
   built-in tool's (Read of a small file), per call, in the same run
   (``bench/mcp_calls.py``, which can also be run alone).

--quick: N = 10, 2 rounds (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from coterie import open_agent

NOOP = [{"hooks": [{"type": "command", "command": "true"}]}]
VARIANTS: dict[str, dict[str, Any]] = {
    "no hooks": {},
    "PreToolUse": {"hooks": {"PreToolUse": NOOP}},
    "Pre+PostToolUse": {"hooks": {"PreToolUse": NOOP, "PostToolUse": NOOP}},
}


def one_run(calls: int, settings: dict[str, Any]) -> float:
    """Seconds the query of *calls* Read calls took with user *settings*."""
    with tempfile.TemporaryDirectory(prefix="coterie-hooks-bench-") as tmp:
        root = Path(tmp)
        workdir = root / "ws"
        workdir.mkdir()
        (workdir / "a.txt").write_text("hello\n")
        (root / "settings.json").write_text(json.dumps(settings))
        read = {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}
        tracks = {"lead": [read] * calls + [{"text": "done"}]}
        scenario = root / "scenario.json"
        scenario.write_text(json.dumps({"name": "hooks-bench", "tracks": tracks}))

        async def go() -> float:
            async with open_agent(
                workdir,
                scenario=scenario,
                permission_mode="bypassPermissions",
                user_settings=root / "settings.json",
            ) as session:
                start = time.perf_counter()
                result = await session.query("read it")
                assert not result.is_error, result
                return time.perf_counter() - start

        return trio.run(go)


def part1(sizes: list[int], rounds: int) -> None:
    print("1. added latency of a no-op command hook per tool call (median wall time)")
    print(f"{'calls':>6} {'variant':<16} {'ms/call':>9} {'added ms':>9} {'ratio':>6}")
    for calls in sizes:
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for _ in range(rounds):
            for name, settings in VARIANTS.items():
                times[name].append(one_run(calls, settings))
        base = statistics.median(times["no hooks"]) / calls
        for name in VARIANTS:
            per = statistics.median(times[name]) / calls
            print(
                f"{calls:>6} {name:<16} {per * 1000:>9.2f} {(per - base) * 1000:>9.2f}"
                f" {per / base:>6.2f}"
            )


def fire_alone(count: int) -> None:
    """The hook by itself: *count* PreToolUse fires of the no-op hook, one at a time."""
    from coterie.hooks import HookConfig, Hooks

    with tempfile.TemporaryDirectory(prefix="coterie-hooks-bench-") as tmp:
        config = HookConfig.parse({"PreToolUse": NOOP}, Path(tmp) / "settings.json")
        hooks = Hooks(config, session_id="bench", cwd=Path(tmp), permission_mode="default")

        async def go() -> list[float]:
            times = []
            for _ in range(count):
                start = time.perf_counter()
                await hooks.fire("PreToolUse", {"tool_name": "Read", "tool_input": {}})
                times.append(time.perf_counter() - start)
            return times

        times = trio.run(go)
    print(
        f"   one no-op PreToolUse fire alone: median {statistics.median(times) * 1000:.2f} ms"
        f" (min {min(times) * 1000:.2f}, {count} fires)"
    )


def sizes_of(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", default="20,100", help="sizes N for part 1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.rounds = "10", 2
    part1(sizes_of(args.calls), args.rounds)
    fire_alone(50 if args.quick else 200)
    print()
    mcp_calls = runpy.run_path(str(Path(__file__).with_name("mcp_calls.py")))
    mcp_calls["report"](*((10, 1) if args.quick else (50, 3)))


if __name__ == "__main__":
    # The runs' state goes to a coterie home of the bench's own, not the user's.
    os.environ.setdefault("COTERIE_HOME", tempfile.mkdtemp(prefix="coterie-bench-home-"))
    main()
