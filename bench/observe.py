"""What 50 open observer pages cost a 200-teammate run: the run's slowdown, the observer's CPU.

    python bench/observe.py [--teammates 200] [--tasks-per-teammate 2] [--pages 50]
                            [--rounds 5] [--quick]

Each round runs the same team run twice, through the real CLI (``coterie
team --scenario FILE -p``, scripted model, file mailboxes, durable board
and event log, a private ``COTERIE_HOME``), each time in a fresh workspace:

  * baseline: the run alone;
  * observed: ``coterie observe --workdir WS`` running, and *pages* clients
    (in this bench process, not the observer's) that each do what the page
    does: load the page, its script and stylesheet, the run list (polled
    until the run appears), then hold the run's event stream open,
    reading every frame, until the run ends.

Baseline and observed alternate within each round (which goes first
alternates too), so drift of the machine's load hits both alike. Measured:
the run's wall time (process start to exit) in each mode, the median of
the rounds, and the ratio observed / baseline of each round (the two runs
of a round are back to back) with its median (the target is at most 1.05)
and a 90 % bootstrap interval of that median;
the observer process's CPU (user + system, from ``/proc``) over the
observed run, and per second of the run; what the pages received (frames
and bytes, all pages together) and the CPU this process spent being them;
and the CPU of the observer and the pages as a share of the run's own CPU
(from ``RUSAGE_CHILDREN``): on a shared machine the wall-time ratio swings
by tens of percent from round to round, and that share bounds what the
observer can take from the run even when every core is busy.

--quick: 20 teammates, 1 task each, 10 pages, 1 round (a smoke run, ~10 s).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import h11
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.team import default_names

REPO = Path(__file__).resolve().parents[1]
USAGE = {"input_tokens": 100, "output_tokens": 10}
TICKS = os.sysconf("SC_CLK_TCK")


def scenario(names: tuple[str, ...], per: int, path: Path) -> Path:
    """The lead assigns *per* tasks to each teammate (one Write, then an answer each)."""
    creates: list[dict[str, Any]] = []
    tracks: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for k in range(per):
        for name in names:
            out = f"out/{name}-{k}.txt"
            desc = {"subject": f"write {out}", "description": f"Write {out}.", "owner": name}
            creates.append({"name": "TaskCreate", "input": desc})
            write = {"name": "Write", "input": {"file_path": out, "content": f"job {k}\n"}}
            tracks[name] += [
                {"tool_uses": [write], "usage": USAGE},
                {"text": "done", "usage": USAGE},
            ]
    lead = [{"tool_uses": creates, "usage": USAGE}, {"text": "planned", "usage": USAGE}]
    lead += [{"text": "noted", "usage": USAGE} for _ in creates]
    path.write_text(json.dumps({"name": "observe-bench", "tracks": {"lead": lead, **tracks}}))
    return path


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return {**env, "PYTHONPATH": str(REPO), "COTERIE_HOME": str(home / "coterie"),
            "HOME": str(home)}  # fmt: skip


def team_command(scenario_path: Path, teammates: int, workspace: Path) -> list[str]:
    return [
        sys.executable, "-m", "coterie", "team", "-p", "--permission-mode", "bypassPermissions",
        "--teammates", str(teammates), "--scenario", str(scenario_path), "--workdir",
        str(workspace), "go",
    ]  # fmt: skip


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process *pid* so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


# -- the pages -------------------------------------------------------------------


async def get(port: int, target: str) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        head = [("host", f"127.0.0.1:{port}")]
        await stream.send_all(conn.send(h11.Request(method="GET", target=target, headers=head)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)


class Pages:
    """Frames and bytes the pages received, all together."""

    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0
        self.connected = 0


async def page(port: int, base: str, pages: Pages) -> None:
    """One open page: its files, the run list until the run shows, then its event stream."""
    for asset in ("", "assets/observe.js", "assets/observe.css"):
        await get(port, base + asset)
    while True:
        runs = json.loads(await get(port, base + "api/runs"))["runs"]
        if runs:
            break
        await trio.sleep(0.5)  # the page polls every 2 s; a bench page looks sooner
    run_id = runs[0]["run_id"]
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        head = [("host", f"127.0.0.1:{port}"), ("accept", "text/event-stream")]
        target = f"{base}api/runs/{run_id}/events"
        await stream.send_all(conn.send(h11.Request(method="GET", target=target, headers=head)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        pages.connected += 1
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                if not data:
                    return
                conn.receive_data(data)
            elif isinstance(event, h11.Data):
                pages.bytes += len(event.data)
                pages.frames += event.data.count(b"\n\n")
            elif not isinstance(event, h11.Response):
                return


# -- one run ------------------------------------------------------------------------


#: Seconds the observed run waits, once the team is done, for every page's snapshot.
SNAPSHOT_WAIT = 30.0

#: CPU seconds of the last team run (its process, from ``RUSAGE_CHILDREN``).
RUN_CPU: list[float] = []


async def timed_run(command: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = await trio.run_process(command, env=env, stdin=b"", capture_stdout=True,
                                  capture_stderr=True, check=False)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    RUN_CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"the team run failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return wall


async def baseline(args: argparse.Namespace, root: Path) -> float:
    home, workspace = root / "home", root / "ws"
    workspace.mkdir(parents=True)
    path = scenario(default_names(args.teammates), args.tasks_per_teammate, root / "s.json")
    return await timed_run(team_command(path, args.teammates, workspace), environment(home))


async def observed(args: argparse.Namespace, root: Path) -> dict[str, float]:
    home, workspace = root / "home", root / "ws"
    workspace.mkdir(parents=True)
    env = environment(home)
    path = scenario(default_names(args.teammates), args.tasks_per_teammate, root / "s.json")
    observer = subprocess.Popen(
        [sys.executable, "-m", "coterie", "observe", "--workdir", str(workspace)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert observer.stdout is not None
        url = observer.stdout.readline().strip()
        port = int(url.split(":")[2].split("/")[0])
        base = "/" + url.split("/", 3)[3]
        pages = Pages()
        cpu_before = cpu_seconds(observer.pid)
        own_before = time.process_time()
        async with trio.open_nursery() as nursery:
            for _ in range(args.pages):
                nursery.start_soon(page, port, base, pages)
            wall = await timed_run(team_command(path, args.teammates, workspace), env)
            await trio.sleep(1.0)  # the last frames reach the pages
            # Under load a page may connect only now: wait (bounded) for its snapshot,
            # rather than bet that one second was enough.
            with trio.move_on_after(SNAPSHOT_WAIT):
                while pages.frames < pages.connected:
                    await trio.sleep(0.05)
            cpu = cpu_seconds(observer.pid) - cpu_before
            own = time.process_time() - own_before
            nursery.cancel_scope.cancel()
        return {"wall": wall, "cpu": cpu, "pages_cpu": own, "frames": pages.frames,
                "bytes": pages.bytes, "connected": pages.connected}  # fmt: skip
    finally:
        observer.terminate()
        observer.wait(timeout=30)


async def main(args: argparse.Namespace) -> None:
    print(
        f"observe bench: {args.teammates} teammates x {args.tasks_per_teammate} tasks,"
        f" {args.pages} pages, {args.rounds} rounds (cpus: {os.cpu_count()})"
    )
    base_walls: list[float] = []
    seen: list[dict[str, float]] = []
    ratios: list[float] = []
    for i in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="coterie-observe-bench-") as tmp:
            root = Path(tmp)
            order = ("baseline", "observed") if i % 2 == 0 else ("observed", "baseline")
            for mode in order:
                if mode == "baseline":
                    wall = await baseline(args, root / "b")
                    base_walls.append(wall)
                    print(
                        f"  round {i + 1} baseline: {wall:.2f} s (the run's CPU {RUN_CPU[-1]:.2f} s)"
                    )
                else:
                    got = await observed(args, root / "o")
                    got["run_cpu"] = RUN_CPU[-1]
                    seen.append(got)
                    print(
                        f"  round {i + 1} observed: {got['wall']:.2f} s (the run's CPU"
                        f" {got['run_cpu']:.2f} s), observer CPU"
                        f" {got['cpu']:.2f} s, {int(got['connected'])} pages got"
                        f" {int(got['frames'])} frames, {got['bytes'] / 1e6:.1f} MB"
                        f" (the pages' own CPU {got['pages_cpu']:.2f} s)"
                    )
            ratios.append(seen[-1]["wall"] / base_walls[-1])
            print(f"  round {i + 1} ratio observed / baseline: {ratios[-1]:.3f}")
    base = statistics.median(base_walls)
    walls = statistics.median(s["wall"] for s in seen)
    cpu = statistics.median(s["cpu"] for s in seen)
    ratio = statistics.median(ratios)
    print()
    print(f"run wall time, median: baseline {base:.2f} s, observed {walls:.2f} s")
    low, high = bootstrap_interval(ratios)
    print(
        f"slowdown, median of the rounds' ratios: {ratio:.3f}x ({(ratio - 1) * 100:+.1f} %;"
        f" target <= +5 %); 90 % bootstrap interval {low:.3f} - {high:.3f};"
        f" ratios {', '.join(f'{r:.3f}' for r in ratios)}"
    )
    print(f"observer CPU: {cpu:.2f} s over the run ({cpu / walls * 100:.0f} % of one core)")
    share = statistics.median((s["cpu"] + s["pages_cpu"]) / s["run_cpu"] for s in seen)
    print(
        f"observer + pages CPU / the run's own CPU: {share * 100:.1f} % (the run's slowdown"
        " if every cycle they take were the run's: a bound that the machine's noise cannot hide)"
    )


def bootstrap_interval(values: list[float], draws: int = 10_000) -> tuple[float, float]:
    """A 90 % percentile-bootstrap interval of the median of *values* (seeded: the
    same rounds give the same interval): how far the machine's noise leaves the
    median uncertain."""
    rng = random.Random(17)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    return medians[int(draws * 0.05)], medians[int(draws * 0.95) - 1]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teammates", type=int, default=200)
    parser.add_argument("--tasks-per-teammate", type=int, default=2)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="20 teammates, 10 pages, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.teammates, args.tasks_per_teammate, args.pages, args.rounds = 20, 1, 10, 1
    return args


if __name__ == "__main__":
    trio.run(main, parse(sys.argv[1:]))
