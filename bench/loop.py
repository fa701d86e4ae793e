"""Harness overhead of the agent turn loop with the scripted model.

    python bench/loop.py [--turns N] [--quick]

Runs N model turns (default 10,000): every other turn asks for one cheap
tool call (TodoWrite, whose own work is a list assignment), the last one
ends the run. Measured in the same run:
  * bare: the scripted model's `complete` called N times on the same growing
    transcript, with nothing else (the baseline);
  * loop: `AgentLoop.run` doing the same N turns through the permission gate
    and the tool executor.
Harness time per turn = (loop - bare) / N. Target (issue 3): under 2 ms.
Allocations are counted with tracemalloc in a second, smaller pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.agent import AgentLoop
from coterie.events import EventLog
from coterie.models import ModelRequest, ScriptedModel, load_scenario
from coterie.tools import (
    PermissionGate,
    PermissionPolicy,
    ToolContext,
    default_registry,
)

USAGE = {"input_tokens": 100, "output_tokens": 20}


def scenario(turns: int, directory: Path) -> Path:
    track = []
    for i in range(turns - 1):
        if i % 2 == 0:
            todos = [{"content": f"step {i}", "status": "in_progress", "activeForm": "working"}]
            track.append(
                {"tool_uses": [{"name": "TodoWrite", "input": {"todos": todos}}], "usage": USAGE}
            )
        else:
            track.append(
                {
                    "text": f"turn {i}",
                    "tool_uses": [{"name": "TodoWrite", "input": {"todos": []}}],
                    "usage": USAGE,
                }
            )
    track.append({"text": "done", "usage": USAGE})
    path = directory / "loop.json"
    path.write_text(json.dumps({"name": "loop-bench", "tracks": {"lead": track}}))
    return path


def make_loop(path: Path, workdir: Path, events: EventLog | None = None) -> AgentLoop:
    policy = PermissionPolicy.from_rules(mode="bypassPermissions")
    return AgentLoop(
        model=ScriptedModel(load_scenario(path)),
        registry=default_registry(),
        gate=PermissionGate(policy, None),
        tools=ToolContext(workspace=workdir),
        system="bench",
        events=events,
    )


async def bare(path: Path, workdir: Path, turns: int) -> float:
    """The scripted model alone, fed a transcript growing as the loop's does."""
    model = ScriptedModel(load_scenario(path))
    tools = default_registry().schemas()
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    start = time.perf_counter()
    for _ in range(turns):
        reply = await model.complete(ModelRequest(system="bench", messages=messages, tools=tools))
        messages.append({"role": "assistant", "content": reply.content})
        if reply.tool_uses:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": t["id"],
                            "content": "ok",
                            "is_error": False,
                        }
                        for t in reply.tool_uses
                    ],
                }
            )
    return time.perf_counter() - start


async def looped(path: Path, workdir: Path, log: bool = False) -> tuple[float, int]:
    events = EventLog(workdir / "events.jsonl") if log else None
    loop = make_loop(path, workdir, events)
    start = time.perf_counter()
    result = await loop.run("go")
    elapsed = time.perf_counter() - start
    assert not result.is_error, result
    return elapsed, result.num_turns


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="1,000 turns")
    args = parser.parse_args()
    turns = 1000 if args.quick else args.turns
    with tempfile.TemporaryDirectory(prefix="coterie-loop-") as tmp:
        workdir = Path(tmp)
        path = scenario(turns, workdir)
        t_bare = trio.run(bare, path, workdir, turns)
        t_loop, n = trio.run(looped, path, workdir)
        t_logged, _ = trio.run(looped, path, workdir, True)
        small = min(turns, 1000)
        path_small = scenario(small, workdir)
        tracemalloc.start()
        trio.run(bare, path_small, workdir, small)
        bare_alloc = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        trio.run(looped, path_small, workdir)
        loop_alloc = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    calls = turns - 1
    per_turn = (t_loop - t_bare) / n * 1e3
    print(f"turns: {n} ({calls} tool calls)")
    print(f"bare scripted model: {t_bare:8.3f} s  ({t_bare / n * 1e3:.3f} ms/turn)")
    print(f"agent loop:          {t_loop:8.3f} s  ({t_loop / n * 1e3:.3f} ms/turn)")
    print(f"harness time per turn (loop - bare): {per_turn:.3f} ms   (target < 2 ms)")
    print(f"loop / bare: {t_loop / t_bare:.2f}x")
    print(
        f"agent loop + event log file (as `coterie run`): {t_logged:.3f} s "
        f"({(t_logged - t_bare) / n * 1e3:.3f} ms/turn harness)"
    )
    print(
        f"peak traced memory over {small} turns: bare {bare_alloc / 1e6:.1f} MB, "
        f"loop {loop_alloc / 1e6:.1f} MB ({(loop_alloc - bare_alloc) / small:.0f} B/turn extra)"
    )


if __name__ == "__main__":
    main()
