"""File vs Redis backends, measured in the same run (issue 16).

    python bench/backends.py [--mailbox] [--board] [--team [--marginal] [--repeat R]] [--quick]

Sections (all when none is named):
  --mailbox  send->receive latency p50/p99 (one receiver parked in receive(),
             one message at a time) and messages/s with 16 concurrent senders
             and one receiver acknowledging in batches; the file mailbox
             (policies batch and always) against Redis Streams (a local
             redis-server started here, AOF everysec and always).
  --board    task board claims/s with 8 worker processes draining 1000 tasks
             in chains of five: the file board against Redis (AOF off and
             always); bench/backends_board.py, which also runs alone.
  --team     a 50-teammate team run (one task each, the model a local
             `coterie mock-server`), all in one process on the file backend
             against the lead (`coterie team --remote`) and 4 `coterie worker`
             processes on Redis (AOF always): wall time, CPU per task (every
             coterie process's user+system time, the mock server's not) and
             the peak memory (RSS) of each process; the Redis run's CPU over the
             file run's (issue 32's target: 1.5x). With --marginal, at N and 2N
             teammates: the CPU each added task costs on each backend (what a run
             pays once, its processes' start-up above all, drops out). With
             --repeat R, each team runs R times and the run with the median
             CPU counts.

The mailbox section runs in one process on this machine: Redis's figures
include the loopback round trips, the file mailbox's its fsyncs. The team
section runs the real CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.backends.redis import RedisMailbox, open_redis_post_office
from coterie.backends.redis.client import parse_backend
from coterie.mailbox import Durability, PostOffice
from coterie.messages import Message
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

REPO = Path(__file__).resolve().parents[1]
BODY = {"text": "x" * 200}
SENDERS = 16


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def latency(post: PostOffice, count: int) -> tuple[float, float]:
    """p50 and p99 (ms) from the start of a send to the parked receiver's wake-up."""
    box = post.open("sink")
    if isinstance(box, RedisMailbox):
        await box.sync()  # the mailbox exists on the server before the clock starts
    samples: list[float] = []
    sent_at: list[float] = []

    async def receiver() -> None:
        delivery = await box.receive()
        samples.append(time.perf_counter() - sent_at[-1])
        await box.ack(delivery)

    for n in range(count):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(receiver)
            await trio.testing.wait_all_tasks_blocked(0.001)
            sent_at.append(time.perf_counter())
            await post.send(Message.new("bench", "sink", "n", {"n": n, **BODY}))
    return pct(samples, 0.5) * 1000, pct(samples, 0.99) * 1000


async def throughput(post: PostOffice, per_sender: int) -> float:
    """Messages/s: SENDERS senders, one receiver acknowledging each."""
    box = post.open("sink")
    if isinstance(box, RedisMailbox):
        await box.sync()  # the mailbox exists on the server before the clock starts
    total = SENDERS * per_sender
    start = time.perf_counter()

    async def sender(k: int) -> None:
        for n in range(per_sender):
            await post.send(Message.new(f"s{k}", "sink", "n", {"n": n, **BODY}))

    async with trio.open_nursery() as nursery:
        for k in range(SENDERS):
            nursery.start_soon(sender, k)
        received = 0
        while received < total:  # acknowledged in batches, as bench/mailbox.py does
            batch = [await box.receive()]
            with contextlib.suppress(trio.WouldBlock):
                while len(batch) < 64:
                    batch.append(box.receive_nowait())
            await box.ack(*batch)
            received += len(batch)
    return total / (time.perf_counter() - start)


def file_office(
    directory: Path, durability: Durability
) -> Callable[[], AbstractAsyncContextManager[PostOffice]]:
    @asynccontextmanager
    async def opened() -> AsyncIterator[PostOffice]:
        post = PostOffice(directory / f"mb-{time.monotonic_ns()}", durability=durability)
        try:
            yield post
        finally:
            await post.aclose()

    return opened


