"""Supervision costs: restart latency, start/stop of 1,000 actors, memory per idle actor.

    python bench/supervisor.py [--quick]

Measured in the same run, each against a baseline:
  * restart latency of a child under a one_for_one `Supervisor` (permanent,
    no backoff): from the `raise` in the child to its new incarnation running;
    baseline (a), the lower bound: a hand-written loop that catches the
    exception and calls the child again; baseline (b), for reference: the same
    loop starting every incarnation as a new task with `nursery.start`;
  * restart latency of an actor (`actor_spec`, in-memory and file
    `PostOffice`) that crashes in `handle`: from the `raise` to the redelivered
    message being handled again; baseline: a catch-and-call loop around the
    same actor, without a supervisor;
  * time to start and to stop 1,000 actors parked in `receive` under one
    supervisor (memory mailboxes; file mailboxes with durability none);
    baseline: 1,000 plain Trio tasks started with `start_soon` and cancelled;
  * memory per idle actor (tracemalloc and RSS delta, in a fresh process for
    each case), with the file descriptors and idle CPU of 1,000 idle actors;
    baseline: 1,000 plain Trio tasks parked on an Event.
Targets (issue): restart p50 < 1 ms; 1,000 actors start + stop < 1 s in total.
Timings use time.perf_counter on Trio's real clock.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.events import EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.messages import Message
from coterie.supervisors import ChildSpec, Strategy, Supervisor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

N_ACTORS = 1000
TARGET_RESTART_P50_MS = 1.0
TARGET_START_STOP_S = 1.0
IDLE_SETTLE_S = 0.25


class Crash(Exception):
    """What the benchmark children raise on demand."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(latencies: list[float]) -> dict[str, float]:
    return {
        "n": len(latencies),
        "p50_ms": pct(latencies, 0.50) * 1e3,
        "p99_ms": pct(latencies, 0.99) * 1e3,
    }


# -- 1. restart latency ---------------------------------------------------------------


class CrashProbe:
    """A child that announces each incarnation and crashes when told to.

    An incarnation records the time since the previous one raised, then
    waits for its crash order; the driver gives one as soon as it runs.
    """

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.raised_at: float | None = None
        self.running = trio.Event()
        self.crash = trio.Event()

    async def child(self) -> None:
        now = time.perf_counter()
        if self.raised_at is not None:
            self.latencies.append(now - self.raised_at)
            self.raised_at = None
        crash = self.crash = trio.Event()
        self.running.set()
        await crash.wait()
        self.raised_at = time.perf_counter()
        raise Crash("on demand")

    async def drive(self, crashes: int) -> None:
        for _ in range(crashes):
            await self.running.wait()
            self.running = trio.Event()
            self.crash.set()
        await self.running.wait()


async def restart_catch_loop(crashes: int) -> list[float]:
    """Baseline (a): catch the exception and call the child again, in one task."""
    probe = CrashProbe()

    async def loop() -> None:
        while True:
            with contextlib.suppress(Crash):
                await probe.child()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop)
        await probe.drive(crashes)
        nursery.cancel_scope.cancel()
    return probe.latencies


async def restart_new_task(crashes: int) -> list[float]:
    """Baseline (b): every incarnation is a new task, started and awaited by a loop."""
    probe = CrashProbe()

    async def incarnation(done: trio.Event, *, task_status: trio.TaskStatus[None]) -> None:
        with trio.CancelScope():
            task_status.started()
            with contextlib.suppress(Crash):
                await probe.child()
        done.set()

    async def loop() -> None:
        async with trio.open_nursery() as inner:
            while True:
                done = trio.Event()
                await inner.start(incarnation, done)
                await done.wait()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop)
        await probe.drive(crashes)
        nursery.cancel_scope.cancel()
    return probe.latencies


