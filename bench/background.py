"""What a background command costs, and what a run leaves once it ends.

    python bench/background.py [--calls 20] [--shells 100] [--rounds 3]

In process (``coterie.open_agent`` in ``trio.run``), in a fresh temporary
workspace, the scripted model, ``bypassPermissions``, the project's defaults
(durable mailboxes, transcript and event log; each background command's
record and process group fsynced before it runs).

1. Added latency of the call that starts a background command. One run whose
   lead alternates --calls Bash calls of a foreground ``true`` and --calls
   Bash calls of ``sleep 60`` with ``run_in_background``. A call's time is
   from its ``agent.tool_call`` event to its ``agent.tool_result`` event (the
   gate, the tool, the durable marks around it). Reported: the median of
   each, and the background call's median minus the foreground one's (the
   target: under 5 ms).

2. No leak. One run whose lead starts --shells background ``sleep 60`` in
   one turn (all running at once), answers, and the session ends. Before the
   run and after it: this process's open file descriptors and its live child
   processes; after it, whether any of the shells' process groups has a live
   member; how long the session's end took (every group ended: SIGTERM, and
   ``sleep`` dies of it). A run of one shell goes first, in the same Trio run:
   the first run opens a descriptor that the later ones share.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))

from coterie.processes import group_alive
from coterie.session import open_agent


def bash(command: str, background: bool) -> dict[str, Any]:
    call: dict[str, Any] = {"command": command}
    if background:
        call["run_in_background"] = True
    return {"name": "Bash", "input": call}


def write_scenario(directory: Path, lead: list[dict[str, Any]]) -> str:
    path = directory / "scenario.json"
    path.write_text(json.dumps({"name": "background-bench", "tracks": {"lead": lead}}))
    return str(path)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def children() -> list[int]:
    """Live (not zombie) processes whose parent is this one."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] not in (b"Z", b"X"):
            found.append(int(entry))
    return found


async def call_times(calls: int) -> tuple[list[float], list[float]]:
    """Durations (ms) of foreground ``true`` calls and of background starts."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "ws"
        workdir.mkdir()
        lead: list[dict[str, Any]] = []
        for _ in range(calls):
            lead.append({"tool_uses": [bash("true", False)]})
            lead.append({"tool_uses": [bash("sleep 60", True)]})
        lead.append({"text": "done"})
        began: dict[str, tuple[float, bool]] = {}
        fore: list[float] = []
        back: list[float] = []

        def timed(event: Any) -> None:
            d = event.data
            if event.type == "agent.tool_call" and d.get("name") == "Bash":
                began[d["id"]] = (time.perf_counter(), bool(d["input"].get("run_in_background")))
            elif event.type == "agent.tool_result" and d.get("id") in began:
                if d.get("is_error"):
                    raise SystemExit(f"a Bash call failed: {d.get('content')}")
                start, background = began.pop(d["id"])
                (back if background else fore).append((time.perf_counter() - start) * 1000)

        async with open_agent(
            workdir,
            scenario=write_scenario(Path(tmp), lead),
            permission_mode="bypassPermissions",
        ) as session:
            with session.events.listen(timed):
                await session.query("go")
        return fore, back


async def leak(shells: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "ws"
        workdir.mkdir()
        lead: list[dict[str, Any]] = [
            {"tool_uses": [bash("sleep 60", True) for _ in range(shells)]},
            {"text": "ok"},
        ]
        fds, kids = open_fds(), children()
        groups: list[int] = []
        async with open_agent(
            workdir,
            scenario=write_scenario(Path(tmp), lead),
            permission_mode="bypassPermissions",
        ) as session:
            await session.query("go")
            records = session.run_dir / "procgroups"
            groups = [int(p.name.partition("-")[0]) for p in records.glob("*-*")]
            owner: Any = getattr(session, "background", None)
            running = len(owner.running()) if owner is not None else 0
            fds_during = open_fds()
            ending = time.perf_counter()
        ended_ms = (time.perf_counter() - ending) * 1000
        return {
            "shells": shells,
            "running_at_once": running,
            "groups_recorded": len(groups),
            "fds_before": fds,
            "fds_during": fds_during,
            "fds_after": open_fds(),
            "children_before": len(kids),
            "children_after": len(children()),
            "groups_alive_after": sum(group_alive(g) for g in groups),
            "end_of_run_ms": round(ended_ms, 1),
        }


async def warm_then_leak(shells: int) -> dict[str, Any]:
    """:func:`leak`, after a first run in the same Trio run: the first run of a Trio
    run opens a descriptor that the later ones share (counted once, not leaked)."""
    await leak(1)
    return await leak(shells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--shells", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    fore: list[float] = []
    back: list[float] = []
    for _ in range(args.rounds):
        f, b = trio.run(call_times, args.calls)
        fore += f
        back += b
    fg, bg = statistics.median(fore), statistics.median(back)
    print(f"1. call latency over {len(fore)} + {len(back)} calls (median):")
    print(f"   foreground `true`:          {fg:7.2f} ms")
    print(f"   background start:           {bg:7.2f} ms")
    print(f"   added by background:        {bg - fg:7.2f} ms (target < 5 ms)")
    print(f"   background p90:             {statistics.quantiles(back, n=10)[-1]:7.2f} ms")
    print(f"2. {args.shells} concurrent background shells in one run:")
    for key, value in trio.run(warm_then_leak, args.shells).items():
        print(f"   {key:22} {value}")


if __name__ == "__main__":
    main()