def redis_office(url: str) -> Callable[[], AbstractAsyncContextManager[PostOffice]]:
    def opened() -> AbstractAsyncContextManager[PostOffice]:
        return open_redis_post_office(parse_backend(url), f"bench-{time.monotonic_ns()}")

    return opened


async def mailbox_section(quick: bool, directory: Path) -> None:
    count = 100 if quick else 2000
    per_sender = 10 if quick else 250
    print(f"## mailbox: latency over {count} sends; {SENDERS} senders x {per_sender} messages")
    print(f"{'backend':<28} {'p50 ms':>8} {'p99 ms':>8} {'msgs/s x16':>11}")
    for sub in ("everysec", "always", "files"):
        (directory / sub).mkdir()
    with contextlib.ExitStack() as stack:
        everysec = stack.enter_context(
            redis_server(directory / "everysec", appendonly=True, appendfsync="everysec")
        )
        always = stack.enter_context(
            redis_server(directory / "always", appendonly=True, appendfsync="always")
        )
        cases = [
            ("file, batch", file_office(directory / "files", Durability.BATCH)),
            ("file, always", file_office(directory / "files", Durability.ALWAYS)),
            ("redis, aof everysec", redis_office(everysec.url)),
            ("redis, aof always", redis_office(always.url)),
        ]
        for label, make in cases:
            async with make() as post:
                p50, p99 = await latency(post, count)
            async with make() as post:
                rate = await throughput(post, per_sender)
            print(f"{label:<28} {p50:>8.3f} {p99:>8.3f} {rate:>11.0f}")


#: Runs a command, passes SIGTERM/SIGINT on to it, and writes what it used (its
#: process tree's user and system seconds, the peak RSS of its largest process).
MEASURED = """
import json, resource, signal, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
for signum in (signal.SIGTERM, signal.SIGINT):
    signal.signal(signum, lambda n, _f: child.send_signal(n))
code = child.wait()
used = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump({"cpu": used.ru_utime + used.ru_stime, "rss_kb": used.ru_maxrss}, out)
sys.exit(code)
"""


def team_scenario(path: Path, names: list[str]) -> Path:
    calls = [
        {"name": "TaskCreate", "input": {"subject": f"{n}'s file", "description": "write it",
                                         "owner": n}}
        for n in names
    ]  # fmt: skip
    tracks: dict[str, object] = {
        "lead": [{"tool_uses": calls}, {"text": "planned"}] + [{"text": "all done"}] * 8
    }
    for n in names:
        write = {"name": "Write", "input": {"file_path": f"{n}.txt", "content": n}}
        tracks[n] = [{"tool_uses": [write]}, {"text": f"{n} wrote its file"}]
    path.write_text(json.dumps({"tracks": tracks}))
    return path