async def restart_supervised(crashes: int, with_events: bool) -> list[float]:
    """A permanent child under a one_for_one Supervisor, no backoff."""
    probe = CrashProbe()
    sup = Supervisor(
        "bench",
        [ChildSpec("victim", probe.child)],
        strategy=Strategy.ONE_FOR_ONE,
        max_restarts=10**9,
        period=1.0,
        backoff=None,
        events=EventLog() if with_events else None,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await probe.drive(crashes)
        await sup.stop()
    return probe.latencies


class CrashingActor(Actor):
    """Crashes on the first delivery of each message; handles the redelivery."""

    def __init__(self, probe: ActorProbe) -> None:
        self.probe = probe

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        probe = self.probe
        if not ctx.redelivered:
            probe.raised_at = time.perf_counter()
            raise Crash("in handle")
        probe.latencies.append(time.perf_counter() - probe.raised_at)
        probe.handled.set()


class ActorProbe:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.raised_at = 0.0
        self.handled = trio.Event()

    async def drive(self, post: PostOffice, crashes: int) -> None:
        for n in range(crashes):
            handled = self.handled = trio.Event()
            await post.send(Message.new("bench", "victim", "crash", {"n": n}))
            await handled.wait()


async def actor_restart(crashes: int, root: Path | None, supervised: bool) -> list[float]:
    """Raise in handle -> the redelivered message handled by the next incarnation."""
    probe = ActorProbe()
    post = PostOffice(root, durability=Durability.NONE, poll_interval=None)
    spec = actor_spec("victim", lambda _ctx: CrashingActor(probe), post)
    async with trio.open_nursery() as nursery:
        if supervised:
            sup = Supervisor("bench", [spec], max_restarts=10**9, period=1.0)
            await nursery.start(sup.run)
            await probe.drive(post, crashes)
            await sup.stop()
        else:

            async def loop() -> None:
                while True:
                    with contextlib.suppress(Crash):
                        await spec.start()

            nursery.start_soon(loop)
            await probe.drive(post, crashes)
            nursery.cancel_scope.cancel()
    await post.aclose()
    return probe.latencies


def run_latency(fn: Callable[..., Any], warmup: int, samples: int, *args: Any) -> dict[str, float]:
    gc.collect()
    latencies = trio.run(fn, warmup + samples, *args)
    return summary(latencies[warmup:])


# -- 2. start / stop of 1,000 actors ---------------------------------------------------


class IdleActor(Actor):
    """Counts its starts, then waits in receive for ever."""

    def __init__(self, started: StartCounter) -> None:
        self.started = started

    async def on_start(self, ctx: ActorContext) -> None:
        self.started.tick()

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        pass


class StartCounter:
    def __init__(self, target: int) -> None:
        self.count = 0
        self.target = target
        self.all = trio.Event()

    def tick(self) -> None:
        self.count += 1
        if self.count >= self.target:
            self.all.set()


def make_post(root: Path | None, poll_interval: float | None = 0.2) -> PostOffice:
    return PostOffice(root, durability=Durability.NONE, poll_interval=poll_interval)


async def actors_start_stop(n: int, root: Path | None) -> dict[str, float]:
    """Open n mailboxes, start n idle actors under one supervisor, stop them."""
    post = make_post(root)
    counter = StartCounter(n)
    t0 = time.perf_counter()
    specs = [actor_spec(f"a{i:05d}", lambda _ctx: IdleActor(counter), post) for i in range(n)]
    sup = Supervisor("bench", specs)
    t1 = time.perf_counter()
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await counter.all.wait()
        t2 = time.perf_counter()
        await sup.stop()
        t3 = time.perf_counter()
    await post.aclose()
    return {"open": t1 - t0, "start": t2 - t1, "stop": t3 - t2}


async def plain_start_stop(n: int, handshake: bool) -> dict[str, float]:
    """Baseline: n plain tasks parked for ever, then cancelled."""
    counter = StartCounter(n)

    async def task(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        counter.tick()
        await trio.sleep_forever()

    t1 = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(n):
            if handshake:
                await nursery.start(task)
            else:
                nursery.start_soon(task)
        await counter.all.wait()
        t2 = time.perf_counter()
        nursery.cancel_scope.cancel()
    t3 = time.perf_counter()
    return {"open": 0.0, "start": t2 - t1, "stop": t3 - t2}


def run_start_stop(
    rounds: int, warmups: int, fn: Callable[..., Any], *args: Any
) -> dict[str, float]:
    """Median of each phase over *rounds* runs, after *warmups* runs not counted."""
    runs = []
    for r in range(warmups + rounds):
        call_args = [a(r) if callable(a) else a for a in args]
        gc.collect()
        result = trio.run(fn, *call_args)
        if r >= warmups:
            runs.append(result)
    out = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
    out["total"] = out["start"] + out["stop"]
    return out


# -- 3. memory per idle actor (in a child process) -------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def short_name(filename: str) -> str:
    """``_run.py`` for a path; ``attrs:Inbox`` for attrs' generated ``__init__``."""
    prefix = "<attrs generated methods "
    if filename.startswith(prefix):
        return "attrs:" + filename.removeprefix(prefix).rstrip(">").rsplit(".", 1)[-1]
    return Path(filename).name


@contextlib.asynccontextmanager
async def idle_population(case: str, n: int, root: Path | None) -> AsyncIterator[None]:
    """n idle tasks (case "plain") or supervised actors ("memory", "file"), then gone."""
    async with trio.open_nursery() as nursery:
        if case == "plain":
            parked = trio.Event()
            for _ in range(n):
                nursery.start_soon(parked.wait)
            await trio.testing.wait_all_tasks_blocked()
            yield
            nursery.cancel_scope.cancel()
            return
        post = make_post(root)
        counter = StartCounter(n)
        specs = [actor_spec(f"a{i:05d}", lambda _ctx: IdleActor(counter), post) for i in range(n)]
        sup = Supervisor("bench", specs)
        await nursery.start(sup.run)
        await counter.all.wait()
        await trio.testing.wait_all_tasks_blocked()
        yield
        await sup.stop()
        await post.aclose()


async def memory_case(case: str, n: int, directory: Path, idle_seconds: float) -> dict[str, Any]:
    def root(tag: str) -> Path | None:
        return directory / tag if case == "file" else None

    # Warm-up (first-use costs are not per actor), then RSS, fds and idle CPU.
    async with idle_population(case, 10, root("warm")):
        pass
    gc.collect()
    rss0, fds0 = rss_bytes(), open_fds()
    async with idle_population(case, n, root("rss")):
        gc.collect()
        rss1, fds1 = rss_bytes(), open_fds()
        await trio.sleep(IDLE_SETTLE_S)  # past the first poll timeouts: steady state
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await trio.sleep(idle_seconds)
        cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    # tracemalloc: every byte allocated to build the population and still held.
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    async with idle_population(case, n, root("trace")):
        gc.collect()
        snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    diff = snap.compare_to(base, "filename")
    traced = sum(d.size_diff for d in diff)
    top = [
        (short_name(d.traceback[0].filename), d.size_diff / n)
        for d in sorted(diff, key=lambda d: -d.size_diff)[:4]
    ]
    return {
        "traced": traced / n,
        "rss": (rss1 - rss0) / n,
        "fds": (fds1 - fds0) / n,
        "cpu": cpu,
        "top": top,
    }


def measure_memory(case: str, n: int, directory: Path, idle_seconds: float) -> dict[str, Any]:
    """Run :func:`memory_case` in a fresh interpreter, so RSS deltas are not polluted."""
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--memory-case",
            case,
            "--n",
            str(n),
            "--dir",
            str(directory),
            "--idle",
            str(idle_seconds),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


# -- the report -------------------------------------------------------------------------


def ratio(value: float, base: float) -> str:
    return f"{value / base:8.1f}x" if base > 0 else "       -"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    parser.add_argument("--memory-case", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=N_ACTORS, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--idle", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_case:
        print(json.dumps(trio.run(memory_case, args.memory_case, args.n, args.dir, args.idle)))
        return

    samples = 500 if args.quick else 5000
    warmup = 50 if args.quick else 200
    rounds = 1 if args.quick else 5
    warmups = 0 if args.quick else 1
    idle_seconds = 0.4 if args.quick else 1.0
    n = N_ACTORS
    started = time.perf_counter()

    bench_dir = os.environ.get("BENCH_DIR")
    with tempfile.TemporaryDirectory(prefix="coterie-bench-", dir=bench_dir) as tmp:
        root = Path(tmp)

        def fresh(tag: str) -> Callable[[int], Path]:
            return lambda r: root / f"{tag}-{r}"

        restart = {
            "baseline (a): catch-and-call loop": run_latency(restart_catch_loop, warmup, samples),
            "baseline (b): new task per incarnation": run_latency(
                restart_new_task, warmup, samples
            ),
            "Supervisor one_for_one": run_latency(restart_supervised, warmup, samples, False),
            "Supervisor one_for_one + EventLog": run_latency(
                restart_supervised, warmup, samples, True
            ),
        }
        actor = {
            "baseline: catch-and-call loop, memory": run_latency(
                actor_restart, warmup, samples, None, False
            ),
            "actor_spec + Supervisor, memory": run_latency(
                actor_restart, warmup, samples, None, True
            ),
            "actor_spec + Supervisor, file (none)": run_latency(
                actor_restart, warmup, samples, root / "restart", True
            ),
        }
        start_stop = {
            "baseline: plain tasks, start_soon": run_start_stop(
                rounds, warmups, plain_start_stop, n, False
            ),
            "plain tasks, nursery.start (ref.)": run_start_stop(
                rounds, warmups, plain_start_stop, n, True
            ),
            "actors, memory PostOffice": run_start_stop(
                rounds, warmups, actors_start_stop, n, None
            ),
            "actors, file PostOffice (none)": run_start_stop(
                rounds, warmups, actors_start_stop, n, fresh("startstop")
            ),
        }
        memory = {
            "baseline: plain tasks on an Event": measure_memory("plain", n, root, idle_seconds),
            "actors, memory PostOffice": measure_memory("memory", n, root, idle_seconds),
            "actors, file PostOffice (none)": measure_memory("file", n, root, idle_seconds),
        }

    print(
        f"coterie supervision benchmark ({'quick' if args.quick else 'full'} run, "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, Trio {trio.__version__})"
    )
    print()
    print("1. restart latency: raise -> new incarnation running")
    print(f"   {'run':44} {'samples':>8} {'p50 ms':>9} {'p99 ms':>9} {'p50 vs (a)':>11}")
    base = restart["baseline (a): catch-and-call loop"]["p50_ms"]
    for key, r in restart.items():
        print(
            f"   {key:44} {r['n']:8d} {r['p50_ms']:9.4f} {r['p99_ms']:9.4f} "
            f"{ratio(r['p50_ms'], base):>11}"
        )
    print()
    print("   actor restart: raise in handle -> redelivered message handled")
    base = actor["baseline: catch-and-call loop, memory"]["p50_ms"]
    for key, r in actor.items():
        print(
            f"   {key:44} {r['n']:8d} {r['p50_ms']:9.4f} {r['p99_ms']:9.4f} "
            f"{ratio(r['p50_ms'], base):>11}"
        )
    print()
    print(f"2. start and stop of {n} (median of {rounds} round{'s' * (rounds > 1)})")
    print(
        f"   {'run':44} {'open ms':>8} {'start ms':>9} {'stop ms':>9} "
        f"{'start+stop':>11} {'vs base':>9}"
    )
    base = start_stop["baseline: plain tasks, start_soon"]["total"]
    for key, r in start_stop.items():
        print(
            f"   {key:44} {r['open'] * 1e3:8.1f} {r['start'] * 1e3:9.1f} "
            f"{r['stop'] * 1e3:9.1f} {r['total'] * 1e3:8.1f} ms {ratio(r['total'], base):>9}"
        )
    print("   (open = creating the actor specs, i.e. opening the mailboxes; not in start+stop)")
    print()
    print(
        f"3. memory per idle task/actor ({n} of them, fresh process each; "
        f"idle CPU in % of one core over {idle_seconds} s)"
    )
    print(
        f"   {'run':44} {'traced B':>9} {'RSS B':>9} {'fds':>6} {'idle CPU':>9} "
        f"{'traced vs base':>15}"
    )
    base = memory["baseline: plain tasks on an Event"]["traced"]
    for key, r in memory.items():
        print(
            f"   {key:44} {r['traced']:9.0f} {r['rss']:9.0f} {r['fds']:6.2f} "
            f"{r['cpu'] * 100:8.1f}% {ratio(r['traced'], base):>15}"
        )
    print(
        "   (file PostOffice: durability none; other processes' writes wake receivers via inotify)"
    )
    for key in ("actors, memory PostOffice", "actors, file PostOffice (none)"):
        where = ", ".join(f"{name} {size:.0f}" for name, size in memory[key]["top"])
        print(f"   {key}: bytes per actor by file: {where}")
    print()

    sup_p50 = restart["Supervisor one_for_one"]["p50_ms"]
    act_p50 = actor["actor_spec + Supervisor, memory"]["p50_ms"]
    mem_total = start_stop["actors, memory PostOffice"]["total"]
    file_ss = start_stop["actors, file PostOffice (none)"]
    print("targets")
    print(
        f"   restart p50 < {TARGET_RESTART_P50_MS:g} ms, supervised child:      "
        f"{sup_p50:.4f} ms  {verdict(sup_p50 < TARGET_RESTART_P50_MS)}"
    )
    print(
        f"   restart p50 < {TARGET_RESTART_P50_MS:g} ms, actor (memory mailbox): "
        f"{act_p50:.4f} ms  {verdict(act_p50 < TARGET_RESTART_P50_MS)}"
    )
    print(
        f"   {n} actors start+stop < {TARGET_START_STOP_S:g} s, memory:      "
        f"{mem_total:.3f} s  {verdict(mem_total < TARGET_START_STOP_S)}"
    )
    print(
        f"   {n} actors start+stop < {TARGET_START_STOP_S:g} s, file (none): "
        f"{file_ss['total']:.3f} s  {verdict(file_ss['total'] < TARGET_START_STOP_S)}"
        f"  (with opening the mailboxes: {file_ss['total'] + file_ss['open']:.3f} s)"
    )
    print()
    print(f"total bench time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
