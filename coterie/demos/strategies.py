"""One crash, two strategies: ``one_for_one`` restarts the child that crashed,
``one_for_all`` restarts every child of the supervisor.

A pipeline of three actors, fetcher → parser → writer, handles three jobs
twice: first under a ``one_for_one`` supervisor (actors ``*-1``), then under a
``one_for_all`` one (``*-2``). Each time the parser has a bug that crashes it
on job 2 once. Under ``one_for_one`` only the parser restarts and takes job 2
again; under ``one_for_all`` the fetcher and the writer are stopped and
restarted with it (OTP's choice for children that depend on each other's
state). Nothing is lost either way: every message not acknowledged is
delivered again to the new incarnation, and the writer counts each job once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.lab import DEFAULT_PACE, Lab, open_lab
from coterie.messages import Message
from coterie.supervisors import Strategy, Supervisor

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

INTRO = """\
phase 1: one_for_one ── fetcher-1 → parser-1 → writer-1
phase 2: one_for_all ── fetcher-2 → parser-2 → writer-2
the parser crashes once on job 2 in each phase: watch who restarts.
"""
JOBS = 3
BUGGY_JOB = 2


class Fetcher(Actor):
    """Fetches a job (a pause), passes it to the parser."""

    def __init__(self, lab: Lab, phase: int) -> None:
        self.lab, self.phase = lab, phase

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        await self.lab.step()
        await ctx.send(f"parser-{self.phase}", "parse", message.body)


class Parser(Actor):
    """Parses a job; crashes once on the buggy job (*bugs* outlives incarnations)."""

    def __init__(self, lab: Lab, phase: int, bugs: set[int]) -> None:
        self.lab, self.phase, self.bugs = lab, phase, bugs

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        job = message.body["job"]
        await self.lab.step()
        if job in self.bugs:
            self.bugs.discard(job)
            raise RuntimeError(f"simulated bug while parsing job {job}")
        await ctx.send(f"writer-{self.phase}", "write", message.body)


class Writer(Actor):
    """Writes each job's result once; says when all are in."""

    def __init__(self, results: set[int], done: trio.Event) -> None:
        self.results, self.done = results, done

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        job = message.body["job"]
        if job in self.results:
            ctx.emit("demo.note", step="duplicate", text=f"job {job} again: kept once", job=job)
            return
        self.results.add(job)
        ctx.emit("demo.note", step="written", text=f"job {job} written", job=job)
        if len(self.results) == JOBS:
            self.done.set()


def build(
    lab: Lab, phase: int, strategy: Strategy, results: set[int], done: trio.Event
) -> Supervisor:
    """The supervisor of one phase's pipeline."""
    bugs = {BUGGY_JOB}
    makers: dict[str, Any] = {
        f"fetcher-{phase}": lambda _: Fetcher(lab, phase),
        f"parser-{phase}": lambda _: Parser(lab, phase, bugs),
        f"writer-{phase}": lambda _: Writer(results, done),
    }
    specs = [actor_spec(n, make, lab.post, events=lab.events) for n, make in makers.items()]
    return Supervisor(str(strategy), specs, strategy=strategy, period=60.0, events=lab.events)


async def _phase(lab: Lab, phase: int, strategy: Strategy) -> set[int]:
    results: set[int] = set()
    done = trio.Event()
    sup = build(lab, phase, strategy, results, done)
    lab.note("user", "phase", f"phase {phase}: {strategy}")

    async def work() -> None:
        for job in range(1, JOBS + 1):
            await lab.post.send(Message.new("user", f"fetcher-{phase}", "fetch", {"job": job}))
        with trio.move_on_after(60):
            await done.wait()

    await lab.supervise(sup, work)
    return results


async def _main(console: Console, workdir: Path, pace: float) -> int:
    async with open_lab(console, workdir, "strategies", pace, INTRO) as lab:
        written = []
        for phase, strategy in ((1, Strategy.ONE_FOR_ONE), (2, Strategy.ONE_FOR_ALL)):
            written.append(await _phase(lab, phase, strategy))
            restarted = sorted(
                str(e.data["actor"])
                for e in lab.events.history
                if e.type == "actor.restarted" and e.data.get("supervisor") == str(strategy)
            )
            console.print(
                f"  → under {strategy}: restarted {', '.join(restarted)}; "
                f"{len(written[-1])}/{JOBS} jobs written",
                style="bold",
            )
        return lab.ended(0 if all(len(w) == JOBS for w in written) else 1)


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* at *pace* seconds a step; returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)