def measured(out: Path, argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", MEASURED, str(out), *argv],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def done_once(env: dict[str, str], workdir: Path, url: str | None) -> str:
    """Whether every task on the run's board is completed, each by one owner."""
    on = ["--backend", url] if url else []
    listed = subprocess.run(
        [sys.executable, "-m", "coterie", "tasks", "--json", *on], cwd=workdir, env=env,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if listed.returncode != 0:
        return f"unreadable ({listed.stderr.strip()})"
    tasks = json.loads(listed.stdout)["tasks"]
    open_ = [t["id"] for t in tasks if t["status"] != "completed"]
    return "yes" if not open_ else f"no: {', '.join(open_)} not completed"


def idle_worker_cpu(url: str, env: dict[str, str], workdir: Path) -> float:
    """The CPU seconds of a worker that starts, hosts nothing for 3 s and stops: what
    each worker process costs before its first teammate (a keyspace of its own)."""
    out = workdir / "idle.json"
    argv = [sys.executable, "-m", "coterie", "worker", "--backend", url, "--workdir",
            str(workdir), "--id", "idle"]  # fmt: skip
    proc = measured(out, argv, env, workdir)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    return float(json.loads(out.read_text())["cpu"])


@attrs.frozen
class TeamRun:
    """One measured team run: its wall time, each process's figures, its board."""

    wall: float
    used: list[dict[str, float]]
    done: str
    idle: float | None

    @property
    def cpu(self) -> float:
        return sum(u["cpu"] for u in self.used)


def team_run(
    label: str, directory: Path, names: list[str], workers: int, scenario: Path, env: dict[str, str]
) -> TeamRun | None:
    """The team of *names* once: in one process on files, or (*label* ``redis``) a lead
    and *workers* worker processes on a Redis server started here (AOF always)."""
    team_args = ["-m", "coterie", "team", "-p", "--permission-mode", "bypassPermissions",
                 *[a for n in names for a in ("--teammate", n)]]  # fmt: skip
    mock = subprocess.Popen(
        [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    assert mock.stdout is not None
    env_run = env | {"ANTHROPIC_BASE_URL": mock.stdout.readline().strip()}
    workdir = directory / "ws"
    workdir.mkdir(parents=True)
    outs = [workdir / f"used-{i}.json" for i in range(workers + 1)]
    procs: list[subprocess.Popen[bytes]] = []
    server = None
    idle: float | None = None
    try:
        if label == "file":
            start = time.perf_counter()
            lead = measured(outs[0], [sys.executable, *team_args, "go"], env_run, workdir)
            lead.wait()
            wall = time.perf_counter() - start
            outs = outs[:1]
        else:
            (directory / "redis").mkdir()
            server = redis_server(directory / "redis", appendonly=True, appendfsync="always")
            url = server.__enter__().url
            idle = idle_worker_cpu(f"{url}?prefix=idle", env_run, workdir)
            for i in range(workers):
                argv = [sys.executable, "-m", "coterie", "worker", "--backend", url,
                        "--capacity", str(len(names)), "--id", f"w{i}", "--workdir",
                        str(workdir), "--permission-mode", "bypassPermissions"]  # fmt: skip
                procs.append(measured(outs[i + 1], argv, env_run, workdir))
            start = time.perf_counter()
            argv = [sys.executable, *team_args, "--backend", url, "--remote", "go"]
            lead = measured(outs[0], argv, env_run, workdir)
            lead.wait()
            wall = time.perf_counter() - start
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)
        if lead.returncode != 0:
            assert lead.stderr is not None
            print(f"{label}: the run failed: {lead.stderr.read().decode()[-2000:]}")
            return None
        used = [json.loads(out.read_text()) for out in outs]
        missing = [n for n in names if (workdir / f"{n}.txt").read_text() != n]
        if missing:
            print(f"{label}: tasks not done: {', '.join(missing)}")
        done = done_once(env_run, workdir, None if label == "file" else url)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        mock.terminate()
        mock.wait()
        if server is not None:
            server.__exit__(None, None, None)
    return TeamRun(wall, used, done, idle)


def team_section(
    quick: bool,
    directory: Path,
    teammates: int | None = None,
    workers: int | None = None,
    repeat: int = 1,
) -> dict[str, float]:
    """The team runs' figures, printed (of *repeat* runs each, the one with the median
    CPU); returns each run's CPU seconds in all (every coterie process's), by
    backend (``file``, ``redis``)."""
    teammates = teammates or (8 if quick else 50)
    workers = workers or (2 if quick else 4)
    names = [f"mate{i:02d}" for i in range(teammates)]
    scenario = team_scenario(directory / "team.json", names)
    home = directory / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env |= {"COTERIE_HOME": str(home), "HOME": str(home), "ANTHROPIC_API_KEY": "k",
            "PYTHONPATH": str(REPO)}  # fmt: skip
    runs = f", the median of {repeat} runs" if repeat > 1 else ""
    print(f"## team: {teammates} teammates, one task each; {workers} worker processes on Redis"
          f"{runs}")  # fmt: skip
    print(f"{'backend':<34} {'wall s':>7} {'CPU ms/task':>12} {'peak RSS MB per process':>26}")
    totals: dict[str, float] = {}
    for label, title in (
        ("file", "file, one process"),
        ("redis", f"redis, lead + {workers} workers"),
    ):
        done_runs = []
        for attempt in range(repeat):
            run = team_run(label, directory / f"{label}-{attempt}", names, workers, scenario, env)
            if run is not None:
                done_runs.append(run)
        if len(done_runs) < repeat:
            continue
        done_runs.sort(key=lambda r: r.cpu)
        run = done_runs[len(done_runs) // 2]
        cpu = run.cpu / teammates * 1000
        rss = " ".join(f"{u['rss_kb'] / 1024:.0f}" for u in run.used)
        each = ", ".join(f"{u['cpu']:.1f}" for u in run.used)
        totals[label] = run.cpu
        print(f"{title:<34} {run.wall:>7.1f} {cpu:>12.0f} {rss:>26}   (CPU s: {each})")
        if repeat > 1:
            print(f"{'':<34} CPU s of each run: {', '.join(f'{r.cpu:.2f}' for r in done_runs)}")
        print(f"{'':<34} every task completed once on the board: {run.done}")
        if run.idle is not None:
            beyond = (run.cpu - workers * run.idle) / teammates * 1000
            print(f"{'':<34} an idle worker's start and stop: {run.idle:.2f} s CPU; beyond the"
                  f" workers' start-up: {beyond:.0f} ms/task")  # fmt: skip
    if len(totals) == 2:
        ratio = totals["redis"] / totals["file"]
        met = "met" if ratio <= 1.5 else "NOT met"
        print(f"CPU per task, workers on Redis / one process: {ratio:.2f}x (target ≤ 1.5x: {met})")
    return totals


def marginal_section(
    quick: bool, directory: Path, teammates: int, workers: int, repeat: int = 1
) -> None:
    """What one more task costs: the team section at *teammates* and at twice as many,
    the difference per added task, on each backend (what each run pays once, the
    processes' start-up above all, drops out)."""
    small = team_section(quick, directory / "n", teammates, workers, repeat)
    large = team_section(quick, directory / "2n", 2 * teammates, workers, repeat)
    if len(small) < 2 or len(large) < 2:
        return
    added = {k: (large[k] - small[k]) / teammates * 1000 for k in ("file", "redis")}
    print(
        f"## one more task, from {teammates} to {2 * teammates} teammates (CPU ms per task added)"
    )
    print(f"file, one process: {added['file']:.1f}; redis, lead + {workers} workers:"
          f" {added['redis']:.1f}; ratio {added['redis'] / added['file']:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mailbox", action="store_true", help="the mailbox section")
    parser.add_argument("--board", action="store_true", help="the task board section")
    parser.add_argument(
        "--team", action="store_true", help="the 50-teammate team section (real processes)"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument(
        "--teammates", type=int, metavar="N", help="the team section's teammates (default 50)"
    )
    parser.add_argument(
        "--workers", type=int, metavar="N", help="the team section's workers (default 4)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="R",
        help="run each team R times and take the run with the median CPU (default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--marginal", action="store_true",
        help="the team section at N and 2N teammates: the CPU one more task adds",
    )  # fmt: skip
    args = parser.parse_args()
    everything = not (args.mailbox or args.board or args.team)
    with tempfile.TemporaryDirectory(prefix="coterie-bench-") as tmp:
        if args.mailbox or everything:
            (Path(tmp) / "mailbox").mkdir()
            trio.run(mailbox_section, args.quick, Path(tmp) / "mailbox")
        if args.board or everything:
            from backends_board import board_section

            board_section(args.quick)
        if args.team or everything:
            (Path(tmp) / "team").mkdir()
            if args.marginal:
                teammates = args.teammates or (8 if args.quick else 50)
                for part in ("n", "2n"):
                    (Path(tmp) / "team" / part).mkdir()
                workers = args.workers or (2 if args.quick else 4)
                marginal_section(args.quick, Path(tmp) / "team", teammates, workers, args.repeat)
            else:
                team_section(
                    args.quick, Path(tmp) / "team", args.teammates, args.workers, args.repeat
                )


if __name__ == "__main__":
    main()
